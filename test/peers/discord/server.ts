/**
 * A Discord stand-in for channel webhooks, written from Discord's own documentation and held to its official OpenAPI
 * description (test/peers/platform-specs/discord.openapi.json, discord/discord-api-spec, API v10), never from
 * Seedcast's client:
 *  - https://discord.com/developers/docs/resources/webhook#get-webhook-with-token
 *  - https://discord.com/developers/docs/resources/webhook#execute-webhook (`?wait=true` answers the message; without
 *    it 204)
 *  - https://discord.com/developers/docs/resources/webhook#delete-webhook-message
 *  - https://discord.com/developers/docs/reference#uploading-files (multipart: `payload_json` plus `files[n]`, each
 *    attachment `{id: n, filename, description}` in payload_json's `attachments`)
 *  - https://discord.com/developers/docs/topics/opcodes-and-status-codes#json (10015 Unknown Webhook, 50027 Invalid
 *    Webhook Token, 50035 Invalid Form Body, 10008 Unknown Message)
 *  - https://discord.com/developers/docs/topics/rate-limits (429 with RatelimitedResponse)
 * Every request is validated with Ajv against the operation in the description: path parameters, query parameters
 * and the request body (JSON, or multipart's payload_json against the same schema, with each files[n] matched to an
 * attachment). A request that does not conform is answered 400 Invalid Form Body and recorded in `violations`. Every
 * answer is validated against the operation's response schema before it is sent (a stand-in that answered outside
 * the description would be recorded in `violations` too).
 */
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";
import { cutOffAnswer } from "../stand-in-kit";

const SPEC_PATH = new URL("../platform-specs/discord.openapi.json", import.meta.url).pathname;
const SPEC_ID = "discord";
const BASE = "/api/v10";

/** One message the stand-in stored, as Discord would keep it. */
export interface StoredMessage {
  id: string;
  webhookId: string;
  channelId: string;
  content: string;
  attachments: { id: string; filename: string; description: string | null; size: number; contentType: string }[];
  deleted: boolean;
  timestamp: string;
}

/** One webhook the stand-in knows. */
export interface StandInWebhook {
  id: string;
  token: string;
  name: string;
  channelId: string;
  guildId: string;
}

/** What the stand-in does with the next executes. */
export interface DiscordMode {
  /** Store the message, then never answer (the connection stays open until the client gives up). */
  storeThenHang: number;
  /** Store the message, then cut the answer off midway (the client cannot know it was stored). */
  storeThenCut: number;
  /** Before storeThenCut takes effect: this many stores are answered normally first. */
  cutAfter: number;
  /** Latency of every send: half before the message is stored, half after (a kill lands on either side). */
  latencyMs: number;
  /** Answer 429 this many times before accepting. */
  rateLimited: number;
}

type Validators = { request: Map<string, ValidateFunction>; response: Map<string, ValidateFunction> };

let compiled: { ajv: Ajv2020; v: Validators } | null = null;

function validators(): { ajv: Ajv2020; v: Validators } {
  if (compiled) return compiled;
  const spec = JSON.parse(require("node:fs").readFileSync(SPEC_PATH, "utf8")) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  for (const name of ["snowflake", "int32", "int64", "double", "float", "nonce"]) ajv.addFormat(name, true);
  ajv.addSchema({ ...spec, $id: SPEC_ID });
  const ref = (pointer: string): ValidateFunction => {
    const fn = ajv.getSchema(`${SPEC_ID}#${pointer}`);
    if (!fn) throw new Error(`no schema at ${pointer}`);
    return fn;
  };
  const op = "/paths/~1webhooks~1{webhook_id}~1{webhook_token}";
  const msg = "/paths/~1webhooks~1{webhook_id}~1{webhook_token}~1messages~1{message_id}";
  const v: Validators = {
    request: new Map([
      ["webhook_id", ref(`${op}/parameters/0/schema`)],
      ["webhook_token", ref(`${op}/parameters/1/schema`)],
      ["execute.wait", ref(`${op}/post/parameters/0/schema`)],
      ["execute.body.json", ref(`${op}/post/requestBody/content/application~1json/schema`)],
      ["execute.body.multipart", ref(`${op}/post/requestBody/content/multipart~1form-data/schema`)],
      ["message_id", ref(`${msg}/parameters/2/schema`)],
    ]),
    response: new Map([
      ["get_webhook.200", ref(`${op}/get/responses/200/content/application~1json/schema`)],
      ["execute.200", ref(`${op}/post/responses/200/content/application~1json/schema`)],
      ["error", ref("/components/schemas/ErrorResponse")],
      ["ratelimited", ref("/components/schemas/RatelimitedResponse")],
    ]),
  };
  compiled = { ajv, v };
  return compiled;
}

