/**
 * A small OpenAI-compatible server (chat completions and image generations) with fixed answers and error
 * modes, for testing the `openai` generator. No model weights exist on this machine (testing.md).
 * It checks the Bearer key, records every request (including vision image parts), answers chat with content the
 * test sets (a queue, then a default), and answers image generations with a real PNG of the requested size.
 */

import sharp from "sharp";
import type { Server } from "bun";

export const DEFAULT_OPENAI_KEY = "sk-test-0123456789abcdef";
/** Sizes accepted by the images endpoint: gpt-image-1, dall-e-3 and dall-e-2 sizes, and "auto". */
export const SUPPORTED_IMAGE_SIZES = [
  "auto",
  "1024x1024",
  "1536x1024",
  "1024x1536",
  "1792x1024",
  "1024x1792",
  "512x512",
  "256x256",
] as const;
const DEFAULT_SIZE = "1024x1024";

export type OpenAiMode = "ok" | "rate_limited" | "error500" | "hang" | "malformed" | "empty_choices" | "missing_data";
export type OpenAiEndpoint = "chat" | "images";

export interface OpenAiServerOptions {
  apiKey?: string;
  /** Content of every chat answer once the queue is empty (default: a JSON caption). */
  chatContent?: string;
  /** Seconds sent in retry-after with 429 (default 7). */
  retryAfterSeconds?: number;
}

/** A chat content part as sent by clients (text or image_url). */
export interface ContentPart {
  type: string;
  text?: string;
  image_url?: { url: string; detail?: string };
}

export interface RecordedOpenAiRequest {
  endpoint: OpenAiEndpoint | "other";
  path: string;
  authorization: string | null;
  /** The parsed JSON body (null if it was not JSON). */
  body: Record<string, unknown> | null;
  /** For chat: every image_url part of every message (vision). */
  imageUrls: string[];
  status: number;
}

export interface OpenAiServer {
  /** Base URL including /v1, as OpenAI clients expect (e.g. http://127.0.0.1:4000/v1). */
  baseUrl: string;
  /** Origin without /v1. */
  url: string;
  port: number;
  apiKey: string;
  requests: RecordedOpenAiRequest[];
  /** Answers to the next chat calls, in order; afterwards the default content is used. */
  queueChat(...contents: string[]): void;
  /** Sets the default chat content. */
  setChatContent(content: string): void;
  /** Sets the mode for one endpoint, or both when `endpoint` is omitted. */
  setMode(mode: OpenAiMode, endpoint?: OpenAiEndpoint): void;
  /** Requests currently held open by "hang". */
  hanging(): number;
  stop(): Promise<void>;
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

function apiError(status: number, message: string, type: string, code: string | null, headers: Record<string, string> = {}): Response {
  return json({ error: { message, type, param: null, code } }, status, headers);
}

/** Collects image_url parts of chat messages (the vision input). */
function imageUrlsOf(body: Record<string, unknown> | null): string[] {
  const messages = body?.messages;
  if (!Array.isArray(messages)) return [];
  const urls: string[] = [];
  for (const message of messages as Array<{ content?: unknown }>) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as ContentPart[]) {
      if (part.type === "image_url" && part.image_url?.url) urls.push(part.image_url.url);
    }
  }
  return urls;
}

