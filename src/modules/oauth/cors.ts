/**
 * CORS for the endpoints a browser-based client calls directly (the MCP Inspector, web IDEs): discovery,
 * registration, token and revocation. Any origin, no credentials: these endpoints never read cookies, so a
 * cross-origin caller gains nothing it could not do from a server. The authorization page itself is not CORS-enabled.
 */
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "www-authenticate",
};

/** The answer to a preflight. */
export function preflight(): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      "access-control-allow-methods": "GET, POST, OPTIONS",
      "access-control-allow-headers": "authorization, content-type, mcp-protocol-version",
      "access-control-max-age": "86400",
    },
  });
}

/** `response` with the CORS headers added. */
export function withCors(response: Response): Response {
  for (const [name, value] of Object.entries(CORS_HEADERS)) response.headers.set(name, value);
  return response;
}
