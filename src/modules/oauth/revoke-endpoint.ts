/**
 * POST /oauth/revoke (RFC 7009): revokes the grant behind an access or refresh token. 200 whatever the token was
 * (unknown, expired, already revoked, another client's: nothing is said about it, RFC 7009 §2.2).
 */
import type { Deps } from "../../deps";
import { optionalClient } from "./client-auth";
import { OAuthError, oauthErrorResponse } from "./errors";
import { parseForm } from "./form";
import { revokeToken } from "./service";

export async function revokeEndpoint(deps: Deps, request: Request, body: unknown): Promise<Response> {
  try {
    const form = parseForm(request, body);
    const client = await optionalClient(deps, request, form);
    const token = form.get("token");
    if (!token) throw new OAuthError("invalid_request", "token is required.");
    await revokeToken(deps, token, client?.id ?? null);
    return new Response(null, { status: 200, headers: { "cache-control": "no-store" } });
  } catch (error) {
    if (error instanceof OAuthError) return oauthErrorResponse(error);
    throw error;
  }
}
