/**
 * What a Nostr connection stores and how it is read back: the relays (1–10, `wss://`, or `ws://` for a host in
 * ALLOW_PRIVATE_HOSTS) are the connection's endpoint, comma-separated and in clear; the secret key (hex) and the
 * optional Blossom server are in the sealed credentials.
 */
import type { Deps } from "../../../deps";
import { outboundProblem } from "../../outbound";

/** Relays a connection may list (decisions.md §12). */
export const MAX_RELAYS = 10;

/** Separator of the relays in the stored endpoint. */
const RELAY_SEPARATOR = ",";

/** The relays of a stored endpoint. */
export function relaysOf(endpoint: string): string[] {
  return endpoint.split(RELAY_SEPARATOR).filter((r) => r !== "");
}

/** The stored endpoint of a list of relays. */
export function endpointOf(relays: readonly string[]): string {
  return relays.join(RELAY_SEPARATOR);
}

/** A relay address that cannot be used, with the sentence that says why; thrown by normalizeRelays. */
export class RelayListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RelayListError";
  }
}

function isExempt(deps: Pick<Deps, "config">, url: URL): boolean {
  return deps.config.allowPrivateHosts.has(url.hostname.toLowerCase().replace(/^\[|\]$/g, ""));
}

/**
 * Reads a typed list of relays (comma, space or line separated; `wss://` assumed when no scheme is typed) into
 * normalised, de-duplicated URLs. Throws RelayListError with a sentence per mistake: none, more than 10, not a URL,
 * http(s) instead of a WebSocket, `ws://` to a host not in ALLOW_PRIVATE_HOSTS, a non-public host or port.
 */
export function normalizeRelays(deps: Pick<Deps, "config">, typed: string | readonly string[]): string[] {
  const raw = (typeof typed === "string" ? typed.split(/[\s,]+/) : typed.flatMap((t) => t.split(/[\s,]+/))).map((r) => r.trim()).filter((r) => r !== "");
  if (raw.length === 0) throw new RelayListError("List at least one relay, such as wss://relay.damus.io.");
  const relays: string[] = [];
  for (const entry of raw) {
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `wss://${entry}`);
    } catch {
      throw new RelayListError(`"${entry}" is not a relay address. Relays look like wss://relay.example.com.`);
    }
    if (url.protocol === "http:" || url.protocol === "https:") {
      throw new RelayListError(`${entry} is a web address; a relay address starts with wss:// (for example wss://${url.host}${url.pathname === "/" ? "" : url.pathname}).`);
    }
    if (url.protocol === "ws:" && !isExempt(deps, url)) {
      throw new RelayListError(`${entry} is not encrypted (ws://). Use wss://; plain ws:// is only for hosts your instance admin lists in ALLOW_PRIVATE_HOSTS.`);
    }
    if (url.protocol !== "wss:" && url.protocol !== "ws:") {
      throw new RelayListError(`${entry} is not a relay address. Relays look like wss://relay.example.com.`);
    }
    // The one outbound rule (credentials in the address, port 443) applies as to any address, on its http twin.
    const problem = outboundProblem(deps, `${url.protocol === "wss:" ? "https:" : "http:"}//${url.host}${url.pathname}`);
    if (problem !== null) throw new RelayListError(`${entry}: ${problem.replace("https", "wss")}`);
    const normal = url.toString().replace(/\/+$/, "");
    if (!relays.includes(normal)) relays.push(normal);
  }
  if (relays.length > MAX_RELAYS) throw new RelayListError(`${relays.length} relays are listed; a connection can use at most ${MAX_RELAYS}. Remove some.`);
  return relays;
}

/** A Blossom server address typed by a person, normalised (https assumed), or null when none was typed. */
export function normalizeBlossom(deps: Pick<Deps, "config">, typed: string | undefined): string | null {
  const entry = (typed ?? "").trim();
  if (entry === "") return null;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `https://${entry}`);
  } catch {
    throw new RelayListError(`"${entry}" is not a Blossom server address. It looks like https://blossom.example.com.`);
  }
  const problem = outboundProblem(deps, url.toString());
  if (problem !== null) throw new RelayListError(`The Blossom server ${entry} cannot be used: ${problem}`);
  return url.toString().replace(/\/+$/, "");
}
