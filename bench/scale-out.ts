/**
 * Issue 15 bench: Seedcast on PostgreSQL (one real PostgreSQL 15 started here, test/helpers/postgres.ts), in one run:
 *
 *  1. Authenticated GET /api/v1/health req/s of the built binary in PostgreSQL mode against the same binary in SQLite
 *     mode (wrk, 2 threads, 50 connections, BENCH_DURATION each), and the bare Bun.serve ceiling. PostgreSQL mode reads
 *     the auth generation once per request (the cross-replica invalidation of the key cache) and takes the rate-limit
 *     token from the shared bucket in the database; SQLite mode does neither. Ratio PG ÷ SQLite printed.
 *  2. Dispatch on PostgreSQL: POSTS webhook posts all due within WINDOW_MS (default 1 s), delivered by 1 replica, then
 *     (a fresh account, the same database) by 3 replicas: throughput (posts ÷ seconds from first due to last arrival:
 *     the rate the replicas drain a backlog at), p99 lateness (arrival − due) and duplicates. Ratio 3 ÷ 1 printed.
 *     NB: on this 2-core machine three replicas, the receiver and PostgreSQL share two cores, so the ratio shows that
 *     replicas claim without getting in each other's way (SKIP LOCKED), not what three machines would do.
 *
 * Needs `npm run build` (BENCH_BIN, default dist/seedcast) and wrk. Usage: bun bench/scale-out.ts [--json]
 * [--posts N] [--window-ms W]
 */
import { SQL, spawn, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readWebhookLog } from "../test/peers/webhook-receiver";
import { WEBHOOK_SECRET } from "../test/publishing-fixtures";
import { startPostgres } from "../test/helpers/postgres";
import { TEST_INSTANCE_SECRET } from "../test/helpers/test-database";
import { spawnReceiver } from "../test/helpers/receiver-process";
import { freePort, run, waitReady } from "./lib/process";

const ROOT = resolve(import.meta.dir, "..");
const BIN = resolve(process.env.BENCH_BIN ?? "dist/seedcast");
const DURATION = process.env.BENCH_DURATION ?? "10s";
const args = process.argv.slice(2);
const json = args.includes("--json");
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 3000);
// All due within one second: the time to drain them is what the replicas sustain, not the rate they came due at.
const WINDOW_MS = argOf("window-ms", 1000);
const LEAD_MS = 6000;

async function wrk(url: string, headers: string[] = []): Promise<number> {
  const out = await run(["wrk", "-t2", "-c50", `-d${DURATION}`, ...headers.flatMap((h) => ["-H", h]), url], {});
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`wrk saw ${non2xx} non-2xx answers from ${url}`);
  return Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Authenticated health req/s of the binary with `env` (SQLite when it has no DATABASE_URL). */
async function healthRps(env: Record<string, string>): Promise<number> {
  const account = JSON.parse(await run([BIN, "account", "create", "--name", "Bench", "--email", `b-${crypto.randomUUID()}@example.test`, "--password", "bench-password", "--json"], env));
  const key = JSON.parse(await run([BIN, "keys", "mint", "--account", account.accountId, "--name", "bench", "--groups", "read", "--json"], env)).key as string;
  const port = freePort();
  const app = Bun.spawn([BIN, "serve"], { env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) }, cwd: "/", stdout: "ignore", stderr: "inherit" });
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, 30_000);
    await Bun.sleep(500);
    return await wrk(`http://127.0.0.1:${port}/api/v1/health`, [`Authorization: Bearer ${key}`]);
  } finally {
    app.kill("SIGTERM");
    await app.exited;
  }
}

interface DispatchFigures {
  replicas: number;
  delivered: number;
  duplicates: number;
  postsPerSecond: number;
  p99LatenessMs: number;
  maxLatenessMs: number;
}

/** POSTS due within WINDOW_MS on a fresh account of `env`'s database, delivered by `replicas` serve processes. */
async function dispatch(env: Record<string, string>, replicas: number, dir: string): Promise<DispatchFigures> {
  const logFile = join(dir, `receiver-${replicas}.jsonl`);
  const receiver = await spawnReceiver({ port: 0, secret: WEBHOOK_SECRET, log: logFile });
  const servers: Subprocess[] = [];
  try {
    const setupEnv = { ...env, DATA_DIR: mkdtempSync(join(dir, "setup-")) };
    const who = JSON.parse((await run([process.execPath, "test/helpers/scale-out-setup.ts", "account", receiver.url], setupEnv, ROOT)).trim().split("\n").pop() ?? "{}");
    for (let i = 0; i < replicas; i++) {
      const port = freePort();
      servers.push(
        spawn([process.execPath, "src/main.ts", "serve"], {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? "", ...env, DATA_DIR: mkdtempSync(join(dir, "replica-")), PORT: String(port), LOG_LEVEL: "warn" },
          stdin: "ignore",
          stdout: "ignore",
          stderr: "inherit",
        }),
      );
      await waitReady(`http://127.0.0.1:${port}/readyz`, 30_000);
    }
    const firstDue = Date.now() + LEAD_MS;
    await run(
      [process.execPath, "test/helpers/scale-out-setup.ts", "posts", who.accountId, who.connectionId, who.creationId, String(POSTS), String(firstDue), String(WINDOW_MS)],
      setupEnv,
      ROOT,
    );
    const deadline = firstDue + WINDOW_MS + 120_000;
    const delivered = () => new Set(readWebhookLog(logFile).filter((d) => d.event === "post.publish" && !d.repeat).map((d) => d.idempotencyKey)).size;
    while (Date.now() < deadline && delivered() < POSTS) await Bun.sleep(250);
    const log = readWebhookLog(logFile).filter((d) => d.event === "post.publish" && !d.repeat);
    const perKey = new Map<string, number>();
    for (const d of log) perKey.set(d.idempotencyKey ?? "", (perKey.get(d.idempotencyKey ?? "") ?? 0) + 1);
    const lateness = log.map((d) => Date.parse(d.receivedAt) - Date.parse((d.body as { post: { scheduledTime: string } }).post.scheduledTime)).sort((a, b) => a - b);
    const lastArrival = Math.max(...log.map((d) => Date.parse(d.receivedAt)));
    return {
      replicas,
      delivered: perKey.size,
      duplicates: [...perKey.values()].filter((n) => n > 1).length,
      postsPerSecond: Math.round((perKey.size * 1000) / Math.max(1, lastArrival - firstDue)),
      p99LatenessMs: percentile(lateness, 99),
      maxLatenessMs: lateness[lateness.length - 1] ?? 0,
    };
  } finally {
    for (const s of servers) s.kill("SIGTERM");
    await Promise.all(servers.map((s) => s.exited));
    receiver.process.kill("SIGTERM");
    await receiver.process.exited;
  }
}