/** A running stand-in. */
export interface DiscordStandIn {
  origin: string;
  webhooks: StandInWebhook[];
  messages: StoredMessage[];
  /** Every request that did not conform to the description (or an answer that would not have). */
  violations: string[];
  mode: DiscordMode;
  /** Requests seen, as "METHOD path" (token masked). */
  requests: string[];
  /** A new webhook; its URL as Discord shows it under "Copy Webhook URL". */
  addWebhook(name?: string): StandInWebhook & { url: string };
  stop(): Promise<void>;
}

let snowflakeSeq = 0n;
/** Snowflakes: ms since the Discord epoch << 22, plus a counter (https://discord.com/developers/docs/reference#snowflakes). */
function snowflake(): string {
  const DISCORD_EPOCH = 1420070400000n;
  snowflakeSeq += 1n;
  return String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) + (snowflakeSeq % 4096n));
}

function errorsText(fn: ValidateFunction): string {
  return (fn.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`).join("; ");
}

/** Starts the stand-in on 127.0.0.1 (any free port unless given). */
export function startDiscordStandIn(port = 0): DiscordStandIn {
  const { v } = validators();
  const webhooks: StandInWebhook[] = [];
  const messages: StoredMessage[] = [];
  const violations: string[] = [];
  const requests: string[] = [];
  const mode: DiscordMode = { storeThenHang: 0, storeThenCut: 0, cutAfter: 0, latencyMs: 0, rateLimited: 0 };
  const hanging = new Set<() => void>();

  const answer = (status: number, body: unknown, validator: string): Response => {
    const fn = v.response.get(validator)!;
    if (!fn(body)) violations.push(`stand-in answer ${validator} outside the description: ${errorsText(fn)}`);
    return Response.json(body, { status });
  };
  const error = (status: number, code: number, message: string, errors?: unknown): Response =>
    answer(status, errors === undefined ? { code, message } : { code, message, errors }, "error");
  const invalid = (what: string, detail: string): Response => {
    violations.push(`${what}: ${detail}`);
    // ErrorDetails nests by field; the description types each inner code as an integer.
    return error(400, 50035, "Invalid Form Body", { body: { _errors: [{ code: 50035, message: detail }] } });
  };
  const check = (name: string, value: unknown): string | null => {
    const fn = v.request.get(name)!;
    return fn(value) ? null : errorsText(fn);
  };

  const webhookResponse = (w: StandInWebhook) => ({
    application_id: null,
    avatar: null,
    channel_id: w.channelId,
    guild_id: w.guildId,
    id: w.id,
    name: w.name,
    type: 1,
  });

  const messageResponse = (m: StoredMessage, w: StandInWebhook) => ({
    type: 0,
    content: m.content,
    mentions: [],
    mention_roles: [],
    attachments: m.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      ...(a.description === null ? {} : { description: a.description }),
      content_type: a.contentType,
      size: a.size,
      url: `https://cdn.discordapp.com/attachments/${m.channelId}/${a.id}/${a.filename}`,
      proxy_url: `https://media.discordapp.net/attachments/${m.channelId}/${a.id}/${a.filename}`,
    })),
    embeds: [],
    timestamp: m.timestamp,
    edited_timestamp: null,
    flags: 0,
    components: [],
    id: m.id,
    channel_id: m.channelId,
    author: {
      id: w.id,
      username: w.name,
      avatar: null,
      discriminator: "0000",
      public_flags: 0,
      flags: 0,
      bot: true,
      global_name: null,
      primary_guild: null,
    },
    pinned: false,
    mention_everyone: false,
    tts: false,
    webhook_id: w.id,
  });

  async function execute(request: Request, url: URL, w: StandInWebhook): Promise<Response> {
    const wait = url.searchParams.get("wait");
    if (wait !== null) {
      const problem = check("execute.wait", wait === "true" ? true : wait === "false" ? false : wait);
      if (problem) return invalid("execute_webhook ?wait", problem);
    }
    for (const key of url.searchParams.keys()) {
      if (!["wait", "thread_id", "with_components"].includes(key)) return invalid("execute_webhook query", `unknown parameter ${key}`);
    }
    const type = request.headers.get("content-type") ?? "";
    let payload: Record<string, unknown>;
    const files = new Map<string, File>();
    if (type.startsWith("application/json")) {
      try {
        payload = (await request.json()) as Record<string, unknown>;
      } catch {
        return invalid("execute_webhook body", "not JSON");
      }
      const problem = check("execute.body.json", payload);
      if (problem) return invalid("execute_webhook JSON body", problem);
    } else if (type.startsWith("multipart/form-data")) {
      const form = await request.formData();
      const json = form.get("payload_json");
      if (typeof json !== "string") return invalid("execute_webhook multipart", "payload_json missing");
      try {
        payload = JSON.parse(json) as Record<string, unknown>;
      } catch {
        return invalid("execute_webhook multipart", "payload_json is not JSON");
      }
      const problem = check("execute.body.multipart", payload);
      if (problem) return invalid("execute_webhook payload_json", problem);
      for (const [name, value] of form.entries()) {
        if (name === "payload_json") continue;
        const match = /^files\[(\d+)\]$/.exec(name);
        if (!match || typeof value === "string") return invalid("execute_webhook multipart", `unexpected field ${name}`);
        files.set(match[1]!, value as File);
      }
    } else {
      return invalid("execute_webhook", `content type ${type} not in the description`);
    }
    const content = typeof payload.content === "string" ? payload.content : "";
    const attachments = (payload.attachments as { id: string; filename?: string; description?: string }[] | undefined) ?? [];
    if (attachments.length !== files.size) return invalid("execute_webhook", `${attachments.length} attachments for ${files.size} files`);
    for (const a of attachments) if (!files.has(String(a.id))) return invalid("execute_webhook", `attachment ${a.id} has no files[${a.id}]`);
    // "Must provide at least one of content, embeds, components, file, or poll" (execute-webhook, JSON/Form Params).
    if (content === "" && files.size === 0) return error(400, 50006, "Cannot send an empty message");
    if (mode.rateLimited > 0) {
      mode.rateLimited -= 1;
      return answer(429, { code: 0, message: "You are being rate limited.", retry_after: 0.5, global: false }, "ratelimited");
    }
    if (mode.latencyMs > 0) await Bun.sleep(mode.latencyMs / 2);
    const message: StoredMessage = {
      id: snowflake(),
      webhookId: w.id,
      channelId: w.channelId,
      content,
      attachments: await Promise.all(
        attachments.map(async (a) => {
          const file = files.get(String(a.id))!;
          return { id: snowflake(), filename: a.filename ?? file.name, description: a.description ?? null, size: (await file.arrayBuffer()).byteLength, contentType: file.type };
        }),
      ),
      deleted: false,
      timestamp: new Date().toISOString(),
    };
    messages.push(message);
    if (mode.latencyMs > 0) await Bun.sleep(mode.latencyMs / 2);
    if (mode.storeThenCut > 0 && mode.cutAfter > 0) {
      mode.cutAfter -= 1;
    } else if (mode.storeThenCut > 0) {
      mode.storeThenCut -= 1;
      return cutOffAnswer(200);
    }
    if (mode.storeThenHang > 0) {
      mode.storeThenHang -= 1;
      return new Promise<Response>((resolve) => {
        const release = () => resolve(new Response(null, { status: 204 }));
        hanging.add(release);
      });
    }
    if (wait !== "true") return new Response(null, { status: 204 });
    return answer(200, messageResponse(message, w), "execute.200");
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      requests.push(`${request.method} ${url.pathname.replace(/(webhooks\/\d+\/)[^/]+/, "$1***")}`);
      const parts = url.pathname.startsWith(`${BASE}/webhooks/`) ? url.pathname.slice(`${BASE}/webhooks/`.length).split("/") : null;
      if (!parts || parts.length < 2) return error(404, 0, "404: Not Found");
      const [id, token, sub, messageId] = parts.map(decodeURIComponent);
      const idProblem = check("webhook_id", id) ?? check("webhook_token", token);
      if (idProblem) return invalid("webhook path", idProblem);
      const w = webhooks.find((h) => h.id === id);
      if (!w) return error(404, 10015, "Unknown Webhook");
      if (w.token !== token) return error(401, 50027, "Invalid Webhook Token");
      if (sub === undefined) {
        if (request.method === "GET") return answer(200, webhookResponse(w), "get_webhook.200");
        if (request.method === "POST") return execute(request, url, w);
        return error(405, 0, "405: Method Not Allowed");
      }
      if (sub === "messages" && messageId !== undefined) {
        const problem = check("message_id", messageId);
        if (problem) return invalid("message path", problem);
        const m = messages.find((x) => x.id === messageId && x.webhookId === w.id && !x.deleted);
        if (request.method === "DELETE") {
          if (!m) return error(404, 10008, "Unknown Message");
          m.deleted = true;
          return new Response(null, { status: 204 });
        }
        if (request.method === "GET") return m ? answer(200, messageResponse(m, w), "execute.200") : error(404, 10008, "Unknown Message");
      }
      return error(404, 0, "404: Not Found");
    },
  });

  return {
    origin: `http://127.0.0.1:${server.port}`,
    webhooks,
    messages,
    violations,
    mode,
    requests,
    addWebhook(name = "Seedcast news") {
      const w: StandInWebhook = {
        id: snowflake(),
        token: `${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`.slice(0, 68),
        name,
        channelId: snowflake(),
        guildId: snowflake(),
      };
      webhooks.push(w);
      return { ...w, url: `https://discord.com/api/webhooks/${w.id}/${w.token}` };
    },
    async stop() {
      for (const release of hanging) release();
      await server.stop(true);
    },
  };
}
