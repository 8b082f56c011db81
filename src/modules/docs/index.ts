/**
 * The API reference: OpenAPI JSON at /openapi.json and Swagger UI at /docs, with the UI's script and stylesheet
 * embedded in the binary and served from /docs/assets, so the docs work on a box with no internet.
 */
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

const ASSET_CACHE = "public, max-age=86400";

/** /openapi.json, /docs and the UI's assets. */
export function docsModule() {
  return new Elysia()
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        provider: "swagger-ui",
        exclude: { paths: [/^\/docs/, /^\/openapi\.json$/] },
        swagger: { cdn: "/docs/assets/swagger-ui-bundle.js", theme: "/docs/assets/swagger-ui.css", autoDarkMode: false },
        documentation: {
          info: {
            title: "Seedcast API",
            version: "1",
            description:
              "Self-hosted content scheduling. Every /api/v1 call needs Authorization: Bearer svc_…; each operation names the group it needs (x-seedcast-group).",
          },
          components: { securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "svc_ API key" } } },
        },
      }),
    )
    .get(
      "/docs/assets/swagger-ui-bundle.js",
      () => new Response(Bun.file(swaggerBundle), { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": ASSET_CACHE } }),
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/swagger-ui.css",
      () => new Response(Bun.file(swaggerCss), { headers: { "content-type": "text/css; charset=utf-8", "cache-control": ASSET_CACHE } }),
      { detail: { hide: true } },
    );
}
