/**
 * Which IP addresses an outbound call to a user-supplied address may reach (decisions.md §4, "resolves
 * publicly"). The rule is an allow-list: only global unicast space is public; everything ipaddr.js names
 * as special (loopback, private, link-local, CGNAT, multicast, reserved, documentation, benchmarking, ULA,
 * site-local, ...) is refused. IPv6 forms that carry an IPv4 address (mapped, compatible, SIIT-translated,
 * NAT64, 6to4, Teredo) are unwrapped and the carried IPv4 is judged too, so `::ffff:127.0.0.1` or
 * `64:ff9b::a9fe:a9fe` cannot smuggle a private target past the check.
 */
import ipaddr from "ipaddr.js";

/** ipaddr.js range names that are reachable on the public Internet. */
const PUBLIC_V4_RANGES: ReadonlySet<string> = new Set(["unicast", "as112", "amt"]);
const PUBLIC_V6_RANGES: ReadonlySet<string> = new Set(["unicast", "as112v6", "amt"]);

/** 2000::/3, the only IPv6 space IANA allocates as global unicast; anything outside it is not public. */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/** How an embedded IPv4 address was carried inside an IPv6 one. */
export type Ipv4Wrapping =
  | "ipv4Mapped" // ::ffff:a.b.c.d — the OS dials the IPv4 address itself
  | "ipv4Compatible" // ::a.b.c.d — deprecated (RFC 4291), always refused
  | "ipv4Translated" // ::ffff:0:a.b.c.d (RFC 6145)
  | "nat64" // 64:ff9b::/96 (RFC 6052) — the translator dials the IPv4 address
  | "nat64Local" // 64:ff9b:1::/48 (RFC 8215) — local-use translators, always refused
  | "6to4" // 2002:AABB:CCDD::/48
  | "teredo"; // 2001:0::/32, server and (inverted) client IPv4

/** The verdict on one address, with the reason a human can read in a log. */
export interface AddressClassification {
  /** The address in canonical form, or the input when it is not an IP address at all. */
  address: string;
  /** 4 or 6; 0 when the input is not an IP address. */
  family: 0 | 4 | 6;
  /** The ipaddr.js range that decided ("unicast", "loopback", "private", ...), "invalid" or "outsideGlobalUnicast". */
  range: string;
  /** Set when an IPv4 address was found inside an IPv6 one. */
  wrapping?: Ipv4Wrapping;
  /** The IPv4 addresses unwrapped from an IPv6 form, each judged on its own. */
  embedded?: AddressClassification[];
  /** True only for public unicast: the one verdict that lets a connection proceed. */
  isPublic: boolean;
}

function ipv4FromWords(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([(high >> 8) & 0xff, high & 0xff, (low >> 8) & 0xff, low & 0xff]);
}

function classifyV4(ip: ipaddr.IPv4): AddressClassification {
  const range = ip.range();
  return { address: ip.toString(), family: 4, range, isPublic: PUBLIC_V4_RANGES.has(range) };
}

/** Finds an IPv4 address carried by an IPv6 one; ipaddr.js names most of these forms as ranges. */
function unwrapV6(ip: ipaddr.IPv6, range: string): { wrapping: Ipv4Wrapping; v4: ipaddr.IPv4[] } | null {
  const p = ip.parts;
  const w = (i: number): number => p[i] ?? 0;
  switch (range) {
    case "ipv4Mapped":
      return { wrapping: "ipv4Mapped", v4: [ip.toIPv4Address()] };
    case "rfc6145":
      return { wrapping: "ipv4Translated", v4: [ipv4FromWords(w(6), w(7))] };
    case "rfc6052":
      // 64:ff9b::/96 carries the IPv4 in the last 32 bits; the /48 local-use prefix may place it elsewhere,
      // so for it the last 32 bits are only reported, and the address is refused whatever they hold.
      return { wrapping: w(2) === 0x1 ? "nat64Local" : "nat64", v4: [ipv4FromWords(w(6), w(7))] };
    case "6to4":
      return { wrapping: "6to4", v4: [ipv4FromWords(w(1), w(2))] };
    case "teredo":
      return { wrapping: "teredo", v4: [ipv4FromWords(w(2), w(3)), ipv4FromWords(~w(6) & 0xffff, ~w(7) & 0xffff)] };
    default:
      // ::a.b.c.d (IPv4-compatible, deprecated); ipaddr.js has no name for it. :: and ::1 are handled before.
      if (range === "unicast" && p.slice(0, 6).every((x) => x === 0)) {
        return { wrapping: "ipv4Compatible", v4: [ipv4FromWords(w(6), w(7))] };
      }
      return null;
  }
}

