/**
 * Feeds (decisions.md §14): follow a blog's RSS, Atom or JSON Feed. A feed is read once when it is added (a refused
 * URL or a document that is no feed answers 400 and stores nothing), then every 30 minutes by the system job and on
 * POST /feeds/{id}/poll. Each item not taken before (by guid, else link) becomes a seed; in `draft` mode also a
 * generated creation (charged as generate), in `queue` mode also a post queued to the feed's targets. The items of
 * the first read become seeds only: they are the blog's past, and drafting or queueing ten old articles at once is
 * not what adding a feed asks for (docs/choices.md "feeds").
 *
 * One poller per feed at a time, across replicas: a poll claims the feed (a conditional UPDATE of poll_lease_until)
 * and releases it when done. An item is taken by inserting its (feed, key) row, whose primary key refuses a second
 * insert, in the same write as its seed: two racing polls cannot both make a seed of it.
 */
import { and, count, desc, eq, inArray, isNull, lte, or, sql } from "drizzle-orm";
import type { FeedMode, FeedRow } from "../../db/schema/feeds";
import { feedItems, feeds } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { recordEvent, LOW_CREDITS_THRESHOLD } from "../../store/events";
import { listConnections } from "../connections/service";
import { generateCreation } from "../creations/service";
import { creditSummary } from "../credits/service";
import { queuePost } from "../schedule/queue";
import { resolveTargets } from "../schedule/service";
import { CATEGORY_MAX, CONTENT_MAX, IMAGE_URL_MAX, TITLE_MAX } from "../seeds/model";
import { type Seed, type SeedInput, createSeed } from "../seeds/service";
import { readFeed } from "./fetch";
import type { CreateFeedBody, FeedApi, FeedPollApi } from "./model";
import type { FeedEntry, ParsedFeed } from "./parse";

/** A feed is read this often. */
export const POLL_INTERVAL_MS = 30 * 60 * 1000;
/** Failed reads in a row that pause a feed. */
export const MAX_FAILURES = 5;
/** How long a poll's claim holds; a poll that died (a crashed replica) leaves the feed to the next one after it. */
export const POLL_LEASE_MS = 10 * 60 * 1000;
/** Feeds the job reads in one tick at most; the rest are due on the next tick. */
export const FEEDS_PER_TICK = 25;

/** The view of a poll while it runs and after. */
type PollResult = FeedPollApi;

function emptyPoll(outcome: PollResult["outcome"]): PollResult {
  return { outcome, newItems: 0, seedIds: [], creationIds: [], postIds: [], skipped: [], failure: null };
}

/** The API shape of a feed. */
export function feedView(row: FeedRow, itemsSeen: number): FeedApi {
  return {
    id: row.id,
    url: row.url,
    mode: row.mode,
    targets: JSON.parse(row.targets) as string[],
    title: row.title,
    state: row.state,
    failures: row.failures,
    lastError: row.lastError,
    lastErrorCode: row.lastErrorCode,
    itemsSeen,
    lastPolledAt: row.lastPolledAt === null ? null : isoAt(row.lastPolledAt),
    lastSuccessAt: row.lastSuccessAt === null ? null : isoAt(row.lastSuccessAt),
    nextPollAt: row.state === "paused" ? null : isoAt(row.nextPollAt),
    createdAt: isoAt(row.createdAt),
  };
}

async function itemCounts(deps: Pick<Deps, "store">, feedIds: readonly string[]): Promise<Map<string, number>> {
  if (feedIds.length === 0) return new Map();
  const rows = await deps.store.db
    .select({ feedId: feedItems.feedId, n: count() })
    .from(feedItems)
    .where(inArray(feedItems.feedId, [...feedIds]))
    .groupBy(feedItems.feedId)
    .all();
  return new Map(rows.map((r) => [r.feedId, Number(r.n)]));
}

async function findFeed(deps: Pick<Deps, "store">, accountId: string, feedId: string): Promise<FeedRow> {
  if (!isUuid(feedId)) throw notFound("feed");
  const row = await deps.store.db.select().from(feeds).where(and(eq(feeds.id, feedId), eq(feeds.accountId, accountId))).get();
  if (!row) throw notFound("feed");
  return row;
}

/** One feed of the account, as GET /feeds/{id} answers it. */
export async function getFeed(deps: Pick<Deps, "store">, accountId: string, feedId: string): Promise<{ feed: FeedApi }> {
  const row = await findFeed(deps, accountId, feedId);
  return { feed: feedView(row, (await itemCounts(deps, [row.id])).get(row.id) ?? 0) };
}

