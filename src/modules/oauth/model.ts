/**
 * The OAuth endpoints' shapes for the OpenAPI document (decisions.md §10: the document is the whole truth). The
 * endpoints read their bodies by hand (form-encoded per RFC 6749, JSON per RFC 7591), so these are documentation
 * only, attached as each route's `detail`.
 */
const oauthError = {
  type: "object",
  required: ["error"],
  properties: {
    error: { type: "string", description: "RFC 6749 §5.2 / RFC 7591 §3.2.2 / RFC 8707 error code", example: "invalid_grant" },
    error_description: { type: "string", example: "The authorization code is not valid." },
  },
} as const;

const json = (schema: object, description: string) => ({ description, content: { "application/json": { schema } } });

const tokenResponse = {
  type: "object",
  required: ["access_token", "token_type", "expires_in", "refresh_token", "scope"],
  properties: {
    access_token: { type: "string", example: "sco_…" },
    token_type: { type: "string", enum: ["Bearer"] },
    expires_in: { type: "integer", example: 3600 },
    refresh_token: { type: "string", example: "scr_…" },
    scope: { type: "string", example: "read create" },
  },
} as const;

const form = (properties: Record<string, object>, required: string[]) => ({
  required: true,
  content: { "application/x-www-form-urlencoded": { schema: { type: "object", required, properties } } },
});

const str = (description: string) => ({ type: "string", description });

export const tokenDoc = {
  requestBody: form(
    {
      grant_type: { type: "string", enum: ["authorization_code", "refresh_token"] },
      code: str("authorization_code: the code from the redirect"),
      redirect_uri: str("authorization_code: the redirect_uri of the authorization request"),
      code_verifier: str("authorization_code: the PKCE verifier (43–128 characters)"),
      refresh_token: str("refresh_token: the current refresh token (rotated at every use)"),
      scope: str("refresh_token: optional, may only narrow"),
      resource: str("optional; must be {base_url}/mcp"),
      client_id: str("client_secret_post / none"),
      client_secret: str("client_secret_post"),
    },
    ["grant_type"],
  ),
  responses: {
    200: json(tokenResponse, "A new token pair"),
    400: json(oauthError, "invalid_request, invalid_grant, unsupported_grant_type, invalid_scope, invalid_target"),
    401: json(oauthError, "invalid_client"),
  },
};

export const registerDoc = {
  requestBody: {
    required: true,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["redirect_uris"],
          properties: {
            redirect_uris: { type: "array", items: { type: "string" }, description: "https, http on a loopback address, or a private-use scheme containing a dot" },
            client_name: { type: "string", maxLength: 200 },
            token_endpoint_auth_method: { type: "string", enum: ["none", "client_secret_basic", "client_secret_post"], default: "client_secret_basic" },
            grant_types: { type: "array", items: { type: "string" } },
            response_types: { type: "array", items: { type: "string" } },
            client_uri: { type: "string" },
            logo_uri: { type: "string" },
            scope: { type: "string" },
          },
        },
      },
    },
  },
  responses: {
    201: json(
      {
        type: "object",
        properties: {
          client_id: { type: "string" },
          client_id_issued_at: { type: "integer" },
          client_secret: { type: "string", description: "Confidential clients only; shown once" },
          client_secret_expires_at: { type: "integer", example: 0 },
          client_name: { type: "string" },
          redirect_uris: { type: "array", items: { type: "string" } },
          token_endpoint_auth_method: { type: "string" },
          grant_types: { type: "array", items: { type: "string" } },
          response_types: { type: "array", items: { type: "string" } },
        },
      },
      "The registered client",
    ),
    400: json(oauthError, "invalid_redirect_uri or invalid_client_metadata"),
    429: json(oauthError, "temporarily_unavailable: too many registrations from this address (Retry-After)"),
  },
};

export const revokeDoc = {
  requestBody: form({ token: str("an access or refresh token"), token_type_hint: str("ignored"), client_id: str(""), client_secret: str("") }, ["token"]),
  responses: {
    200: { description: "Revoked, or nothing to revoke (RFC 7009 §2.2)" },
    400: json(oauthError, "invalid_request: no token"),
    401: json(oauthError, "invalid_client"),
  },
};

export const authorizeDoc = {
  parameters: [
    ["response_type", true, "code"],
    ["client_id", true, "a registered client_id or an https Client ID Metadata Document URL"],
    ["redirect_uri", false, "exactly one of the client's redirect URIs (optional when it has one)"],
    ["code_challenge", true, "PKCE S256 challenge"],
    ["code_challenge_method", true, "S256"],
    ["state", false, "echoed"],
    ["scope", false, "space-separated groups; absent = every group the role allows"],
    ["resource", false, "absent or exactly {base_url}/mcp"],
  ].map(([name, required, description]) => ({ name, in: "query", required, schema: { type: "string" }, description })),
  responses: {
    200: { description: "The consent page (HTML)", content: { "text/html": { schema: { type: "string" } } } },
    303: { description: "To the login page (a valid request without a dashboard session)" },
    400: {
      description:
        "Error page, never a redirect (RFC 9700 §4.11): unknown client, redirect_uri mismatch, unusable metadata document, or any other invalid parameter",
      content: { "text/html": { schema: { type: "string" } } },
    },
    429: {
      description: "Error page: this address had too many Client ID Metadata Documents fetched this minute",
      headers: { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } } },
      content: { "text/html": { schema: { type: "string" } } },
    },
  },
};

const metadataDoc = (properties: Record<string, object>) => ({ responses: { 200: json({ type: "object", properties }, "The metadata document") } });

export const protectedResourceDoc = metadataDoc({
  resource: { type: "string" },
  authorization_servers: { type: "array", items: { type: "string" } },
  scopes_supported: { type: "array", items: { type: "string" } },
  bearer_methods_supported: { type: "array", items: { type: "string" } },
});

export const authorizationServerDoc = metadataDoc({
  issuer: { type: "string" },
  authorization_endpoint: { type: "string" },
  token_endpoint: { type: "string" },
  registration_endpoint: { type: "string" },
  revocation_endpoint: { type: "string" },
  response_types_supported: { type: "array", items: { type: "string" } },
  grant_types_supported: { type: "array", items: { type: "string" } },
  code_challenge_methods_supported: { type: "array", items: { type: "string" } },
  token_endpoint_auth_methods_supported: { type: "array", items: { type: "string" } },
  scopes_supported: { type: "array", items: { type: "string" } },
  client_id_metadata_document_supported: { type: "boolean" },
  authorization_response_iss_parameter_supported: { type: "boolean" },
});
