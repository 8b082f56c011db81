/**
 * CORS for browser clients of the API (decisions.md §10): `CORS_ORIGINS` names the origins (or `*`) allowed to call
 * /api/v1 and read /openapi.json. Empty, the default, means no CORS headers anywhere and preflights answered as any
 * other request. Configured: a preflight (OPTIONS with Origin and Access-Control-Request-Method) is answered 204
 * without a key, and every answer to an allowed origin (errors and the 401 included, so a browser client can read
 * them) carries Access-Control-Allow-Origin. Credentials are API keys in the Authorization header, never cookies, so
 * no Access-Control-Allow-Credentials.
 */
import type { Config } from "../config";

const ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE";
const ALLOWED_HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-Id";
const EXPOSED_HEADERS = "Retry-After, X-Request-Id, Idempotent-Replayed, Location, RateLimit, RateLimit-Policy, Allow";
const PREFLIGHT_MAX_AGE_SECONDS = "600";

export interface Cors {
  /** True for the paths CORS covers: /api/v1 and /openapi.json. */
  covers(path: string, api: boolean): boolean;
  /** True for a CORS preflight request. */
  isPreflight(request: Request): boolean;
  /** The 204 answer to a preflight (allowing the origin only when it is allowed). */
  preflight(request: Request): Response;
  /** `response`, with the CORS headers when the request's Origin is allowed. */
  decorate(request: Request, response: Response): Response;
}

/** The CORS policy of `config`, or null when CORS_ORIGINS is empty (nothing to do on any request). */
export function corsPolicy(config: Pick<Config, "corsOrigins">): Cors | null {
  const origins = config.corsOrigins;
  if (origins.size === 0) return null;
  const anyOrigin = origins.has("*");
  const allowed = (origin: string | null): origin is string => origin !== null && (anyOrigin || origins.has(origin));

  const withHeaders = (response: Response, headers: Record<string, string>): Response => {
    try {
      for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
      return response;
    } catch {
      // Immutable headers (a Response.redirect): copy.
      const copy = new Response(response.body, response);
      for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
      return copy;
    }
  };

  return {
    covers: (path, api) => api || path === "/openapi.json",
    isPreflight: (request) => request.method === "OPTIONS" && request.headers.has("origin") && request.headers.has("access-control-request-method"),
    preflight(request) {
      const origin = request.headers.get("origin");
      const headers: Record<string, string> = { vary: "Origin" };
      if (allowed(origin)) {
        Object.assign(headers, {
          "access-control-allow-origin": anyOrigin ? "*" : origin,
          "access-control-allow-methods": ALLOWED_METHODS,
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": PREFLIGHT_MAX_AGE_SECONDS,
        });
      }
      return new Response(null, { status: 204, headers });
    },
    decorate(request, response) {
      const origin = request.headers.get("origin");
      if (!allowed(origin)) return origin === null ? response : withHeaders(response, { vary: "Origin" });
      return withHeaders(response, {
        "access-control-allow-origin": anyOrigin ? "*" : origin,
        "access-control-expose-headers": EXPOSED_HEADERS,
        vary: "Origin",
      });
    },
  };
}
