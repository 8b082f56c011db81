/**
 * Discovery documents (decisions.md §9): protected resource metadata (RFC 9728) for the MCP endpoint, and the
 * authorization server metadata (RFC 8414). Issuer = BASE_URL.
 */
import type { Deps } from "../../deps";
import { SCOPES } from "../auth/scopes";
import { AUTH_METHODS } from "./clients";
import { mcpResource } from "./service";

/** RFC 9728 §2, for `{base_url}/mcp`. */
export function protectedResourceMetadata(deps: Pick<Deps, "config">): Record<string, unknown> {
  return {
    resource: mcpResource(deps),
    authorization_servers: [deps.config.baseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Seedcast",
  };
}

/** RFC 8414 §2. */
export function authorizationServerMetadata(deps: Pick<Deps, "config">): Record<string, unknown> {
  const base = deps.config.baseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    scopes_supported: [...SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${base}/docs`,
  };
}
