/**
 * Issue 13 bench: do event webhooks slow publishing down? 1,000 webhook posts due within a window, delivered by
 * `seedcast serve` (a child process) to a webhook receiver in another child process, in the same run with no event
 * webhook and with an event webhook subscribed to post.published (so every publication also records an event in its
 * transaction and the dispatcher delivers 1,000 signed events to the same receiver). The two alternate for `--rounds`
 * rounds (a shared machine's noise then falls on both alike) and each side's p99 over all its rounds is compared: the
 * ceiling is the runs without; goal p99 post lateness with events ≤ 2× without. Also prints the events delivered, their
 * lateness (arrival − the event's createdAt) and duplicates per Idempotency-Key in both streams.
 * A short run of each side warms up first and is not counted.
 * Usage: bun bench/webhook-events.ts [--posts N] [--window-ms W] [--rounds R] [--json]
 */
import { type Subprocess, spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { count, eq } from "drizzle-orm";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { eventWebhooks, scheduledPostTargets, webhookDeliveries } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { sealWebhookSecret } from "../src/store/events";
import { type WebhookDelivery, readWebhookLog } from "../test/peers/webhook-receiver";
import { makeCreation } from "../test/publishing-fixtures";
import { insertDuePosts } from "../test/publishing-load";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 1_000);
const WINDOW_MS = argOf("window-ms", 10_000);
const ROUNDS = argOf("rounds", 3);
const LEAD_MS = 5_000;
const SECRET = "bench-secret-0123456789abcdef";
const MAX_RATIO = 2;
const json = args.includes("--json");

async function lineMatching(proc: Subprocess<"ignore", "pipe", "inherit">, match: (l: string) => boolean): Promise<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  const reader = proc.stdout.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("child exited before the expected line");
    buffered += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (match(line)) {
        reader.releaseLock();
        void (async () => {
          for await (const _ of proc.stdout) {
            // keep the pipe flowing
          }
        })().catch(() => {});
        return line;
      }
    }
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

interface RunResult {
  /** Every post's lateness (ms), for the pooled percentiles. */
  postSamples: number[];
  eventSamples: number[];
  delivered: number;
  postDuplicates: number;
  postP50: number;
  postP99: number;
  postMax: number;
  events: number;
  eventDuplicates: number;
  eventP99: number;
}

function duplicates(log: WebhookDelivery[]): { distinct: number; duplicated: number } {
  const perKey = new Map<string, number>();
  for (const d of log) if (!d.repeat) perKey.set(d.idempotencyKey ?? "", (perKey.get(d.idempotencyKey ?? "") ?? 0) + 1);
  return { distinct: perKey.size, duplicated: [...perKey.values()].filter((n) => n > 1).length };
}

