/**
 * The OAuth authorization server (decisions.md §9): discovery, registration, authorization (with the dashboard's
 * session, login and CSRF), token and revocation. Issuer = BASE_URL; every token is bound to `{base_url}/mcp`.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { createRateLimiter } from "../../http/rate-limit";
import { clientAddress } from "../../http/client-address";
import { type DashboardCtx, bodyRefusedPage } from "../../web/guard";
import type { Form } from "../../web/http";
import { BodyRefused, formParser } from "../../http/form-body";
import { getAuthorize, postAuthorize } from "./authorize-endpoint";
import { preflight, withCors } from "./cors";
import { oauthJson } from "./errors";
import { keepRawBody } from "./form";
import { authorizationServerMetadata, protectedResourceMetadata } from "./metadata";
import { authorizationServerDoc, authorizeDoc, protectedResourceDoc, registerDoc, revokeDoc, tokenDoc } from "./model";
import { REGISTRATIONS_PER_MINUTE, registerEndpoint } from "./register-endpoint";
import { revokeEndpoint } from "./revoke-endpoint";
import { tokenEndpoint } from "./token-endpoint";

const TAG = "OAuth";
/** The consent form carries a handful of short fields: anything larger is refused unread. */
const CONSENT_FORM_MAX_BYTES = 16 * 1024;
const doc = (summary: string, description: string, extra: object = {}) => ({ summary, description, tags: [TAG], security: [], ...extra });

/** Builds the OAuth module. */
export function oauthModule(deps: Deps) {
  const ctx: DashboardCtx = { deps };
  const registrations = createRateLimiter(deps, "register", REGISTRATIONS_PER_MINUTE);
  const metadataAnswer = (body: Record<string, unknown>) =>
    withCors(new Response(JSON.stringify(body), { headers: { "content-type": "application/json", "cache-control": "public, max-age=3600" } }));
  const prm = doc("Protected resource metadata (RFC 9728)", "Where the MCP endpoint's tokens come from.", protectedResourceDoc);
  return new Elysia({ name: "seedcast.oauth" })
    .get("/.well-known/oauth-protected-resource/mcp", () => metadataAnswer(protectedResourceMetadata(deps)), { detail: prm })
    .get("/.well-known/oauth-protected-resource", () => metadataAnswer(protectedResourceMetadata(deps)), { detail: prm })
    .get("/.well-known/oauth-authorization-server", () => metadataAnswer(authorizationServerMetadata(deps)), {
      detail: doc("Authorization server metadata (RFC 8414)", "Endpoints and capabilities of Seedcast's OAuth authorization server.", authorizationServerDoc),
    })
    .options("/.well-known/oauth-protected-resource/mcp", () => preflight(), { detail: { hide: true } })
    .options("/.well-known/oauth-protected-resource", () => preflight(), { detail: { hide: true } })
    .options("/.well-known/oauth-authorization-server", () => preflight(), { detail: { hide: true } })
    .post(
      "/oauth/register",
      async ({ request, body }) => withCors(await registerEndpoint(deps, registrations, clientAddress(deps.config, request), request, body)),
      {
        parse: keepRawBody,
        detail: doc("Register a client (RFC 7591)", "Open dynamic client registration, limited per address. Answers 201 with the client_id (and a client_secret for confidential clients).", registerDoc),
      },
    )
    .options("/oauth/register", () => preflight(), { detail: { hide: true } })
    .get("/oauth/authorize", ({ request }) => getAuthorize(ctx, request), {
      detail: doc("Authorization endpoint", "Signs the person in to the dashboard if needed and asks for consent; redirects back with code, state and iss.", authorizeDoc),
    })
    .post(
      "/oauth/authorize",
      ({ request, body }) => (body instanceof BodyRefused ? bodyRefusedPage(body) : postAuthorize(ctx, request, (body ?? undefined) as Form | undefined)),
      { detail: { hide: true }, parse: formParser(CONSENT_FORM_MAX_BYTES) },
    )
    .post("/oauth/token", async ({ request, body }) => withCors(await tokenEndpoint(deps, request, body)), {
      parse: keepRawBody,
      detail: doc("Token endpoint", "authorization_code (with PKCE S256) and refresh_token grants, form-encoded. Answers {access_token, token_type, expires_in, refresh_token, scope}.", tokenDoc),
    })
    .options("/oauth/token", () => preflight(), { detail: { hide: true } })
    .post("/oauth/revoke", async ({ request, body }) => withCors(await revokeEndpoint(deps, request, body)), {
      parse: keepRawBody,
      detail: doc("Revoke a token (RFC 7009)", "Revokes an access or refresh token and its grant. Always 200 for any token.", revokeDoc),
    })
    .options("/oauth/revoke", () => preflight(), { detail: { hide: true } })
    .all("/oauth/*", () => oauthJson(404, { error: "not_found", error_description: "No such OAuth endpoint." }), { detail: { hide: true } });
}
