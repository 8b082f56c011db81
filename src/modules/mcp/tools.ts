/**
 * The MCP tools: one for every REST operation an API key can call (decisions.md §9's table and §10), each naming its
 * REST twin in `rest`. Each calls the same service the REST route calls, under the same group, and answers the same
 * JSON; nothing here decides a rule. `status` is the REST success status (what an idempotent replay stores).
 */
import type { Static, TSchema } from "elysia";
import type { ToolAnnotations } from "@modelcontextprotocol/server";
import type { Deps } from "../../deps";
import { ingestFromUrl } from "../assets/ingest";
import { ingestUrlResponse, listResponse as assetListResponse } from "../assets/model";
import { assetToApi, deleteAsset, listAssets } from "../assets/service";
import type { Scope } from "../../auth/scopes";
import { deleteResponse as assetDeletedResponse } from "../assets/model";
import {
  creationDeletedResponse,
  creationListResponse,
  creationResponse,
  creationVersionsResponse,
  creationWithChargeResponse,
  MAX_HAND_CAPTION_GRAPHEMES,
} from "../creations/model";
import { creationInputOf, creationPatchOf } from "../creations/content-input";
import { createCreationByHand, deleteCreation, updateCreation } from "../creations/edit";
import { generateCreation, getCreation, listCreations, regenerateCreation } from "../creations/service";
import { listVersions } from "../creations/versions";
import { creditSummarySchema, DEFAULT_LIMIT as LEDGER_LIMIT_DEFAULT, ledgerPageSchema } from "../credits/model";
import { creditSummary, ledgerView } from "../credits/service";
import { cancelResponse, listResponse as postListResponse, postResponse, targetsResponse } from "../schedule/model";
import { cancelPost, getPost, listPosts, listTargets, reschedulePost, rescheduleInputOf } from "../schedule/service";
import { resolveUnconfirmedTarget } from "../schedule/resolve";
import { scheduleRequest, scheduleRequestOf } from "../schedule/request";
import { seriesEndedResponse, slotsSchema } from "../schedule/queue-model";
import { endSeries } from "../schedule/repeat";
import { importResponse } from "../schedule/bulk-model";
import { importCsv } from "../schedule/import";
import { approvePost, rejectPost } from "../schedule/approval";
import { getSlots, putSlots } from "../schedule/slots";
import { accountSettingsResponse } from "../accounts/model";
import { getAccountSettings, updateAccountSettings } from "../accounts/settings";
import { LIST_LIMIT_DEFAULT as SEED_LIST_LIMIT_DEFAULT, seedDeletedResponse, seedListResponse, seedResponse } from "../seeds/model";
import { createSeed, deleteSeed, getOwnedSeed, listSeeds, patchSeed, seedView } from "../seeds/service";
import { uploadLinkResponse, uploadLinkStatusResponse } from "../uploads/model";
import { createUploadLink, getUploadLinkStatus } from "../uploads/service";
import { voiceSchema } from "../voice/model";
import { getVoice, putVoice } from "../voice/service";
import { createWebhookResponse, webhookDeletedResponse, webhookListResponse } from "../webhooks/model";
import { createWebhook, deleteWebhook, listWebhooks } from "../webhooks/service";
import { feedDeletedResponse, feedListResponse, feedResponse, feedWithPollResponse } from "../feeds/model";
import { createFeed, deleteFeed, getFeed, listFeeds, pollFeedNow } from "../feeds/service";
import * as input from "./model";
import type { McpPrincipal } from "./principal";

/** One tool: its REST twin's group, schemas and service call. */
export interface ToolDefinition<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  group: Scope;
  /** The REST twin as the route table names it: `PATCH /api/v1/schedule/:id`. */
  rest: string;
  /** The input's `id` argument also goes by this name (declared deprecated; tool-server.ts moves it to `id`). */
  formerId?: string;
  /** Top-level answer fields a replay of the same idempotency_key answers as null (a secret shown once). */
  withheldOnReplay?: readonly string[];
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Takes `idempotency_key` (the REST route is a POST). */
  creates: boolean;
  /** The REST route's success status. */
  status: 200 | 201;
  run(deps: Deps, principal: McpPrincipal, args: Static<I>): Static<O> | Promise<Static<O>>;
  /** One sentence for the person reading the conversation. */
  summary(answer: Static<O>): string;
}

/** A read: changes nothing, talks only to Seedcast. */
const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** A write that adds something new. */
const ADD: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
/** A write that sets values: the same call twice leaves the same state. */
const SET: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** A write that removes something. */
const REMOVE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false };

