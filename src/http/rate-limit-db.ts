/**
 * The token bucket of rate-limit.ts kept in the database (table rate_limit_buckets), for PostgreSQL mode: every replica
 * takes from the same bucket, so a key's limit is the limit however many replicas serve it (decisions.md §11). One
 * statement per take, an upsert that refills, takes a token when a whole one is there, and answers whether it did:
 * concurrent takes of one key are serialised by the row lock, so no two replicas spend the same token.
 * Thousandths of a token, in integers (the same arithmetic on both dialects).
 */
import { lt, sql } from "drizzle-orm";
import { lesserOf } from "../db/portable-sql";
import type { Store } from "../db/store";
import { rateLimitBuckets } from "../db/tables";
import type { Clock } from "../lib/clock";

export class DbRateLimiter {
  private readonly capMilli: number;

  /** `perMinute` requests a minute, with bursts up to the same number; `name` keeps limiters' keys apart. */
  constructor(
    private readonly name: string,
    private readonly perMinute: number,
    private readonly store: Pick<Store, "write">,
    private readonly clock: Clock,
  ) {
    this.capMilli = perMinute * 1000;
  }

  /** Takes one token for `key`. Resolves to 0 when allowed, else the seconds to wait. */
  async take(key: string): Promise<number> {
    const now = this.clock.now();
    const t = rateLimitBuckets;
    // Refilled: min(cap, tokens + elapsed ms × perMinute / 60) thousandths (perMinute/60 thousandths per ms).
    const refilled = lesserOf(sql`${this.capMilli}`, sql`${t.tokensMilli} + ((${now} - ${t.updatedAt}) * ${this.perMinute}) / 60`);
    const row = await this.store.write((tx) =>
      tx
        .insert(t)
        .values({ key: `${this.name}:${key}`, tokensMilli: this.capMilli - 1000, updatedAt: now, allowed: true })
        .onConflictDoUpdate({
          target: t.key,
          set: {
            tokensMilli: sql`case when ${refilled} >= 1000 then ${refilled} - 1000 else ${refilled} end`,
            updatedAt: sql`${now}`,
            allowed: sql`${refilled} >= 1000`,
          },
        })
        .returning({ tokensMilli: t.tokensMilli, allowed: t.allowed })
        .get(),
    );
    if (!row || row.allowed) return 0;
    const missingMilli = 1000 - Number(row.tokensMilli);
    return Math.max(1, Math.ceil((missingMilli * 60) / this.perMinute / 1000));
  }
}

/** A bucket untouched this long is full again (every limit refills completely within a minute): its row can go. */
export const RATE_LIMIT_IDLE_MS = 60_000;

/** Deletes the buckets no take has touched for a minute (they would be full); answers how many. The tidy job runs it. */
export async function tidyRateLimits(deps: { store: Pick<Store, "write">; clock: Clock }): Promise<number> {
  const cutoff = deps.clock.now() - RATE_LIMIT_IDLE_MS;
  const gone = await deps.store.write((tx) =>
    tx.delete(rateLimitBuckets).where(lt(rateLimitBuckets.updatedAt, cutoff)).returning({ key: rateLimitBuckets.key }).all(),
  );
  return gone.length;
}
