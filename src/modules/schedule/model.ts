/** Request and response schemas of the scheduling routes: the single source of truth for validation and OpenAPI. */
import { t } from "elysia";
import { CONNECTION_PLATFORMS } from "../../db/schema/connections";
import { REPEAT_UNITS } from "../../db/schema/post-series";
import { orNull, pathId, timestamp, uuid } from "../../lib/schema";
import { perPlatform } from "../creations/model";

/** The bounds of `repeat` (decisions.md §14). */
export const REPEAT_INTERVAL_MAX = 12;
export const REPEAT_COUNT_MIN = 2;
export const REPEAT_COUNT_MAX = 100;

export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;
export const MAX_TARGETS_PER_POST = 20;

const nullableString = orNull(t.String());
const postStatus = t.Union([
  t.Literal("scheduled"),
  t.Literal("publishing"),
  t.Literal("published"),
  t.Literal("partially_failed"),
  t.Literal("failed"),
  t.Literal("unconfirmed"),
  t.Literal("pending_approval"),
]);

export const targetSchema = t.Object({
  platform: t.UnionEnum(CONNECTION_PLATFORMS, { description: "The network; usable to name a target when one connection has it" }),
  accountId: uuid({ description: "The connection's id; names a target when two connections share a platform" }),
  label: t.String(),
  readyToPost: t.Boolean(),
  blockedReason: orNull(t.String(), { description: "What a person should fix; null when ready" }),
}, { title: "Target" });

export const targetsResponse = t.Object({ targets: t.Array(targetSchema), manageUrl: t.String({ description: "Dashboard page where connections are managed." }) }, { title: "TargetList" });

export const postTargetSchema = t.Object({
  accountId: uuid(),
  platform: t.String(),
  label: t.String(),
  status: t.Union([
    t.Literal("scheduled"),
    t.Literal("publishing"),
    t.Literal("published"),
    t.Literal("failed"),
    t.Literal("unconfirmed"),
    t.Literal("pending_approval"),
  ]),
  providerPostId: nullableString,
  publishedUrl: nullableString,
  errorMessage: nullableString,
  /** True when a cancel withdrew this target but could not finish the others (the row was kept). */
  withdrawn: t.Boolean(),
}, { title: "PostTarget" });

const postImageSchema = t.Object(
  { assetId: uuid({ description: "A library asset (GET /api/v1/assets shows its URL)." }), altText: t.String({ description: '"" when the image has no alt text.' }) },
  { title: "PostSnapshotImage" },
);
const postPartSchema = t.Object({ caption: t.String(), images: t.Array(postImageSchema) }, { title: "PostSnapshotPart" });
const postVariantSchema = t.Object(
  {
    caption: t.Optional(t.String()),
    images: t.Optional(t.Array(postImageSchema)),
    thread: t.Optional(t.Array(postPartSchema, { description: "[]: this network gets no thread." })),
    firstComment: t.Optional(t.String({ description: '"": this network gets no first comment.' })),
  },
  { title: "PostSnapshotVariant" },
);

export const postSchema = t.Object({
  id: uuid(),
  creationId: uuid(),
  scheduledTime: timestamp(),
  status: postStatus,
  errorMessage: t.Optional(t.String({ description: "Present when status is failed, partially_failed or unconfirmed" })),
  content: t.Object(
    {
      caption: t.String(),
      altText: orNull(t.String(), { description: "The first image's alt text; null when the post has no image." }),
      images: t.Array(postImageSchema, { description: "The snapshot's images in order (0–10)." }),
      thread: t.Array(postPartSchema, { description: "Follow-up parts (0–24), published as replies in order." }),
      firstComment: orNull(t.String(), { description: "Posted right after the post as its first comment or reply; null when none." }),
      variants: perPlatform(postVariantSchema, { title: "PostSnapshotVariants", description: "A version per network, by platform name; {} when none." }),
    },
    { title: "PostContent", description: "What the post sends (its snapshot of the creation, or its own content after a PATCH)." },
  ),
  targets: t.Array(postTargetSchema),
  queued: t.Boolean({ description: "True when the post took a posting slot (queue: true); moving it to another time takes it out of the queue." }),
  seriesId: orNull(uuid(), { description: "The repeat series this post is an occurrence of; null for a one-off post." }),
  createdAt: timestamp(),
}, { title: "Post" });

export const repeatSchema = t.Object(
  {
    every: t.UnionEnum(REPEAT_UNITS, { error: "must be day, week or month", description: "The unit the post repeats by." }),
    interval: t.Optional(t.Integer({ minimum: 1, maximum: REPEAT_INTERVAL_MAX, error: `must be a whole number from 1 to ${REPEAT_INTERVAL_MAX}`, description: "Every n units; 1 by default." })),
    count: t.Optional(
      t.Integer({ minimum: REPEAT_COUNT_MIN, maximum: REPEAT_COUNT_MAX, error: `must be a whole number from ${REPEAT_COUNT_MIN} to ${REPEAT_COUNT_MAX}`, description: "Occurrences in all, the first included." }),
    ),
    until: t.Optional(t.String({ minLength: 1, maxLength: 40, description: "RFC 3339 timestamp: no occurrence after it." })),
  },
  {
    title: "Repeat",
    additionalProperties: false,
    description:
      "After each occurrence publishes (or is cancelled), the next is scheduled from the same snapshot as a new post with the same seriesId, at the same wall-clock time in the account's time zone.",
  },
);

