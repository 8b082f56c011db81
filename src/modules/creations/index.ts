/**
 * Creations routes: generate, regenerate, edit and delete (Content creation group), list and get (Read access), and
 * the public preview page at the creation's `url`.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import {
  createBody,
  creationListResponse,
  creationResponse,
  creationDeletedResponse,
  creationVersionsResponse,
  creationWithChargeResponse,
  editBody,
  generateBody,
  idParams,
  listQuery,
  regenerateBody,
} from "./model";
import { INGEST_REFUSALS } from "../assets/model";
import { creationInputOf, creationPatchOf } from "./content-input";
import { createCreationByHand, deleteCreation, updateCreation } from "./edit";
import { previewPage } from "./preview-page";
import { listVersions } from "./versions";
import { PREVIEW_PATH, generateCreation, getCreation, listCreations, regenerateCreation } from "./service";

const TAGS = ["creations"];

/** Mounts the creations API and the preview page. */
export function creationsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/creations",
      async ({ request, body, set }) => {
        const { type: _type, ...rest } = body;
        const creation = await createCreationByHand(deps, authOf(request).accountId, creationInputOf(rest));
        set.status = 201;
        return { creation, creditsCharged: 0 };
      },
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found"],
        created: { path: "/api/v1/creations/{id}", idAt: "creation.id" },
        body: createBody,
        response: { 201: creationWithChargeResponse },
        detail: {
          summary: "Write a post by hand: caption, images, thread, first comment, a version per network (free)",
          description:
            "Requests are snake_case (images as {asset_id, alt_text}, first_comment), answers camelCase. Every image must be an asset of your library (404 otherwise), " +
            "seed_id one of your seeds (404). Captions, thread parts and first comments: not empty, at most 63,206 characters each; each network's own limits " +
            "(caption length, images, threads, first comments) are checked when the post is scheduled (409 not_schedulable).",
          tags: TAGS,
        },
      },
    )
    .post(
      "/api/v1/creations/generate",
      async ({ request, body, set }) => {
        const result = await generateCreation(deps, authOf(request).accountId, body);
        set.status = 201;
        return result;
      },
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found", "insufficient_credits", "generation_failed", ...INGEST_REFUSALS],
        created: { path: "/api/v1/creations/{id}", idAt: "creation.id" },
        body: generateBody,
        response: { 201: creationWithChargeResponse },
        detail: {
          summary: "Generate a social post (caption, alt text, optional image) from a seed",
          description:
            "Flat price (5 credits by default) with or without an image. Image: image_asset_id; else a generated card " +
            "when include_visual; else the seed's asset; else the seed's image_url, ingested; else none. platforms: also a " +
            "version per network (body.variants) whose caption is written for that network's limit (the strictest of your " +
            "connections to it, else its default), same price; none where the post's caption already fits.",
          tags: TAGS,
        },
      },
    )
    .post(
      "/api/v1/creations/regenerate",
      async ({ request, body }) => regenerateCreation(deps, authOf(request).accountId, body),
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found", "insufficient_credits", "generation_failed"],
        body: regenerateBody,
        response: { 200: creationWithChargeResponse },
        detail: {
          summary: "Regenerate a creation's caption, image or both, in place",
          description:
            "The creation keeps its id. Prices by default: caption 1, image 4, both 4. All or nothing: a failure " +
            "leaves the creation unchanged and charges nothing.",
          tags: TAGS,
        },
      },
    )
    .get(
      "/api/v1/creations",
      ({ request, query }) =>
        listCreations(deps, authOf(request).accountId, {
          ...(query.seed_id !== undefined ? { seedId: query.seed_id } : {}),
          ...(query.limit !== undefined ? { limit: query.limit } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
        }),
      {
        scope: "read",
        query: listQuery,
        response: { 200: creationListResponse },
        detail: { summary: "List creations, newest first (filter seed_id)", tags: TAGS },
      },
    )
    .get(
      "/api/v1/creations/:id",
      async ({ request, params }) => ({ creation: await getCreation(deps, authOf(request).accountId, params.id) }),
      {
        scope: "read",
        errors: ["not_found"],
        params: idParams,
        response: { 200: creationResponse },
        detail: { summary: "Get one creation", tags: TAGS },
      },
    )
    .get(
      "/api/v1/creations/:id/versions",
      async ({ request, params }) => ({ versions: await listVersions(deps, authOf(request).accountId, params.id) }),
      {
        scope: "read",
        errors: ["not_found"],
        params: idParams,
        response: { 200: creationVersionsResponse },
        detail: {
          summary: "List a creation's earlier versions (the last 10)",
          description:
            "Whenever a regenerate, an edit by hand or a restore (dashboard) replaces a creation's caption, alt text or image, the content replaced is kept here, newest first. imageUrl is null when the version had no image or its image was deleted from the library since.",
          tags: TAGS,
        },
      },
    )
    .patch(
      "/api/v1/creations/:id",
      async ({ request, params, body }) => ({ creation: await updateCreation(deps, authOf(request).accountId, params.id, creationPatchOf(body)) }),
      {
        parse: parseJsonBody,
        scope: "create",
        errors: ["not_found"],
        params: idParams,
        body: editBody,
        response: { 200: creationResponse },
        detail: {
          summary: "Edit a creation by hand: caption, alt text, images, thread, first comment, versions (free)",
          description:
            "Fields left out stay; images, thread and variants replace the whole list or map; null removes a field (images null and [] alike). " +
            "caption: not empty, at most 63,206 characters (each network's own limit is checked when it is scheduled). alt_text (or altText): the first image's, only for a creation with an image. " +
            "Every image must be an asset of your library (404). The texts are marked editedByHand and the content they replace is kept as a version (GET /creations/{id}/versions). " +
            "Posts already scheduled keep the snapshot they were scheduled with.",
          tags: TAGS,
        },
      },
    )
    .delete("/api/v1/creations/:id", ({ request, params }) => deleteCreation(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "create",
      errors: ["not_found", "creation_in_use"],
      params: idParams,
      response: { 200: creationDeletedResponse },
      detail: {
        summary: "Delete a creation",
        description:
          "Its image stays in the library. 409 creation_in_use while a post scheduled from it has not gone out; posts keep their snapshot.",
        tags: TAGS,
      },
    })
    .get(`${PREVIEW_PATH}/:id`, ({ params }) => previewPage(deps, params.id), {
      params: idParams,
      detail: {
        summary: "Public preview page of a creation (HTML with Open Graph tags, no key)",
        description: "The creation's `url`: its caption, image and alt text as a page a person or a link preview can read. 400 for an id over 64 characters.",
        tags: TAGS,
        responses: {
          200: { description: "The preview page", content: { "text/html": { schema: { type: "string" } } } },
          404: { description: "No such creation", content: { "text/html": { schema: { type: "string" } } } },
        },
      },
    });
}
