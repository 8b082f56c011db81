/**
 * The one door for publishing traffic. Every call to an address a user supplied (Bluesky service, Mastodon instance,
 * webhook URL) goes through here, so the outbound rule of decisions.md §4 (public addresses, ALLOW_PRIVATE_HOSTS)
 * applies to all of them, and failures come back classified for the dispatcher.
 */
import type { Deps } from "../deps";
import { overriddenUrl, overrideTargetHost } from "../lib/origin-overrides";
import { SafeFetchError, safeFetch } from "../lib/safe-fetch";
import { DeliveryError } from "./connector";

/** Default per-request time limit for provider calls. */
export const PROVIDER_TIMEOUT_MS = 15_000;
/** Providers answer small JSON documents; anything bigger is refused rather than buffered. */
const MAX_ANSWER_BYTES = 5 * 1024 * 1024;
/** Error codes meaning the request certainly never reached the peer. */
const NOT_SENT_CODES = ["ConnectionRefused", "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "FailedToOpenSocket", "EHOSTUNREACH", "ENETUNREACH"];
/** Refusals of the address itself: no retry will help until the connection is fixed. */
const ADDRESS_REFUSALS = new Set(["invalid_url", "https_required", "port_not_allowed", "host_not_public", "too_many_redirects"]);
/** Statuses whose Response may not carry a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array | MultipartPart[];
  timeoutMs?: number;
}

/**
 * Where a call (or a browser redirect) meant for `url` really goes: PLATFORM_ORIGIN_OVERRIDES applied (decisions.md
 * §12), the URL itself when no override names its host. Use it for every address a network is reached at.
 */
export function routedUrl(deps: Pick<Deps, "config">, url: string): string {
  return overriddenUrl(deps.config.platformOriginOverrides, url) ?? url;
}

/**
 * Fetches `url` through safeFetch (src/lib/safe-fetch.ts) under the outbound rule: resolve once, public addresses
 * only unless the host is in ALLOW_PRIVATE_HOSTS (which also allows plain http and any port for it), no redirects
 * (a provider API that redirects a POST is misconfigured). Answers a Response with the buffered body. Throws
 * DeliveryError: `permanent` for an address that may not be called, `transient` when the request certainly did
 * not reach the provider (refused, unresolvable), `unknown` when it may have (timeout, reset mid-way).
 * PLATFORM_ORIGIN_OVERRIDES apply (routedUrl); errors still name the host the caller meant.
 */
export async function providerFetch(deps: Pick<Deps, "config">, url: string, init: OutboundInit = {}): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | Uint8Array | undefined;
  if (Array.isArray(init.body)) {
    // safeFetch takes replayable bytes: the multipart body is encoded once, with its boundary.
    const encoded = encodeMultipart(init.body);
    body = encoded.bytes;
    headers["content-type"] = encoded.contentType;
  } else {
    body = init.body;
  }
  const timeoutMs = init.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  // An overridden origin was named by the operator: exempt from the public-address and https rules.
  const overridden = overriddenUrl(deps.config.platformOriginOverrides, url);
  const allowPrivateHosts =
    overridden === null ? deps.config.allowPrivateHosts : new Set([...deps.config.allowPrivateHosts, overrideTargetHost(overridden)]);
  try {
    const answer = await safeFetch(overridden ?? url, {
      method: init.method ?? "GET",
      headers,
      body,
      timeoutMs,
      maxRedirects: 0,
      maxBytes: MAX_ANSWER_BYTES,
      requireHttps: false,
      allowPrivateHosts,
    });
    const payload = NULL_BODY_STATUSES.has(answer.status) ? null : (answer.body as Uint8Array<ArrayBuffer>);
    return new Response(payload, { status: answer.status, headers: answer.headers });
  } catch (error) {
    throw classifyFetchError(error, safeHost(url));
  }
}

/** One field of a multipart/form-data body: text, or a file. */
export type MultipartPart = { name: string; value: string } | { name: string; fileName: string; type: string; bytes: Uint8Array };

