/**
 * The one outbound HTTP client for addresses a user supplied: image ingest, webhooks, Mastodon instances,
 * Bluesky services (decisions.md §4, architecture.md "Outbound HTTP").
 *
 * How the checked address is dialled: the host name is resolved ONCE, every answer is checked, and the
 * request goes to `https://<checked IP>:<port>/...` with Bun's `fetch`, carrying the original `Host` header
 * and `tls.serverName = <host name>`. Bun 1.4.5 sends that name as SNI and verifies the certificate
 * against it (not against the IP, not against the Host header), with the normal root store plus
 * NODE_EXTRA_CA_CERTS read at process start. Because the URL holds an IP literal, fetch does no DNS
 * lookup of its own, so a rebinding answer between check and connect cannot move the socket.
 * NB: undici dispatchers / node-fetch agents / `lookup` hooks are silently ignored by Bun's fetch; they are
 * no defence, which is why the IP goes into the URL itself. `proxy: false` keeps HTTP(S)_PROXY from
 * re-resolving the name elsewhere, and `decompress: false` keeps `Content-Encoding` visible so it can be refused.
 * Connections are kept alive (issue 22: a receiver is sent thousands of posts a minute, and a TLS handshake per post
 * cost more than the post). That is safe only because Bun keys its pool by the checked IP, the port AND the SNI name:
 * a socket verified for one name is never handed to a request for another name on the same address, which then
 * handshakes and verifies anew (Bun 1.4.5; test/safe-fetch-keepalive.test.ts fails if an upgrade changes that).
 * Plain http verifies nothing, and its pool key, the checked IP and port in the URL, is where a new connection goes.
 */
import { lookup } from "node:dns/promises";
import { AppError } from "./errors.ts";
import { classifyAddress, parseHostLiteral, type AddressClassification } from "./net-address.ts";
import { readStreamCapped } from "./read-capped";

/** Refusal reasons; every name but `too_large` is an ErrorCode of decisions.md §4. */
export const SAFE_FETCH_REASONS = [
  "invalid_url",
  "https_required",
  "port_not_allowed",
  "unsupported_encoding",
  "host_not_public",
  "host_unresolvable",
  "fetch_failed",
  "too_many_redirects",
  "too_large",
  "upstream_status",
] as const;

export type SafeFetchReason = (typeof SAFE_FETCH_REASONS)[number];

/**
 * Thrown for every refusal; `reason` says which rule refused, `upstreamStatus` is set for upstream_status.
 * NB: `message` is safe to show the user; the refused address is only in `address`, for logs, because echoing
 * what an internal name resolves to would make ingest a DNS oracle for the private network.
 */
export class SafeFetchError extends Error {
  readonly reason: SafeFetchReason;
  readonly upstreamStatus?: number;
  readonly address?: AddressClassification;

  constructor(
    reason: SafeFetchReason,
    message: string,
    options: { cause?: unknown; upstreamStatus?: number; address?: AddressClassification } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "SafeFetchError";
    this.reason = reason;
    if (options.upstreamStatus !== undefined) this.upstreamStatus = options.upstreamStatus;
    if (options.address !== undefined) this.address = options.address;
  }
}

/** Resolves a host name to every address it has (A and AAAA). Injectable so tests can answer anything. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** The default resolver: the system resolver (`getaddrinfo`), all families, in the system's order. */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, order: "verbatim" });
  return answers.map((a) => a.address);
};

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_REDIRECTS = 5;
/** MAX_IMAGE_BYTES' default; callers pass their own cap. */
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

const HTTPS_PORT = 443;
const IDENTITY = "identity";
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Headers the caller may not set: they are ours to decide, per hop. */
const RESERVED_HEADERS = ["host", "accept-encoding", "connection", "content-length", "transfer-encoding"];
/** Credentials that must not follow a redirect to another origin (as the Fetch standard does for Authorization). */
const CROSS_ORIGIN_STRIPPED = ["authorization", "cookie", "proxy-authorization"];

/** Options of one safe fetch. */
export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string> | Headers;
  /** Replayable on 307/308 redirects, hence no streams. */
  body?: string | Uint8Array;
  /** Cap on the response body, counted while streaming; one byte more is `too_large`. */
  maxBytes?: number;
  /** Total budget for every hop, lookups and body included; over it is `fetch_failed`. */
  timeoutMs?: number;
  maxRedirects?: number;
  /** Default true. Plain http is allowed only when this is false AND the host is in allowPrivateHosts. */
  requireHttps?: boolean;
  /** Host names (lower case) exempt from the public-address and port-443 rules: ALLOW_PRIVATE_HOSTS. */
  allowPrivateHosts?: ReadonlySet<string>;
  resolver?: Resolver;
  signal?: AbortSignal;
  /**
   * Extra trusted CA (PEM) for this call. NB: passing it REPLACES the root store for the call, so it is
   * for tests; production trusts extra CAs through NODE_EXTRA_CA_CERTS, which Bun reads at process start.
   */
  extraCa?: string;
}

