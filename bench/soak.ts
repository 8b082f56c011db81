/**
 * Issue 7 soak: SOAK_MINUTES (default 10) of mixed traffic from a bounded load generator (SOAK_WORKERS workers, a
 * request cap, 127.0.0.1 only) against the BUILT binary (dist/seedcast, started from / with a temp DATA_DIR), with a
 * webhook receiver in its own process. Reads, seed creates, generates (builtin), schedules (due 5 min + jitter ahead)
 * and cancels. The measured minutes follow SOAK_WARMUP_MINUTES (default 5, the schedule's lead) of the same traffic,
 * so posts come due from the first measured minute on and the whole mix, deliveries included, runs through the
 * window whose RSS trend is judged. Samples the server's RSS every 10 s; takes a backup midway with `seedcast backup`
 * while the load runs; at the end waits for every due post, then checks statuses, the ledger (read-only SQLite),
 * exactly-once delivery, and restores the backup into a fresh dir and serves from it.
 * Prints a figures table and PASS/FAIL (exit 1 on FAIL). Usage: SOAK_MINUTES=1 SOAK_WARMUP_MINUTES=0 bun bench/soak.ts [--json]
 */
import { Database } from "bun:sqlite";
import { type Subprocess, spawn } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { readWebhookLog } from "../test/peers/webhook-receiver";
import { spawnReceiver } from "../test/helpers/receiver-process";

const ROOT = resolve(import.meta.dir, "..");
const BIN = resolve(ROOT, "dist/seedcast");
const json = process.argv.includes("--json");
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
/**
 * Traffic before the measured minutes. Posts are scheduled at least 5 minutes ahead, so without it the first
 * deliveries began exactly where the judged second half began, and that half measured the onset of a new kind of
 * work (outbound requests) rather than the steady state.
 */
const WARMUP_MINUTES = Number(process.env.SOAK_WARMUP_MINUTES ?? 5);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 4);
/** Pause between one worker's requests: keeps the soak a steady mixed load, not a saturation test. */
const PAUSE_MS = Number(process.env.SOAK_PAUSE_MS ?? 20);
/** Hard cap on requests, so the generator is bounded in count as well as in time. */
const MAX_REQUESTS = Number(process.env.SOAK_MAX_REQUESTS ?? 2_000_000);
const SAMPLE_MS = 10_000;
const SECRET = "soak-secret-0123456789abcdef";
const DB_FILE = "seedcast.db";
/** The server refuses scheduled_time under 5 minutes ahead; a few seconds of margin for the request's own latency. */
const LEAD_MS = 5 * 60_000 + 5_000;
const JITTER_MS = 30_000;
/** Only posts further out than this are cancelled, so a cancel never races the dispatcher. */
const CANCEL_MARGIN_MS = 60_000;
const DELIVERY_GRACE_MS = 120_000;
/** RSS trend over the second half above this many MB/min counts as growth. */
const RSS_TREND_LIMIT = 1;
const MIN_TREND_SAMPLES = 12;
const GRANT = 10_000_000;
const POOR_CREDITS = 50;

type Op = "health" | "seeds" | "search" | "assets" | "creations" | "credits" | "posts" | "missing" | "seed" | "generate" | "generate_poor" | "schedule" | "cancel";
/** Weighted mix; expected statuses per op (anything else is an error). */
const MIX: [Op, number, number[]][] = [
  ["health", 10, [200]],
  ["seeds", 10, [200]],
  ["search", 10, [200]],
  ["assets", 6, [200]],
  ["creations", 8, [200]],
  ["credits", 6, [200]],
  ["posts", 8, [200]],
  ["missing", 3, [404]],
  ["seed", 10, [201]],
  ["generate", 3, [201]],
  ["generate_poor", 1, [201, 402]],
  ["schedule", 6, [200, 201]],
  ["cancel", 2, [200, 409]],
];
const TOTAL_WEIGHT = MIX.reduce((s, m) => s + m[1], 0);
const WORDS = "coffee bakery spring launch workshop garden market festival espresso harvest team update recipe story".split(" ");

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
}