/** Encodes multipart/form-data (RFC 7578). NB: Bun's `new Response(formData)` sets no boundary header. */
export function encodeMultipart(parts: readonly MultipartPart[]): { bytes: Uint8Array; contentType: string } {
  const boundary = `----seedcast${crypto.randomUUID().replaceAll("-", "")}`;
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  const quote = (v: string): string => v.replace(/["\r\n]/g, "_");
  for (const part of parts) {
    if ("bytes" in part) {
      chunks.push(
        encoder.encode(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"; filename="${quote(part.fileName)}"\r\nContent-Type: ${part.type}\r\n\r\n`,
        ),
        part.bytes,
        encoder.encode("\r\n"),
      );
    } else {
      chunks.push(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.length;
  }
  return { bytes, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Network failures in words a person uses (never a raw ECONNREFUSED), by the code found in the error. */
const PLAIN_WORDS: readonly [readonly string[], string][] = [
  [["ConnectionRefused", "ECONNREFUSED"], "nothing accepted the connection there. Is the service running, and are the address and port right?"],
  [["ENOTFOUND"], "no server has that name. Check the address for typos."],
  [["EAI_AGAIN"], "its name could not be looked up just now. Try again in a moment."],
  [["EHOSTUNREACH", "ENETUNREACH"], "the network cannot reach it from this server."],
  [["ECONNRESET", "ConnectionClosed", "socket hang up"], "the connection was dropped before an answer came."],
  [["ETIMEDOUT", "took longer than", "TimeoutError", "timed out"], "it did not answer in time."],
  [["CERT", "certificate", "SSL", "TLS"], "its HTTPS certificate could not be verified."],
  [["FailedToOpenSocket"], "a connection to it could not be opened."],
];

/** What went wrong, in plain words, from a fetch failure's message and code. */
export function plainNetworkProblem(error: unknown): string | null {
  const code = String((error as { cause?: { code?: unknown } } | undefined)?.cause?.code ?? (error as { code?: unknown } | undefined)?.code ?? "");
  const detail = `${error instanceof Error ? error.message : String(error)} ${code}`;
  for (const [codes, words] of PLAIN_WORDS) if (codes.some((c) => detail.includes(c))) return words;
  return null;
}

function classifyFetchError(error: unknown, host: string): DeliveryError {
  if (!(error instanceof SafeFetchError)) {
    return new DeliveryError("unknown", `The connection to ${host} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (ADDRESS_REFUSALS.has(error.reason)) return new DeliveryError("permanent", `The address of ${host} cannot be used: ${error.message}`);
  if (error.reason === "host_unresolvable") return new DeliveryError("transient", `${host} could not be resolved.`);
  const detail = `${error.message} ${String((error.cause as { code?: string } | undefined)?.code ?? "")}`;
  const words = plainNetworkProblem(error);
  if (NOT_SENT_CODES.some((code) => detail.includes(code))) return new DeliveryError("transient", `Could not reach ${host}: ${words ?? error.message}`);
  return new DeliveryError("unknown", `No complete answer from ${host}: ${words ?? error.message}`);
}

/** Why `url` may not be called (checked before anything is stored), or null. */
export function outboundProblem(deps: Pick<Deps, "config">, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a valid URL.`;
  }
  if (parsed.username || parsed.password) return "The address must not contain a user name or password.";
  if (overriddenUrl(deps.config.platformOriginOverrides, url) !== null) return null;
  const exempt = deps.config.allowPrivateHosts.has(parsed.hostname.toLowerCase().replace(/^\[|\]$/g, ""));
  if (exempt) return parsed.protocol === "https:" || parsed.protocol === "http:" ? null : "The address must be https.";
  if (parsed.protocol !== "https:") return "The address must be https.";
  if (parsed.port !== "" && parsed.port !== "443") return "The address must use port 443.";
  return null;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the provider";
  }
}

/** Reads a provider's error message from a JSON body (`error`, `message`, `error_description`), else the status. */
export async function providerMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const parts = [body.error, body.message, body.error_description].filter((p): p is string => typeof p === "string" && p !== "");
    if (parts.length > 0) return [...new Set(parts)].join(": ");
  } catch {
    // not JSON: fall through to the plain text
  }
  const trimmed = text.trim().slice(0, 300);
  return trimmed !== "" ? `HTTP ${response.status}: ${trimmed}` : `HTTP ${response.status}`;
}

/** Classifies an HTTP failure: 408/425/429/5xx transient, 401/403 auth, other 4xx permanent. */
export function failureKindOf(status: number): "transient" | "auth" | "permanent" {
  if (status === 408 || status === 425 || status === 429 || status >= 500) return "transient";
  if (status === 401 || status === 403) return "auth";
  return "permanent";
}
