/**
 * Repeats (decisions.md §14): `repeat: {every, interval?, count?, until?}` on POST /schedule. A series keeps one
 * pending occurrence; when it ends (a final status, or cancelled: a skipped occurrence), the next is scheduled at
 * once, inside the same transaction, from the same snapshot as a new post with the same seriesId, at the same
 * wall-clock time in the account's time zone (09:00 stays 09:00 across a DST change). Occurrence n is counted from the
 * first one's wall-clock date (the 31st of a month falls on the last day of a shorter month), never from the one
 * before, so nothing drifts. An occurrence that would already be due (the service was down past it) is skipped.
 * DELETE /schedule/series/{id} ends the series and cancels its pending occurrence.
 */
import { and, asc, eq, inArray, isNull } from "drizzle-orm";
import type { RepeatUnit } from "../../db/schema/post-series";
import type { StoreDb } from "../../db/store";
import { connections, postSeries, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { parseRfc3339 } from "../../lib/rfc3339";
import { onPostEnded } from "../../publishing/post-status";
import { accountTimeZone } from "../accounts/settings";
import { addDays, DATE_RE, zonedParts, zonedToUtc } from "../../lib/zoned";
import { REPEAT_COUNT_MAX, REPEAT_COUNT_MIN, REPEAT_INTERVAL_MAX } from "./model";
import { holdForApproval } from "./approval";
import { cancelPost, insertTargets, MIN_LEAD_MS, type Placement } from "./service";

type PostRow = typeof scheduledPosts.$inferSelect;

/** `repeat` as POST /schedule takes it. */
export interface RepeatInput {
  every: RepeatUnit;
  interval?: number;
  count?: number;
  /** RFC 3339: no occurrence after it. */
  until?: string;
}

/** A repeat rule, checked. */
export interface RepeatRule {
  every: RepeatUnit;
  interval: number;
  maxCount: number | null;
  until: number | null;
}

/** The longest a series runs without a count or an until: occurrences are scheduled one at a time, so this only bounds the walk over missed ones. */
const MISSED_WALK_MAX = 10_000;

/** Checks `repeat` (the schema bounds the numbers; this reads `until`). 400 invalid_request naming the field. */
export function checkRepeat(input: RepeatInput): RepeatRule {
  const interval = input.interval ?? 1;
  if (!Number.isInteger(interval) || interval < 1 || interval > REPEAT_INTERVAL_MAX) throw invalidField("repeat.interval", `must be a whole number from 1 to ${REPEAT_INTERVAL_MAX}`);
  const count = input.count ?? null;
  if (count !== null && (!Number.isInteger(count) || count < REPEAT_COUNT_MIN || count > REPEAT_COUNT_MAX)) {
    throw invalidField("repeat.count", `must be a whole number from ${REPEAT_COUNT_MIN} to ${REPEAT_COUNT_MAX}`);
  }
  let until: number | null = null;
  if (input.until !== undefined) {
    until = parseRfc3339(input.until);
    if (until === null) throw invalidField("repeat.until", "must be an RFC 3339 timestamp such as 2026-12-31T23:59:59Z");
  }
  return { every: input.every, interval, maxCount: count, until };
}

/** Days in a month (month 1–12). */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * The instant of occurrence `n` (0: the first) of a series whose first occurrence was at `anchorLocal`
 * ("YYYY-MM-DDTHH:MM", wall-clock in the zone) in `timeZone`.
 */
export function occurrenceTime(anchorLocal: string, every: RepeatUnit, interval: number, n: number, timeZone: string): number {
  const [date = "", time = "00:00"] = anchorLocal.split("T");
  const d = DATE_RE.exec(date);
  if (!d) throw new Error(`repeat: a malformed anchor ${anchorLocal}`);
  let day: string;
  if (every === "day") day = addDays(date, n * interval);
  else if (every === "week") day = addDays(date, 7 * n * interval);
  else {
    const months = Number(d[2]) - 1 + n * interval;
    const year = Number(d[1]) + Math.floor(months / 12);
    const month = (months % 12) + 1;
    const dom = Math.min(Number(d[3]), daysInMonth(year, month));
    day = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(dom).padStart(2, "0")}`;
  }
  const at = zonedToUtc(day, time, timeZone);
  if (at === null) throw new Error(`repeat: no instant for ${day} ${time} in ${timeZone}`);
  return at;
}

/**
 * `base` (a fixed time, or the queue's slot) made the first occurrence of a new series: the post carries the series'
 * id, and the series row is stored in the same write, anchored at the post's wall-clock time in the account's zone.
 */
export function repeatPlacement(deps: Pick<Deps, "clock">, accountId: string, base: Placement, rule: RepeatRule): Placement {
  const seriesId = newId();
  return {
    columns: { ...base.columns, seriesId },
    time: base.time,
    async stored(tx, post) {
      await base.stored?.(tx, post);
      if (rule.until !== null && rule.until <= post.scheduledTime) {
        throw invalidField("repeat.until", "must be after the first occurrence's time");
      }
      const zone = await accountTimeZone(tx, accountId);
      const local = zonedParts(post.scheduledTime, zone);
      await tx
        .insert(postSeries)
        .values({
          id: seriesId,
          accountId,
          every: rule.every,
          interval: rule.interval,
          maxCount: rule.maxCount,
          until: rule.until,
          anchorLocal: `${local.date}T${local.time}`,
          occurrences: 1,
          currentPostId: post.id,
          createdAt: deps.clock.now(),
        })
        .run();
    },
  };
}

/**
 * When `post` (an occurrence) ends, schedules its series' next occurrence from the same snapshot, inside the same
 * transaction; or closes the series when its count or its until is reached. Only the series' current occurrence
 * advances it (conditional update), so an ended post never schedules twice.
 */
async function scheduleNextOccurrence(tx: StoreDb, now: number, post: PostRow): Promise<void> {
  if (!post.seriesId) return;
  const series = await tx
    .select()
    .from(postSeries)
    .where(and(eq(postSeries.id, post.seriesId), eq(postSeries.currentPostId, post.id), isNull(postSeries.endedAt)))
    .get();
  if (!series) return;
  const zone = await accountTimeZone(tx, series.accountId);
  let n = series.occurrences;
  let at = occurrenceTime(series.anchorLocal, series.every, series.interval, n, zone);
  // Occurrences already due (the service was down past them) are skipped, counted as occurrences that did not happen.
  for (let walked = 0; at < now + MIN_LEAD_MS && walked < MISSED_WALK_MAX; walked++) {
    n += 1;
    at = occurrenceTime(series.anchorLocal, series.every, series.interval, n, zone);
  }
  const over = (series.maxCount !== null && n >= series.maxCount) || (series.until !== null && at > series.until) || at < now + MIN_LEAD_MS;
  if (over) {
    await tx.update(postSeries).set({ currentPostId: null, endedAt: now }).where(eq(postSeries.id, series.id)).run();
    return;
  }
  const targets = await tx
    .select({ connectionId: scheduledPostTargets.connectionId })
    .from(scheduledPostTargets)
    .where(eq(scheduledPostTargets.postId, post.id))
    .orderBy(asc(scheduledPostTargets.createdAt), asc(scheduledPostTargets.id))
    .all();
  const ids = [...new Set(targets.map((t) => t.connectionId).filter((id): id is string => id !== null))];
  const chosen = ids.length === 0 ? [] : await tx.select().from(connections).where(inArray(connections.id, ids)).all();
  if (chosen.length === 0) {
    // Every connection it went to was removed: nothing left to repeat to.
    await tx.update(postSeries).set({ currentPostId: null, endedAt: now }).where(eq(postSeries.id, series.id)).run();
    return;
  }
  const ordered = ids.map((id) => chosen.find((c) => c.id === id)).filter((c) => c !== undefined);
  const nextId = newId();
  await tx
    .insert(scheduledPosts)
    .values({
      id: nextId,
      accountId: post.accountId,
      creationId: post.creationId,
      scheduledTime: at,
      status: "scheduled",
      caption: post.caption,
      altText: post.altText,
      imageAssetId: post.imageAssetId,
      images: post.images,
      thread: post.thread,
      firstComment: post.firstComment,
      variants: post.variants,
      queued: false,
      seriesId: series.id,
      createdAt: now,
      updatedAt: now,
    })
    .run();
  await insertTargets(tx, { id: nextId, accountId: post.accountId, thread: post.thread, firstComment: post.firstComment, variants: post.variants }, ordered, at, now);
  // An occurrence cancelled while it waited for approval: the next one waits too (approval.ts).
  if (post.status === "pending_approval") await holdForApproval(tx, nextId, now);
  await tx
    .update(postSeries)
    .set({ occurrences: n + 1, currentPostId: nextId })
    .where(and(eq(postSeries.id, series.id), eq(postSeries.currentPostId, post.id)))
    .run();
}

onPostEnded(async (tx, now, post) => scheduleNextOccurrence(tx, now, post));

/** What DELETE /schedule/series/{id} answers. */
export interface SeriesEnded {
  seriesId: string;
  ended: true;
  /** The pending occurrences cancelled with it. */
  cancelledPostIds: string[];
}

/**
 * DELETE /schedule/series/{id}: ends the series (no further occurrence is scheduled) and cancels its pending
 * occurrence through DELETE /schedule/{id}'s own path (502 distribution_failed when a provider cannot be reached: the
 * series stays ended, the post kept; the call can be repeated). 404 for an unknown series.
 */
export async function endSeries(deps: Deps, accountId: string, seriesId: string): Promise<SeriesEnded> {
  if (!isUuid(seriesId)) throw notFound("series");
  const series = await deps.store.db
    .select({ id: postSeries.id })
    .from(postSeries)
    .where(and(eq(postSeries.id, seriesId), eq(postSeries.accountId, accountId)))
    .get();
  if (!series) throw notFound("series");
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    await tx.update(postSeries).set({ endedAt: now, currentPostId: null }).where(and(eq(postSeries.id, seriesId), isNull(postSeries.endedAt))).run();
  });
  const pending = await deps.store.db
    .select({ id: scheduledPosts.id })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.seriesId, seriesId), inArray(scheduledPosts.status, ["scheduled", "publishing", "pending_approval"])))
    .all();
  const cancelled: string[] = [];
  for (const { id } of pending) {
    try {
      await cancelPost(deps, accountId, id);
      cancelled.push(id);
    } catch (error) {
      if (error instanceof AppError && error.code === "not_found") continue;
      throw error;
    }
  }
  return { seriesId, ended: true, cancelledPostIds: cancelled };
}

