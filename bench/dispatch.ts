/**
 * Issue 5 bench: 10,000 webhook posts due within the same minute, delivered by `seedcast serve` (a child process)
 * to a webhook receiver in another child process. Prints the time to deliver all, lateness percentiles
 * (receiver's arrival time − the post's scheduled time), duplicates (effects per Idempotency-Key > 1) and the drain
 * rate: posts ÷ (last arrival − first due time), in posts/s (issue 22). NB: the drain rate cannot exceed the rate the
 * posts come due at (POSTS ÷ WINDOW): with a window of 10 s, 1,000 posts/s at most however fast the dispatcher is;
 * a window of 1 s (a backlog all due at once) measures what the dispatcher itself sustains.
 * Goals: everything delivered within the minute (max lateness small), p99 lateness < 2 s, 0 duplicates.
 * `--postgres` runs the server on a PostgreSQL started here (test/helpers/postgres.ts) instead of SQLite; with
 * `--replicas N`, N servers share it (each claims with SKIP LOCKED; on one machine they also share its cores).
 * BENCH_CPU_PROF_DIR=<dir> writes the server's CPU profile there (bun --cpu-prof, plus its markdown summary).
 * `--thread` (issue 24): each post has 4 images (library assets, each with its alt text) and a thread of 3 follow-up
 * parts, the third with an image; every delivery is checked to carry all of it ("incomplete" counts those that do not).
 * Usage: bun bench/dispatch.ts [--posts N] [--window-ms W] [--thread] [--postgres [--replicas N]] [--json]
 */
