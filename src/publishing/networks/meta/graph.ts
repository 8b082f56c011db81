/**
 * What Meta's Graph APIs (Facebook, Instagram, Threads) have in common: the error object
 * (https://developers.facebook.com/docs/graph-api/guides/error-handling: `{error: {message, type, code,
 * error_subcode, fbtrace_id}}`), its classification, form-encoded calls through providerFetch, and whether BASE_URL
 * is an address Meta's servers can fetch images from.
 */
import type { Deps } from "../../../deps";
import { parseHostLiteral, isPublicUnicast } from "../../../lib/net-address";
import { DeliveryError } from "../../connector";
import { providerFetch } from "../../outbound";

/** Graph error codes that mean the token is no longer good (190 invalid/expired token, 102 session, 463/467 expired). */
const TOKEN_CODES = new Set([102, 190, 463, 467]);
/** Graph error codes that mean "too many calls, later" (4 app limit, 17 user limit, 32 page limit, 613, 80001…). */
const THROTTLE_CODES = new Set([4, 17, 32, 341, 613, 80001, 80002]);

/** A Graph error as read from an answer. */
export interface GraphError {
  status: number;
  message: string;
  code: number | null;
  subcode: number | null;
}

/** Reads a Graph answer's JSON, or null when it is not JSON. */
export async function graphJson(res: Response): Promise<Record<string, unknown> | null> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as unknown;
    return body !== null && typeof body === "object" ? (body as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The error of a Graph answer `body` (status `status`). */
export function graphError(status: number, body: Record<string, unknown> | null): GraphError {
  const error = body?.error;
  if (error !== null && typeof error === "object") {
    const e = error as Record<string, unknown>;
    const message = typeof e.error_user_msg === "string" && e.error_user_msg !== "" ? e.error_user_msg : typeof e.message === "string" ? e.message : `HTTP ${status}`;
    return { status, message, code: typeof e.code === "number" ? e.code : null, subcode: typeof e.error_subcode === "number" ? e.error_subcode : null };
  }
  return { status, message: `HTTP ${status}`, code: null, subcode: null };
}

/** True when the error says the token is gone (reconnect). */
export function isTokenError(e: GraphError): boolean {
  return (e.code !== null && TOKEN_CODES.has(e.code)) || e.status === 401;
}

/** A Graph refusal as a DeliveryError: token → auth; throttling, 5xx → transient; the rest permanent (Meta's words). */
export function graphFailure(network: string, what: string, e: GraphError): DeliveryError {
  if (isTokenError(e)) return new DeliveryError("auth", `${network} no longer accepts Seedcast's sign-in (${e.message}): reconnect ${network}.`);
  if (e.status >= 500 || e.status === 429 || (e.code !== null && THROTTLE_CODES.has(e.code)) || e.code === 1 || e.code === 2) {
    return new DeliveryError("transient", `${network} could not take the ${what} just now: ${e.message}`);
  }
  return new DeliveryError("permanent", `${network} refused the ${what}: ${e.message}`);
}

/** Calls `url` with `params` (form-encoded for POST, in the query for GET) and the access token; answers status and JSON. */
export async function graphCall(
  deps: Pick<Deps, "config">,
  method: "GET" | "POST" | "DELETE",
  url: string,
  params: Record<string, string>,
  token: string | null,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const all = new URLSearchParams(params);
  if (token !== null) all.set("access_token", token);
  const res =
    method === "GET" || method === "DELETE"
      ? await providerFetch(deps, `${url}?${all}`, { method })
      : await providerFetch(deps, url, { method, headers: { "content-type": "application/x-www-form-urlencoded" }, body: all.toString() });
  return { status: res.status, body: await graphJson(res) };
}

/**
 * True when Meta's servers can fetch from BASE_URL: https on a public name or address, or a host named in
 * ALLOW_PRIVATE_HOSTS (tests, private mirrors) (decisions.md §12).
 */
export function baseUrlFetchable(deps: Pick<Deps, "config">): boolean {
  let url: URL;
  try {
    url = new URL(deps.config.baseUrl);
  } catch {
    return false;
  }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (deps.config.allowPrivateHosts.has(host)) return true;
  if (url.protocol !== "https:") return false;
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")) return false;
  const literal = parseHostLiteral(host);
  if (literal.kind === "ipv4" || literal.kind === "ipv6") return isPublicUnicast(literal.address);
  return literal.kind === "name" && host.includes(".");
}
