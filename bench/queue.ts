/**
 * Issue 27 bench: POST /schedule with `queue: true` when 10,000 posts are already queued, against a plain POST
 * /schedule (a scheduled_time) in the same run. The account has a slot every 10 minutes on every day (12,960 slots in
 * the 90 days the queue looks at), the first 10,000 of them taken by queued posts (each with its target), so every
 * queued call walks past 10,000 taken slots to the first free one. Calls go through the whole app in process
 * (`app.handle`: auth, validation, the service, the write), the two kinds alternating one by one so a shared machine's
 * noise falls on both alike; a warm-up of each is not counted. Goal: queue p99 < 20 ms; the ratio to the plain POST's
 * p99 is printed, with the machine's load average at the end of the calls (a shared machine's p99 follows its load).
 * Usage: bun bench/queue.ts [--queued N] [--calls N] [--json]   (SEEDCAST_TEST_DATABASE=postgres for PostgreSQL)
 */
import { cpus, loadavg } from "node:os";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { newId } from "../src/lib/ids";
import { addConnection } from "../src/modules/connections/service";
import { getSlots, putSlots, slotTimes } from "../src/modules/schedule/slots";
import { createWorld } from "../test/helpers/world";
import { stopTestServices } from "../test/helpers/test-database";
import { startWebhookReceiver } from "../test/peers/webhook-receiver";
import { makeCreation, WEBHOOK_SECRET } from "../test/publishing-fixtures";

const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const QUEUED = argOf("queued", 10_000);
const CALLS = argOf("calls", 400);
const WARMUP = 30;
const GOAL_P99_MS = 20;
const CHUNK = 500;
const json = args.includes("--json");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
const world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "1000000" } });
try {
  const account = await world.createAccount();
  const hook = (await addConnection(world.deps, { accountId: account.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET })).accountId;
  const times = Array.from({ length: 144 }, (_, i) => `${String(Math.floor(i / 6)).padStart(2, "0")}:${String((i % 6) * 10).padStart(2, "0")}`);
  await putSlots(world.deps, { accountId: account.accountId, role: "owner" }, {
    timeZone: "Europe/Berlin",
    slots: times.map((time) => ({ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time, targets: [hook] })),
  });
  const creation = await makeCreation(world.deps, account.accountId, { caption: "Queued for the bench" });
  const now = world.clock.now();
  const schedule = await getSlots(world.deps, account.accountId);
  const slots = [...slotTimes(schedule, now + 5 * 60_000, now + 90 * 24 * 3_600_000)].slice(0, QUEUED).map((s) => s.at);
  const filling = performance.now();
  for (let start = 0; start < slots.length; start += CHUNK) {
    const chunk = slots.slice(start, start + CHUNK);
    await world.deps.store.write(async (tx) => {
      const posts = chunk.map((at) => ({
        id: newId(),
        accountId: account.accountId,
        creationId: creation.id,
        scheduledTime: at,
        status: "scheduled" as const,
        caption: "Queued for the bench",
        queued: true,
        createdAt: now,
        updatedAt: now,
      }));
      await tx.insert(scheduledPosts).values(posts).run();
      await tx
        .insert(scheduledPostTargets)
        .values(
          posts.map((p) => ({
            id: newId(),
            postId: p.id,
            accountId: account.accountId,
            connectionId: hook,
            platform: "webhook",
            label: "bench",
            status: "scheduled" as const,
            nextAttemptAt: p.scheduledTime,
            createdAt: now,
            updatedAt: now,
          })),
        )
        .run();
    });
  }
  const filledMs = performance.now() - filling;

  const call = async (body: Record<string, unknown>): Promise<number> => {
    const started = performance.now();
    const res = await world.call("POST", "/api/v1/schedule", { key: account.key, body: { type: "social_post", creation_id: creation.id, targets: [hook], ...body } });
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`POST /schedule answered ${res.status}: ${res.text.slice(0, 300)}`);
    return ms;
  };
  // A plain post at a time of its own, spread so it never meets a queued slot's instant.
  let plain = 0;
  const plainBody = () => ({ scheduled_time: isoAt(now + 3_600_000 + 7 * (++plain) * 1000) });
  for (let i = 0; i < WARMUP; i++) {
    await call({ queue: true });
    await call(plainBody());
  }
  const queued: number[] = [];
  const fixed: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    queued.push(await call({ queue: true }));
    fixed.push(await call(plainBody()));
  }
  const load = loadavg().map((l) => +l.toFixed(2));
  queued.sort((a, b) => a - b);
  fixed.sort((a, b) => a - b);
  const result = {
    dialect: world.dialect,
    alreadyQueued: QUEUED,
    calls: CALLS,
    fillMs: Math.round(filledMs),
    queue: { p50: +percentile(queued, 50).toFixed(2), p99: +percentile(queued, 99).toFixed(2), max: +(queued[queued.length - 1] ?? 0).toFixed(2) },
    plain: { p50: +percentile(fixed, 50).toFixed(2), p99: +percentile(fixed, 99).toFixed(2), max: +(fixed[fixed.length - 1] ?? 0).toFixed(2) },
    ratioP99: +(percentile(queued, 99) / percentile(fixed, 99)).toFixed(2),
    goalP99Ms: GOAL_P99_MS,
    load1m: load[0],
    cores: cpus().length,
  };
  const met = result.queue.p99 < GOAL_P99_MS;
  if (json) console.log(JSON.stringify({ ...result, met }));
  else {
    console.log(`${result.dialect}: ${QUEUED} posts already queued (filled in ${result.fillMs} ms); ${CALLS} calls of each, alternating; load ${load.join(" ")} on ${result.cores} cores`);
    console.log(`queue: true   p50 ${result.queue.p50} ms  p99 ${result.queue.p99} ms  max ${result.queue.max} ms`);
    console.log(`plain POST    p50 ${result.plain.p50} ms  p99 ${result.plain.p99} ms  max ${result.plain.max} ms`);
    console.log(`p99 ratio queue/plain: ${result.ratioP99}×; goal p99 < ${GOAL_P99_MS} ms: ${met ? "met" : "NOT met"}`);
  }
} finally {
  await world.close();
  await receiver.stop();
  await stopTestServices();
}
