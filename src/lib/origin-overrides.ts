/**
 * PLATFORM_ORIGIN_OVERRIDES (decisions.md §12): `host=origin` pairs that send every call and every browser redirect
 * meant for `https://<host>/…` to `<origin>/…`, same path and query. For tests and private mirrors; the overridden
 * origins are exempt from the public-address and https rules, because the operator named them.
 */
import { parseHostLiteral } from "./net-address.ts";

/** host (lower case) → origin (`scheme://host[:port]`, no trailing slash). */
export type OriginOverrides = ReadonlyMap<string, string>;

/** The one kind of failure: what is wrong with the value, in words naming the pair. */
export class OriginOverrideError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OriginOverrideError";
  }
}

/**
 * Parses `api.x.com=http://127.0.0.1:9101,x.com=http://127.0.0.1:9101` (blank: none). Each host is a bare host
 * name (no scheme, port or path); each origin an http(s) origin with nothing after it. Throws OriginOverrideError.
 */
export function parseOriginOverrides(raw: string | undefined): Map<string, string> {
  const overrides = new Map<string, string>();
  for (const pair of (raw ?? "").split(",").map((p) => p.trim()).filter(Boolean)) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new OriginOverrideError(`"${pair}" is not host=origin.`);
    const host = pair.slice(0, eq).trim().toLowerCase();
    const target = pair.slice(eq + 1).trim();
    const literal = parseHostLiteral(host);
    if (literal.kind !== "name") {
      throw new OriginOverrideError(`"${host}" is not a bare host name (no scheme, port, path or IP address).`);
    }
    let origin: URL;
    try {
      origin = new URL(target);
    } catch {
      throw new OriginOverrideError(`"${target}" (for ${host}) is not a URL.`);
    }
    if (origin.protocol !== "http:" && origin.protocol !== "https:") {
      throw new OriginOverrideError(`"${target}" (for ${host}) must be an http or https origin.`);
    }
    if (origin.username || origin.password || (origin.pathname !== "/" && origin.pathname !== "") || origin.search || origin.hash) {
      throw new OriginOverrideError(`"${target}" (for ${host}) must be an origin only: scheme, host and port, no path.`);
    }
    if (overrides.has(literal.name)) throw new OriginOverrideError(`${literal.name} is named twice.`);
    overrides.set(literal.name, origin.origin);
  }
  return overrides;
}

/**
 * Where a call to `url` really goes: the overridden URL when `url` is `https://<host>/…` with `host` overridden
 * (same path and query), else null. A URL that does not parse, or any other scheme, is never overridden.
 */
export function overriddenUrl(overrides: OriginOverrides, url: string): string | null {
  if (overrides.size === 0) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== "https:" || (parsed.port !== "" && parsed.port !== "443")) return null;
  const host = parsed.hostname.toLowerCase();
  const origin = overrides.get(host.endsWith(".") ? host.slice(0, -1) : host);
  if (origin === undefined) return null;
  return `${origin}${parsed.pathname}${parsed.search}`;
}

/** The host an overridden origin points at, as safeFetch's allowPrivateHosts takes it (IPv6 unbracketed). */
export function overrideTargetHost(origin: string): string {
  const hostname = new URL(origin).hostname;
  const literal = parseHostLiteral(hostname);
  if (literal.kind === "name") return literal.name;
  return literal.kind === "invalid" ? hostname : literal.address;
}