async function cli(args: string[], dataDir: string): Promise<Record<string, unknown>> {
  const p = spawn([BIN, ...args, "--json"], { cwd: "/", env: { ...process.env, DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "warn" }, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`seedcast ${args.join(" ")} failed: ${out} ${await new Response(p.stderr).text()}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}

function serve(dataDir: string, port: number, logFile: string): Subprocess {
  return spawn([BIN, "serve"], {
    cwd: "/",
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      ALLOW_PRIVATE_HOSTS: "127.0.0.1",
      LOG_LEVEL: "warn",
      RATE_LIMIT_PER_MINUTE: "100000000",
    },
    stdout: Bun.file(logFile),
    stderr: Bun.file(`${logFile}.err`),
  });
}

async function waitReady(base: string, deadlineMs = 15_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(20);
  }
  throw new Error(`${base} never became ready`);
}

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const num = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return num / den;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

const tmp = mkdtempSync(join(tmpdir(), "seedcast-soak-"));
const dataDir = join(tmp, "data");
const restoreDir = join(tmp, "restored");
const receiverLog = join(tmp, "receiver.jsonl");
const backupFile = join(tmp, "backup.tar.gz");
const procs: Subprocess[] = [];
const figures: [string, string, boolean | null][] = [];
const failures: string[] = [];
const check = (label: string, value: string, ok: boolean | null): void => {
  figures.push([label, value, ok]);
  if (ok === false) failures.push(label);
};

try {
  // The receiver, in its own process.
  const { process: receiver, url: receiverUrl } = await spawnReceiver({ port: freePort(), secret: SECRET, log: receiverLog });
  procs.push(receiver);

  // Accounts, keys and the webhook connection, all through the CLI as an admin would.
  const rich = await cli(["account", "create", "--name", "Soak", "--email", "soak@example.test", "--password", "soak-password", "--credits", String(GRANT)], dataDir);
  const poor = await cli(["account", "create", "--name", "Poor", "--email", "poor@example.test", "--password", "poor-password", "--credits", String(POOR_CREDITS)], dataDir);
  const groups = "read,create,schedule";
  const key = (await cli(["keys", "mint", "--account", String(rich.accountId), "--name", "soak", "--groups", groups], dataDir)).key as string;
  const poorKey = (await cli(["keys", "mint", "--account", String(poor.accountId), "--name", "soak", "--groups", groups], dataDir)).key as string;
  const connection = await cli(
    ["connections", "add", "--account", String(rich.accountId), "--platform", "webhook", "--url", `${receiverUrl}/hook`, "--secret", SECRET],
    dataDir,
  );
  if (connection.readyToPost !== true) throw new Error(`webhook connection not ready: ${String(connection.blockedReason)}`);

  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = serve(dataDir, port, join(tmp, "serve.log"));
  procs.push(server);
  await waitReady(base);

  const statuses = new Map<string, number>();
  const unexpected = new Map<string, number>();
  const latencies = new Map<Op, number[]>();
  const seeds: string[] = [];
  const poorSeeds: string[] = [];
  const creations: string[] = [];
  const scheduled = new Map<string, number>(); // post id → scheduled time (ms)
  const cancelled = new Set<string>();
  const cancelling = new Set<string>();
  let requests = 0;
  let networkErrors = 0;

  async function call(op: Op, method: string, path: string, body?: unknown, as = key): Promise<{ status: number; json: Record<string, unknown> }> {
    const t0 = performance.now();
    requests++;
    let status = 0;
    let parsed: Record<string, unknown> = {};
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${as}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      status = res.status;
      parsed = ((await res.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    } catch {
      networkErrors++;
    }
    const ms = performance.now() - t0;
    const list = latencies.get(op) ?? [];
    list.push(ms);
    latencies.set(op, list);
    const k = `${op} ${status}`;
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
    const expected = MIX.find((m) => m[0] === op)?.[2] ?? [];
    if (!expected.includes(status)) {
      unexpected.set(k, (unexpected.get(k) ?? 0) + 1);
      if ((unexpected.get(k) ?? 0) <= 3) console.error(`unexpected: ${method} ${path} → ${status} ${JSON.stringify(parsed).slice(0, 300)}`);
    }
    return { status, json: parsed };
  }

  const seedBody = () => ({
    title: `${pick(WORDS)} ${pick(WORDS)} ${Math.floor(Math.random() * 1e6)}`,
    content: `Join us for the ${pick(WORDS)} ${pick(WORDS)} this week. ${pick(WORDS)} and ${pick(WORDS)} for everyone, seats are limited.`,
    category: pick(["event", "tip", "story", null]),
  });

  async function runOp(op: Op): Promise<void> {
    switch (op) {
      case "health":
        await call(op, "GET", "/api/v1/health");
        return;
      case "seeds":
        await call(op, "GET", "/api/v1/seeds?limit=20");
        return;
      case "search":
        await call(op, "GET", `/api/v1/seeds?limit=20&search=${pick(WORDS)}`);
        return;
      case "assets":
        await call(op, "GET", "/api/v1/assets?limit=20");
        return;
      case "creations":
        await call(op, "GET", "/api/v1/creations?limit=20");
        return;
      case "credits":
        await call(op, "GET", "/api/v1/credits");
        return;
      case "posts":
        await call(op, "GET", "/api/v1/schedule/posts?limit=20");
        return;
      case "missing":
        await call(op, "GET", `/api/v1/seeds/${crypto.randomUUID()}`);
        return;
      case "seed": {
        const r = await call(op, "POST", "/api/v1/seeds", seedBody());
        if (r.status === 201) seeds.push(String(r.json.id));
        return;
      }
      case "generate": {
        if (!seeds.length) return runOp("seed");
        const r = await call(op, "POST", "/api/v1/creations/generate", { seed_id: pick(seeds), include_visual: Math.random() < 0.5 });
        const creation = r.json.creation as { id?: string } | undefined;
        if (r.status === 201 && creation?.id) creations.push(creation.id);
        return;
      }
      case "generate_poor": {
        const seedId = pick(poorSeeds);
        await call(op, "POST", "/api/v1/creations/generate", { seed_id: seedId, include_visual: false }, poorKey);
        return;
      }
      case "schedule": {
        if (!creations.length) return runOp("generate");
        const at = Date.now() + LEAD_MS + Math.floor(Math.random() * JITTER_MS);
        const r = await call(op, "POST", "/api/v1/schedule", {
          type: "social_post",
          creation_id: pick(creations),
          scheduled_time: new Date(at).toISOString(),
          targets: ["webhook"],
        });
        const post = r.json.post as { id?: string; scheduledTime?: string } | undefined;
        if (r.status < 300 && post?.id) scheduled.set(post.id, Date.parse(post.scheduledTime ?? "") || at);
        return;
      }
      case "cancel": {
        const far = [...scheduled].filter(([id, at]) => !cancelling.has(id) && at - Date.now() > CANCEL_MARGIN_MS);
        if (!far.length) return runOp("schedule");
        const [id] = pick(far);
        // Claimed before the request, so two workers never cancel the same post (the second would get a 404).
        cancelling.add(id);
        const r = await call(op, "DELETE", `/api/v1/schedule/${id}`);
        if (r.status === 200) cancelled.add(id);
        return;
      }
    }
  }

  function chooseOp(): Op {
    let x = Math.random() * TOTAL_WEIGHT;
    for (const [op, w] of MIX) {
      if ((x -= w) < 0) return op;
    }
    return "health";
  }

  // The poor account's seed, for generates that run out of credits (402 expected).
  poorSeeds.push(String((await call("seed", "POST", "/api/v1/seeds", seedBody(), poorKey)).json.id));

  const loadAtStart = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const startedAt = Date.now();
  const measuredFrom = startedAt + WARMUP_MINUTES * 60_000;
  const endAt = measuredFrom + MINUTES * 60_000;
  const rss: [number, number][] = [[0, rssMb(server.pid)]];
  const sampler = setInterval(() => rss.push([(Date.now() - startedAt) / 60_000, rssMb(server.pid)]), SAMPLE_MS);

  // The backup, taken midway by a separate process against the live data dir.
  let backup: { counts: Record<string, number>; ms: number; error?: string } | null = null;
  const backupDone = (async () => {
    await Bun.sleep((measuredFrom - startedAt) + (endAt - measuredFrom) / 2);
    const t0 = performance.now();
    try {
      const manifest = await cli(["backup", backupFile], dataDir);
      backup = { counts: manifest.counts as Record<string, number>, ms: performance.now() - t0 };
    } catch (error) {
      backup = { counts: {}, ms: performance.now() - t0, error: (error as Error).message };
    }
  })();

  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (Date.now() < endAt && requests < MAX_REQUESTS) {
        await runOp(chooseOp());
        if (PAUSE_MS > 0) await Bun.sleep(PAUSE_MS);
      }
    }),
  );
  await backupDone;
  clearInterval(sampler);
  rss.push([(Date.now() - startedAt) / 60_000, rssMb(server.pid)]);
  const trafficMs = Date.now() - startedAt;

  // Wait for every post due before the end of the traffic.
  const due = [...scheduled].filter(([id, at]) => at <= endAt && !cancelled.has(id));
  const dueIds = new Set(due.map(([id]) => id));
  const lastDue = Math.max(0, ...due.map(([, at]) => at));
  const effects = () => readWebhookLog(receiverLog).filter((d) => d.event === "post.publish" && !d.repeat);
  const postIdOf = (d: { body: unknown }) => (d.body as { post?: { id?: string } }).post?.id ?? "";
  while (Date.now() < lastDue + DELIVERY_GRACE_MS) {
    const delivered = new Set(effects().map(postIdOf));
    if ([...dueIds].every((id) => delivered.has(id))) break;
    await Bun.sleep(1000);
  }
  const all = readWebhookLog(receiverLog).filter((d) => d.event === "post.publish");
  const firstEffects = all.filter((d) => !d.repeat);
  const perPost = new Map<string, number>();
  for (const d of firstEffects) perPost.set(postIdOf(d), (perPost.get(postIdOf(d)) ?? 0) + 1);
  const perKey = new Map<string, number>();
  for (const d of firstEffects) perKey.set(d.idempotencyKey ?? "", (perKey.get(d.idempotencyKey ?? "") ?? 0) + 1);
  const missing = [...dueIds].filter((id) => !perPost.has(id)).length;
  const duplicates = [...perPost.values()].filter((n) => n > 1).length + [...perKey.values()].filter((n) => n > 1).length;
  const cancelledDelivered = [...cancelled].filter((id) => perPost.has(id)).length;
  const lateness = firstEffects
    .map((d) => Date.parse(d.receivedAt) - Date.parse((d.body as { post: { scheduledTime: string } }).post.scheduledTime))
    .sort((a, b) => a - b);
  const serverRssEnd = rssMb(server.pid);

  server.kill("SIGTERM");
  const serverExit = await server.exited;
  receiver.kill("SIGTERM");
  await receiver.exited;
  const serveLog = `${readFileSync(join(tmp, "serve.log"), "utf8")}${readFileSync(join(tmp, "serve.log.err"), "utf8")}`;
  const errorLines = serveLog.split("\n").filter((l) => l.includes('"level":"error"')).length;

  // The ledger, from the SQLite file opened read-only.
  const db = new Database(join(dataDir, DB_FILE), { readonly: true });
  const ledger = db
    .query<{ id: string; balance: number; reserved: number; granted: number; captured: number; open: number }, []>(
      `SELECT a.id, a.credits_balance AS balance, a.credits_reserved AS reserved,
         (SELECT coalesce(sum(amount), 0) FROM credit_ledger WHERE account_id = a.id AND kind = 'grant') AS granted,
         (SELECT coalesce(sum(amount), 0) FROM credit_ledger WHERE account_id = a.id AND kind = 'capture') AS captured,
         (SELECT coalesce(sum(amount), 0) FROM credit_holds WHERE account_id = a.id AND state = 'open') AS open
       FROM accounts a`,
    )
    .all();
  db.close();
  const unbalanced = ledger.filter((a) => a.balance + a.reserved + a.captured !== a.granted || a.reserved !== a.open);
  const spent = ledger.reduce((s, a) => s + a.captured, 0);

  // The backup round trip: restore into a fresh dir, count rows, serve from it with the same key.
  let restoreOk = false;
  let restoreNote = "";
  const b = backup as { counts: Record<string, number>; ms: number; error?: string } | null;
  if (!b || b.error) restoreNote = `backup failed: ${b?.error ?? "not taken"}`;
  else {
    try {
      await cli(["restore", backupFile], restoreDir);
      const rdb = new Database(join(restoreDir, DB_FILE), { readonly: true });
      const diffs = Object.entries(b.counts).filter(([t, n]) => (rdb.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${t}`).get()?.n ?? -1) !== n);
      rdb.close();
      const rport = freePort();
      const restored = serve(restoreDir, rport, join(tmp, "restored.log"));
      procs.push(restored);
      await waitReady(`http://127.0.0.1:${rport}`);
      const health = await fetch(`http://127.0.0.1:${rport}/api/v1/health`, { headers: { authorization: `Bearer ${key}` } });
      restored.kill("SIGTERM");
      await restored.exited;
      restoreOk = health.status === 200 && diffs.length === 0;
      restoreNote = `health ${health.status}, ${Object.keys(b.counts).length} tables, ${diffs.length} count mismatches ${diffs.map(([t]) => t).join(",")}`.trim();
      restoreNote += `; rows ${Object.entries(b.counts).map(([t, n]) => `${t}=${n}`).join(" ")}`;
    } catch (error) {
      restoreNote = (error as Error).message;
    }
  }

  // Minutes since the start of the traffic; the judged half is the second half of the measured window.
  const secondHalf = rss.filter(([t]) => t >= WARMUP_MINUTES + MINUTES / 2);
  const firstDue = Math.min(...due.map(([, at]) => at));
  const perMinute = rss.filter(([t], i) => i === 0 || Math.floor(t) !== Math.floor(rss[i - 1]?.[0] ?? 0));
  const trend = slope(secondHalf);
  const statusTotals = new Map<number, number>();
  for (const [k, n] of statuses) {
    const s = Number(k.split(" ")[1]);
    statusTotals.set(s, (statusTotals.get(s) ?? 0) + n);
  }
  const unexpectedCount = [...unexpected.values()].reduce((s, n) => s + n, 0);
  const loadAvg = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

  check(
    "duration",
    `${(trafficMs / 60_000).toFixed(1)} min (${WARMUP_MINUTES} warm-up + ${MINUTES} measured), ${WORKERS} workers, load average at start ${loadAtStart}, at end ${loadAvg}`,
    null,
  );
  check("requests", `${requests} (${(requests / (trafficMs / 1000)).toFixed(0)}/s)`, null);
  check("statuses", [...statusTotals].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}: ${n}`).join(", "), null);
  check("unexpected statuses", unexpectedCount ? [...unexpected].map(([k, n]) => `${k}: ${n}`).join(", ") : "0", unexpectedCount === 0 && networkErrors === 0);
  for (const op of ["health", "search", "seed", "generate", "schedule"] as Op[]) {
    const l = (latencies.get(op) ?? []).sort((a, b) => a - b);
    if (l.length) check(`latency ${op}`, `p50 ${percentile(l, 50).toFixed(1)} ms, p99 ${percentile(l, 99).toFixed(1)} ms (n=${l.length})`, null);
  }
  check("server error log lines", String(errorLines), errorLines === 0);
  check("server exit on SIGTERM", String(serverExit), serverExit === 0);
  check(
    "RSS",
    `start ${rss[0]?.[1].toFixed(1)} MB, max ${Math.max(...rss.map((r) => r[1])).toFixed(1)} MB, end ${serverRssEnd.toFixed(1)} MB; ` +
      `trend over the measured 2nd half ${Number.isNaN(trend) ? "n/a" : `${trend.toFixed(2)} MB/min`} (${secondHalf.length} samples, limit ${RSS_TREND_LIMIT})`,
    // Under ~2 minutes of second half the trend is still warm-up (caches, JIT): reported, not judged.
    secondHalf.length < MIN_TREND_SAMPLES ? null : trend < RSS_TREND_LIMIT,
  );
  check("RSS by minute", perMinute.map(([t, mb]) => `${t.toFixed(1)}:${mb.toFixed(0)}`).join(" "), null);
  if (due.length) check("first post due", `${((firstDue - startedAt) / 60_000).toFixed(1)} min after the traffic began`, null);
  check("created", `${seeds.length} seeds, ${creations.length} creations, ${scheduled.size} posts scheduled, ${cancelled.size} cancelled`, null);
  check("due posts delivered", `${dueIds.size - missing}/${dueIds.size} (missing ${missing})`, missing === 0);
  check("duplicate deliveries", `${duplicates} (absorbed resends: ${all.length - firstEffects.length})`, duplicates === 0);
  check("cancelled posts delivered", String(cancelledDelivered), cancelledDelivered === 0);
  if (lateness.length) {
    check(
      "lateness",
      `p50 ${percentile(lateness, 50)} ms, p99 ${percentile(lateness, 99)} ms, max ${lateness.at(-1)} ms (n=${lateness.length})`,
      null,
    );
  }
  check("ledger balanced", `${ledger.length - unbalanced.length}/${ledger.length} accounts, ${spent} credits captured`, unbalanced.length === 0);
  check("backup under load", b ? (b.error ? b.error : `${(b.ms / 1000).toFixed(2)} s`) : "not taken", Boolean(b && !b.error));
  check("restore round trip", restoreNote, restoreOk);

  const verdict = failures.length === 0 ? "PASS" : "FAIL";
  if (json) {
    console.log(
      JSON.stringify({
        bench: "soak",
        verdict,
        figures: figures.map(([label, value, ok]) => ({ label, value, unit: "", goal: ok === null ? "" : "pass", ok })),
      }),
    );
  } else {
    const w = Math.max(...figures.map((f) => f[0].length));
    for (const [label, value, ok] of figures) console.log(`${label.padEnd(w)}  ${ok === null ? "    " : ok ? "ok  " : "FAIL"}  ${value}`);
    console.log(`\nsoak: ${verdict}${failures.length ? ` (${failures.join(", ")})` : ""}`);
  }
  process.exitCode = verdict === "PASS" ? 0 : 1;
} finally {
  for (const p of procs) p.kill("SIGKILL");
  if (!process.env.SOAK_KEEP) rmSync(tmp, { recursive: true, force: true });
}