export const scheduleBody = t.Object({
  type: t.Literal("social_post", { error: "must be social_post" }),
  creation_id: t.String({ minLength: 1, maxLength: 64 }),
  scheduled_time: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 40,
      description:
        "RFC 3339 timestamp (any offset, e.g. 2026-11-22T11:00:00+01:00) at least 5 minutes ahead; answered in UTC. Required unless queue is true.",
    }),
  ),
  targets: t.Array(t.String({ minLength: 1, maxLength: 100 }), {
    minItems: 1,
    maxItems: MAX_TARGETS_PER_POST,
    description: "Each a platform name or an accountId from GET /schedule/targets",
  }),
  queue: t.Optional(
    t.Boolean({
      error: "must be true or false",
      description:
        "true instead of scheduled_time: the post takes the first posting slot (GET /schedule/slots) at least 5 minutes ahead that has all its targets and no other queued post; 409 no_free_slot when none in the next 90 days.",
    }),
  ),
  repeat: t.Optional(repeatSchema),
});

/** A bound in UTF-16 units before the service's grapheme checks (decisions.md §13: 63,206 characters by hand). */
const MAX_CONTENT_CHARS = 63_206 * 4;

/**
 * The content a PATCH may change in the post's snapshot (decisions.md §15). Today's content model: the caption and
 * the one image's alt text; images, thread parts and per-network versions join this object with the content model
 * of decisions.md §13.
 */
export const postContentBody = t.Object(
  {
    caption: t.Optional(
      t.String({
        maxLength: MAX_CONTENT_CHARS,
        error: "must be text of at most 63206 characters",
        description: "The post's new caption: not empty; checked against each target's limit like POST /schedule (409 not_schedulable).",
      }),
    ),
    alt_text: t.Optional(
      t.String({
        maxLength: MAX_CONTENT_CHARS,
        error: "must be text of at most 1500 characters",
        description: "The image's new alt text (at most 1500 characters); only for a post with an image.",
      }),
    ),
    altText: t.Optional(
      t.String({
        maxLength: MAX_CONTENT_CHARS,
        error: "must be text of at most 1500 characters",
        description: "The same as alt_text (the spelling of PATCH /creations/{id}); send one of them.",
      }),
    ),
  },
  {
    title: "PostContentEdit",
    additionalProperties: false,
    error: "must be an object with caption and/or alt_text",
    description: "Changes what this post sends; the creation it was scheduled from does not change.",
  },
);

export const rescheduleBody = t.Object({
  scheduled_time: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 40,
      error: "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z",
      description: "RFC 3339 timestamp (any offset) at least 5 minutes ahead; answered in UTC",
    }),
  ),
  targets: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: MAX_TARGETS_PER_POST,
      error: `must be 1 to ${MAX_TARGETS_PER_POST} platform names or accountIds`,
      description: "Replaces the post's targets; each a platform name or an accountId from GET /schedule/targets",
    }),
  ),
  content: t.Optional(postContentBody),
});

/** A PATCH /schedule/{id} body as validated (reschedule_post's arguments are the same, plus `id`). */
export type RescheduleBody = typeof rescheduleBody.static;

export const postResponse = t.Object({ post: postSchema }, { title: "PostEnvelope" });

export const postIdParams = t.Object({ id: pathId() });

export const targetParams = t.Object({ id: pathId(), accountId: pathId() });

export const resolveBody = t.Object(
  {
    outcome: t.UnionEnum(["posted", "send_again"], {
      description: "posted: it went out (the target becomes published); send_again: one new attempt, resuming after the parts already confirmed",
    }),
    published_url: t.Optional(
      t.String({ minLength: 1, maxLength: 2048, description: "With posted: the post's address on the network, when you have it (http or https)" }),
    ),
  },
  { title: "ResolveUnconfirmed" },
);

export const cancelResponse = t.Object({ id: uuid(), cancelled: t.Literal(true), providerPostWithdrawn: t.Boolean() }, { title: "Cancelled" });

export const listQuery = t.Object({
  from: t.Optional(t.String({ maxLength: 40, description: "RFC 3339 timestamp (any offset); lower bound of scheduledTime (inclusive)" })),
  to: t.Optional(t.String({ maxLength: 40, description: "RFC 3339 timestamp (any offset); upper bound of scheduledTime (exclusive)" })),
  status: t.Optional(postStatus),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 512 })),
});

export const listResponse = t.Object({ posts: t.Array(postSchema), nextCursor: orNull(t.String()) }, { title: "PostList" });
