/**
 * The system jobs `seedcast serve` starts (src/system-jobs.ts) that have no module of their own to be tested with: the
 * rate-limit tidy (the buckets themselves: rate-limit-db.test.ts). Each job is run directly, as the cron would.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DbRateLimiter, RATE_LIMIT_IDLE_MS } from "../src/http/rate-limit-db";
import { JOB_IDS, systemJobs } from "../src/system-jobs";
import { type World, createWorld } from "./helpers/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world.close();
});

test(`${JOB_IDS.rateLimitsTidy} runs every five minutes and drops the buckets idle for a minute`, async () => {
  const job = systemJobs.find((j) => j.id === JOB_IDS.rateLimitsTidy);
  expect(job?.schedule).toBe("30 */5 * * * *");
  const limiter = new DbRateLimiter("job", 2, world.store, world.clock);
  await limiter.take("idle");
  world.clock.advance(RATE_LIMIT_IDLE_MS + 1);
  await limiter.take("live");
  await job!.run(world.deps);
  const left = await world.sql("SELECT key FROM rate_limit_buckets WHERE key LIKE 'job:%' ORDER BY key");
  expect(left.map((r) => r.key)).toEqual(["job:live"]);
});
