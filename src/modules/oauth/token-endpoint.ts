/**
 * POST /oauth/token (RFC 6749 §3.2, OAuth 2.1 §3.2): the authorization_code and refresh_token grants. Answers the
 * token pair, or an RFC 6749 §5.2 error; never cached.
 */
import type { Deps } from "../../deps";
import { exchangeCode } from "./codes";
import { authenticateClient } from "./client-auth";
import { OAuthError, oauthErrorResponse, oauthJson } from "./errors";
import { parseForm } from "./form";
import { refreshGrant, tokenResponseBody } from "./service";

/** Answers a token request. */
export async function tokenEndpoint(deps: Deps, request: Request, body: unknown): Promise<Response> {
  try {
    const form = parseForm(request, body);
    const grantType = form.get("grant_type");
    if (!grantType) throw new OAuthError("invalid_request", "grant_type is required.");
    if (grantType !== "authorization_code" && grantType !== "refresh_token") {
      throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
    }
    const client = await authenticateClient(deps, request, form);
    if (grantType === "authorization_code") {
      const code = form.get("code");
      if (!code) throw new OAuthError("invalid_request", "code is required.");
      const pair = await exchangeCode(deps, {
        code,
        clientId: client.id,
        redirectUri: form.get("redirect_uri") ?? null,
        codeVerifier: form.get("code_verifier") ?? null,
        resource: form.get("resource") ?? null,
      });
      return oauthJson(200, tokenResponseBody(pair));
    }
    const refreshToken = form.get("refresh_token");
    if (!refreshToken) throw new OAuthError("invalid_request", "refresh_token is required.");
    const pair = await refreshGrant(deps, {
      refreshToken,
      clientId: client.id,
      scope: form.get("scope") ?? null,
      resource: form.get("resource") ?? null,
    });
    return oauthJson(200, tokenResponseBody(pair));
  } catch (error) {
    if (error instanceof OAuthError) return oauthErrorResponse(error);
    throw error;
  }
}
