/**
 * What the dispatcher will try again, read for people: a target whose last attempt failed for a passing reason waits
 * as `scheduled` with its failed-attempt count and the time of its next attempt (dispatcher.ts, recordFailure).
 */
import { and, gt, inArray, isNotNull } from "drizzle-orm";
import { scheduledPostTargets } from "../db/tables";
import type { Deps } from "../deps";
import { MAX_ATTEMPTS } from "./dispatcher";

/** One target waiting for its next attempt. */
export interface PendingRetry {
  /** The key the post's API view uses for this target (`accountId`: the connection's id, or the target's own). */
  targetKey: string;
  /** When the next attempt is due (epoch ms). */
  nextAttemptAt: number;
  /** The number the next attempt will have (2 after one failure). */
  attempt: number;
  /** Attempts before the target fails for good. */
  of: number;
  /** What the last attempt answered. */
  lastError: string | null;
}

/** Post id → its targets waiting to be tried again, for the posts given. */
export async function pendingRetries(deps: Pick<Deps, "store">, postIds: readonly string[]): Promise<Map<string, PendingRetry[]>> {
  const out = new Map<string, PendingRetry[]>();
  if (postIds.length === 0) return out;
  const rows = await deps.store.db
    .select()
    .from(scheduledPostTargets)
    .where(
      and(
        inArray(scheduledPostTargets.postId, [...postIds]),
        inArray(scheduledPostTargets.status, ["scheduled", "publishing"]),
        gt(scheduledPostTargets.attempts, 0),
        isNotNull(scheduledPostTargets.nextAttemptAt),
      ),
    )
    .all();
  for (const row of rows) {
    const retry: PendingRetry = {
      targetKey: row.connectionId ?? row.id,
      nextAttemptAt: row.nextAttemptAt ?? 0,
      attempt: Math.min(row.attempts + 1, MAX_ATTEMPTS),
      of: MAX_ATTEMPTS,
      lastError: row.errorMessage,
    };
    out.set(row.postId, [...(out.get(row.postId) ?? []), retry]);
  }
  return out;
}
