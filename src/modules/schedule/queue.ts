/**
 * The queue (decisions.md §14): `queue: true` puts a post in the first posting slot at least 5 minutes ahead that has
 * all of the post's targets and no other queued post; none in the next 90 days → 409 no_free_slot.
 *
 * Two posts queued at the same moment never take the same slot, on SQLite, on PostgreSQL and across replicas: the
 * choice is made inside the write that stores the post, after the account's queue is locked (SQLite: writes are
 * serialised already, BEGIN IMMEDIATE; PostgreSQL: the account row FOR UPDATE, so the second writer reads the slots
 * after the first committed), and a unique index on (account, scheduled_time) of queued posts makes the database
 * refuse a second post in one slot whatever a writer believed. A queued post that is cancelled (its row deleted) or
 * moved (its time changed) frees its slot.
 */
import { and, eq, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import { forUpdate } from "../../db/portable-sql";
import type { StoreDb } from "../../db/store";
import { accounts, scheduledPosts, scheduledPostTargets, tablesDialect } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError } from "../../lib/errors";
import { runDueOnce } from "../../publishing/dispatcher";
import type { ConnectionRow } from "../../store/connections";
import { approvalPlacement, automaticCaller } from "./approval";
import { keepCursor, walkStart } from "./queue-cursor";
import { firstFreeSlotTime, getSlots, type PostingSchedule, scheduleOf, type SlotsTaken, slotTimes } from "./slots";
import { getPost, MIN_LEAD_MS, type Placement, type PostApi, reschedulePost, schedulePost } from "./service";

/** How far ahead the queue looks for a free slot. */
export const QUEUE_HORIZON_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * Locks the account's queue for the rest of the write and reads what the slot choice needs: the posting schedule and
 * the queue generation (queue-cursor.ts). PostgreSQL: the account's row FOR UPDATE, so queue choices of one account are
 * made one after the other on every replica, and a transaction freeing a slot (its trigger bumps the generation on
 * this row) is ordered with this one. SQLite's writes are serialised already.
 */
async function lockQueue(tx: StoreDb, accountId: string): Promise<{ schedule: PostingSchedule; generation: number }> {
  const row = await forUpdate(
    tablesDialect(),
    tx.select({ timeZone: accounts.timeZone, slots: accounts.postingSlots, generation: accounts.queueGeneration }).from(accounts).where(eq(accounts.id, accountId)),
  ).get();
  return { schedule: scheduleOf(row), generation: Number(row?.generation ?? 0) };
}

/**
 * `queued` as the partial unique index states it, written out rather than bound as a parameter, so the database reads
 * the times from that index alone (SQLite matches a partial index only on the same literal term).
 */
function queuedOnly(): SQL {
  return tablesDialect() === "postgres" ? sql`${scheduledPosts.queued}` : sql`${scheduledPosts.queued} = 1`;
}

/**
 * The times of the account's queued posts in [from, to), ascending, for the free-slot walk. The database reads them
 * from the partial unique index and hands them back as ONE row (a comma-joined list, ordered in the aggregate): with
 * 10,000 queued posts, one row per time cost more in the driver and the row mapper than the scan itself
 * (docs/benchmarks/queue.md).
 */
async function takenSlots(tx: StoreDb, accountId: string, from: number, to: number): Promise<TakenTimes> {
  const at = scheduledPosts.scheduledTime;
  const joined =
    tablesDialect() === "postgres" ? sql<string | null>`string_agg(${at}::text, ',' ORDER BY ${at})` : sql<string | null>`group_concat(${at}, ',' ORDER BY ${at})`;
  const row = await tx
    .select({ times: joined })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.accountId, accountId), queuedOnly(), gte(at, from), lt(at, to)))
    .get();
  return new TakenTimes(row?.times ? row.times.split(",").map(Number) : []);
}

/** Queued times in ascending order, asked "is this instant taken?" by binary search (no Set built per request). */
class TakenTimes {
  constructor(private readonly sorted: readonly number[]) {}

  get size(): number {
    return this.sorted.length;
  }

