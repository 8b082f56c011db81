/**
 * The database-kept token bucket (src/http/rate-limit-db.ts) on this run's database: the same answers as the in-memory
 * bucket for one process, and one shared limit for two "replicas" (two limiters on one database, as two processes of a
 * cluster have), including under concurrent takes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RateLimiter } from "../src/http/rate-limit";
import { DbRateLimiter, RATE_LIMIT_IDLE_MS, tidyRateLimits } from "../src/http/rate-limit-db";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

describe(`rate limits in the database (${TEST_DIALECT})`, () => {
  test("answers exactly what the in-memory bucket answers, take for take, as time passes", async () => {
    const memory = new RateLimiter(5, world.clock);
    const db = new DbRateLimiter("same", 5, world.store, world.clock);
    const seen: [number, number][] = [];
    for (let i = 0; i < 9; i++) seen.push([memory.take("k"), await db.take("k")]);
    world.clock.advance(13_000); // a token refills every 12 s at 5/min
    for (let i = 0; i < 3; i++) seen.push([memory.take("k"), await db.take("k")]);
    world.clock.advance(60_000);
    for (let i = 0; i < 7; i++) seen.push([memory.take("k"), await db.take("k")]);
    for (const [m, d] of seen) expect(d).toBe(m);
    expect(seen.map(([, d]) => d > 0)).toEqual([
      false, false, false, false, false, true, true, true, true, // 5 of the burst, then refused
      false, true, true, // one token refilled
      false, false, false, false, false, true, true, // full again
    ]);
  });

  test("a take of several tokens (a JSON-RPC batch) is all or none, answered as the in-memory bucket answers", async () => {
    const memory = new RateLimiter(10, world.clock);
    const db = new DbRateLimiter("several", 10, world.store, world.clock);
    const costs = [6, 5, 4, 1, 11, 3];
    const seen: [number, number][] = [];
    for (const cost of costs) seen.push([memory.take("k", cost), await db.take("k", cost)]);
    world.clock.advance(30_000); // 5 tokens refilled at 10/min
    for (const cost of [5, 1]) seen.push([memory.take("k", cost), await db.take("k", cost)]);
    for (const [m, d] of seen) expect(d).toBe(m);
    // 6 taken; 5 refused whole (4 left, 1 missing: 6 s); 4 taken; 1 refused; 11 refused; 3 refused; then 5 of 5, none.
    expect(seen.map(([, d]) => d)).toEqual([0, 6, 0, 6, 66, 18, 0, 6]);
    // A bucket's first take may be several too.
    expect(await db.take("fresh", 10)).toBe(0);
    expect(await db.take("fresh")).toBe(6);
  });

  test("two replicas share one limit: 100 concurrent takes at 30/min let exactly 30 through", async () => {
    const replica1 = new DbRateLimiter("shared", 30, world.store, world.clock);
    const replica2 = new DbRateLimiter("shared", 30, world.store, world.clock);
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? replica1 : replica2).take("key-1")));
    expect(answers.filter((a) => a === 0).length).toBe(30);
    for (const a of answers.filter((a) => a > 0)) expect(a).toBe(2); // 1 token at 30/min: 2 s
    // Another key and another limiter name are buckets of their own.
    expect(await replica1.take("key-2")).toBe(0);
    expect(await new DbRateLimiter("other", 30, world.store, world.clock).take("key-1")).toBe(0);
  });

  test("the tidy deletes only buckets idle for a minute, which would be full anyway", async () => {
    const limiter = new DbRateLimiter("tidy", 2, world.store, world.clock);
    expect(await limiter.take("old")).toBe(0);
    world.clock.advance(RATE_LIMIT_IDLE_MS + 1);
    expect(await limiter.take("fresh")).toBe(0);
    expect(await limiter.take("fresh")).toBe(0);
    const before = await world.sql("SELECT key FROM rate_limit_buckets WHERE key LIKE 'tidy:%' ORDER BY key");
    expect(before.map((r) => r.key)).toEqual(["tidy:fresh", "tidy:old"]);
    expect(await tidyRateLimits(world.deps)).toBeGreaterThanOrEqual(1);
    const after = await world.sql("SELECT key FROM rate_limit_buckets WHERE key LIKE 'tidy:%' ORDER BY key");
    expect(after.map((r) => r.key)).toEqual(["tidy:fresh"]);
    expect(await limiter.take("fresh")).toBeGreaterThan(0); // the live bucket kept its state: still empty
  });

  test("a high limit hands tokens out in batches: one write per tenth of a second of refill, never more than the limit", async () => {
    const replicas = [1, 2, 3].map(() => new DbRateLimiter("batched", 60_000, world.store, world.clock));
    expect(replicas[0]?.batch).toBe(100);
    const first = replicas[0] as DbRateLimiter;
    for (let i = 0; i < 100; i++) expect(await first.take("k")).toBe(0);
    // One take from the database handed out 100: the row lost 100 tokens, not 1 per request.
    const [row] = await world.sql("SELECT tokens_milli, granted FROM rate_limit_buckets WHERE key = 'batched:k'");
    expect({ tokens: Number(row.tokens_milli), granted: Number(row.granted) }).toEqual({ tokens: 59_900_000, granted: 100 });
    // Three replicas drain the rest with the clock standing still: the cluster never passes the limit, and what
    // the others hold leased and unspent when the bucket runs dry is at most a batch each.
    let allowed = 100;
    let refused = 0;
    for (let round = 0; round < 21_000; round++) {
      const answers = await Promise.all(replicas.map((r) => r.take("k")));
      for (const a of answers) a === 0 ? allowed++ : refused++;
    }
    expect(allowed).toBeLessThanOrEqual(60_000);
    expect(allowed).toBeGreaterThanOrEqual(60_000 - 2 * 100);
    expect(refused).toBeGreaterThan(0);
  });
});
