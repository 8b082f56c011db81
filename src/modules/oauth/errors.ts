/**
 * OAuth protocol errors (RFC 6749 §5.2, RFC 7591 §3.2.2). They are not AppErrors: decisions.md §9 fixes that the
 * OAuth endpoints answer in the protocol's own shape `{error, error_description}`, which every OAuth client parses.
 * The codes are a closed list here, like lib/errors.ts is for the API.
 */
export const OAUTH_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  temporarily_unavailable: 429,
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STATUS;

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;

  constructor(code: OAuthErrorCode, description: string, status?: number) {
    super(description);
    this.name = "OAuthError";
    this.code = code;
    this.status = status ?? OAUTH_ERROR_STATUS[code];
  }

  toBody(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/** The JSON answer of an OAuth endpoint: never cached (RFC 6749 §5.1). */
export function oauthJson(status: number, body: unknown, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache", ...extra },
  });
}

/** An OAuthError as its answer; invalid_client from HTTP Basic carries WWW-Authenticate (RFC 6749 §5.2). */
export function oauthErrorResponse(error: OAuthError, extra: Record<string, string> = {}): Response {
  const headers = error.code === "invalid_client" ? { "www-authenticate": 'Basic realm="seedcast"', ...extra } : extra;
  return oauthJson(error.status, error.toBody(), headers);
}