  has(at: number): boolean {
    let lo = 0;
    let hi = this.sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const value = this.sorted[mid] as number;
      if (value === at) return true;
      if (value < at) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** The times as a Set the caller may add to (the import takes slot after slot in one write). */
  toSet(): Set<number> {
    return new Set(this.sorted);
  }
}

/** The first slot instant in [from, from + 90 days) holding every one of `targetIds` and not in `taken`, or null. */
export function firstFreeSlot(schedule: PostingSchedule, targetIds: readonly string[], taken: SlotsTaken, from: number): number | null {
  return firstFreeSlotTime(schedule, targetIds, taken, from, from + QUEUE_HORIZON_MS);
}

function noFreeSlot(): AppError {
  return new AppError(
    "no_free_slot",
    "No posting slot in the next 90 days has all of these targets and is free. Add slots (PUT /api/v1/schedule/slots) or give a scheduled_time.",
  );
}

/**
 * The placement of a queued post: inside the write that stores it, locks the account's queue and takes the first
 * free slot for the post's targets at least MIN_LEAD_MS ahead (409 no_free_slot when there is none). The walk starts
 * at this process's slot cursor when it can be trusted (queue-cursor.ts), so only the queued times past it are read.
 */
export function queuePlacement(deps: Pick<Deps, "store">, accountId: string, seriesId: string | null = null): Placement {
  return {
    columns: { queued: true, seriesId },
    async time(tx: StoreDb, chosen: readonly ConnectionRow[], now: number): Promise<number> {
      const { schedule, generation } = await lockQueue(tx, accountId);
      const from = now + MIN_LEAD_MS;
      const to = from + QUEUE_HORIZON_MS;
      const targetIds = chosen.map((c) => c.id);
      const start = walkStart(deps.store, accountId, schedule, targetIds, generation, from);
      const taken = await takenSlots(tx, accountId, start.at, to);
      const at = firstFreeSlotTime(schedule, targetIds, taken, start.at, to);
      if (at === null) throw noFreeSlot();
      // Every slot before `at` was taken when this write read them; `at` itself is not claimed (this write may roll back).
      keepCursor(deps.store, accountId, schedule, targetIds, { generation, covered: start.covered, until: at });
      return at;
    },
  };
}

/**
 * For many posts queued in one write (the CSV import): the first call locks the account's queue and reads its
 * schedule and taken slots; every call then takes the first free slot for its targets from what the earlier calls
 * left, in memory (the unique index still refuses a slot taken twice). 409 no_free_slot when none is left.
 */
export function queueSlotTaker(deps: Pick<Deps, "store">, accountId: string): (tx: StoreDb, chosen: readonly ConnectionRow[], now: number) => Promise<number> {
  let state: { schedule: PostingSchedule; taken: Set<number>; from: number } | null = null;
  return async (tx, chosen, now) => {
    if (state === null) {
      const { schedule } = await lockQueue(tx, accountId);
      const from = now + MIN_LEAD_MS;
      state = { schedule, taken: (await takenSlots(tx, accountId, from, from + QUEUE_HORIZON_MS)).toSet(), from };
    }
    const at = firstFreeSlot(state.schedule, chosen.map((c) => c.id), state.taken, state.from);
    if (at === null) throw noFreeSlot();
    state.taken.add(at);
    return at;
  };
}

/** What queuePost takes: the creation and its targets (platform names or accountIds, as POST /schedule). */
export interface QueueInput {
  creationId: string;
  targets: readonly string[];
}

/**
 * Queues a creation: POST /schedule with `queue: true`. The post takes the first free slot (see queuePlacement);
 * the answer's `post.scheduledTime` says when and `post.queued` is true. The feeds module's `queue` mode calls this:
 * nobody wrote these posts, so an account that requires approval holds them for an owner (automaticCaller).
 */
export async function queuePost(deps: Deps, accountId: string, input: QueueInput): Promise<{ post: PostApi }> {
  const placement = approvalPlacement(deps, automaticCaller(accountId), queuePlacement(deps, accountId));
  return schedulePost(deps, accountId, { creationId: input.creationId, targets: input.targets }, placement);
}

/** One coming slot of the Queue view: its instant, its connections, and the queued post in it (null when empty). */
export interface QueueSlot {
  at: number;
  targets: string[];
  post: { id: string; caption: string; status: string; targets: string[] } | null;
}

/**
 * The coming slots from `from` (inclusive) to `to` (exclusive), filled and empty, for the dashboard's Queue view; and
 * the queued posts in that range that sit in no slot of today's schedule (the schedule changed after they were queued).
 */
export async function queueView(
  deps: Pick<Deps, "store">,
  accountId: string,
  from: number,
  to: number,
): Promise<{ slots: QueueSlot[]; outside: NonNullable<QueueSlot["post"] & { at: number }>[] }> {
  const schedule = await getSlots(deps, accountId);
  const rows = await deps.store.db
    .select({ id: scheduledPosts.id, at: scheduledPosts.scheduledTime, caption: scheduledPosts.caption, status: scheduledPosts.status })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.accountId, accountId), eq(scheduledPosts.queued, true), gte(scheduledPosts.scheduledTime, from), lt(scheduledPosts.scheduledTime, to)))
    .all();
  const targetRows =
    rows.length === 0
      ? []
      : await deps.store.db
          .select({ postId: scheduledPostTargets.postId, connectionId: scheduledPostTargets.connectionId })
          .from(scheduledPostTargets)
          .where(inArray(scheduledPostTargets.postId, rows.map((r) => r.id)))
          .all();
  const targetsOf = (postId: string) => targetRows.filter((t) => t.postId === postId && t.connectionId !== null).map((t) => t.connectionId as string);
  const byTime = new Map(rows.map((r) => [r.at, { id: r.id, caption: r.caption, status: r.status, targets: targetsOf(r.id) }]));
  const slots: QueueSlot[] = [];
  for (const slot of slotTimes(schedule, from, to)) {
    slots.push({ at: slot.at, targets: [...slot.targets], post: byTime.get(slot.at) ?? null });
    byTime.delete(slot.at);
  }
  const outside = [...byTime.entries()].map(([at, post]) => ({ at, ...post })).sort((a, b) => a.at - b.at);
  return { slots, outside };
}