/** The account's feeds, newest first. */
export async function listFeeds(deps: Pick<Deps, "store">, accountId: string): Promise<{ feeds: FeedApi[] }> {
  const rows = await deps.store.db.select().from(feeds).where(eq(feeds.accountId, accountId)).orderBy(desc(feeds.createdAt), desc(feeds.id)).all();
  const counts = await itemCounts(deps, rows.map((r) => r.id));
  return { feeds: rows.map((row) => feedView(row, counts.get(row.id) ?? 0)) };
}

/** Deletes a feed and its memory of items (the seeds, creations and posts it made stay). */
export async function deleteFeed(deps: Pick<Deps, "store">, accountId: string, feedId: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(feedId)) throw notFound("feed");
  const removed = await deps.store.write((tx) =>
    tx.delete(feeds).where(and(eq(feeds.id, feedId), eq(feeds.accountId, accountId))).returning({ id: feeds.id }).all(),
  );
  if (removed.length === 0) throw notFound("feed");
  return { id: feedId, deleted: true };
}

/** The URL as stored: trimmed; a URL that does not parse is refused here, before any lookup. */
function cleanUrl(raw: string): string {
  const url = raw.trim();
  try {
    new URL(url);
  } catch {
    throw new AppError("invalid_url", "url is not a valid URL.");
  }
  return url;
}

/** The columns of a feed after a good read at `now`: active again, its failures forgotten, read again in 30 minutes. */
function readSucceeded(now: number) {
  return { state: "active" as const, failures: 0, lastError: null, lastErrorCode: null, lastPolledAt: now, lastSuccessAt: now, nextPollAt: now + POLL_INTERVAL_MS };
}

/**
 * POST /feeds. Checks the body (queue mode needs targets that name connections of the account), reads the feed
 * once (400 with the ingest's reason, or not_a_feed), then stores it and turns its items into seeds. 409 feed_exists
 * when the account already follows that URL. Nothing is stored on any refusal.
 */
export async function createFeed(deps: Deps, accountId: string, body: CreateFeedBody): Promise<{ feed: FeedApi; poll: PollResult }> {
  const url = cleanUrl(body.url);
  const mode: FeedMode = body.mode;
  const names = body.targets ?? [];
  if (mode === "queue" && names.length === 0) throw invalidField("targets", "must name at least one connection in queue mode");
  const targets = names.length > 0 ? resolveTargets(await listConnections(deps, accountId), names).map((c) => c.id) : [];

  const read = await readFeed(deps, url);
  if (read.outcome !== "read") throw new Error("readFeed answered not_modified to an unconditional request");

  const now = deps.clock.now();
  const row: FeedRow = {
    id: newId(),
    accountId,
    url,
    mode,
    targets: JSON.stringify(targets),
    title: read.feed.title,
    etag: read.etag,
    lastModified: read.lastModified,
    ...readSucceeded(now),
    // Held by this request until its items are taken: the job leaves the new feed alone meanwhile.
    pollLeaseUntil: now + POLL_LEASE_MS,
    createdAt: now,
    updatedAt: now,
  };
  const inserted = await deps.store.write((tx) => tx.insert(feeds).values(row).onConflictDoNothing().returning({ id: feeds.id }).all());
  if (inserted.length === 0) {
    const existing = await deps.store.db.select({ id: feeds.id }).from(feeds).where(and(eq(feeds.accountId, accountId), eq(feeds.url, url))).get();
    throw new AppError("feed_exists", "This account already follows that feed.", existing ? { feedId: existing.id } : {});
  }
  let poll: PollResult;
  try {
    poll = await takeEntries(deps, row, read.feed, { firstRead: true });
  } finally {
    await releaseLease(deps, row.id);
  }
  return getFeed(deps, accountId, row.id).then(({ feed }) => ({ feed, poll }));
}

/**
 * POST /feeds/{id}/poll: reads the feed now. A paused feed is resumed by a read that succeeds (a failed one leaves
 * it paused). The read's failure is recorded and answered in `poll` (200), like the job's. 409 feed_busy while
 * another poll of it runs.
 */
export async function pollFeedNow(deps: Deps, accountId: string, feedId: string): Promise<{ feed: FeedApi; poll: PollResult }> {
  await findFeed(deps, accountId, feedId);
  const claimed = await claimFeed(deps, feedId, deps.clock.now());
  if (!claimed) throw new AppError("feed_busy", "This feed is being read right now; try again in a minute.");
  const poll = await pollClaimed(deps, claimed);
  return { feed: (await getFeed(deps, accountId, feedId)).feed, poll };
}

/**
 * The system job's work: reads every active feed that is due, one at a time, each under its claim. Answers how many
 * were read. Paused feeds wait for a person.
 */