/** Starts the server on 127.0.0.1 with a random free port. */
export async function startOpenAiServer(opts: OpenAiServerOptions = {}): Promise<OpenAiServer> {
  const apiKey = opts.apiKey ?? DEFAULT_OPENAI_KEY;
  const retryAfter = String(opts.retryAfterSeconds ?? 7);
  let defaultContent = opts.chatContent ?? JSON.stringify({ caption: "A fixed caption from the test server." });
  const queue: string[] = [];
  const modes: Record<OpenAiEndpoint, OpenAiMode> = { chat: "ok", images: "ok" };
  const requests: RecordedOpenAiRequest[] = [];
  const held = new Set<() => void>();
  let imageCounter = 0;

  /** Holds a request open until the client gives up or the server stops. */
  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const release = (): void => {
        held.delete(release);
        resolve(apiError(503, "released", "server_error", null));
      };
      held.add(release);
      req.signal.addEventListener("abort", release, { once: true });
    });
  }

  async function modeAnswer(mode: OpenAiMode, req: Request): Promise<Response | null> {
    switch (mode) {
      case "rate_limited":
        return apiError(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded", { "retry-after": retryAfter });
      case "error500":
        return apiError(500, "The server had an error while processing your request.", "server_error", null);
      case "hang":
        return hang(req);
      case "malformed":
        return new Response('{"id":"chatcmpl-broken","choices":[{"message":', { status: 200, headers: { "content-type": "application/json" } });
      default:
        return null;
    }
  }

  async function chat(req: Request, body: Record<string, unknown>): Promise<Response> {
    const early = await modeAnswer(modes.chat, req);
    if (early) return early;
    const base = {
      id: `chatcmpl-${requests.length}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === "string" ? body.model : "unknown",
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    };
    if (modes.chat === "empty_choices") return json({ ...base, choices: [] });
    if (modes.chat === "missing_data") return json({ ...base, choices: [{ index: 0, message: { role: "assistant" }, finish_reason: "stop" }] });
    const content = queue.shift() ?? defaultContent;
    return json({
      ...base,
      choices: [{ index: 0, message: { role: "assistant", content, refusal: null }, finish_reason: "stop", logprobs: null }],
    });
  }

  async function images(req: Request, body: Record<string, unknown>): Promise<Response> {
    const early = await modeAnswer(modes.images, req);
    if (early) return early;
    const size = typeof body.size === "string" ? body.size : DEFAULT_SIZE;
    if (!(SUPPORTED_IMAGE_SIZES as readonly string[]).includes(size)) {
      return apiError(400, `Invalid value: '${size}'. Supported values are: ${SUPPORTED_IMAGE_SIZES.map((s) => `'${s}'`).join(", ")}.`, "invalid_request_error", "invalid_value");
    }
    if (typeof body.prompt !== "string" || body.prompt === "") {
      return apiError(400, "Missing required parameter: 'prompt'.", "invalid_request_error", "missing_required_parameter");
    }
    if (modes.images === "empty_choices" || modes.images === "missing_data") {
      return json({ created: Math.floor(Date.now() / 1000), data: modes.images === "empty_choices" ? [] : [{ revised_prompt: "x" }] });
    }
    const [w, h] = (size === "auto" ? DEFAULT_SIZE : size).split("x").map(Number) as [number, number];
    // A different colour on every call, so a regenerated image has different bytes.
    imageCounter++;
    const png = await sharp({
      create: { width: w, height: h, channels: 3, background: { r: (imageCounter * 67) % 256, g: (imageCounter * 131) % 256, b: 200 } },
    })
      .png()
      .toBuffer();
    return json({ created: Math.floor(Date.now() / 1000), data: [{ b64_json: png.toString("base64"), revised_prompt: body.prompt }] });
  }

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const endpoint: RecordedOpenAiRequest["endpoint"] =
      path === "/v1/chat/completions" ? "chat" : path === "/v1/images/generations" ? "images" : "other";
    let body: Record<string, unknown> | null = null;
    try {
      body = (await req.json()) as Record<string, unknown>;
    } catch {
      body = null;
    }
    const record: RecordedOpenAiRequest = {
      endpoint,
      path,
      authorization: req.headers.get("authorization"),
      body,
      imageUrls: imageUrlsOf(body),
      status: 0,
    };
    requests.push(record);
    let response: Response;
    const auth = req.headers.get("authorization");
    if (auth !== `Bearer ${apiKey}`) {
      // Like the real API, the message names the key it got (partly masked there, in full here),
      // so the generator's redaction is actually tested.
      const got = auth?.replace(/^Bearer /, "") ?? "";
      response = apiError(401, `Incorrect API key provided: ${got}. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_request_error", "invalid_api_key");
    } else if (req.method !== "POST" || endpoint === "other") {
      response = apiError(404, `Invalid URL (${req.method} ${path})`, "invalid_request_error", null);
    } else if (body === null) {
      response = apiError(400, "We could not parse the JSON body of your request.", "invalid_request_error", null);
    } else {
      response = endpoint === "chat" ? await chat(req, body) : await images(req, body);
    }
    record.status = response.status;
    return response;
  }

  const server: Server<undefined> = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle, idleTimeout: 0 });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    baseUrl: `${origin}/v1`,
    url: origin,
    port: server.port as number,
    apiKey,
    requests,
    queueChat: (...contents) => void queue.push(...contents),
    setChatContent: (content) => {
      defaultContent = content;
    },
    setMode: (mode, endpoint) => {
      if (endpoint) modes[endpoint] = mode;
      else modes.chat = modes.images = mode;
    },
    hanging: () => held.size,
    async stop() {
      for (const release of [...held]) release();
      await server.stop(true);
    },
  };
}
