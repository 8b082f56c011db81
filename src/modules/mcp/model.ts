/**
 * Input schemas of the MCP tools (decisions.md §9), built from the REST routes' own models so both check the same
 * rules with the same words. Where REST takes a value in the path or the query string, the tool takes it as an
 * argument of the same name; `type` (only `social_post` exists) is left out of the tools, as §9's table has it.
 */
import type { TObject, TProperties } from "@sinclair/typebox";
import { t } from "elysia";
import { ingestUrlBody, LIST_LIMIT_MAX as ASSET_LIST_LIMIT_MAX, listQuery as assetListQuery } from "../assets/model";
import { generateBody, LIST_LIMIT_MAX as CREATION_LIST_LIMIT_MAX, regenerateBody } from "../creations/model";
import { listQuery as postListQuery, postIdParams, scheduleBody } from "../schedule/model";
import { createSeedBody, listSeedsQuery, patchSeedBody, seedIdParams } from "../seeds/model";
import { voicePatchSchema } from "../voice/model";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../../http/idempotency";

/** The argument that carries the REST `Idempotency-Key` on the tools that create. */
export const IDEMPOTENCY_ARGUMENT = "idempotency_key";

const idempotencyKey = t.Optional(
  t.String({
    minLength: 1,
    maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
    error: `must be text of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    description:
      "Optional. The same key with the same arguments within 24 hours replays the first answer (no second charge, nothing new stored); with other arguments it is refused.",
  }),
);

/** `schema` (an object schema) plus the optional idempotency_key argument. */
function withIdempotencyKey<P extends TProperties>(schema: TObject<P>) {
  return t.Object({ ...schema.properties, idempotency_key: idempotencyKey });
}

const nothing = t.Object({});
const limitOf = (max: number) =>
  t.Optional(t.Integer({ minimum: 1, maximum: max, error: `must be a whole number from 1 to ${max}`, description: "Page size, 50 by default." }));
const cursor = t.Optional(t.String({ minLength: 1, maxLength: 512, description: "nextCursor of the previous page." }));

export const listSeedsInput = listSeedsQuery;
export const getSeedInput = seedIdParams;
export const createSeedInput = withIdempotencyKey(createSeedBody);
export const updateSeedInput = t.Object({ ...seedIdParams.properties, ...patchSeedBody.properties });
export const deleteSeedInput = seedIdParams;

export const generateCreationInput = withIdempotencyKey(t.Omit(generateBody, ["type"]));
export const regenerateCreationInput = withIdempotencyKey(t.Omit(regenerateBody, ["type"]));
export const listCreationsInput = t.Object({
  seed_id: t.Optional(t.String({ maxLength: 100, description: "Only the creations of this seed." })),
  limit: limitOf(CREATION_LIST_LIMIT_MAX),
  cursor,
});
export const getCreationInput = t.Object({ id: t.String({ maxLength: 100 }) });

export const ingestImageInput = withIdempotencyKey(ingestUrlBody);
export const createUploadLinkInput = withIdempotencyKey(nothing);
export const listAssetsInput = t.Object({ limit: limitOf(ASSET_LIST_LIMIT_MAX), cursor: assetListQuery.properties.cursor });

export const listTargetsInput = nothing;
export const schedulePostInput = withIdempotencyKey(t.Omit(scheduleBody, ["type"]));
export const listPostsInput = postListQuery;
export const getPostInput = postIdParams;
export const cancelPostInput = t.Object({ post_id: postIdParams.properties.id });

export const getCreditsInput = nothing;
export const getVoiceInput = nothing;
export const setVoiceInput = voicePatchSchema;

/**
 * The REST error envelope (decisions.md §1) as a tool's structuredContent on a refusal. Each tool's output schema is
 * its REST answer OR this, because 2025-era clients (the v1 SDK among them) check an isError result's
 * structuredContent against the output schema too.
 */
export const errorEnvelopeSchema = t.Object(
  {
    error: t.String({ description: "Stable error code, e.g. not_found, insufficient_credits, invalid_request." }),
    message: t.String({ description: "One sentence for a person." }),
  },
  { additionalProperties: true, description: "A refusal (isError: true): the REST error envelope, with its extra fields." },
);