export async function pollDueFeeds(deps: Deps): Promise<{ polled: number; failed: number }> {
  const now = deps.clock.now();
  const due = await deps.store.db
    .select({ id: feeds.id })
    .from(feeds)
    .where(and(eq(feeds.state, "active"), lte(feeds.nextPollAt, now), or(isNull(feeds.pollLeaseUntil), lte(feeds.pollLeaseUntil, now))))
    .orderBy(feeds.nextPollAt)
    .limit(FEEDS_PER_TICK)
    .all();
  let polled = 0;
  let failed = 0;
  for (const { id } of due) {
    // Claimed only while still due: another replica may have read it since the list above was taken.
    const claimed = await claimFeed(deps, id, deps.clock.now(), { dueOnly: true });
    if (!claimed) continue;
    const poll = await pollClaimed(deps, claimed);
    polled += 1;
    if (poll.outcome === "failed") failed += 1;
  }
  return { polled, failed };
}

/**
 * Claims the feed for one poll: answers its row, or null when another poll holds it (or it is gone). `dueOnly` (the
 * job): also null unless the feed is active and due, so a feed another replica read a moment ago is not read again.
 */
async function claimFeed(deps: Pick<Deps, "store">, feedId: string, now: number, options: { dueOnly?: boolean } = {}): Promise<FeedRow | null> {
  const free = or(isNull(feeds.pollLeaseUntil), lte(feeds.pollLeaseUntil, now));
  const due = options.dueOnly ? and(eq(feeds.state, "active"), lte(feeds.nextPollAt, now)) : undefined;
  const claimed = await deps.store.write((tx) =>
    tx
      .update(feeds)
      .set({ pollLeaseUntil: now + POLL_LEASE_MS })
      .where(and(eq(feeds.id, feedId), free, due))
      .returning()
      .all(),
  );
  return claimed[0] ?? null;
}

async function releaseLease(deps: Pick<Deps, "store">, feedId: string): Promise<void> {
  await deps.store.write((tx) => tx.update(feeds).set({ pollLeaseUntil: null }).where(eq(feeds.id, feedId)).run());
}

/** One read of a claimed feed: conditional request, new items, then the feed's state; the claim is released. */
async function pollClaimed(deps: Deps, feed: FeedRow): Promise<PollResult> {
  try {
    let read: Awaited<ReturnType<typeof readFeed>>;
    try {
      read = await readFeed(deps, feed.url, { etag: feed.etag, lastModified: feed.lastModified });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await recordFailure(deps, feed, error);
      return { ...emptyPoll("failed"), failure: { code: error.code, message: error.message } };
    }
    if (read.outcome === "not_modified") {
      await recordSuccess(deps, feed, {});
      return emptyPoll("not_modified");
    }
    const poll = await takeEntries(deps, feed, read.feed, { firstRead: false });
    await recordSuccess(deps, feed, { title: read.feed.title, etag: read.etag, lastModified: read.lastModified });
    return poll;
  } finally {
    await releaseLease(deps, feed.id);
  }
}

/** A good read: the failure count starts again, a paused feed is active again, validators are kept for the next read. */
async function recordSuccess(
  deps: Pick<Deps, "store" | "clock">,
  feed: FeedRow,
  read: { title?: string | null; etag?: string | null; lastModified?: string | null },
): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write((tx) =>
    tx
      .update(feeds)
      .set({
        ...(read.title !== undefined && read.title !== null ? { title: read.title } : {}),
        // A server that stops sending a validator gets unconditional requests from then on.
        ...(read.etag !== undefined ? { etag: read.etag } : {}),
        ...(read.lastModified !== undefined ? { lastModified: read.lastModified } : {}),
        ...readSucceeded(now),
        updatedAt: now,
      })
      .where(eq(feeds.id, feed.id))
      .run(),
  );
}

/** A failed read: counted; the MAX_FAILURES-th in a row pauses the feed, with the reason kept for people to see. */
async function recordFailure(deps: Pick<Deps, "store" | "clock" | "log">, feed: FeedRow, error: AppError): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write((tx) =>
    tx
      .update(feeds)
      .set({
        failures: sql`${feeds.failures} + 1`,
        state: sql`CASE WHEN ${feeds.failures} + 1 >= ${MAX_FAILURES} THEN 'paused' ELSE ${feeds.state} END`,
        lastError: error.message,
        lastErrorCode: error.code,
        lastPolledAt: now,
        nextPollAt: now + POLL_INTERVAL_MS,
        updatedAt: now,
      })
      .where(eq(feeds.id, feed.id))
      .run(),
  );
  deps.log.info("feed read failed", { feedId: feed.id, error: error.code, failures: feed.failures + 1 });
}