import { type Subprocess, spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { count, eq } from "drizzle-orm";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { scheduledPostTargets } from "../src/db/tables";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { startPostgres, type Postgres } from "../test/helpers/postgres";
import { TEST_INSTANCE_SECRET } from "../test/helpers/test-database";
import { readWebhookLog } from "../test/peers/webhook-receiver";
import type { StoredImage } from "../src/db/schema/post-content";
import { ingestImageBytes } from "../src/modules/assets/service";
import { makeCreation, solidPng } from "../test/publishing-fixtures";
import { type DuePostContent, insertDuePosts } from "../test/publishing-load";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 10_000);
const WINDOW_MS = argOf("window-ms", 60_000);
const LEAD_MS = 5_000;
const SECRET = "bench-secret-0123456789abcdef";
const json = args.includes("--json");
const POSTGRES = args.includes("--postgres");
const REPLICAS = POSTGRES ? argOf("replicas", 1) : 1;
const THREAD = args.includes("--thread");
const MODE = `${POSTGRES ? `PostgreSQL, ${REPLICAS} replica${REPLICAS === 1 ? "" : "s"}` : "SQLite"}${THREAD ? ", 4 images + a 3-part thread each" : ""}`;
const THREAD_PARTS = 3;
const IMAGES = 4;

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

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-dispatch-"));
const logFile = join(dataDir, "receiver.jsonl");
const receiver = spawn([process.execPath, "test/peers/webhook-receiver.ts", "--port", "0", "--secret", SECRET, "--log", logFile], {
  cwd: ROOT,
  stdin: "ignore",
  stdout: "pipe",
  stderr: "inherit",
});
const servers: Subprocess<"ignore", "pipe", "inherit">[] = [];
let pg: Postgres | null = null;
try {
  pg = POSTGRES ? await startPostgres() : null;
  // PostgreSQL mode: this process and the server share the database (and the instance secret that seals credentials).
  const dbEnv: Record<string, string> = pg ? { DATABASE_URL: await pg.createDatabase(), INSTANCE_SECRET: TEST_INSTANCE_SECRET } : {};
  const receiverUrl = (await lineMatching(receiver, (l) => l.startsWith("listening "))).slice("listening ".length).trim();
  const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "silent", BASE_URL: "http://localhost", ...dbEnv });
  const deps = await bootstrap(config, { log: silentLogger });
  const { accountId } = await createAccount(deps, { name: "Bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });
  const connection = await addConnection(deps, { accountId, platform: "webhook", url: `${receiverUrl}/hook`, secret: SECRET });
  if (!connection.readyToPost) throw new Error(`webhook not ready: ${connection.blockedReason}`);
  const creation = await makeCreation(deps, accountId, { caption: "Bench post" });
  let content: DuePostContent | undefined;
  if (THREAD) {
    const images: StoredImage[] = [];
    for (let i = 0; i < IMAGES; i++) {
      const asset = await ingestImageBytes(deps, accountId, { bytes: await solidPng(64 + 16 * i, 48), fileName: `bench-${i}` });
      images.push({ assetId: asset.id, altText: `Bench picture ${i + 1}` });
    }
    content = {
      images,
      thread: Array.from({ length: THREAD_PARTS }, (_, i) => ({ caption: `Part ${i + 2} of the bench thread`, images: i === THREAD_PARTS - 1 ? images.slice(0, 1) : [] })),
      firstComment: null,
    };
  }

  const profile = process.env.BENCH_CPU_PROF_DIR ? ["--cpu-prof", "--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  for (let i = 0; i < REPLICAS; i++) {
    servers.push(
      spawn([process.execPath, ...profile, "src/main.ts", "serve"], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATA_DIR: i === 0 ? dataDir : mkdtempSync(join(dataDir, "replica-")),
          PORT: "0",
          HOST: "127.0.0.1",
          ALLOW_PRIVATE_HOSTS: "127.0.0.1",
          LOG_LEVEL: "warn",
          ...dbEnv,
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "inherit",
      }),
    );
  }
  // LOG_LEVEL=warn hides "ready": wait for the port via the health probe instead.
  const firstDue = Date.now() + LEAD_MS;
  await insertDuePosts(deps, { accountId, connectionId: connection.accountId, creationId: creation.id, count: POSTS, firstDueAt: firstDue, spreadMs: WINDOW_MS, content });
  const lastDue = firstDue + WINDOW_MS - Math.floor(WINDOW_MS / POSTS);
  for (const server of servers) {
    void (async () => {
      for await (const _ of server.stdout) {
        // keep the pipe flowing
      }
    })().catch(() => {});
  }

  const deadline = lastDue + 120_000;
  // The server commits in another process; the store's reader sees each commit (WAL; PostgreSQL: the pool).
  const countPublished = async () =>
    (await deps.store.db.select({ n: count() }).from(scheduledPostTargets).where(eq(scheduledPostTargets.status, "published")).get())?.n ?? 0;
  while (Date.now() < deadline && (await countPublished()) < POSTS) await Bun.sleep(250);
  const published = await countPublished();
  for (const server of servers.splice(0)) {
    server.kill("SIGTERM");
    await server.exited;
  }
  await deps.store.close();

  const log = readWebhookLog(logFile).filter((d) => d.event === "post.publish");
  const perKey = new Map<string, number>();
  for (const d of log) if (!d.repeat) perKey.set(d.idempotencyKey ?? "", (perKey.get(d.idempotencyKey ?? "") ?? 0) + 1);
  const lateness = log
    .filter((d) => !d.repeat)
    .map((d) => Date.parse(d.receivedAt) - Date.parse((d.body as { post: { scheduledTime: string } }).post.scheduledTime))
    .sort((a, b) => a - b);
  const lastArrival = Math.max(...log.map((d) => Date.parse(d.receivedAt)));
  // With --thread: a delivery that does not carry every image and every part is incomplete.
  const incomplete = THREAD
    ? log.filter((d) => {
        const post = (d.body as { post: { images?: unknown[]; thread?: Array<{ images: unknown[] }> } }).post;
        return post.images?.length !== IMAGES || post.thread?.length !== THREAD_PARTS || post.thread[THREAD_PARTS - 1]?.images.length !== 1;
      }).length
    : 0;
  const result = {
    posts: POSTS,
    windowMs: WINDOW_MS,
    delivered: perKey.size,
    publishedInDb: published,
    duplicates: [...perKey.values()].filter((n) => n > 1).length,
    incomplete,
    absorbedRepeats: log.filter((d) => d.repeat).length,
    firstDueToLastArrivalMs: lastArrival - firstDue,
    // posts ÷ (last arrival − first due time)
    postsPerSecond: Math.round((perKey.size * 1000) / Math.max(1, lastArrival - firstDue)),
    afterLastDueMs: lastArrival - lastDue,
    latenessMs: {
      p50: percentile(lateness, 50),
      p95: percentile(lateness, 95),
      p99: percentile(lateness, 99),
      max: lateness[lateness.length - 1] ?? 0,
      min: lateness[0] ?? 0,
    },
  };
  const ok =
    result.delivered === POSTS && result.duplicates === 0 && result.incomplete === 0 && result.latenessMs.p99 < 2000 && result.firstDueToLastArrivalMs <= WINDOW_MS + 2000;
  if (json) {
    console.log(
      JSON.stringify({
        bench: `${POSTGRES ? `dispatch-pg-${REPLICAS}` : "dispatch"}${THREAD ? "-thread" : ""}`,
        figures: [
          { label: `webhook posts delivered (${POSTS} due within ${WINDOW_MS / 1000} s, ${MODE})`, value: result.delivered, unit: "posts", goal: `= ${POSTS}`, ok: result.delivered === POSTS },
          { label: "drain rate (posts ÷ (last arrival − first due))", value: result.postsPerSecond, unit: "posts/s", goal: "", ok: null },
          { label: "lateness p99", value: result.latenessMs.p99, unit: "ms", goal: "< 2000", ok: result.latenessMs.p99 < 2000 },
          { label: "first due to last arrival", value: result.firstDueToLastArrivalMs, unit: "ms", goal: `≤ ${WINDOW_MS + 2000}`, ok: result.firstDueToLastArrivalMs <= WINDOW_MS + 2000 },
          { label: "duplicate deliveries", value: result.duplicates, unit: "", goal: "= 0", ok: result.duplicates === 0 },
          ...(THREAD ? [{ label: "deliveries missing an image or a part", value: result.incomplete, unit: "", goal: "= 0", ok: result.incomplete === 0 }] : []),
        ],
      }),
    );
  }
  else {
    console.log(`${MODE}: posts due within ${WINDOW_MS / 1000} s: ${POSTS}; delivered ${result.delivered} (db: ${published} published)`);
    console.log(`first due → last arrival: ${(result.firstDueToLastArrivalMs / 1000).toFixed(2)} s (last arrival ${result.afterLastDueMs} ms after the last due time)`);
    console.log(`drain rate: ${result.postsPerSecond} posts/s (posts ÷ (last arrival − first due))`);
    console.log(`lateness ms: p50 ${result.latenessMs.p50}, p95 ${result.latenessMs.p95}, p99 ${result.latenessMs.p99}, max ${result.latenessMs.max}`);
    console.log(`duplicates: ${result.duplicates} (absorbed repeats: ${result.absorbedRepeats})`);
    if (THREAD) console.log(`deliveries missing an image or a part: ${result.incomplete}`);
    console.log(`load average at the end (1, 5, 15 min): ${loadavg().map((l) => l.toFixed(2)).join(", ")} on ${cpus().length} cores`);
    console.log(ok ? "GOALS MET" : "GOALS NOT MET");
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const server of servers) server.kill("SIGKILL");
  receiver.kill("SIGTERM");
  await receiver.exited;
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
