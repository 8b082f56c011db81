/**
 * The token bucket of rate-limit.ts kept in the database (table rate_limit_buckets), for PostgreSQL mode: every replica
 * takes from the same bucket, so a key's limit is the limit however many replicas serve it (decisions.md §11). One
 * statement per take from the database, an upsert that refills, hands out tokens when whole ones are there, and
 * answers how many: concurrent takes of one key are serialised by the row lock, so no two replicas spend one token.
 * Thousandths of a token, in integers (the same arithmetic on both dialects).
 *
 * A take from the database may hand out up to a tenth of a second of the limit's refill at once (`batch`; 1 token for
 * any limit under 1,200 a minute, so small limits behave exactly like one in-memory bucket), which this replica then
 * spends from memory for up to LEASE_MS. The cluster never lets through more than the limit; what a replica took and
 * did not spend in time is lost to the others, at most `batch` tokens per replica and key per LEASE_MS. Without it
 * every request of one busy key would queue on that key's row (bench/scale-out.ts).
 */
import { eq, lt, sql } from "drizzle-orm";
import { lesserOf } from "../db/portable-sql";
import type { Store } from "../db/store";
import { rateLimitBuckets } from "../db/tables";
import type { Clock } from "../lib/clock";
import { type RateState, rateState } from "./rate-limit-state";

/** How long tokens taken from the database may be spent from memory. */
export const LEASE_MS = 1000;
/** Local leases kept at most (keys recently seen by this replica); beyond it the map is cleared. */
const LEASE_LIMIT = 10_000;

interface Lease {
  tokens: number;
  until: number;
  /** Tokens the database's bucket held when the lease was taken (for the RateLimit field). */
  stored: number;
}

export class DbRateLimiter {
  private readonly capMilli: number;
  /** Whole tokens one take from the database may hand out. */
  readonly batch: number;
  private readonly leases = new Map<string, Lease>();

  /** `perMinute` requests a minute, with bursts up to the same number; `name` keeps limiters' keys apart. */
  constructor(
    private readonly name: string,
    readonly perMinute: number,
    private readonly store: Pick<Store, "writeOne" | "db">,
    private readonly clock: Clock,
  ) {
    this.capMilli = perMinute * 1000;
    this.batch = Math.max(1, Math.floor(perMinute / 600));
  }

  /** Takes `cost` tokens for `key`, all or none. Resolves to 0 when allowed, else the seconds to wait. */
  take(key: string, cost = 1): number | Promise<number> {
    const state = this.takeState(key, cost);
    return state instanceof Promise ? state.then((s) => s.wait) : state.wait;
  }

  /** Takes `cost` tokens for `key`, all or none; answers the wait (0 when allowed) and the bucket after it. */
  takeState(key: string, cost = 1): RateState | Promise<RateState> {
    const now = this.clock.now();
    const lease = this.leases.get(key);
    if (lease && lease.tokens >= cost && now < lease.until) {
      lease.tokens -= cost;
      return rateState(this.perMinute, lease.stored + lease.tokens, 0);
    }
    return this.takeFromDatabase(key, now, cost);
  }

  /** The bucket of `key` as the database holds it now (refilled to now), plus what this replica leased; nothing taken. */
  async peek(key: string): Promise<RateState> {
    const now = this.clock.now();
    const t = rateLimitBuckets;
    const row = await this.store.db.select({ tokensMilli: t.tokensMilli, updatedAt: t.updatedAt }).from(t).where(eq(t.key, `${this.name}:${key}`)).get();
    const stored = row ? Math.min(this.capMilli, Number(row.tokensMilli) + ((now - Number(row.updatedAt)) * this.perMinute) / 60) / 1000 : this.perMinute;
    const lease = this.leases.get(key);
    const leased = lease && now < lease.until ? lease.tokens : 0;
    return rateState(this.perMinute, Math.min(this.perMinute, stored + leased), 0);
  }

  private async takeFromDatabase(key: string, now: number, cost: number): Promise<RateState> {
    const t = rateLimitBuckets;
    // Refilled: min(cap, tokens + elapsed ms × perMinute / 60) thousandths (perMinute/60 thousandths per ms).
    const refilled = lesserOf(sql`${this.capMilli}`, sql`${t.tokensMilli} + ((${now} - ${t.updatedAt}) * ${this.perMinute}) / 60`);
    // Whole tokens handed out: one take, as many as are there up to the batch; several (a JSON-RPC batch), all or none.
    const granted =
      cost === 1 ? lesserOf(sql`${this.batch}`, sql`${refilled} / 1000`) : sql<number>`(CASE WHEN ${refilled} >= ${cost * 1000} THEN ${cost} ELSE 0 END)`;
    const first = cost === 1 ? Math.min(this.batch, this.perMinute) : cost <= this.perMinute ? cost : 0;
    // One statement, atomic by itself: on PostgreSQL in autocommit, so the bucket's row is locked for that statement only.
    const row = await this.store.writeOne((tx) =>
      tx
        .insert(t)
        .values({ key: `${this.name}:${key}`, tokensMilli: this.capMilli - first * 1000, updatedAt: now, granted: first })
        .onConflictDoUpdate({
          target: t.key,
          set: { tokensMilli: sql`${refilled} - ${granted} * 1000`, updatedAt: sql`${now}`, granted },
        })
        .returning({ tokensMilli: t.tokensMilli, granted: t.granted })
        .get(),
    );
    const got = Number(row?.granted ?? 0);
    const stored = Number(row?.tokensMilli ?? 0) / 1000;
    if (cost > 1) {
      if (got === cost) return rateState(this.perMinute, stored, 0);
    } else if (got > 0) {
      if (got > 1) {
        if (this.leases.size >= LEASE_LIMIT) this.leases.clear();
        this.leases.set(key, { tokens: got - 1, until: now + LEASE_MS, stored });
      } else this.leases.delete(key);
      return rateState(this.perMinute, stored + got - 1, 0);
    }
    const missingMilli = cost * 1000 - Number(row?.tokensMilli ?? 0);
    return rateState(this.perMinute, stored, Math.max(1, Math.ceil((missingMilli * 60) / this.perMinute / 1000)));
  }
}

/** A bucket untouched this long is full again (every limit refills completely within a minute): its row can go. */
export const RATE_LIMIT_IDLE_MS = 60_000;

/** Deletes the buckets no take has touched for a minute (they would be full); answers how many. The tidy job runs it. */
export async function tidyRateLimits(deps: { store: Pick<Store, "writeOne">; clock: Clock }): Promise<number> {
  const cutoff = deps.clock.now() - RATE_LIMIT_IDLE_MS;
  const gone = await deps.store.writeOne((tx) =>
    tx.delete(rateLimitBuckets).where(lt(rateLimitBuckets.updatedAt, cutoff)).returning({ key: rateLimitBuckets.key }).all(),
  );
  return gone.length;
}