/** Cuts `text` to at most `max` code points, on a word boundary when one is near, with an ellipsis. */
function clip(text: string, max: number): string {
  const points = Array.from(text);
  if (points.length <= max) return text;
  const cut = points.slice(0, max - 1).join("");
  const space = cut.lastIndexOf(" ");
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}

const noNul = (text: string): string => text.replaceAll("\u0000", "");

/** What a seed takes from an item: title, summary text, link, first image (decisions.md §14). */
export function seedInputOf(entry: FeedEntry, feedTitle: string | null): SeedInput {
  const summary = noNul(entry.summary).trim();
  const firstLine = summary.split("\n")[0]?.trim() || null;
  const title = clip(noNul(entry.title ?? firstLine ?? entry.link ?? feedTitle ?? "Untitled item").trim() || "Untitled item", TITLE_MAX);
  const link = entry.link && entry.link.length <= CONTENT_MAX / 2 ? entry.link : null;
  const room = CONTENT_MAX - (link ? link.length + 2 : 0);
  const content = [summary ? clip(summary, room) : null, link].filter((part) => part !== null).join("\n\n") || title;
  const category = entry.category ? clip(noNul(entry.category).trim(), CATEGORY_MAX) || null : null;
  const imageUrl = entry.imageUrl && entry.imageUrl.length <= IMAGE_URL_MAX ? entry.imageUrl : null;
  return { title, content, category, image_url: imageUrl };
}

/** Takes an item: its (feed, key) row and its seed in one write; null when it was taken before (by any poll). */
async function takeItem(deps: Deps, feed: FeedRow, entry: FeedEntry, feedTitle: string | null): Promise<Seed | null> {
  const input = seedInputOf(entry, feedTitle);
  return deps.store.write(async (tx) => {
    const taken = await tx
      .insert(feedItems)
      .values({ feedId: feed.id, itemKey: entry.key, seedId: null, createdAt: deps.clock.now() })
      .onConflictDoNothing()
      .returning({ key: feedItems.itemKey })
      .all();
    if (taken.length === 0) return null;
    const seed = await createSeed(deps, feed.accountId, input);
    await tx.update(feedItems).set({ seedId: seed.id }).where(and(eq(feedItems.feedId, feed.id), eq(feedItems.itemKey, entry.key))).run();
    return seed;
  });
}

/**
 * Turns the new entries of a read into seeds, and on later reads into drafts or queued posts as the mode says. An
 * account out of credits gets seeds only from then on in this read, and a `credits.low` event.
 */
async function takeEntries(deps: Deps, feed: FeedRow, parsed: ParsedFeed, options: { firstRead: boolean }): Promise<PollResult> {
  const poll = emptyPoll("read");
  let outOfCredits = false;
  for (const entry of parsed.entries) {
    const seed = await takeItem(deps, feed, entry, parsed.title);
    if (!seed) continue;
    poll.newItems += 1;
    poll.seedIds.push(seed.id);
    if (options.firstRead || feed.mode === "seed") continue;
    if (outOfCredits) {
      poll.skipped.push({ itemKey: entry.key, step: "draft", code: "insufficient_credits", message: "The account ran out of credits; the item was kept as a seed." });
      continue;
    }
    let creationId: string;
    try {
      creationId = (await generateCreation(deps, feed.accountId, { seed_id: seed.id })).creation.id;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      poll.skipped.push({ itemKey: entry.key, step: "draft", code: error.code, message: error.message });
      if (error.code === "insufficient_credits") {
        outOfCredits = true;
        await reportCreditsLow(deps, feed.accountId);
      }
      continue;
    }
    poll.creationIds.push(creationId);
    if (feed.mode !== "queue") continue;
    try {
      poll.postIds.push((await queuePost(deps, feed.accountId, { creationId, targets: JSON.parse(feed.targets) as string[] })).post.id);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      poll.skipped.push({ itemKey: entry.key, step: "queue", code: error.code, message: error.message });
    }
  }
  return poll;
}

/** `credits.low` for an account whose feed could not draft for lack of credits (event webhooks, decisions.md §14). */
async function reportCreditsLow(deps: Deps, accountId: string): Promise<void> {
  await deps.store.write(async (tx) => {
    const credits = await creditSummary(deps, accountId);
    await recordEvent(tx, deps.clock.now(), accountId, "credits.low", () => ({
      balance: credits.balance,
      reserved: credits.reserved,
      threshold: LOW_CREDITS_THRESHOLD,
    }));
  });
}