/** A response, whatever its status: the caller decides what a 404 means. */
export interface SafeFetchResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
  /** The URL of the last hop, after redirects. */
  url: string;
}

/** A hop whose target passed every rule: where to connect and what name to present. */
interface CheckedTarget {
  url: URL;
  /** The checked addresses, in the resolver's order, bracketed for IPv6; the socket goes to one of them. */
  dialHosts: string[];
  /** The host name for SNI and certificate verification; null when the URL host is an IP literal. */
  serverName: string | null;
}

function normaliseHostName(hostname: string): string {
  const lower = hostname.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/** Checks a URL against every rule that needs no network: scheme, userinfo, port. */
function checkUrlShape(raw: string | URL, options: SafeFetchOptions): { url: URL; exempt: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new SafeFetchError("invalid_url", "The URL could not be parsed.", { cause });
  }
  if (url.username !== "" || url.password !== "") {
    throw new SafeFetchError("invalid_url", "The URL must not contain a user name or password.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new SafeFetchError("https_required", `The URL scheme ${url.protocol} is not allowed; use https.`);
  }
  const literal = parseHostLiteral(url.hostname);
  if (literal.kind === "invalid") {
    throw new SafeFetchError("invalid_url", "The URL has no valid host.");
  }
  const hostKey = literal.kind === "name" ? literal.name : literal.address;
  const exempt = options.allowPrivateHosts?.has(hostKey) ?? false;
  if (url.protocol === "http:" && (options.requireHttps !== false || !exempt)) {
    throw new SafeFetchError("https_required", "The URL must use https.");
  }
  const port = url.port === "" ? (url.protocol === "https:" ? HTTPS_PORT : 80) : Number(url.port);
  if (!exempt && port !== HTTPS_PORT) {
    throw new SafeFetchError("port_not_allowed", `Port ${port} is not allowed; only ${HTTPS_PORT}.`);
  }
  return { url, exempt };
}

/** Picks the address to dial from a checked answer: an IPv4-mapped IPv6 answer is dialled as its IPv4. */
function dialAddress(c: AddressClassification): string {
  if (c.wrapping === "ipv4Mapped" && c.embedded?.[0]) return c.embedded[0].address;
  return c.family === 6 ? `[${c.address}]` : c.address;
}

/** Resolves once, checks every answer, and fixes the address this hop will connect to. */
async function checkTarget(raw: string | URL, options: SafeFetchOptions, abort: Promise<never>): Promise<CheckedTarget> {
  const { url, exempt } = checkUrlShape(raw, options);
  const literal = parseHostLiteral(url.hostname);
  let addresses: string[];
  let serverName: string | null = null;
  if (literal.kind === "name") {
    serverName = literal.name;
    const resolver = options.resolver ?? systemResolver;
    try {
      addresses = await Promise.race([resolver(literal.name), abort]);
    } catch (cause) {
      if (cause instanceof SafeFetchError) throw cause;
      throw new SafeFetchError("host_unresolvable", `The host ${literal.name} could not be resolved.`, { cause });
    }
    if (addresses.length === 0) {
      throw new SafeFetchError("host_unresolvable", `The host ${literal.name} has no addresses.`);
    }
  } else if (literal.kind === "invalid") {
    throw new SafeFetchError("invalid_url", "The URL has no valid host.");
  } else {
    addresses = [literal.address];
  }
  const classified = addresses.map(classifyAddress);
  if (classified.length === 0 || classified.some((c) => c.family === 0)) {
    throw new SafeFetchError("host_unresolvable", `The host ${url.hostname} resolved to something that is not an address.`);
  }
  if (!exempt) {
    const refused = classified.find((c) => !c.isPublic);
    if (refused) {
      throw new SafeFetchError("host_not_public", `The host ${url.hostname} does not resolve to a public address.`, {
        address: refused,
      });
    }
  }
  return { url, dialHosts: [...new Set(classified.map(dialAddress))], serverName };
}

function isIdentityEncoding(value: string | null): boolean {
  if (value === null) return true;
  const codings = value.split(",").map((v) => v.trim().toLowerCase()).filter((v) => v !== "");
  return codings.every((v) => v === IDENTITY);
}

/** Reads a body, refusing as soon as one byte more than `maxBytes` has arrived. */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new SafeFetchError("too_large", `The response declares ${declared} bytes, over the ${maxBytes}-byte limit.`);
  }
  const body = await readStreamCapped(response.body, maxBytes);
  if (body === null) throw new SafeFetchError("too_large", `The response is over the ${maxBytes}-byte limit.`);
  return body;
}

