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
import { and, eq, gte, lt } from "drizzle-orm";
import type { StoreDb } from "../../db/store";
import { accounts, scheduledPosts, tablesDialect } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError } from "../../lib/errors";
import type { ConnectionRow } from "../../store/connections";
import { getSlots, type PostingSchedule, slotTimes } from "./slots";
import { MIN_LEAD_MS, type Placement, type PostApi, schedulePost } from "./service";

/** How far ahead the queue looks for a free slot. */
export const QUEUE_HORIZON_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * PostgreSQL: locks the account's row (FOR UPDATE) for the rest of the write, so queue choices of one account are
 * made one after the other on every replica. SQLite's writes are serialised already.
 */
async function lockQueue(tx: StoreDb, accountId: string): Promise<void> {
  if (tablesDialect() !== "postgres") return;
  const query = tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
  await (query as unknown as { for(strength: "update"): typeof query }).for("update").all();
}

/** The times of the account's queued posts in [from, to), for the free-slot walk. */
async function takenSlots(tx: StoreDb, accountId: string, from: number, to: number): Promise<Set<number>> {
  const rows = await tx
    .select({ at: scheduledPosts.scheduledTime })
    .from(scheduledPosts)
    .where(and(eq(scheduledPosts.accountId, accountId), eq(scheduledPosts.queued, true), gte(scheduledPosts.scheduledTime, from), lt(scheduledPosts.scheduledTime, to)))
    .all();
  return new Set(rows.map((r) => r.at));
}

/** The first slot instant in [from, from + 90 days) holding every one of `targetIds` and not in `taken`, or null. */
export function firstFreeSlot(schedule: PostingSchedule, targetIds: readonly string[], taken: ReadonlySet<number>, from: number): number | null {
  for (const slot of slotTimes(schedule, from, from + QUEUE_HORIZON_MS)) {
    if (taken.has(slot.at)) continue;
    if (targetIds.every((id) => slot.targets.has(id))) return slot.at;
  }
  return null;
}

function noFreeSlot(): AppError {
  return new AppError(
    "no_free_slot",
    "No posting slot in the next 90 days has all of these targets and is free. Add slots (PUT /api/v1/schedule/slots) or give a scheduled_time.",
  );
}

/**
 * The placement of a queued post: inside the write that stores it, locks the account's queue and takes the first
 * free slot for the post's targets at least MIN_LEAD_MS ahead (409 no_free_slot when there is none).
 */
export function queuePlacement(deps: Pick<Deps, "store">, accountId: string, seriesId: string | null = null): Placement {
  return {
    columns: { queued: true, seriesId },
    async time(tx: StoreDb, chosen: readonly ConnectionRow[], now: number): Promise<number> {
      await lockQueue(tx, accountId);
      const from = now + MIN_LEAD_MS;
      // Inside the write, deps.store.db is this write's transaction (db/store.ts).
      const schedule = await getSlots(deps, accountId);
      const taken = await takenSlots(tx, accountId, from, from + QUEUE_HORIZON_MS);
      const at = firstFreeSlot(
        schedule,
        chosen.map((c) => c.id),
        taken,
        from,
      );
      if (at === null) throw noFreeSlot();
      return at;
    },
  };
}

/** What queuePost takes: the creation and its targets (platform names or accountIds, as POST /schedule). */
export interface QueueInput {
  creationId: string;
  targets: readonly string[];
}

/**
 * Queues a creation: POST /schedule with `queue: true`. The post takes the first free slot (see queuePlacement);
 * the answer's `post.scheduledTime` says when and `post.queued` is true. The feeds module's `queue` mode calls this.
 */
export async function queuePost(deps: Deps, accountId: string, input: QueueInput): Promise<{ post: PostApi }> {
  return schedulePost(deps, accountId, { creationId: input.creationId, targets: input.targets }, queuePlacement(deps, accountId));
}
