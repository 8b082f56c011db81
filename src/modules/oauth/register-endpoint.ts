/**
 * POST /oauth/register (RFC 7591): open dynamic registration, limited per client address so nobody fills the table.
 */
import type { Deps } from "../../deps";
import type { Limiter } from "../../http/rate-limit";
import { registerClient } from "./clients";
import { OAuthError, oauthErrorResponse, oauthJson } from "./errors";
import { rawText } from "./form";

/** Registrations per client address per minute (bursts up to the same number). */
export const REGISTRATIONS_PER_MINUTE = 20;

export async function registerEndpoint(
  deps: Deps,
  limiter: Limiter,
  address: string,
  request: Request,
  body: unknown,
): Promise<Response> {
  try {
    const wait = await limiter.take(address);
    if (wait > 0) {
      return oauthErrorResponse(new OAuthError("temporarily_unavailable", `Too many registrations from this address; retry in ${wait} s.`), {
        "retry-after": String(wait),
      });
    }
    const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") throw new OAuthError("invalid_client_metadata", "The body must be application/json.");
    let metadata: unknown;
    try {
      metadata = JSON.parse(rawText(body));
    } catch (error) {
      if (error instanceof OAuthError) throw error;
      throw new OAuthError("invalid_client_metadata", "The body is not valid JSON.");
    }
    return oauthJson(201, await registerClient(deps, metadata));
  } catch (error) {
    if (error instanceof OAuthError) {
      // RFC 7591 §3.2.2 names only its own codes; an oversized body is invalid_client_metadata too.
      const shaped = error.code === "invalid_request" ? new OAuthError("invalid_client_metadata", error.message) : error;
      return oauthErrorResponse(shaped);
    }
    throw error;
  }
}