function tool<I extends TSchema, O extends TSchema>(definition: ToolDefinition<I, O>): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The start of `text` (at most `max` code points), for a summary that lists several. */
function opening(text: string, max = 60): string {
  const points = Array.from(text);
  return points.length <= max ? text : `${points.slice(0, max).join("")}…`;
}

function more(nextCursor: string | null): string {
  return nextCursor ? " More are on the next page (pass nextCursor as cursor)." : "";
}

/** Drops the idempotency_key argument before the service sees the arguments. */
function withoutKey<T extends Record<string, unknown>>(args: T): Omit<T, typeof input.IDEMPOTENCY_ARGUMENT> {
  const { [input.IDEMPOTENCY_ARGUMENT]: _key, ...rest } = args;
  return rest;
}

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: "list_seeds",
    title: "List seeds",
    description:
      "List the account's seeds (ideas and source texts posts are made from): newest first, or best matches first with `search` (whole words and word prefixes of title, content and category). Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/seeds",
    input: input.listSeedsInput,
    output: seedListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: async (deps, who, args) => {
      const page = await listSeeds(deps, who.accountId, {
        search: args.search ?? null,
        limit: args.limit ?? SEED_LIST_LIMIT_DEFAULT,
        cursor: args.cursor ?? null,
      });
      return { seeds: page.seeds.map(seedView), nextCursor: page.nextCursor };
    },
    summary: (a) => `${plural(a.seeds.length, "seed")}${a.seeds.length ? `: ${a.seeds.map((s) => `“${s.title}”`).join(", ")}` : ""}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "get_seed",
    title: "Get a seed",
    description: "One seed by id. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/seeds/:id",
    formerId: "seed_id",
    input: input.getSeedInput,
    output: seedResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: async (deps, who, args) => seedView(await getOwnedSeed(deps, who.accountId, args.id)),
    summary: (a) => `Seed “${a.title}” (${a.id}).`,
  }),
  tool({
    name: "create_seed",
    title: "Create a seed",
    description:
      "Save a seed: a title and the content posts will be made from, optionally a category and an image (an asset id from the library, or an image URL that is stored, not fetched). Free. Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/seeds",
    input: input.createSeedInput,
    output: seedResponse,
    annotations: ADD,
    creates: true,
    status: 201,
    run: async (deps, who, args) => seedView(await createSeed(deps, who.accountId, withoutKey(args))),
    summary: (a) => `Saved seed “${a.title}” (${a.id}).`,
  }),
  tool({
    name: "update_seed",
    title: "Update a seed",
    description:
      "Change a seed's fields; fields left out keep their value, null clears category, image_asset_id and image_url. Needs the Content creation group.",
    group: "create",
    rest: "PATCH /api/v1/seeds/:id",
    formerId: "seed_id",
    input: input.updateSeedInput,
    output: seedResponse,
    annotations: SET,
    creates: false,
    status: 200,
    run: async (deps, who, { id, ...patch }) => seedView(await patchSeed(deps, who.accountId, id, patch)),
    summary: (a) => `Updated seed “${a.title}” (${a.id}).`,
  }),
  tool({
    name: "delete_seed",
    title: "Delete a seed",
    description: "Delete a seed for good. Creations made from it stay. Needs the Content creation group.",
    group: "create",
    rest: "DELETE /api/v1/seeds/:id",
    formerId: "seed_id",
    input: input.deleteSeedInput,
    output: seedDeletedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: async (deps, who, args) => {
      await deleteSeed(deps, who.accountId, args.id);
      return { id: args.id, deleted: true as const };
    },
    summary: (a) => `Deleted seed ${a.id}.`,
  }),
  tool({
    name: "generate_creation",
    title: "Generate a social post",
    description:
      "Write a social post (caption, alt text, optional image) from a seed, in the account's brand voice. Costs credits (5 by default, with or without an image). Image: image_asset_id; else a generated card when include_visual; else the seed's image; else none. platforms: also a version per network whose caption fits that network's limit (same price). Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/creations/generate",
    input: input.generateCreationInput,
    output: creationWithChargeResponse,
    annotations: ADD,
    creates: true,
    status: 201,
    run: (deps, who, args) => generateCreation(deps, who.accountId, withoutKey(args)),
    summary: (a) =>
      `Created ${a.creation.id} (${plural(a.creditsCharged, "credit")} charged): “${a.creation.body.caption}”${a.creation.body.imageUrl ? ` with image ${a.creation.body.imageUrl}` : ""}. Preview: ${a.creation.url}`,
  }),
  tool({
    name: "create_creation",
    title: "Write a post by hand",
    description:
      `Write a post yourself (no generation, free): caption, images (assets of the library, each {asset_id, alt_text}, up to 10), thread (follow-up parts {caption, images}, up to 24), first_comment, and variants (a version per network: {caption, images, thread, first_comment}). Captions may be up to ${MAX_HAND_CAPTION_GRAPHEMES} characters; each network's own limits are checked when it is scheduled. Needs the Content creation group.`,
    group: "create",
    rest: "POST /api/v1/creations",
    input: input.createCreationInput,
    output: creationWithChargeResponse,
    annotations: ADD,
    creates: true,
    status: 201,
    run: async (deps, who, args) => ({ creation: await createCreationByHand(deps, who.accountId, creationInputOf(withoutKey(args))), creditsCharged: 0 }),
    summary: (a) => `Created ${a.creation.id} (free): “${a.creation.body.caption}”${a.creation.body.images.length > 0 ? ` with ${plural(a.creation.body.images.length, "image")}` : ""}${a.creation.body.thread.length > 0 ? ` and a thread of ${plural(a.creation.body.thread.length, "more part")}` : ""}. Preview: ${a.creation.url}`,
  }),
  tool({
    name: "regenerate_creation",
    title: "Regenerate a post",
    description:
      "Rewrite a creation's caption, image or both, in place, optionally following change_instructions (\"shorter\", \"more formal\"…). Costs credits (caption 1, image 4, both 4 by default); a failure changes nothing and charges nothing. platforms: also rewrites those networks' versions from the new caption. Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/creations/regenerate",
    formerId: "creation_id",
    input: input.regenerateCreationInput,
    output: creationWithChargeResponse,
    annotations: ADD,
    creates: true,
    status: 200,
    run: (deps, who, args) => {
      const { id, ...rest } = withoutKey(args);
      return regenerateCreation(deps, who.accountId, { creation_id: id, ...rest });
    },
    summary: (a) => `Regenerated ${a.creation.id} (${plural(a.creditsCharged, "credit")} charged): “${a.creation.body.caption}”.`,
  }),
  tool({
    name: "list_creations",
    title: "List creations",
    description: "List the account's generated posts, newest first; seed_id keeps those of one seed. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/creations",
    input: input.listCreationsInput,
    output: creationListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) =>
      listCreations(deps, who.accountId, {
        ...(args.seed_id !== undefined ? { seedId: args.seed_id } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.cursor !== undefined ? { cursor: args.cursor } : {}),
      }),
    summary: (a) => `${plural(a.creations.length, "creation")}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "get_creation",
    title: "Get a creation",
    description: "One generated post by id: caption, alt text, image and preview URL. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/creations/:id",
    formerId: "creation_id",
    input: input.getCreationInput,
    output: creationResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: async (deps, who, args) => ({ creation: await getCreation(deps, who.accountId, args.id) }),
    summary: (a) => `Creation ${a.creation.id}: “${a.creation.body.caption}”.`,
  }),
  tool({
    name: "list_creation_versions",
    title: "List a post's earlier versions",
    description:
      "A creation's earlier versions, newest first (the last 10): whenever a regenerate, an edit by hand or a restore on the dashboard replaced its caption, alt text or image, the content replaced is kept, with whether it was written by hand. imageUrl is null when the version had no image or the image was deleted since. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/creations/:id/versions",
    formerId: "creation_id",
    input: input.listCreationVersionsInput,
    output: creationVersionsResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: async (deps, who, args) => ({ versions: await listVersions(deps, who.accountId, args.id) }),
    summary: (a) =>
      a.versions.length === 0
        ? "No earlier versions: the creation has its first content."
        : `${plural(a.versions.length, "earlier version")}, newest first: ${a.versions.map((v) => `“${opening(v.caption)}” (replaced ${v.replacedAt})`).join("; ")}.`,
  }),
  tool({
    name: "update_creation",
    title: "Edit a post",
    description:
      `Edit a post by hand: caption, alt_text (the first image's), images (the whole list, each {asset_id, alt_text}), thread (the whole list of follow-up parts {caption, images}), first_comment, variants (the whole map of versions per network). Fields left out stay; null removes one. Captions may be up to ${MAX_HAND_CAPTION_GRAPHEMES} characters (each network's own limits are checked when it is scheduled). The content replaced is kept as a version (list_creation_versions); posts already scheduled keep what they were scheduled with. Free. Needs the Content creation group.`,
    group: "create",
    rest: "PATCH /api/v1/creations/:id",
    formerId: "creation_id",
    input: input.updateCreationInput,
    output: creationResponse,
    annotations: SET,
    creates: false,
    status: 200,
    run: async (deps, who, { id, ...edit }) => ({ creation: await updateCreation(deps, who.accountId, id, creationPatchOf(edit)) }),
    summary: (a) => `Edited ${a.creation.id}: “${a.creation.body.caption}”.`,
  }),
  tool({
    name: "delete_creation",
    title: "Delete a post",
    description:
      "Delete a creation for good; its image stays in the library. Refused (creation_in_use) while a scheduled post made from it has not gone out; posts keep their own copy. Needs the Content creation group.",
    group: "create",
    rest: "DELETE /api/v1/creations/:id",
    formerId: "creation_id",
    input: input.deleteCreationInput,
    output: creationDeletedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => deleteCreation(deps, who.accountId, args.id),
    summary: (a) => `Deleted creation ${a.id}.`,
  }),
  tool({
    name: "ingest_image",
    title: "Add an image from a URL",
    description:
      "Fetch a public https image (PNG, JPEG, GIF or WebP) into the account's library, under every SSRF rule; a refusal names its reason (https_required, host_not_public, unsupported_type, image_too_large…). Free. Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/assets/ingest-url",
    input: input.ingestImageInput,
    output: ingestUrlResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 201,
    run: async (deps, who, args) => {
      const record = await ingestFromUrl(deps, who.accountId, { url: args.url, label: args.label });
      return { asset: assetToApi(deps, record), creditsCharged: 0 as const };
    },
    summary: (a) => `Added ${a.asset.fileName} (${a.asset.mimeType}, ${a.asset.sizeBytes} bytes) as asset ${a.asset.id}: ${a.asset.url}`,
  }),
  tool({
    name: "create_upload_link",
    title: "Make an upload link",
    description:
      "Mint a single-use browser upload link (valid 15 minutes, or expires_in_seconds: 300 to 604800) a person can open to add one image from their device to the library. Treat the link as a credential. Free. Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/assets/upload-link",
    input: input.createUploadLinkInput,
    output: uploadLinkResponse,
    annotations: ADD,
    creates: true,
    status: 201,
    // The link's audit column names an API key; a grant is not one, so it stays empty.
    run: (deps, who, args) => createUploadLink(deps, who.accountId, null, args.expires_in_seconds),
    summary: (a) => `Open ${a.uploadUrl} to upload one image (valid until ${a.expiresAt}).`,
  }),
  tool({
    name: "list_assets",
    title: "List images",
    description: "List the account's image library, newest first. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/assets",
    input: input.listAssetsInput,
    output: assetListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: async (deps, who, args) => {
      const page = await listAssets(deps, who.accountId, { limit: args.limit, cursor: args.cursor });
      return { assets: page.assets.map((record) => assetToApi(deps, record)), nextCursor: page.nextCursor };
    },
    summary: (a) => `${plural(a.assets.length, "image")}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "delete_asset",
    title: "Delete an image",
    description:
      "Delete an image from the library for good. Refused (asset_in_use) while a seed, creation or pending post uses it. Needs the Content creation group.",
    group: "create",
    rest: "DELETE /api/v1/assets/:id",
    formerId: "asset_id",
    input: input.deleteAssetInput,
    output: assetDeletedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => deleteAsset(deps, who.accountId, args.id),
    summary: (a) => `Deleted image ${a.id}.`,
  }),
  tool({
    name: "get_upload_link",
    title: "Check an upload link",
    description:
      "Whether an upload link (from create_upload_link) is still valid, was used (then assetId is the image it added) or expired. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/assets/upload-links/:id",
    formerId: "upload_link_id",
    input: input.getUploadLinkInput,
    output: uploadLinkStatusResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => getUploadLinkStatus(deps, who.accountId, args.id),
    summary: (a) =>
      a.status === "used" ? `Upload link ${a.id} was used: image ${a.assetId}.` : `Upload link ${a.id} is ${a.status} (expires ${a.expiresAt}).`,
  }),
  tool({
    name: "list_targets",
    title: "List publishing targets",
    description:
      "List the connected accounts (Bluesky, Mastodon, webhooks) posts can be scheduled to, with whether each is ready; connections are managed by a person at manageUrl. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/schedule/targets",
    input: input.listTargetsInput,
    output: targetsResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => listTargets(deps, who.accountId),
    summary: (a) =>
      a.targets.length === 0
        ? `No connected accounts yet; a person can add one at ${a.manageUrl}.`
        : `${plural(a.targets.length, "target")}: ${a.targets.map((x) => `${x.label} (${x.platform}${x.readyToPost ? "" : `, blocked: ${x.blockedReason}`})`).join(", ")}.`,
  }),
  tool({
    name: "schedule_post",
    title: "Schedule a post",
    description:
      "Schedule a creation to one or more connected accounts (a platform name or an accountId from list_targets) at scheduled_time, an ISO 8601 UTC timestamp at least 5 minutes ahead, or with queue: true in the first free posting slot (get_slots; no_free_slot when none in 90 days). repeat {every: day|week|month, interval?, count?, until?} repeats it at the same wall-clock time in the account's time zone (the answer's seriesId; end_series stops it). Free. Needs the Scheduling group.",
    group: "schedule",
    rest: "POST /api/v1/schedule",
    input: input.schedulePostInput,
    output: postResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 200,
    run: (deps, who, args) => scheduleRequest(deps, who, scheduleRequestOf(args)),
    summary: (a) =>
      `Post ${a.post.id} is ${a.post.status} for ${a.post.scheduledTime} to ${a.post.targets.map((x) => `${x.label} (${x.status})`).join(", ")}.`,
  }),
  tool({
    name: "import_posts",
    title: "Import posts from CSV",
    description:
      "Import posts from CSV text (csv): a header row naming caption, image_urls, alt_texts, scheduled_time, queue, targets, first_comment (caption and targets required), then one row per post; | separates list items. Each row needs scheduled_time (ISO 8601, at least 5 minutes ahead) or queue true. Every row is checked first: any bad row → invalid_rows with rows [{row, field, problem}] and nothing stored; otherwise every row becomes a creation and a scheduled post at once. Image URLs are fetched (library URLs reused). Free. Needs the Scheduling group.",
    group: "schedule",
    rest: "POST /api/v1/schedule/import",
    input: input.importPostsInput,
    output: importResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 200,
    run: (deps, who, args) => importCsv(deps, who, args.csv),
    summary: (a) => `${plural(a.imported, "post")} imported and scheduled.`,
  }),
  tool({
    name: "list_posts",
    title: "List scheduled posts",
    description:
      "List scheduled posts, newest first; from/to bound scheduledTime, status filters (scheduled, publishing, published, partially_failed, failed, pending_approval: waiting for an owner, see list_approvals). Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/schedule/posts",
    input: input.listPostsInput,
    output: postListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => listPosts(deps, who.accountId, args),
    summary: (a) => `${plural(a.posts.length, "post")}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "get_post",
    title: "Get a scheduled post",
    description: "One scheduled post with the state of each target. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/schedule/posts/:id",
    formerId: "post_id",
    input: input.getPostInput,
    output: postResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => getPost(deps, who.accountId, args.id),
    summary: (a) => `Post ${a.post.id} is ${a.post.status} for ${a.post.scheduledTime}.`,
  }),
  tool({
    name: "reschedule_post",
    title: "Reschedule a post",
    description:
      `Change a scheduled post that has not started publishing: another scheduled_time (ISO 8601, at least 5 minutes ahead), other targets (platform names or accountIds from list_targets), and/or its content {caption?, alt_text?}: what this post sends (a caption up to ${MAX_HAND_CAPTION_GRAPHEMES} characters, checked against each target's limit; the creation it came from stays as it is; a content-only change keeps the time). Same rules as schedule_post. Refused with already_published once it went out, not_reschedulable while it is publishing. Free. Needs the Scheduling group.`,
    group: "schedule",
    rest: "PATCH /api/v1/schedule/:id",
    formerId: "post_id",
    input: input.reschedulePostInput,
    output: postResponse,
    annotations: { ...SET, openWorldHint: true },
    creates: false,
    status: 200,
    run: (deps, who, { id, ...body }) => reschedulePost(deps, who.accountId, id, rescheduleInputOf(body), who),
    summary: (a) =>
      `Post ${a.post.id} is ${a.post.status} for ${a.post.scheduledTime} to ${a.post.targets.map((x) => `${x.label} (${x.status})`).join(", ")}.`,
  }),
  tool({
    name: "cancel_post",
    title: "Cancel a scheduled post",
    description:
      "Withdraw a scheduled post from every target and remove it. A published post cannot be cancelled. Needs the Scheduling group.",
    group: "schedule",
    rest: "DELETE /api/v1/schedule/:id",
    formerId: "post_id",
    input: input.cancelPostInput,
    output: cancelResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => cancelPost(deps, who.accountId, args.id),
    summary: (a) => `Cancelled post ${a.id}${a.providerPostWithdrawn ? " and withdrew it from its provider" : ""}.`,
  }),
  tool({
    name: "resolve_unconfirmed_target",
    title: "Answer for an unconfirmed post",
    description:
      "A target is unconfirmed when its network (Telegram; a Discord webhook that answered nothing) could not tell whether the post went out; Seedcast never sends it again on its own. Ask the person to look, then answer: outcome posted (the target becomes published; published_url when they give you the address) or send_again (one new attempt now, resuming after the thread messages already confirmed). account_id is the target's accountId from get_post. Refused with not_unconfirmed when the target is not unconfirmed. Needs the Scheduling group.",
    group: "schedule",
    rest: "POST /api/v1/schedule/:id/targets/:accountId/resolve",
    formerId: "post_id",
    input: input.resolveUnconfirmedInput,
    output: postResponse,
    annotations: { ...SET, idempotentHint: false },
    creates: false,
    status: 200,
    run: (deps, who, args) => resolveUnconfirmedTarget(deps, who.accountId, args.id, args.account_id, { outcome: args.outcome, publishedUrl: args.published_url }),
    summary: (a) => `Post ${a.post.id} is ${a.post.status}: ${a.post.targets.map((x) => `${x.label} (${x.status})`).join(", ")}.`,
  }),
  tool({
    name: "list_approvals",
    title: "List posts waiting for approval",
    description:
      "The posts waiting for an owner's approval (status pending_approval), newest first: when the account requires approval, a post an editor schedules waits here and does not publish until an owner approves it. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/schedule/approvals",
    input: input.listApprovalsInput,
    output: postListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => listPosts(deps, who.accountId, { ...args, status: "pending_approval" }),
    summary: (a) =>
      a.posts.length === 0
        ? "Nothing waits for approval."
        : `${plural(a.posts.length, "post")} waiting for approval: ${a.posts.map((p) => `${p.id} for ${p.scheduledTime}`).join(", ")}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "approve_post",
    title: "Approve a waiting post",
    description:
      "Approve a post waiting for approval (list_approvals): it becomes scheduled and goes out at its time. Owners only (forbidden, requiredRole owner). not_pending_approval for a post not waiting (one whose time passed while it waited has failed: \"Not approved before its time.\"). Needs the Scheduling group.",
    group: "schedule",
    rest: "POST /api/v1/schedule/:id/approve",
    formerId: "post_id",
    input: input.approvePostInput,
    output: postResponse,
    annotations: { ...SET, openWorldHint: true },
    creates: false,
    status: 200,
    run: (deps, who, args) => approvePost(deps, who, args.id),
    summary: (a) => `Approved post ${a.post.id}: ${a.post.status} for ${a.post.scheduledTime}.`,
  }),
  tool({
    name: "reject_post",
    title: "Reject a waiting post",
    description:
      'Reject a post waiting for approval, with an optional note: it becomes failed with errorMessage "Rejected: <note>" and never publishes. Owners only (forbidden, requiredRole owner). not_pending_approval for a post not waiting. Needs the Scheduling group.',
    group: "schedule",
    rest: "POST /api/v1/schedule/:id/reject",
    formerId: "post_id",
    input: input.rejectPostInput,
    output: postResponse,
    annotations: { ...SET, destructiveHint: true },
    creates: false,
    status: 200,
    run: (deps, who, { id, ...body }) => rejectPost(deps, who, id, body),
    summary: (a) => `Rejected post ${a.post.id}: ${a.post.errorMessage ?? "failed"}.`,
  }),
  tool({
    name: "get_slots",
    title: "Get the posting schedule",
    description:
      "The posting schedule: slots of weekdays × a wall-clock time (HH:MM in timeZone, the account's) × connections. schedule_post with queue: true takes the first free slot. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/schedule/slots",
    input: input.getSlotsInput,
    output: slotsSchema,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => getSlots(deps, who.accountId),
    summary: (a) => `${plural(a.slots.length, "slot")} in ${a.timeZone}.`,
  }),
  tool({
    name: "set_slots",
    title: "Set the posting schedule",
    description:
      "Replace the posting schedule with {timeZone, slots: [{days: [mon…sun], time: HH:MM, targets: [accountId…]}]} (the object get_slots answers). A timeZone other than the account's changes the account's zone: owners only (forbidden, requiredRole owner). Needs the Scheduling group.",
    group: "schedule",
    rest: "PUT /api/v1/schedule/slots",
    input: input.setSlotsInput,
    output: slotsSchema,
    annotations: SET,
    creates: false,
    status: 200,
    run: (deps, who, args) => putSlots(deps, who, args),
    summary: (a) => `Saved ${plural(a.slots.length, "slot")} in ${a.timeZone}.`,
  }),
  tool({
    name: "end_series",
    title: "End a repeating series",
    description:
      "Stop a repeating post: no further occurrence is scheduled and the pending one is cancelled. id is the seriesId of a post. Needs the Scheduling group.",
    group: "schedule",
    rest: "DELETE /api/v1/schedule/series/:id",
    formerId: "series_id",
    input: input.endSeriesInput,
    output: seriesEndedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => endSeries(deps, who.accountId, String(args.id)),
    summary: (a) => `Ended series ${a.seriesId}${a.cancelledPostIds.length ? `; cancelled ${a.cancelledPostIds.join(", ")}` : ""}.`,
  }),
  tool({
    name: "get_account",
    title: "Get the account's settings",
    description: "The account's id, name, time zone (the one slots and repeats follow) and whether editors' posts need an owner's approval. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/account",
    input: input.getAccountInput,
    output: accountSettingsResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => getAccountSettings(deps, who.accountId),
    summary: (a) => `${a.account.name}: time zone ${a.account.timeZone}, approval ${a.account.approvalRequired ? "required" : "not required"}.`,
  }),
  tool({
    name: "update_account",
    title: "Update the account's settings",
    description:
      "Change the account's time_zone (an IANA name such as Europe/Berlin) and/or approval_required. Owners only (forbidden, requiredRole owner). Needs the Scheduling group.",
    group: "schedule",
    rest: "PATCH /api/v1/account",
    input: input.updateAccountInput,
    output: accountSettingsResponse,
    annotations: SET,
    creates: false,
    status: 200,
    run: (deps, who, args) =>
      updateAccountSettings(deps, who, {
        ...(args.time_zone !== undefined ? { timeZone: args.time_zone } : {}),
        ...(args.approval_required !== undefined ? { approvalRequired: args.approval_required } : {}),
      }),
    summary: (a) => `${a.account.name}: time zone ${a.account.timeZone}, approval ${a.account.approvalRequired ? "required" : "not required"}.`,
  }),
  tool({
    name: "get_credits",
    title: "Get credits",
    description: "The account's spendable and reserved credits. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/credits",
    input: input.getCreditsInput,
    output: creditSummarySchema,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => creditSummary(deps, who.accountId),
    summary: (a) => `${plural(a.balance, "credit")} available, ${a.reserved} reserved.`,
  }),
  tool({
    name: "list_credit_ledger",
    title: "List credit movements",
    description:
      "The account's credit movements, newest first: grant, reserve (work started), capture (spent), release (given back), each with the balance after it. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/credits/ledger",
    input: input.listCreditLedgerInput,
    output: ledgerPageSchema,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => ledgerView(deps, who.accountId, { limit: args.limit ?? LEDGER_LIMIT_DEFAULT, cursor: args.cursor ?? null }),
    summary: (a) => `${plural(a.entries.length, "movement")}${a.entries[0] ? `; balance after the latest: ${a.entries[0].balanceAfter}` : ""}.${more(a.nextCursor)}`,
  }),
  tool({
    name: "get_voice",
    title: "Get the brand voice",
    description: "The brand voice every generated post follows: tone, audience, language, emoji, hashtags, banned words, signature. Needs the Brand voice group.",
    group: "voice",
    rest: "GET /api/v1/voice",
    input: input.getVoiceInput,
    output: voiceSchema,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => getVoice(deps, who.accountId),
    summary: (a) => `Tone “${a.tone}”, language ${a.language}, emoji ${a.emoji}.`,
  }),
  tool({
    name: "set_voice",
    title: "Set the brand voice",
    description:
      "Save the brand voice; fields left out keep their value. Hashtags are stored with a leading #; duplicates are dropped. Needs the Brand voice group.",
    group: "voice",
    rest: "PUT /api/v1/voice",
    input: input.setVoiceInput,
    output: voiceSchema,
    annotations: SET,
    creates: false,
    status: 200,
    run: (deps, who, args) => putVoice(deps, who.accountId, args),
    summary: (a) => `Saved: tone “${a.tone}”, language ${a.language}, emoji ${a.emoji}.`,
  }),
  tool({
    name: "create_webhook",
    title: "Register an event webhook",
    description:
      "Register an https URL to be told of events: post.published, post.failed, post.partially_failed, post.unconfirmed, post.cancelled, post.needs_approval, post.approved, post.rejected, creation.generated, credits.low, connection.needs_attention. The answer holds the signing secret, shown this once (a replay of the same idempotency_key answers secret null). Free. Needs the Scheduling group.",
    group: "schedule",
    rest: "POST /api/v1/webhooks",
    input: input.createWebhookInput,
    output: createWebhookResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 201,
    withheldOnReplay: ["secret"],
    run: (deps, who, args) => createWebhook(deps, who.accountId, withoutKey(args)),
    summary: (a) =>
      `Registered webhook ${a.webhook.id} for ${a.webhook.events.join(", ")} at ${a.webhook.url}.${a.secret === null ? " (Replayed: the secret is shown only once.)" : " Keep the secret: it is not shown again."}`,
  }),
  tool({
    name: "list_webhooks",
    title: "List event webhooks",
    description: "The account's event webhooks, newest first (their secrets are never shown again). Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/webhooks",
    input: input.listWebhooksInput,
    output: webhookListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => listWebhooks(deps, who.accountId),
    summary: (a) => `${plural(a.webhooks.length, "webhook")}${a.webhooks.length ? `: ${a.webhooks.map((w) => w.url).join(", ")}` : ""}.`,
  }),
  tool({
    name: "delete_webhook",
    title: "Delete an event webhook",
    description: "Delete an event webhook; nothing is delivered to it afterwards. Needs the Scheduling group.",
    group: "schedule",
    rest: "DELETE /api/v1/webhooks/:id",
    formerId: "webhook_id",
    input: input.deleteWebhookInput,
    output: webhookDeletedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => deleteWebhook(deps, who.accountId, args.id),
    summary: (a) => `Deleted webhook ${a.id}.`,
  }),
  tool({
    name: "add_feed",
    title: "Follow a blog's feed",
    description:
      "Follow an RSS 2.0, Atom or JSON Feed URL. It is read at once (a refused URL or a document that is no feed is refused, nothing stored), then every 30 minutes. Each item not seen before becomes a seed (title, summary, link, first image); the items of this first read become seeds only. Later items also become a generated creation in mode draft (charged as generate: 5 credits each by default) and a post in the next free slot of `targets` in mode queue. Five failed reads in a row pause the feed. Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/feeds",
    input: input.addFeedInput,
    output: feedWithPollResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 201,
    run: (deps, who, args) => createFeed(deps, who.accountId, withoutKey(args)),
    summary: (a) => `Following ${a.feed.title ? `“${a.feed.title}” ` : ""}(${a.feed.url}) in ${a.feed.mode} mode as ${a.feed.id}: ${plural(a.poll.newItems, "item")} became seeds.`,
  }),
  tool({
    name: "list_feeds",
    title: "List followed feeds",
    description: "The account's feeds, newest first: mode, state (active or paused), last read, and why the last read failed. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/feeds",
    input: input.listFeedsInput,
    output: feedListResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who) => listFeeds(deps, who.accountId),
    summary: (a) =>
      `${plural(a.feeds.length, "feed")}${a.feeds.length ? `: ${a.feeds.map((f) => `${f.title ?? f.url} (${f.state}${f.state === "paused" && f.lastError ? `: ${f.lastError}` : ""})`).join(", ")}` : ""}.`,
  }),
  tool({
    name: "get_feed",
    title: "Get a feed",
    description: "One followed feed by id: its state, last read, failures in a row and the reason of the last failure. Needs the Read access group.",
    group: "read",
    rest: "GET /api/v1/feeds/:id",
    formerId: "feed_id",
    input: input.feedIdInput,
    output: feedResponse,
    annotations: READ,
    creates: false,
    status: 200,
    run: (deps, who, args) => getFeed(deps, who.accountId, args.id),
    summary: (a) => `Feed ${a.feed.id} (${a.feed.url}) is ${a.feed.state}${a.feed.lastError ? `; last failure: ${a.feed.lastError}` : ""}.`,
  }),
  tool({
    name: "poll_feed",
    title: "Read a feed now",
    description:
      "Read a followed feed now instead of waiting for its next read. A paused feed is resumed when this read succeeds. The answer says whether the read found new items, nothing new (304), or failed (and why). Needs the Content creation group.",
    group: "create",
    rest: "POST /api/v1/feeds/:id/poll",
    formerId: "feed_id",
    input: input.pollFeedInput,
    output: feedWithPollResponse,
    annotations: { ...ADD, openWorldHint: true },
    creates: true,
    status: 200,
    run: (deps, who, args) => pollFeedNow(deps, who.accountId, args.id),
    summary: (a) =>
      a.poll.outcome === "failed"
        ? `The read failed: ${a.poll.failure?.message ?? "unknown reason"} The feed is ${a.feed.state}.`
        : `${a.poll.outcome === "not_modified" ? "Nothing new (the server answered 304)" : `${plural(a.poll.newItems, "new item")}`}; the feed is ${a.feed.state}.`,
  }),
  tool({
    name: "delete_feed",
    title: "Stop following a feed",
    description: "Stop following a feed; the seeds, creations and posts it made stay. Needs the Content creation group.",
    group: "create",
    rest: "DELETE /api/v1/feeds/:id",
    formerId: "feed_id",
    input: input.feedIdInput,
    output: feedDeletedResponse,
    annotations: REMOVE,
    creates: false,
    status: 200,
    run: (deps, who, args) => deleteFeed(deps, who.accountId, args.id),
    summary: (a) => `Stopped following feed ${a.id}.`,
  }),
];

/** Tools by name. */
export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDefinition> = new Map(TOOLS.map((t) => [t.name, t]));