const dir = mkdtempSync(join(tmpdir(), "seedcast-bench-scale-"));
const pg = await startPostgres();
try {
  // Empty values unset what the caller's shell may export (an empty DATABASE_URL is SQLite mode).
  const sqliteEnv = {
    DATA_DIR: mkdtempSync(join(dir, "sqlite-")),
    DATABASE_URL: "",
    INSTANCE_SECRET: "",
    MEDIA_STORE: "local",
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    RATE_LIMIT_PER_MINUTE: "100000000",
  };
  const pgEnv = { ...sqliteEnv, DATA_DIR: mkdtempSync(join(dir, "pg-")), DATABASE_URL: await pg.createDatabase(), INSTANCE_SECRET: TEST_INSTANCE_SECRET };
  // Alternate, so neither mode always runs on the warmer machine.
  const sqliteRps1 = await healthRps(sqliteEnv);
  const pgRps1 = await healthRps(pgEnv);
  const pgRps2 = await healthRps(pgEnv);
  const sqliteRps2 = await healthRps(sqliteEnv);
  const sqliteRps = (sqliteRps1 + sqliteRps2) / 2;
  const pgRps = (pgRps1 + pgRps2) / 2;

  const dispatchEnv = { DATABASE_URL: await pg.createDatabase(), INSTANCE_SECRET: TEST_INSTANCE_SECRET, ALLOW_PRIVATE_HOSTS: "127.0.0.1", HOST: "127.0.0.1", LOG_LEVEL: "warn", BASE_URL: "http://localhost" };
  const one = await dispatch(dispatchEnv, 1, dir);
  const three = await dispatch(dispatchEnv, 3, dir);

  const figures = {
    healthSqliteRps: Math.round(sqliteRps),
    healthPostgresRps: Math.round(pgRps),
    healthRatio: Number((pgRps / sqliteRps).toFixed(3)),
    runs: { sqlite: [Math.round(sqliteRps1), Math.round(sqliteRps2)], postgres: [Math.round(pgRps1), Math.round(pgRps2)] },
    dispatch: { one, three, throughputRatio: Number((three.postsPerSecond / Math.max(1, one.postsPerSecond)).toFixed(2)) },
  };
  if (json) {
    console.log(
      JSON.stringify({
        bench: "scale-out",
        figures: [
          { label: "authenticated GET /api/v1/health, PostgreSQL mode", value: figures.healthPostgresRps, unit: "req/s", goal: "", ok: null, ceiling: figures.healthSqliteRps },
          { label: "authenticated GET /api/v1/health, SQLite mode", value: figures.healthSqliteRps, unit: "req/s", goal: "", ok: null },
          { label: `dispatch, 1 replica (${POSTS} due within ${WINDOW_MS / 1000} s)`, value: one.postsPerSecond, unit: "posts/s", goal: `${POSTS} delivered, 0 duplicates`, ok: one.delivered === POSTS && one.duplicates === 0 },
          { label: "dispatch, 3 replicas", value: three.postsPerSecond, unit: "posts/s", goal: `${POSTS} delivered, 0 duplicates`, ok: three.delivered === POSTS && three.duplicates === 0 },
          { label: "lateness p99, 1 replica", value: one.p99LatenessMs, unit: "ms", goal: "", ok: null },
          { label: "lateness p99, 3 replicas", value: three.p99LatenessMs, unit: "ms", goal: "", ok: null },
        ],
      }),
    );
  } else {
    console.log(`authenticated health, SQLite mode    : ${figures.healthSqliteRps} req/s (runs ${figures.runs.sqlite.join(", ")})`);
    console.log(`authenticated health, PostgreSQL mode: ${figures.healthPostgresRps} req/s (runs ${figures.runs.postgres.join(", ")})`);
    console.log(`ratio PostgreSQL ÷ SQLite            : ${figures.healthRatio}`);
    for (const d of [one, three]) {
      console.log(
        `dispatch, ${d.replicas} replica(s): ${d.delivered}/${POSTS} delivered, ${d.duplicates} duplicates, ${d.postsPerSecond} posts/s from first due to last arrival, lateness p99 ${d.p99LatenessMs} ms, max ${d.maxLatenessMs} ms`,
      );
    }
    console.log(`dispatch throughput 3 ÷ 1 replicas   : ${figures.dispatch.throughputRatio}`);
  }
} finally {
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}
