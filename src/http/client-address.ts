/**
 * The client address of a request, for per-address limits (dashboard login throttling): the address of the socket it
 * came in on. X-Forwarded-For is read only when that socket belongs to a proxy listed in TRUSTED_PROXIES: then the
 * client is the right-most address in it that is not itself a trusted proxy (entries further left were written by
 * whoever sent the request, and may be anything). "local" for requests that came through no server (in-process).
 */
import ipaddr from "ipaddr.js";
import type { Config } from "../config";
import { requestState } from "./request-context";

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

/** An address in canonical form (IPv4-mapped IPv6 as IPv4), or null when it is not an IP address. */
function parse(value: string): Parsed | null {
  const bare = value.trim().replace(/^\[(.*)\]$/, "$1");
  return ipaddr.isValid(bare) ? ipaddr.process(bare) : null;
}

const ranges = new WeakMap<readonly string[], [Parsed, number][]>();
function trustedRanges(list: readonly string[]): [Parsed, number][] {
  let parsed = ranges.get(list);
  if (!parsed) {
    parsed = list.map((entry) => {
      if (entry.includes("/")) return ipaddr.parseCIDR(entry);
      const ip = ipaddr.process(entry);
      return [ip, ip.kind() === "ipv4" ? 32 : 128] as [Parsed, number];
    });
    ranges.set(list, parsed);
  }
  return parsed;
}

function trusted(ip: Parsed, list: readonly string[]): boolean {
  return trustedRanges(list).some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
}

/** The client address of `request` (see above). */
export function clientAddress(config: Pick<Config, "trustedProxies">, request: Request): string {
  const peer = requestState(request)?.peerAddress;
  if (!peer) return "local";
  const peerIp = parse(peer);
  if (!peerIp) return peer;
  if (config.trustedProxies.length === 0 || !trusted(peerIp, config.trustedProxies)) return peerIp.toString();
  const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").reverse();
  for (const hop of hops) {
    const ip = parse(hop);
    if (!ip) break; // a malformed entry: nothing to its left can be believed
    if (!trusted(ip, config.trustedProxies)) return ip.toString();
  }
  return peerIp.toString();
}
