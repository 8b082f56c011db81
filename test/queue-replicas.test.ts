/**
 * Issue 27: two posts queued at the same moment never take the same slot across replicas. Three real `seedcast serve`
 * replicas (child processes, each with its own data dir) on ONE real PostgreSQL database; 20 `queue: true` calls sent
 * at once, spread over the three, get 20 distinct slots, and the database holds exactly those 20 queued posts. Setup
 * runs in a child process (helpers/scale-out-setup.ts), so this process never switches its tables to PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Subprocess, SQL, spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ChildServer, startChildServer } from "./helpers/child-server";
import { spawnReceiver } from "./helpers/receiver-process";
import { TEST_INSTANCE_SECRET, testPostgres } from "./helpers/test-database";
import { WEBHOOK_SECRET } from "./publishing-fixtures";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const CALLS = 20;

let dir: string;
let sql: SQL;
let receiver: Subprocess;
let env: Record<string, string>;
const replicas: ChildServer[] = [];

interface Cluster {
  accountId: string;
  key: string;
  connectionId: string;
  creationId: string;
}
let cluster: Cluster;

async function setup<T>(...args: string[]): Promise<T> {
  const proc = spawn([BUN, "test/helpers/scale-out-setup.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env, DATA_DIR: mkdtempSync(join(dir, "setup-")) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`setup ${args[0]} failed (${code}): ${err}\n${out}`);
  return JSON.parse(out.trim().split("\n").pop() ?? "null") as T;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "seedcast-queue-cluster-"));
  const pg = await testPostgres();
  const databaseUrl = await pg.createDatabase();
  sql = new SQL({ url: databaseUrl, max: 2 });
  const spawned = await spawnReceiver({ port: 0, secret: WEBHOOK_SECRET, log: join(dir, "receiver.jsonl") });
  receiver = spawned.process;
  env = {
    DATABASE_URL: databaseUrl,
    INSTANCE_SECRET: TEST_INSTANCE_SECRET,
    BASE_URL: "http://localhost",
    ALLOW_PRIVATE_HOSTS: "127.0.0.1",
    LOG_LEVEL: "warn",
  };
  // The first replica applies the migrations; the others start once it is ready.
  replicas.push(await startReplica(1));
  replicas.push(...(await Promise.all([startReplica(2), startReplica(3)])));
  cluster = await setup<Cluster>("account", spawned.url);
}, 180_000);

afterAll(async () => {
  for (const r of replicas) r.proc.kill("SIGKILL");
  receiver?.kill("SIGTERM");
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

function startReplica(n: number): Promise<ChildServer> {
  return startChildServer([BUN, "src/main.ts", "serve"], {
    cwd: ROOT,
    logFile: join(dir, `replica-${n}.log`),
    timeoutMs: 90_000,
    env: { ...env, DATA_DIR: mkdtempSync(join(dir, `replica-${n}-`)) },
  });
}

async function call(r: ChildServer, method: string, path: string, body: unknown) {
  const res = await fetch(`${r.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${cluster.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as { post?: { scheduledTime: string; queued: boolean }; error?: string } };
}

describe("the queue on three replicas of one PostgreSQL", () => {
  test(`${CALLS} concurrent queue: true calls spread over 3 replicas take ${CALLS} distinct slots`, async () => {
    const hours = Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, "0")}:00`);
    const slots = hours.map((time) => ({ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time, targets: [cluster.connectionId] }));
    const put = await call(replicas[0]!, "PUT", "/api/v1/schedule/slots", { timeZone: "UTC", slots });
    expect(put.status).toBe(200);
    const body = { type: "social_post", creation_id: cluster.creationId, queue: true, targets: [cluster.connectionId] };
    const answers = await Promise.all(Array.from({ length: CALLS }, (_, i) => call(replicas[i % 3]!, "POST", "/api/v1/schedule", body)));
    expect(answers.map((a) => a.status)).toEqual(Array(CALLS).fill(200));
    const times = answers.map((a) => a.json.post!.scheduledTime);
    expect(answers.every((a) => a.json.post!.queued)).toBe(true);
    expect(new Set(times).size).toBe(CALLS);
    // Whole hours, one apart from the first: the first 20 slots, none skipped.
    const sorted = times.map((t) => Date.parse(t)).sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBe(3_600_000);
    const rows = await sql`SELECT count(*)::int AS n, count(DISTINCT scheduled_time)::int AS distinct_times FROM scheduled_posts WHERE account_id = ${cluster.accountId} AND queued`;
    expect(rows[0]).toEqual({ n: CALLS, distinct_times: CALLS });
  }, 120_000);
});
