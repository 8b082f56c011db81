/**
 * The API reference: the OpenAPI 3.1 document at /openapi.json (built from the routes by document.ts) and Swagger UI
 * at /docs and /docs/ (rendered by @elysiajs/openapi's Swagger page), with the UI's script and stylesheet embedded in
 * the binary and served from /docs/assets, so the docs work on a box with no internet.
 */
import { SwaggerUIRender } from "@elysiajs/openapi/swagger";
import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import type { Deps } from "../../deps";
import { VERSION } from "../../version";
import { type DocumentedRoute, buildDocument } from "./document";

const ASSET_CACHE = "public, max-age=86400";
const hide = { hide: true } as const;

/** The Swagger page; `specUrl` is relative so the page works behind a path prefix. */
function swaggerPage(specUrl: string, assets: string): Response {
  const page = SwaggerUIRender(
    { title: "Seedcast API", version: VERSION, description: "Seedcast API reference" },
    { url: specUrl, cdn: `${assets}/swagger-ui-bundle.js`, theme: `${assets}/swagger-ui.css`, autoDarkMode: false },
  );
  return new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
}

/** /openapi.json, /docs, /docs/ and the UI's assets. `routes` is read once, at the first request for the document. */
export function docsModule(deps: Pick<Deps, "config">, routes: () => readonly DocumentedRoute[]) {
  let document: string | null = null;
  return new Elysia()
    .get(
      "/openapi.json",
      () => {
        document ??= JSON.stringify(buildDocument(routes(), { baseUrl: deps.config.baseUrl, version: VERSION }));
        return new Response(document, { headers: { "content-type": "application/json; charset=utf-8" } });
      },
      { detail: hide },
    )
    .get("/docs", () => swaggerPage("openapi.json", "docs/assets"), { detail: hide })
    .get("/docs/", () => swaggerPage("../openapi.json", "assets"), { detail: hide })
    .get(
      "/docs/assets/swagger-ui-bundle.js",
      () => new Response(Bun.file(swaggerBundle), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": ASSET_CACHE } }),
      { detail: hide },
    )
    .get(
      "/docs/assets/swagger-ui.css",
      () => new Response(Bun.file(swaggerCss), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": ASSET_CACHE } }),
      { detail: hide },
    );
}
