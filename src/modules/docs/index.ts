/**
 * The API reference: the OpenAPI 3.1 document at /openapi.json (built from the routes by document.ts) and Swagger UI
 * at /docs and /docs/ (our own page: a strict CSP, no inline script), with the UI's script and stylesheet embedded in
 * the binary and served from /docs/assets, so the docs work on a box with no internet.
 */
import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import type { Deps } from "../../deps";
import { VERSION } from "../../version";
import { DELIVERY_DOCS } from "../webhooks/events-model";
import { type DocumentedRoute, buildDocument } from "./document";

const ASSET_CACHE = "public, max-age=86400";
const hide = { hide: true } as const;

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

/** The /docs page (also at /docs/: every URL in it is absolute), with its own CSP and frame protection. */
function docsPage(): Response {
  return new Response(DOCS_PAGE, {
    headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_CSP, ...DOCS_HEADERS },
  });
}

/** Starts Swagger UI on the spec; a file of its own so the page needs no inline script. */
const START_SCRIPT = 'window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });\n';


/** /openapi.json, /docs, /docs/ and the UI's assets. `routes` is read once, at the first request for the document. */
export function docsModule(deps: Pick<Deps, "config">, routes: () => readonly DocumentedRoute[]) {
  let document: string | null = null;
  return new Elysia()
    .get(
      "/openapi.json",
      () => {
        document ??= JSON.stringify(buildDocument(routes(), { baseUrl: deps.config.baseUrl, version: VERSION, deliveries: DELIVERY_DOCS }));
        return new Response(document, { headers: { "content-type": "application/json; charset=utf-8", ...DOCS_HEADERS } });
      },
      { detail: hide },
    )
    .get("/docs", docsPage, { detail: hide })
    .get("/docs/", docsPage, { detail: hide })
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