/** The Host header value: the URL's host as written, with its port unless it is the scheme's default. */
function hostHeader(url: URL): string {
  return url.host;
}

function buildHeaders(base: Headers, target: CheckedTarget): Headers {
  const headers = new Headers(base);
  headers.set("host", hostHeader(target.url));
  headers.set("accept-encoding", IDENTITY);
  return headers;
}

/** Bun's and Node's names for "nothing listens there": safe to try the next checked address, nothing was sent. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set([
  "ConnectionRefused",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);

function isConnectFailure(cause: unknown): boolean {
  const code = cause instanceof Error ? (cause as Error & { code?: unknown }).code : undefined;
  return typeof code === "string" && CONNECT_FAILURES.has(code);
}

/**
 * Sends one hop to the first checked address that accepts a connection (e.g. `localhost` answering ::1
 * first while the peer listens on 127.0.0.1). Network, TLS and abort failures all become fetch_failed.
 */
async function sendHop(
  target: CheckedTarget,
  init: { method: string; headers: Headers; body: string | Uint8Array | undefined },
  signal: AbortSignal,
  extraCa: string | undefined,
): Promise<Response> {
  const tls: { serverName?: string; ca?: string } = {};
  if (target.serverName !== null) tls.serverName = target.serverName;
  if (extraCa !== undefined) tls.ca = extraCa;
  let lastCause: unknown;
  for (const dialHost of target.dialHosts) {
    const dialUrl = new URL(target.url);
    dialUrl.hostname = dialHost;
    if (dialUrl.hostname !== dialHost) {
      // NB: the URL hostname setter ignores input it cannot parse and keeps the NAME, which fetch would then
      // resolve again. Never let that happen silently.
      throw new SafeFetchError("fetch_failed", `Could not address ${dialHost} directly.`);
    }
    try {
      return await fetch(dialUrl, {
        method: init.method,
        headers: buildHeaders(init.headers, target),
        // A copy: the caller's view may sit on a SharedArrayBuffer, which BodyInit does not take.
        body: typeof init.body === "string" || init.body === undefined ? init.body : init.body.slice(),
        redirect: "manual",
        signal,
        tls,
        proxy: false,
        keepalive: true,
        decompress: false,
      });
    } catch (cause) {
      lastCause = cause;
      if (signal.aborted || !isConnectFailure(cause)) break;
    }
  }
  throw new SafeFetchError("fetch_failed", `The request to ${target.url.origin} failed: ${describe(lastCause)}`, {
    cause: lastCause,
  });
}

function describe(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    return typeof code === "string" ? `${code} (${cause.message})` : cause.message;
  }
  return String(cause);
}

/** The method and body a redirect carries on (Fetch standard §4.4 step 12). */
function redirectedRequest(
  status: number,
  method: string,
  body: string | Uint8Array | undefined,
): { method: string; body: string | Uint8Array | undefined } {
  if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
    return { method: "GET", body: undefined };
  }
  return { method, body };
}

/**
 * Fetches a user-supplied URL under every rule of decisions.md §4 and returns the final response,
 * whatever its status, with its body read under the byte cap.
 * Throws SafeFetchError: invalid_url, https_required, port_not_allowed, host_unresolvable, host_not_public,
 * unsupported_encoding, too_many_redirects, too_large, fetch_failed (network, TLS, timeout, abort).
 */