function classifyV6(ip: ipaddr.IPv6): AddressClassification {
  const address = ip.toString();
  if (ip.zoneId !== undefined) {
    // A zone index only makes sense for link-scoped addresses; never public.
    return { address, family: 6, range: "zoned", isPublic: false };
  }
  const range = ip.range();
  const unwrapped = unwrapV6(ip, range);
  if (unwrapped) {
    const embedded = unwrapped.v4.map(classifyV4);
    const alwaysRefused = unwrapped.wrapping === "ipv4Compatible" || unwrapped.wrapping === "nat64Local";
    const isPublic = !alwaysRefused && embedded.every((e) => e.isPublic);
    return { address, family: 6, range, wrapping: unwrapped.wrapping, embedded, isPublic };
  }
  if (!PUBLIC_V6_RANGES.has(range)) {
    return { address, family: 6, range, isPublic: false };
  }
  if (!ip.match(IPV6_GLOBAL_UNICAST)) {
    return { address, family: 6, range: "outsideGlobalUnicast", isPublic: false };
  }
  return { address, family: 6, range, isPublic: true };
}

/**
 * Canonical IPv6 text via the WHATWG URL parser, or null. NB: ipaddr.js reads the deprecated `::a.b.c.d`
 * as IPv4-mapped; the URL parser (like the kernel) reads it as `::AABB:CCDD`, which is what gets dialled.
 */
function canonicalIpv6(text: string): string | null {
  if (!text.includes(":")) return null;
  try {
    const hostname = new URL(`https://[${text}]/`).hostname;
    const inner = hostname.slice(1, -1);
    return ipaddr.IPv6.isValid(inner) ? inner : null;
  } catch {
    return null;
  }
}

/**
 * Classifies one IP address (as DNS answers it, or as a URL host literal, brackets allowed).
 * Anything that is not a strictly valid IP address comes back `{ family: 0, range: "invalid", isPublic: false }`.
 * NB: this takes canonical dotted-quad IPv4 only; run URL hosts through `parseHostLiteral` first so that
 * `2130706433` or `0x7f.1` are normalised the way the connection would read them.
 */
export function classifyAddress(ip: string): AddressClassification {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) {
    return classifyV4(ipaddr.IPv4.parse(bare));
  }
  if (bare.includes("%") && ipaddr.IPv6.isValid(bare)) {
    return classifyV6(ipaddr.IPv6.parse(bare));
  }
  const v6 = canonicalIpv6(bare);
  if (v6 !== null) {
    return classifyV6(ipaddr.IPv6.parse(v6));
  }
  return { address: ip, family: 0, range: "invalid", isPublic: false };
}

/** True when `ip` is a public unicast address a user-supplied URL may reach. */
export function isPublicUnicast(ip: string): boolean {
  return classifyAddress(ip).isPublic;
}

/** A URL host, read the way the WHATWG URL parser (and so fetch) reads it. */
export type HostLiteral =
  | { kind: "ipv4"; address: string }
  | { kind: "ipv6"; address: string }
  | { kind: "name"; name: string }
  | { kind: "invalid" };

/**
 * Normalises a URL host: IPv4 in any notation WHATWG accepts (decimal `2130706433`, octal `0177.0.0.1`,
 * hex `0x7f.1`, short `127.1`, percent-encoded, full-width digits, trailing dot) becomes dotted-quad;
 * `[v6]` becomes canonical IPv6 without brackets; a DNS name comes back lower-cased without a trailing dot.
 * Uses the runtime's own WHATWG URL parser on purpose, so the check reads a host exactly as fetch will.
 */
export function parseHostLiteral(host: string): HostLiteral {
  if (host === "" || /[/?#@\\\s]/.test(host)) {
    return { kind: "invalid" };
  }
  if (!host.startsWith("[") && host.includes(":")) {
    // A bare IPv6 literal (as DNS answers it); anything else with a colon is a host:port, not a host.
    const inner = canonicalIpv6(host);
    return inner !== null ? { kind: "ipv6", address: ipaddr.IPv6.parse(inner).toString() } : { kind: "invalid" };
  }
  let hostname: string;
  try {
    hostname = new URL(`https://${host}/`).hostname;
  } catch {
    return { kind: "invalid" };
  }
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    const inner = canonicalIpv6(hostname.slice(1, -1));
    return inner !== null ? { kind: "ipv6", address: ipaddr.IPv6.parse(inner).toString() } : { kind: "invalid" };
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(hostname)) {
    return { kind: "ipv4", address: hostname };
  }
  const name = hostname.endsWith(".") ? hostname.slice(0, -1) : hostname;
  return name === "" ? { kind: "invalid" } : { kind: "name", name };
}

/**
 * True when a listen address (`HOST`) reaches the loopback interface only: `localhost`, 127.0.0.0/8 or ::1.
 * `0.0.0.0`, `::` and every other address are reachable from elsewhere.
 */
export function isLoopbackOnlyHost(host: string): boolean {
  const bare = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (bare === "localhost") return true;
  if (!ipaddr.isValid(bare)) return false;
  const ip = ipaddr.process(bare);
  return ip.range() === "loopback";
}