/** One run: a fresh data dir, receiver and server; POSTS posts due within WINDOW_MS; optionally an event webhook. */
async function run(withEvents: boolean, posts = POSTS, windowMs = WINDOW_MS): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-events-"));
  const logFile = join(dataDir, "receiver.jsonl");
  const eventLogFile = join(dataDir, "events.jsonl");
  // The publishing target and the API client's event endpoint are different systems: one receiver process each.
  const startReceiver = (file: string) =>
    spawn([process.execPath, "test/peers/webhook-receiver.ts", "--port", "0", "--secret", SECRET, "--log", file], {
      cwd: ROOT,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "inherit",
    });
  const receiver = startReceiver(logFile);
  const eventReceiver = withEvents ? startReceiver(eventLogFile) : null;
  let server: Subprocess<"ignore", "pipe", "inherit"> | null = null;
  try {
    const receiverUrl = (await lineMatching(receiver, (l) => l.startsWith("listening "))).slice("listening ".length).trim();
    const eventUrl = eventReceiver ? (await lineMatching(eventReceiver, (l) => l.startsWith("listening "))).slice("listening ".length).trim() : "";
    const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const deps = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(deps, { name: "Bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });
    const connection = await addConnection(deps, { accountId, platform: "webhook", url: `${receiverUrl}/posts`, secret: SECRET });
    if (!connection.readyToPost) throw new Error(`webhook not ready: ${connection.blockedReason}`);
    if (withEvents) {
      // The row POST /api/v1/webhooks stores, with a secret the receiver process already knows.
      const id = newId();
      await deps.store.write((tx) =>
        tx
          .insert(eventWebhooks)
          .values({ id, accountId, url: `${eventUrl}/events`, events: JSON.stringify(["post.published"]), secretSealed: sealWebhookSecret(deps.instanceSecret, id, SECRET), createdAt: Date.now() })
          .run(),
      );
    }
    const creation = await makeCreation(deps, accountId, { caption: "Bench post" });
    server = spawn([process.execPath, "src/main.ts", "serve"], {
      cwd: ROOT,
      env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "warn" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "inherit",
    });
    const firstDue = Date.now() + LEAD_MS;
    await insertDuePosts(deps, { accountId, connectionId: connection.accountId, creationId: creation.id, count: posts, firstDueAt: firstDue, spreadMs: windowMs });
    const lastDue = firstDue + windowMs;
    void (async () => {
      for await (const _ of server!.stdout) {
        // keep the pipe flowing
      }
    })().catch(() => {});

    const deadline = lastDue + 120_000;
    // The server commits in another process; the store's reader sees each commit (WAL).
    const published = async () =>
      (await deps.store.db.select({ n: count() }).from(scheduledPostTargets).where(eq(scheduledPostTargets.status, "published")).get())?.n ?? 0;
    const eventsDone = async () =>
      (await deps.store.db.select({ n: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.status, "delivered")).get())?.n ?? 0;
    while (Date.now() < deadline && ((await published()) < posts || (withEvents && (await eventsDone()) < posts))) await Bun.sleep(250);
    server.kill("SIGTERM");
    await server.exited;
    server = null;
    await deps.store.close();

    const postLog = readWebhookLog(logFile).filter((d) => d.event === "post.publish");
    const events = withEvents ? readWebhookLog(eventLogFile).filter((d) => d.event === "post.published") : [];
    const postLateness = postLog
      .filter((d) => !d.repeat)
      .map((d) => Date.parse(d.receivedAt) - Date.parse((d.body as { post: { scheduledTime: string } }).post.scheduledTime))
      .sort((a, b) => a - b);
    const eventLateness = events
      .filter((d) => !d.repeat)
      .map((d) => Date.parse(d.receivedAt) - Date.parse((d.body as { createdAt: string }).createdAt))
      .sort((a, b) => a - b);
    const postCounts = duplicates(postLog);
    const eventCounts = duplicates(events);
    return {
      postSamples: postLateness,
      eventSamples: eventLateness,
      delivered: postCounts.distinct,
      postDuplicates: postCounts.duplicated,
      postP50: percentile(postLateness, 50),
      postP99: percentile(postLateness, 99),
      postMax: postLateness[postLateness.length - 1] ?? 0,
      events: eventCounts.distinct,
      eventDuplicates: eventCounts.duplicated,
      eventP99: percentile(eventLateness, 99),
    };
  } finally {
    server?.kill("SIGKILL");
    for (const r of [receiver, eventReceiver]) {
      r?.kill("SIGTERM");
      await r?.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// The first server runs of a process tree start cold (transpile cache, page cache): one short run of each side first,
// not counted, so round 1 does not carry the warm-up.
await run(false, 200, 2_000);
await run(true, 200, 2_000);

const withoutRuns: RunResult[] = [];
const withRuns: RunResult[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternate which side goes first, so neither always runs on a warmer (or busier) machine.
  const order = round % 2 === 0 ? [false, true] : [true, false];
  for (const events of order) (events ? withRuns : withoutRuns).push(await run(events));
  if (!json) {
    const a = withoutRuns[withoutRuns.length - 1]!;
    const b = withRuns[withRuns.length - 1]!;
    console.log(`round ${round + 1}: p99 without ${a.postP99} ms, with events ${b.postP99} ms (events delivered ${b.events}, event p99 ${b.eventP99} ms)`);
  }
}
const sum = (runs: RunResult[], f: (r: RunResult) => number) => runs.reduce((n, r) => n + f(r), 0);
// Pooled over every round: the p99 of 3,000 samples moves far less than any one round's tenth-worst value.
const pooled = (runs: RunResult[], f: (r: RunResult) => number[]) => runs.flatMap(f).sort((a, b) => a - b);
const withoutSamples = pooled(withoutRuns, (r) => r.postSamples);
const withSamples = pooled(withRuns, (r) => r.postSamples);
const without = {
  postP99: percentile(withoutSamples, 99),
  postP50: percentile(withoutSamples, 50),
  postMax: withoutSamples[withoutSamples.length - 1] ?? 0,
  delivered: Math.min(...withoutRuns.map((r) => r.delivered)),
  postDuplicates: sum(withoutRuns, (r) => r.postDuplicates),
};
const withEvents = {
  postP99: percentile(withSamples, 99),
  postP50: percentile(withSamples, 50),
  postMax: withSamples[withSamples.length - 1] ?? 0,
  delivered: Math.min(...withRuns.map((r) => r.delivered)),
  events: Math.min(...withRuns.map((r) => r.events)),
  eventP99: percentile(pooled(withRuns, (r) => r.eventSamples), 99),
  postDuplicates: sum(withRuns, (r) => r.postDuplicates),
  eventDuplicates: sum(withRuns, (r) => r.eventDuplicates),
};
// A p99 of a few milliseconds is mostly scheduler noise; 1 ms keeps the ratio finite when the ceiling is 0.
const ratio = withEvents.postP99 / Math.max(1, without.postP99);
const allDelivered = without.delivered === POSTS && withEvents.delivered === POSTS && withEvents.events === POSTS;
const noDuplicates = without.postDuplicates + withEvents.postDuplicates + withEvents.eventDuplicates === 0;
const ok = ratio <= MAX_RATIO && allDelivered && noDuplicates;

if (json) {
  console.log(
    JSON.stringify({
      bench: "webhook-events",
      figures: [
        { label: `post lateness p99 without event webhooks (${POSTS} due within ${WINDOW_MS / 1000} s, ${ROUNDS} rounds pooled)`, value: without.postP99, unit: "ms", goal: "", ok: null },
        {
          label: `post lateness p99 with an event webhook on post.published (${ROUNDS} rounds pooled)`,
          value: withEvents.postP99,
          unit: "ms",
          goal: `≤ ${MAX_RATIO} × without`,
          ok: ratio <= MAX_RATIO,
          ceiling: Math.max(1, without.postP99),
        },
        { label: "posts / events delivered", value: `${withEvents.delivered} / ${withEvents.events}`, unit: "", goal: `= ${POSTS} / ${POSTS}`, ok: allDelivered },
        { label: "event lateness p99 (arrival − createdAt)", value: withEvents.eventP99, unit: "ms", goal: "", ok: null },
        { label: "duplicate deliveries (posts and events)", value: without.postDuplicates + withEvents.postDuplicates + withEvents.eventDuplicates, unit: "", goal: "= 0", ok: noDuplicates },
      ],
    }),
  );
} else {
  console.log(`${POSTS} webhook posts due within ${WINDOW_MS / 1000} s, delivered by seedcast serve to a receiver process`);
  console.log(`pooled over ${ROUNDS} rounds each (${ROUNDS * POSTS} posts a side):`);
  console.log(`without event webhooks: delivered ${without.delivered}; post lateness ms p50 ${without.postP50}, p99 ${without.postP99}, max ${without.postMax}`);
  console.log(
    `with an event webhook:  delivered ${withEvents.delivered}, events ${withEvents.events}; post lateness ms p50 ${withEvents.postP50}, p99 ${withEvents.postP99}, max ${withEvents.postMax}; event lateness p99 ${withEvents.eventP99} ms`,
  );
  console.log(`p99 ratio with / without: ${ratio.toFixed(2)} (goal ≤ ${MAX_RATIO})`);
  console.log(`duplicates: posts ${without.postDuplicates + withEvents.postDuplicates}, events ${withEvents.eventDuplicates}`);
  console.log(ok ? "GOALS MET" : "GOALS NOT MET");
}
process.exitCode = ok ? 0 : 1;
