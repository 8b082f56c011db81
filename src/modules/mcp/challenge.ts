/**
 * The HTTP refusals of /mcp before any MCP message is handled (decisions.md §9, RFC 6750 §3, RFC 9728 §5.1):
 *
 * - 401 with `WWW-Authenticate: Bearer resource_metadata="{base_url}/.well-known/oauth-protected-resource/mcp"`, plus
 *   `error="invalid_token"` when a token was sent (an API key, an unknown, expired or revoked token). Without a
 *   token the challenge carries no error code, as RFC 6750 asks.
 * - 403 with `Bearer error="insufficient_scope", scope="<group>", resource_metadata="..."`: a tool outside the grant.
 *   The client may ask the person for that group (step-up) and retry.
 * - 403 for a browser Origin other than base_url (DNS rebinding, cross-site use).
 *
 * Bodies are small JSON objects: OAuth's `{error, error_description}` for the Bearer answers, a JSON-RPC error for
 * the Origin refusal (the shape the SDK's own guards answer with).
 */
import { SCOPE_LABELS, type Scope } from "../auth/scopes";

/** The path of the protected resource metadata of /mcp (RFC 9728 §3.1: well-known prefix + the resource's path). */
export const PROTECTED_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";

const JSON_TYPE = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } as const;

/** `{base_url}/.well-known/oauth-protected-resource/mcp` */
export function resourceMetadataUrl(baseUrl: string): string {
  return `${baseUrl}${PROTECTED_RESOURCE_METADATA_PATH}`;
}

/** The 401 of a request without a working access token; `tokenSent` adds `error="invalid_token"`. */
export function unauthorizedResponse(baseUrl: string, tokenSent: boolean): Response {
  const metadata = `resource_metadata="${resourceMetadataUrl(baseUrl)}"`;
  const challenge = tokenSent ? `Bearer error="invalid_token", ${metadata}` : `Bearer ${metadata}`;
  const body = tokenSent
    ? {
        error: "invalid_token",
        error_description: "This endpoint takes an OAuth access token from Seedcast's sign-in; this one is not valid (API keys are not accepted here).",
      }
    : { error: "unauthorized", error_description: "Sign in first: this endpoint takes an OAuth access token (see resource_metadata)." };
  return new Response(JSON.stringify(body), { status: 401, headers: { ...JSON_TYPE, "www-authenticate": challenge } });
}

/** The 403 of a tool whose group the grant lacks. */
export function insufficientScopeResponse(baseUrl: string, group: Scope, tool: string): Response {
  const challenge = `Bearer error="insufficient_scope", scope="${group}", resource_metadata="${resourceMetadataUrl(baseUrl)}"`;
  const body = {
    error: "insufficient_scope",
    error_description: `${tool} needs the ${SCOPE_LABELS[group]} group (${group}), which this connection was not granted.`,
    scope: group,
  };
  return new Response(JSON.stringify(body), { status: 403, headers: { ...JSON_TYPE, "www-authenticate": challenge } });
}

/** The 403 of a request from a browser page on another origin. */
export function foreignOriginResponse(): Response {
  const body = { jsonrpc: "2.0", id: null, error: { code: -32000, message: "Forbidden: requests from another origin are not accepted." } };
  return new Response(JSON.stringify(body), { status: 403, headers: JSON_TYPE });
}
