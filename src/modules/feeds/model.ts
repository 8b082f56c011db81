/** Request and response schemas of the feed routes (decisions.md §14): validation and OpenAPI in one place. */
import { t } from "elysia";
import { FEED_MODES, FEED_STATES } from "../../db/schema/feeds";
import { integer, orNull, pathId, timestamp, uuid } from "../../lib/schema";

export const MAX_FEED_URL_LENGTH = 2000;
/** Connections one feed may queue to. */
export const MAX_FEED_TARGETS = 20;

export const createFeedBody = t.Object({
  url: t.String({
    minLength: 1,
    maxLength: MAX_FEED_URL_LENGTH,
    error: `must be an https URL of at most ${MAX_FEED_URL_LENGTH} characters`,
    description: "The feed's address (RSS 2.0, Atom or JSON Feed): https, port 443, resolving to public addresses only (hosts in ALLOW_PRIVATE_HOSTS excepted).",
  }),
  mode: t.UnionEnum(FEED_MODES, {
    error: `must be one of ${FEED_MODES.join(", ")}`,
    description: "seed: each new item becomes a seed; draft: also a generated creation (charged as generate); queue: also a post in the next free slot of `targets`.",
  }),
  targets: t.Optional(
    t.Array(t.String({ minLength: 1, maxLength: 100 }), {
      maxItems: MAX_FEED_TARGETS,
      error: `must be a list of at most ${MAX_FEED_TARGETS} platforms or accountIds`,
      description: "queue mode (required there): the connections to queue to, by platform or accountId as POST /schedule takes them.",
    }),
  ),
});

export const feedIdParams = t.Object({ id: pathId() });

export const feedSchema = t.Object(
  {
    id: uuid(),
    url: t.String(),
    mode: t.UnionEnum(FEED_MODES),
    targets: t.Array(t.String()),
    title: orNull(t.String(), { description: "The feed's own title, from its last good read." }),
    state: t.UnionEnum(FEED_STATES, { description: "paused after 5 failed reads in a row; POST /feeds/{id}/poll reads it again and, if that read succeeds, resumes it." }),
    failures: integer({ minimum: 0, description: "Failed reads in a row." }),
    lastError: orNull(t.String(), { description: "Why the last read failed (the reason a paused feed shows); null after a good read." }),
    lastErrorCode: orNull(t.String(), { description: "The stable code of that failure (an ingest reason, not_a_feed)." }),
    itemsSeen: integer({ minimum: 0, description: "Items taken so far (each became one seed)." }),
    lastPolledAt: orNull(timestamp()),
    lastSuccessAt: orNull(timestamp()),
    nextPollAt: orNull(timestamp(), { description: "When it is read next; null while paused." }),
    createdAt: timestamp(),
  },
  { title: "Feed" },
);

export const pollSchema = t.Object(
  {
    outcome: t.UnionEnum(["read", "not_modified", "failed"], { description: "not_modified: the server answered 304 to the conditional request." }),
    newItems: integer({ minimum: 0 }),
    seedIds: t.Array(uuid(), { description: "The seeds made from new items, oldest item first." }),
    creationIds: t.Array(uuid(), { description: "draft and queue modes: the creations generated." }),
    postIds: t.Array(uuid(), { description: "queue mode: the posts queued." }),
    skipped: t.Array(
      t.Object({ itemKey: t.String(), step: t.UnionEnum(["draft", "queue"]), code: t.String({ description: "The stable error code, e.g. insufficient_credits." }), message: t.String() }),
      { description: "New items whose draft or queued post could not be made (their seed was); e.g. insufficient_credits." },
    ),
    failure: orNull(t.Object({ code: t.String({ description: "The stable code: an ingest reason, or not_a_feed." }), message: t.String() }), { description: "outcome failed: why." }),
  },
  { title: "FeedPoll" },
);

export const feedWithPollResponse = t.Object({ feed: feedSchema, poll: pollSchema }, { title: "FeedWithPoll" });
export const feedResponse = t.Object({ feed: feedSchema }, { title: "FeedOne" });
export const feedListResponse = t.Object({ feeds: t.Array(feedSchema) }, { title: "FeedList" });
export const feedDeletedResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });

export type CreateFeedBody = typeof createFeedBody.static;
export type FeedApi = typeof feedSchema.static;
export type FeedPollApi = typeof pollSchema.static;