/**
 * Moves a post to another posting slot (the Queue view): the slot must be one of the schedule's coming slots, at least
 * 5 minutes ahead, with every one of the post's connections, and free (409 no_free_slot otherwise). The post moves as
 * PATCH /schedule/{id} moves it (provider-held targets withdrawn and placed again), then takes the slot in a write
 * that holds the account's queue lock.
 */
export async function moveToSlot(deps: Deps, accountId: string, postId: string, at: number): Promise<{ post: PostApi }> {
  const now = deps.clock.now();
  const { post } = await getPost(deps, accountId, postId);
  const schedule = await getSlots(deps, accountId);
  const slot = [...slotTimes(schedule, now + MIN_LEAD_MS, now + QUEUE_HORIZON_MS)].find((s) => s.at === at);
  const targetIds = post.targets.map((t) => t.accountId);
  if (!slot || !targetIds.every((id) => slot.targets.has(id))) {
    throw new AppError("no_free_slot", "That is not one of the coming slots for this post's connections; choose another.");
  }
  const taken = await takenSlots(deps.store.db, accountId, at, at + 1);
  if (taken.size > 0) throw new AppError("no_free_slot", "Another post already has that slot; choose another.");
  if (Date.parse(post.scheduledTime) !== at) await reschedulePost(deps, accountId, postId, { scheduledTime: isoAt(at) });
  await deps.store.write(async (tx) => {
    await lockQueue(tx, accountId);
    if ((await takenSlots(tx, accountId, at, at + 1)).size > 0) {
      throw new AppError("no_free_slot", "Another post took that slot a moment ago; the post was moved to its time but is not in the queue.");
    }
    await tx.update(scheduledPosts).set({ queued: true }).where(and(eq(scheduledPosts.id, postId), eq(scheduledPosts.scheduledTime, at))).run();
  });
  return getPost(deps, accountId, postId);
}

/**
 * "Post now" (the Queue view): a scheduled post goes out at once instead of at its slot, which it frees. Only for
 * posts the service's own dispatcher holds: a post a network holds (Mastodon's scheduled statuses) is moved instead
 * (409 not_reschedulable says so).
 */
export async function postNow(deps: Deps, accountId: string, postId: string): Promise<{ post: PostApi }> {
  const { post } = await getPost(deps, accountId, postId);
  if (post.status !== "scheduled") throw new AppError("not_reschedulable", `This post is ${post.status.replace("_", " ")}; only a scheduled post can go out now.`);
  const now = deps.clock.now();
  const targetIds = await deps.store.write(async (tx) => {
    const pending = await tx
      .select({ id: scheduledPostTargets.id, held: scheduledPostTargets.heldByProvider })
      .from(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.postId, postId), eq(scheduledPostTargets.status, "scheduled")))
      .all();
    if (pending.some((t) => t.held)) {
      throw new AppError("not_reschedulable", "A network holds this post until its time; move it to an earlier slot instead.");
    }
    await tx.update(scheduledPosts).set({ scheduledTime: now, queued: false, updatedAt: now }).where(eq(scheduledPosts.id, postId)).run();
    const ids = pending.map((t) => t.id);
    if (ids.length > 0) {
      await tx.update(scheduledPostTargets).set({ nextAttemptAt: now, updatedAt: now }).where(and(inArray(scheduledPostTargets.id, ids), eq(scheduledPostTargets.status, "scheduled"))).run();
    }
    return ids;
  });
  if (targetIds.length > 0) await runDueOnce(deps, {}, targetIds);
  return getPost(deps, accountId, postId);
}
