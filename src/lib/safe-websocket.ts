/**
 * WebSocket connections to addresses a user supplied (Nostr relays) under the same outbound rule as safe-fetch.ts:
 * the name is resolved once, every answer is checked (public addresses only, unless the host is in
 * ALLOW_PRIVATE_HOSTS, which alone allows plain `ws://` and ports other than 443), and the socket is opened to the
 * checked IP with the original `Host` header and `tls.serverName`. Bun 1.4.5's WebSocket sends that name as SNI and
 * verifies the certificate against it (checked by test/safe-websocket.test.ts), so a rebinding answer between check
 * and connect cannot move the socket.
 */
import { SafeFetchError, planDial, type Resolver } from "./safe-fetch";

/** Options of one safe WebSocket. */
export interface SafeWebSocketOptions {
  /** Host names (lower case) exempt from the public-address, port-443 and wss rules: ALLOW_PRIVATE_HOSTS. */
  allowPrivateHosts?: ReadonlySet<string>;
  /** Budget for the lookup and the opening handshake; over it is `fetch_failed`. */
  timeoutMs?: number;
  resolver?: Resolver;
  /** Extra trusted CA (PEM), for tests; production trusts extra CAs through NODE_EXTRA_CA_CERTS. */
  extraCa?: string;
}

const DEFAULT_OPEN_TIMEOUT_MS = 10_000;

/** `ws:`/`wss:` → `http:`/`https:`, so the one URL rule of safe-fetch applies; anything else is refused. */
function asHttpUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new SafeFetchError("invalid_url", "The URL could not be parsed.", { cause });
  }
  if (url.protocol !== "wss:" && url.protocol !== "ws:") {
    throw new SafeFetchError("https_required", `The URL scheme ${url.protocol} is not allowed; use wss.`);
  }
  return `${url.protocol === "wss:" ? "https:" : "http:"}${raw.slice(raw.indexOf(":") + 1)}`;
}

/** Opens one socket and waits for it to open, fail or run out of time. */
function openOne(dialUrl: string, host: string, tls: Record<string, string>, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    // Bun's WebSocket takes headers and tls as a second argument (not in the DOM typings).
    const ws = new WebSocket(dialUrl, { headers: { host }, tls } as unknown as string[]);
    const timer = setTimeout(() => {
      ws.close();
      reject(new SafeFetchError("fetch_failed", `The connection took longer than ${timeoutMs} ms to open.`));
    }, timeoutMs);
    ws.onopen = () => {
      clearTimeout(timer);
      ws.onopen = null;
      ws.onerror = null;
      resolve(ws);
    };
    ws.onerror = (event) => {
      clearTimeout(timer);
      const message = (event as ErrorEvent).message || "the connection could not be opened";
      reject(new SafeFetchError("fetch_failed", message));
    };
  });
}

/**
 * Opens a WebSocket to `url` (`wss://`, or `ws://` for an ALLOW_PRIVATE_HOSTS host) under the outbound rule, trying
 * each checked address in turn. Answers the open socket. Throws SafeFetchError (invalid_url, https_required,
 * port_not_allowed, host_unresolvable, host_not_public, fetch_failed).
 */
export async function openSafeWebSocket(url: string, options: SafeWebSocketOptions = {}): Promise<WebSocket> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_OPEN_TIMEOUT_MS;
  const plan = await planDial(asHttpUrl(url), {
    requireHttps: false,
    timeoutMs,
    ...(options.allowPrivateHosts ? { allowPrivateHosts: options.allowPrivateHosts } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
  });
  const tls: Record<string, string> = {};
  if (plan.serverName !== null) tls.serverName = plan.serverName;
  if (options.extraCa !== undefined) tls.ca = options.extraCa;
  const scheme = plan.url.protocol === "https:" ? "wss:" : "ws:";
  let last: unknown;
  for (const dialHost of plan.dialHosts) {
    const dial = new URL(plan.url);
    dial.hostname = dialHost;
    if (dial.hostname !== dialHost) throw new SafeFetchError("fetch_failed", `Could not address ${dialHost} directly.`);
    try {
      return await openOne(`${scheme}//${dial.host}${dial.pathname}${dial.search}`, plan.url.host, tls, timeoutMs);
    } catch (error) {
      last = error;
    }
  }
  throw last instanceof SafeFetchError ? last : new SafeFetchError("fetch_failed", "The connection could not be opened.", { cause: last });
}
