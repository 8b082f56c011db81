/**
 * The queue's slot cursor: per process, per account and set of targets, "every slot of this schedule for these targets
 * from `from` up to (not including) `until` holds a queued post, as of queue generation `generation`". A queued POST
 * starts its free-slot walk (and its read of taken times) at `until` instead of at the first candidate, so with 10,000
 * posts already queued it reads the few past the cursor, not 10,000 (docs/benchmarks/queue.md).
 *
 * Why it is exact: taking a slot only makes the claim truer; every way a slot is freed (a queued post deleted, moved,
 * taken out of the queue, by any process) bumps `accounts.queue_generation` in the same transaction (db/queue-triggers.ts),
 * and the cursor is used only when the generation read under the queue's lock equals the one it was stored with, the
 * schedule (zone and slots) is the one it was built from, and its `from` is not later than the caller's (a clock moved
 * back). A cursor is stored inside the write that read it and claims only slots that were already taken there (the slot
 * the write is taking is not included), so a rolled-back write leaves a true claim behind. Each replica keeps its own;
 * one that knows nothing simply walks from the first candidate, as before.
 */
import type { Store } from "../../db/store";
import type { PostingSchedule } from "./slots";

interface Cursor {
  schedule: string;
  generation: number;
  from: number;
  until: number;
}

/** At most this many cursors per store; past it the map starts again (a missing cursor costs one longer read). */
const MAX_CURSORS = 10_000;
const cursors = new WeakMap<Store, Map<string, Cursor>>();

function cursorsOf(store: Store): Map<string, Cursor> {
  let map = cursors.get(store);
  if (!map) {
    map = new Map();
    cursors.set(store, map);
  }
  return map;
}

const keyOf = (accountId: string, targetIds: readonly string[]) => `${accountId}\u0000${[...targetIds].sort().join(",")}`;

/** Where a free-slot walk for these targets may start, no earlier than `from`, and the start of what it covers. */
export interface WalkStart {
  /** The first instant the walk must look at: every slot before it (from `covered`) is taken. */
  at: number;
  /** The earliest instant the claim covers (`from`, or a trusted cursor's earlier one). */
  covered: number;
}

/** The walk's start: `from`, or a trusted cursor's `until` when that is later. */
export function walkStart(store: Store, accountId: string, schedule: PostingSchedule, targetIds: readonly string[], generation: number, from: number): WalkStart {
  const cursor = cursorsOf(store).get(keyOf(accountId, targetIds));
  const trusted = cursor !== undefined && cursor.generation === generation && cursor.from <= from && cursor.schedule === JSON.stringify(schedule);
  return trusted && cursor.until > from ? { at: cursor.until, covered: cursor.from } : { at: from, covered: from };
}

/** Remembers that every slot for these targets in [covered, until) is taken as of `generation`. */
export function keepCursor(
  store: Store,
  accountId: string,
  schedule: PostingSchedule,
  targetIds: readonly string[],
  cursor: { generation: number; covered: number; until: number },
): void {
  const map = cursorsOf(store);
  if (map.size >= MAX_CURSORS) map.clear();
  map.set(keyOf(accountId, targetIds), { schedule: JSON.stringify(schedule), generation: cursor.generation, from: cursor.covered, until: cursor.until });
}
