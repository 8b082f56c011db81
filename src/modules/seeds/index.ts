/** The seeds routes (decisions.md §5): writes need the create group, reads the read group. */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import {
  LIST_LIMIT_DEFAULT,
  createSeedBody,
  listSeedsQuery,
  patchSeedBody,
  seedDeletedResponse,
  seedIdParams,
  seedListResponse,
  seedResponse,
} from "./model";
import { createSeed, deleteSeed, getOwnedSeed, listSeeds, patchSeed, seedView } from "./service";

const TAGS = ["seeds"];

/** POST/GET /api/v1/seeds, GET/PATCH/DELETE /api/v1/seeds/:id. */
export function seedsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/seeds",
      async ({ request, body, set }) => {
        const seed = await createSeed(deps, authOf(request).accountId, body);
        set.status = 201;
        return seedView(seed);
      },
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found"],
        created: { path: "/api/v1/seeds/{id}", idAt: "id" },
        body: createSeedBody,
        response: { 201: seedResponse },
        detail: { summary: "Save a seed (free; runs no model)", tags: TAGS },
      },
    )
    .get(
      "/api/v1/seeds",
      async ({ request, query }) => {
        const page = await listSeeds(deps, authOf(request).accountId, {
          search: query.search ?? null,
          limit: query.limit ?? LIST_LIMIT_DEFAULT,
          cursor: query.cursor ?? null,
        });
        return { seeds: page.seeds.map(seedView), nextCursor: page.nextCursor };
      },
      {
        scope: "read",
        query: listSeedsQuery,
        response: seedListResponse,
        detail: {
          summary: "List seeds: newest first, or best matches first with `search`",
          description:
            "`search` matches whole words and word prefixes of title, content and category (`launc` finds `launch`), case- and accent-insensitively; every word must match.",
          tags: TAGS,
        },
      },
    )
    .get("/api/v1/seeds/:id", async ({ request, params }) => seedView(await getOwnedSeed(deps, authOf(request).accountId, params.id)), {
      scope: "read",
      errors: ["not_found"],
      params: seedIdParams,
      response: seedResponse,
      detail: { summary: "One seed", tags: TAGS },
    })
    .patch(
      "/api/v1/seeds/:id",
      async ({ request, params, body }) => seedView(await patchSeed(deps, authOf(request).accountId, params.id, body)),
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found"],
        params: seedIdParams,
        body: patchSeedBody,
        response: seedResponse,
        detail: { summary: "Change a seed; null clears category, image_asset_id and image_url", tags: TAGS },
      },
    )
    .delete(
      "/api/v1/seeds/:id",
      async ({ request, params }) => {
        await deleteSeed(deps, authOf(request).accountId, params.id);
        return { id: params.id, deleted: true as const };
      },
      { parse: parseJsonBody, scope: "create", errors: ["not_found"], params: seedIdParams, response: seedDeletedResponse, detail: { summary: "Delete a seed", tags: TAGS } },
    );
}
