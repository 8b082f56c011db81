/**
 * The asset routes: POST /api/v1/assets/ingest-url (create), GET /api/v1/assets (read),
 * DELETE /api/v1/assets/{id} (create). The upload-link routes live in modules/uploads, the bytes in modules/media.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { ingestFromUrl } from "./ingest";
import { INGEST_REFUSALS, assetIdParams, deleteResponse, ingestUrlBody, ingestUrlResponse, listQuery, listResponse } from "./model";
import { assetToApi, deleteAsset, listAssets } from "./service";

const TAGS = ["assets"];

/** Mounts the asset routes. */
export function assetsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/assets/ingest-url",
      async ({ request, body, set }) => {
        const { accountId } = authOf(request);
        const record = await ingestFromUrl(deps, accountId, { url: body.url, label: body.label });
        set.status = 201;
        return { asset: assetToApi(deps, record), creditsCharged: 0 as const };
      },
      {
        parse: parseJsonBody,
        scope: "create",
        errors: INGEST_REFUSALS,
        created: { path: "/api/v1/assets/{id}", idAt: "asset.id" },
        body: ingestUrlBody,
        response: { 201: ingestUrlResponse },
        detail: {
          summary: "Add an image to the library from a public https URL",
          description:
            "The source is fetched once, under every SSRF rule; refusals answer 400 with a stable reason (invalid_url, https_required, port_not_allowed, unsupported_encoding, host_not_public, host_unresolvable, fetch_failed, upstream_status, too_many_redirects, unsupported_type, image_too_large, image_dimensions_too_large, empty_body) and store nothing.",
          tags: TAGS,
        },
      },
    )
    .get(
      "/api/v1/assets",
      async ({ request, query }) => {
        const { accountId } = authOf(request);
        const page = await listAssets(deps, accountId, { limit: query.limit, cursor: query.cursor });
        return { assets: page.assets.map((record) => assetToApi(deps, record)), nextCursor: page.nextCursor };
      },
      {
        scope: "read",
        query: listQuery,
        response: listResponse,
        detail: { summary: "List the account's images, newest first", tags: TAGS },
      },
    )
    .delete(
      "/api/v1/assets/:id",
      ({ request, params }) => deleteAsset(deps, authOf(request).accountId, params.id),
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found", "asset_in_use"],
        params: assetIdParams,
        response: deleteResponse,
        detail: {
          summary: "Delete an image (409 asset_in_use while a seed, creation or pending post uses it)",
          tags: TAGS,
        },
      },
    );
}