export async function safeFetch(url: string | URL, options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new SafeFetchError("fetch_failed", `The request took longer than ${timeoutMs} ms.`)),
    timeoutMs,
  );
  const onCallerAbort = (): void =>
    controller.abort(new SafeFetchError("fetch_failed", "The request was aborted.", { cause: options.signal?.reason }));
  if (options.signal?.aborted) onCallerAbort();
  options.signal?.addEventListener("abort", onCallerAbort, { once: true });
  // Lookups cannot be cancelled, so they race this promise instead.
  const aborted = new Promise<never>((_, reject) => {
    const fail = (): void => reject(controller.signal.reason);
    if (controller.signal.aborted) fail();
    controller.signal.addEventListener("abort", fail, { once: true });
  });
  aborted.catch(() => undefined);

  try {
    let method = (options.method ?? "GET").toUpperCase();
    let body = options.body;
    const headers = new Headers(options.headers);
    for (const name of RESERVED_HEADERS) headers.delete(name);
    let current: string | URL = url;
    for (let hop = 0; ; hop++) {
      const target = await checkTarget(current, options, aborted);
      const response = await Promise.race([sendHop(target, { method, headers, body }, controller.signal, options.extraCa), aborted]);
      const location = response.headers.get("location");
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        await response.body?.cancel().catch(() => undefined);
        if (hop >= maxRedirects) {
          throw new SafeFetchError("too_many_redirects", `More than ${maxRedirects} redirects.`);
        }
        let next: URL;
        try {
          next = new URL(location, target.url);
        } catch (cause) {
          throw new SafeFetchError("invalid_url", "A redirect pointed to a URL that could not be parsed.", { cause });
        }
        if (next.origin !== target.url.origin) {
          for (const name of CROSS_ORIGIN_STRIPPED) headers.delete(name);
        }
        ({ method, body } = redirectedRequest(response.status, method, body));
        if (body === undefined) headers.delete("content-type");
        current = next;
        continue;
      }
      if (!isIdentityEncoding(response.headers.get("content-encoding"))) {
        await response.body?.cancel().catch(() => undefined);
        throw new SafeFetchError(
          "unsupported_encoding",
          `The response uses Content-Encoding ${response.headers.get("content-encoding")}; only identity is accepted.`,
        );
      }
      const bytes = await Promise.race([readBody(response, maxBytes, target), aborted]);
      return { status: response.status, headers: response.headers, body: bytes, url: target.url.toString() };
    }
  } catch (error) {
    if (error instanceof SafeFetchError) throw error;
    throw new SafeFetchError("fetch_failed", `The request failed: ${describe(error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onCallerAbort);
  }
}

async function readBody(response: Response, maxBytes: number, target: CheckedTarget): Promise<Uint8Array> {
  try {
    return await readCapped(response, maxBytes);
  } catch (error) {
    if (error instanceof SafeFetchError) throw error;
    throw new SafeFetchError("fetch_failed", `Reading the body from ${target.url.origin} failed: ${describe(error)}`, { cause: error });
  }
}

/**
 * `safeFetch`, but a final status outside 2xx throws SafeFetchError("upstream_status") carrying
 * `upstreamStatus`. For ingest and the publishers, where any non-2xx answer is a refusal.
 */
export async function safeFetchOk(url: string | URL, options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
  const response = await safeFetch(url, options);
  if (response.status < 200 || response.status > 299) {
    throw new SafeFetchError("upstream_status", `The server answered ${response.status}.`, { upstreamStatus: response.status });
  }
  return response;
}

/**
 * Checks a destination under every rule safeFetch applies before it connects (shape, scheme, port, a resolution whose
 * every address is public unless exempt), without sending anything: for addresses stored now and called later (event
 * webhooks). Throws SafeFetchError. NB: every later call is checked again, so a name that comes to resolve elsewhere
 * is still refused then.
 */
export async function checkDestination(
  url: string,
  options: Pick<SafeFetchOptions, "requireHttps" | "allowPrivateHosts" | "resolver" | "timeoutMs"> = {},
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abort = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SafeFetchError("host_unresolvable", "The host name could not be resolved in time.")),
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  });
  try {
    await checkTarget(url, options, abort);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a checked destination is dialled: the checked addresses (IPv6 bracketed) and the name for SNI and Host. */
export interface DialPlan {
  url: URL;
  /** The checked addresses, in the resolver's order; connect to one of these, never to the name. */
  dialHosts: string[];
  /** The host name to present (SNI, certificate check); null when the URL host is an IP literal. */
  serverName: string | null;
}

/**
 * Resolves and checks an http(s) destination under every rule safeFetch applies and answers where to dial it, for
 * callers that speak another protocol over the same rule (WebSocket relays: src/lib/safe-websocket.ts). Throws
 * SafeFetchError.
 */
export async function planDial(
  url: string,
  options: Pick<SafeFetchOptions, "requireHttps" | "allowPrivateHosts" | "resolver" | "timeoutMs"> = {},
): Promise<DialPlan> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const abort = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SafeFetchError("host_unresolvable", "The host name could not be resolved in time.")),
      options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
  });
  try {
    return await checkTarget(url, options, abort);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Maps a SafeFetchError to the AppError a route answers with: too_large becomes `tooLargeCode`
 * (image_too_large for ingest), upstream_status carries `upstreamStatus`; any other error is rethrown as is.
 */
export function toAppError(error: unknown, tooLargeCode: "image_too_large" | "payload_too_large" = "image_too_large"): unknown {
  if (!(error instanceof SafeFetchError)) return error;
  if (error.reason === "too_large") return new AppError(tooLargeCode, error.message);
  if (error.reason === "upstream_status") {
    return new AppError("upstream_status", error.message, { upstreamStatus: error.upstreamStatus });
  }
  return new AppError(error.reason, error.message);
}

/** Parses ALLOW_PRIVATE_HOSTS (comma-separated host names) into the set safeFetch takes. */
export function parseAllowPrivateHosts(value: string | undefined): Set<string> {
  const hosts = new Set<string>();
  for (const part of (value ?? "").split(",")) {
    const literal = parseHostLiteral(part.trim());
    if (literal.kind === "name") hosts.add(literal.name);
    else if (literal.kind === "ipv4" || literal.kind === "ipv6") hosts.add(literal.address);
  }
  return hosts;
}
