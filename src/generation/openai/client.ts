/**
 * The HTTP side of the `openai` generator: one JSON POST to an OpenAI-compatible server with a timeout, turning
 * every failure (network, timeout, HTTP status, 429, malformed JSON) into a GenerationError whose message never
 * contains the API key. The base URL is operator configuration, not user input, so plain fetch is used.
 */

import { GenerationError } from "../generator.ts";

export const DEFAULT_TIMEOUT_MS = 60_000;
const REDACTED = "[redacted]";
/** Upstream error text is quoted in our messages only up to this length. */
const MAX_UPSTREAM_MESSAGE = 300;

export interface ClientConfig {
  /** e.g. https://api.openai.com/v1 (trailing slash optional). */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** Removes every occurrence of the API key from a text that may end up in an error message or log. */
export function redact(text: string, apiKey: string): string {
  // A very short key would redact ordinary words; such keys are not real secrets anyway.
  if (apiKey.length < 4) return text;
  return text.split(apiKey).join(REDACTED);
}

/** Builds a GenerationError with the key scrubbed from its message. */
export function generationError(message: string, apiKey: string, cause?: unknown): GenerationError {
  return new GenerationError(redact(message, apiKey), cause === undefined ? undefined : { cause });
}

/** Extracts the `error.message` of an OpenAI-style error body, if any. */
function upstreamMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error && typeof parsed.error.message === "string") return parsed.error.message;
  } catch {
    // Not JSON: fall through and quote the raw text.
  }
  return text;
}

/**
 * POSTs `body` as JSON to `{baseUrl}{path}` and answers the parsed JSON response.
 * `what` names the call in error messages ("caption request", ...).
 */
export async function postJson(
  cfg: ClientConfig,
  path: string,
  body: unknown,
  what: string,
  signal?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const url = `${cfg.baseUrl.replace(/\/+$/, "")}${path}`;
  const fail = (message: string, cause?: unknown): GenerationError => {
    if (timeout.aborted) return generationError(`${what} timed out after ${cfg.timeoutMs} ms`, cfg.apiKey);
    if (signal?.aborted) return generationError(`${what} was cancelled`, cfg.apiKey);
    return generationError(message, cfg.apiKey, cause);
  };

  let response: Response;
  let text: string;
  try {
    response = await cfg.fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${cfg.apiKey}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
      signal: combined,
    });
    // Reading the body is also bounded by the same signal: a server may send headers and then stall.
    text = await response.text();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw fail(`${what} could not reach the generation server: ${reason}`);
  }

  if (!response.ok) {
    const detail = upstreamMessage(text).slice(0, MAX_UPSTREAM_MESSAGE).trim();
    let message = `${what} failed: the generation server answered HTTP ${response.status}`;
    if (response.status === 429) {
      const retryAfter = response.headers.get("retry-after");
      message += retryAfter ? ` (rate limited, retry after ${retryAfter} s)` : " (rate limited)";
    }
    if (detail) message += `: ${detail}`;
    throw generationError(message, cfg.apiKey);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw generationError(`${what} failed: the generation server answered malformed JSON`, cfg.apiKey, err);
  }
}
