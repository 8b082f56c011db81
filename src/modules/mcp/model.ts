/**
 * Input schemas of the MCP tools (decisions.md §9, §10), built from the REST routes' own models so both check the
 * same rules with the same words. Where REST takes a value in the path or the query string, the tool takes it as an
 * argument of the same name; `type` (only `social_post` exists) is left out of the tools, as §9's table has it.
 *
 * The resource a tool acts on is always `id`. Its other name (`creation_id`, `post_id`: what regenerate_creation and
 * cancel_post once called it, and `<resource>_id` on every tool alike) is declared too, optional and `deprecated`
 * (withFormerId), and tool-server.ts moves it to `id` before the check.
 */
import { MAX_JSON_BYTES } from "../../http/json-body";
import type { TObject, TProperties } from "@sinclair/typebox";
import { t } from "elysia";
import { assetIdParams, ingestUrlBody, LIST_LIMIT_MAX as ASSET_LIST_LIMIT_MAX, listQuery as assetListQuery } from "../assets/model";
import { createBody, editBody, generateBody, idParams as creationIdParams, LIST_LIMIT_MAX as CREATION_LIST_LIMIT_MAX, regenerateBody } from "../creations/model";
import { ledgerQuerySchema } from "../credits/model";
import { listQuery as postListQuery, postIdParams, rescheduleBody, resolveBody, scheduleBody } from "../schedule/model";
import { seriesIdParams, slotsSchema } from "../schedule/queue-model";
import { approvalsQuery, rejectBody } from "../schedule/approval-model";
import { accountSettingsBody } from "../accounts/model";
import { createSeedBody, listSeedsQuery, patchSeedBody, seedIdParams } from "../seeds/model";
import { uploadLinkBody, uploadLinkParams } from "../uploads/model";
import { voicePatchSchema } from "../voice/model";
import { createWebhookBody, webhookIdParams } from "../webhooks/model";
import { createFeedBody, feedIdParams } from "../feeds/model";
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

/** `schema` plus `name`, the other name of its `id` argument: still accepted, never required, marked deprecated. */
export function withFormerId<P extends TProperties>(schema: TObject<P>, name: string): TObject {
  const { id, ...rest } = schema.properties as TProperties;
  if (id === undefined) throw new Error(`${name}: the schema has no id argument`);
  const former = t.Optional(t.String({ maxLength: 100, deprecated: true, description: "Another name of id, still accepted; send id." }));
  return t.Object({ id, [name]: former, ...rest });
}

export const listSeedsInput = listSeedsQuery;
export const getSeedInput = seedIdParams;
export const createSeedInput = withIdempotencyKey(createSeedBody);
export const updateSeedInput = t.Object({ ...seedIdParams.properties, ...patchSeedBody.properties });
export const deleteSeedInput = seedIdParams;

export const generateCreationInput = withIdempotencyKey(t.Omit(generateBody, ["type"]));
export const createCreationInput = withIdempotencyKey(t.Omit(createBody, ["type"]));
const { creation_id: regeneratedCreation, type: _type, ...regenerateRest } = regenerateBody.properties;
export const regenerateCreationInput = withIdempotencyKey(
  t.Object({ id: regeneratedCreation, ...regenerateRest }),
);
export const listCreationsInput = t.Object({
  seed_id: t.Optional(t.String({ maxLength: 100, description: "Only the creations of this seed." })),
  limit: limitOf(CREATION_LIST_LIMIT_MAX),
  cursor,
});
export const getCreationInput = t.Object({ id: t.String({ maxLength: 100 }) });
export const listCreationVersionsInput = creationIdParams;
export const updateCreationInput = t.Object({ ...creationIdParams.properties, ...editBody.properties });
export const deleteCreationInput = creationIdParams;

export const ingestImageInput = withIdempotencyKey(ingestUrlBody);
export const createUploadLinkInput = withIdempotencyKey(t.Object({ expires_in_seconds: uploadLinkBody.properties.expires_in_seconds }));
export const listAssetsInput = t.Object({ limit: limitOf(ASSET_LIST_LIMIT_MAX), cursor: assetListQuery.properties.cursor });
export const deleteAssetInput = assetIdParams;
export const getUploadLinkInput = uploadLinkParams;

export const listTargetsInput = nothing;
export const schedulePostInput = withIdempotencyKey(t.Omit(scheduleBody, ["type"]));
export const listPostsInput = postListQuery;
export const getPostInput = postIdParams;
export const reschedulePostInput = t.Object({ ...postIdParams.properties, ...rescheduleBody.properties });
export const cancelPostInput = postIdParams;
export const resolveUnconfirmedInput = t.Object({
  ...postIdParams.properties,
  account_id: t.String({ format: "uuid", description: "The unconfirmed target's accountId (its connection), as get_post lists it" }),
  ...resolveBody.properties,
});
export const listApprovalsInput = approvalsQuery;
export const approvePostInput = postIdParams;
export const rejectPostInput = t.Object({ ...postIdParams.properties, ...rejectBody.properties }, { additionalProperties: false });

export const importPostsInput = withIdempotencyKey(
  t.Object({
    csv: t.String({
      minLength: 1,
      // An MCP request is JSON under the API's 1 MiB cap, so a tool call carries less than POST /schedule/import.
      maxLength: MAX_JSON_BYTES,
      description:
        "The CSV file's text: a header row (caption, image_urls, alt_texts, scheduled_time, queue, targets, first_comment), then one row per post. Up to 1 MiB (the MCP request's cap); a larger file goes to POST /api/v1/schedule/import",
    }),
  }),
);
export const getSlotsInput = nothing;
export const setSlotsInput = slotsSchema;
export const endSeriesInput = withFormerId(seriesIdParams, "series_id");
export const getAccountInput = nothing;
export const updateAccountInput = accountSettingsBody;

export const getCreditsInput = nothing;
export const listCreditLedgerInput = ledgerQuerySchema;
export const getVoiceInput = nothing;
export const setVoiceInput = voicePatchSchema;

export const createWebhookInput = withIdempotencyKey(createWebhookBody);
export const listWebhooksInput = nothing;
export const deleteWebhookInput = webhookIdParams;

export const addFeedInput = withIdempotencyKey(createFeedBody);
export const listFeedsInput = nothing;
export const feedIdInput = feedIdParams;
export const pollFeedInput = withIdempotencyKey(feedIdParams);
