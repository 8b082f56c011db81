/**
 * Rate limits: a token bucket per key (an API key, an OAuth grant, a registering address). On the appliance the buckets
 * live in memory: one process owns the database, so one process owns the buckets, and a request costs no write. In
 * PostgreSQL mode every replica must draw on the same bucket (decisions.md §11): the buckets live in the database
 * (rate-limit-db.ts). `createRateLimiter` picks by the store's dialect.
 */
import type { Deps } from "../deps";
import type { Clock } from "../lib/clock";
import { DbRateLimiter } from "./rate-limit-db";
import { type RateState, rateState } from "./rate-limit-state";

/** A token bucket per key (promises where the bucket is in the database). */
export interface Limiter {
  /** The requests a minute (and the burst). */
  readonly perMinute: number;
  /**
   * Takes `cost` tokens (default one) for a key, all or none: 0 when allowed, else the seconds to wait until that many
   * are there. A cost above the per-minute limit never fits: callers refuse such a request themselves.
   */
  take(key: string, cost?: number): number | Promise<number>;
  /** `take`, answering the bucket's state after it (for the RateLimit header fields). */
  takeState(key: string, cost?: number): RateState | Promise<RateState>;
  /** The bucket's state without taking anything (an answer refused before the take still reports it). */
  peek(key: string): RateState | Promise<RateState>;
}

/** The limiter for `name` at `perMinute`: in memory on SQLite, in the database on PostgreSQL. */
export function createRateLimiter(deps: Pick<Deps, "store" | "clock">, name: string, perMinute: number): Limiter {
  return deps.store.dialect === "postgres" ? new DbRateLimiter(name, perMinute, deps.store, deps.clock) : new RateLimiter(perMinute, deps.clock);
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** A token bucket per key in memory. */
export class RateLimiter implements Limiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private calls = 0;

  /** `perMinute` requests a minute, with bursts up to the same number. */
  constructor(
    readonly perMinute: number,
    private readonly clock: Clock,
  ) {
    this.perMs = perMinute / 60_000;
  }

  /** Takes `cost` tokens for `key`, all or none. Returns 0 when allowed, else the seconds to wait. */
  take(key: string, cost = 1): number {
    return this.takeState(key, cost).wait;
  }

  /** The bucket of `key` now, untouched. */
  peek(key: string): RateState {
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(this.perMinute, bucket.tokens + (this.clock.now() - bucket.updatedAt) * this.perMs) : this.perMinute;
    return rateState(this.perMinute, tokens, 0);
  }

  /** Takes `cost` tokens for `key`, all or none; answers the wait (0 when allowed) and the bucket after it. */
  takeState(key: string, cost = 1): RateState {
    const now = this.clock.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.perMinute, updatedAt: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.updatedAt) * this.perMs);
    bucket.updatedAt = now;
    if (++this.calls % 1000 === 0) this.prune(now);
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return rateState(this.perMinute, bucket.tokens, 0);
    }
    return rateState(this.perMinute, bucket.tokens, Math.max(1, Math.ceil((cost - bucket.tokens) / this.perMs / 1000)));
  }

  /** Drops full buckets so the map stays as small as the set of recently active keys. */
  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.perMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
