/**
 * The API reference: OpenAPI JSON at /openapi.json and Swagger UI at /docs, with the UI's script and stylesheet
 * embedded in the binary and served from /docs/assets, so the docs work on a box with no internet.
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

const ASSET_CACHE = "public, max-age=86400";

/**
 * The /docs page's Content-Security-Policy: scripts and the stylesheet from this origin only (no inline script: the
 * page starts Swagger UI from /docs/assets/start.js), "Try it out" calls this origin only, and no site may frame the
 * page. Inline styles stay allowed: Swagger UI sets them in its own markup.
 */
const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** Headers on every answer under /docs and at /openapi.json. */
const DOCS_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
};

const TITLE = "Seedcast API";
const DESCRIPTION =
  "Self-hosted content scheduling. Every /api/v1 call needs Authorization: Bearer svc_…; each operation names the group it needs (x-seedcast-group).";

/** The Swagger UI page: the bundle and a starter script, both same-origin files. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TITLE}</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on the spec; a file of its own so the page needs no inline script. */
const START_SCRIPT = 'window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });\n';

interface RouteWithBody {
  method: string;
  path: string;
  hooks?: unknown;
}

type Spec = { paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>> };

/**
 * The plugin leaves `requestBody.content` empty for routes behind a custom parser, and the pipeline's JSON parser
 * (the 1 MiB cap, the invalid-JSON envelope) is one; every body under /api/v1 is JSON, so fill it from the route's
 * own schema. TypeBox schemas are JSON Schema already.
 */
function fillRequestBodies(spec: Spec, routes: readonly RouteWithBody[]): void {
  for (const route of routes) {
    const body = (route.hooks as { body?: unknown } | undefined)?.body;
    if (!body || typeof body !== "object") continue;
    const docPath = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const operation = spec.paths?.[docPath]?.[route.method.toLowerCase()];
    if (!operation?.requestBody) continue;
    const content = operation.requestBody.content ?? {};
    if (Object.keys(content).length > 0) continue;
    operation.requestBody.content = { "application/json": { schema: JSON.parse(JSON.stringify(body)) } };
  }
}

/** /openapi.json, /docs and the UI's assets. `routes` is read when the spec is served. */
export function docsModule(routes: () => readonly RouteWithBody[]) {
  return new Elysia()
    .onAfterHandle(({ path, response, set }) => {
      if (path === "/openapi.json" && response && typeof response === "object" && !(response instanceof Response)) {
        fillRequestBodies(response as Spec, routes());
        set.headers["x-content-type-options"] = "nosniff";
      }
    })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        // The page is served below (its own CSP, no inline script); the plugin gives the spec only.
        provider: null,
        // staticFile: false, or every path with a dot (the OAuth /.well-known documents) would be left out.
        exclude: { paths: [/^\/docs/, /^\/openapi\.json$/], staticFile: false },
        documentation: {
          info: { title: TITLE, version: "1", description: DESCRIPTION },
          components: {
            securitySchemes: {
              apiKey: { type: "http", scheme: "bearer", description: "svc_ API key" },
              // /mcp takes OAuth access tokens (sco_) from Seedcast's own authorization server, never an API key.
              oauth2: {
                type: "oauth2",
                description: "OAuth 2.1 sign-in with the account (code + PKCE S256); discovery at /.well-known/oauth-authorization-server",
                flows: {
                  authorizationCode: {
                    authorizationUrl: "/oauth/authorize",
                    tokenUrl: "/oauth/token",
                    refreshUrl: "/oauth/token",
                    scopes: {
                      read: "Read access",
                      create: "Content creation",
                      schedule: "Scheduling",
                      voice: "Brand voice",
                    },
                  },
                },
              },
            },
          },
        },
      }),
    )
    .get(
      "/docs",
      () =>
        new Response(DOCS_PAGE, {
          headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CSP, ...DOCS_HEADERS },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/start.js",
      () =>
        new Response(START_SCRIPT, {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": ASSET_CACHE, ...DOCS_HEADERS },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/swagger-ui-bundle.js",
      () =>
        new Response(Bun.file(swaggerBundle), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": ASSET_CACHE, ...DOCS_HEADERS },
        }),
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/swagger-ui.css",
      () =>
        new Response(Bun.file(swaggerCss), {
          headers: { "content-type": "text/css; charset=utf-8", "cache-control": ASSET_CACHE, ...DOCS_HEADERS },
        }),
      { detail: { hide: true } },
    );
}
