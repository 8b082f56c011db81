/**
 * Memory probe for the soak's RSS trend: the server runs IN this process (bootstrap, the app on Bun.serve with the
 * served routes, the jobs and the dispatcher, as `seedcast serve` does), the webhook receiver in its own process, and
 * a bounded driver sends rounds of the soak's request mix over 127.0.0.1 (health, lists, search, a missing seed, seed
 * creates, builtin generates, an out-of-credits generate, schedules, cancels). The clock runs ahead of the wall clock
 * and jumps 6 minutes after each round, so the previous round's posts come due and are delivered to the receiver.
 * After each round: `Bun.gc(true)`, then object count, heap size, RSS and open fds, and the object types whose counts
 * grew since round 0 and since the previous round (the driver's own id lists show up as `string`, a few per request).
 * A leak shows as a type that grows every round by about the round's requests or deliveries.
 * Usage: bun bench/leak-probe.ts [--rounds 6] [--requests 4000] [--only reads,missing,seed,generate,poor,schedule,cancel]
 *   [--phases: also measure after the requests, before the round's posts come due] [--no-due: the clock never jumps]
 *   [--types: the 40 commonest object types at the end]
 */
import { heapStats } from "bun:jsc";
import { spawn } from "bun";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { startJobs } from "../src/jobs/registry";
import { silentLogger } from "../src/lib/log";
import { startDispatcher } from "../src/publishing/dispatcher";
import { systemJobs } from "../src/system-jobs";
import { readWebhookLog } from "../test/peers/webhook-receiver";
import { spawnReceiver } from "../test/helpers/receiver-process";

const ROOT = resolve(import.meta.dir, "..");
const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg("rounds", 6);
const PER_ROUND = arg("requests", 4000);
const WORKERS = 4;
const SECRET = "probe-secret-0123456789abcdef";
const WORDS = "coffee bakery spring launch workshop garden market festival espresso harvest team update recipe story".split(" ");
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

const tmp = mkdtempSync(join(tmpdir(), "seedcast-probe-"));
const dataDir = join(tmp, "data");
const receiverLog = join(tmp, "receiver.jsonl");
const env = { ...process.env, DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "warn" };

async function cli(args: string[]): Promise<Record<string, unknown>> {
  const p = spawn([process.execPath, "src/main.ts", ...args, "--json"], { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${args.join(" ")}: ${out} ${await new Response(p.stderr).text()}`);
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;
}

const { process: receiver, url: receiverUrl } = await spawnReceiver({ port: 0, secret: SECRET, log: receiverLog });
try {

  const rich = await cli(["account", "create", "--name", "Probe", "--email", "probe@example.test", "--password", "probe-password", "--credits", "10000000"]);
  const poor = await cli(["account", "create", "--name", "Poor", "--email", "poor@example.test", "--password", "poor-password", "--credits", "50"]);
  const key = (await cli(["keys", "mint", "--account", String(rich.accountId), "--name", "probe", "--groups", "read,create,schedule"])).key as string;
  const poorKey = (await cli(["keys", "mint", "--account", String(poor.accountId), "--name", "probe", "--groups", "read,create,schedule"])).key as string;
  await cli(["connections", "add", "--account", String(rich.accountId), "--platform", "webhook", "--url", `${receiverUrl}/hook`, "--secret", SECRET]);

  let offset = 0;
  const clock = { now: () => Date.now() + offset };
  const config = loadConfig({ ...env, HOST: "127.0.0.1", PORT: "0", RATE_LIMIT_PER_MINUTE: "100000000" });
  const deps = await bootstrap(config, { clock, log: silentLogger });
  const app = createApp(deps, { isReady: () => true });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    routes: app.servedRoutes(),
    fetch: (request, srv) => app.handle(request, srv),
  });
  const jobs = startJobs(deps, systemJobs);
  const dispatcher = startDispatcher(deps, deps.config.dispatch);
  const base = `http://127.0.0.1:${server.port}`;

  const seeds: string[] = [];
  const creations: string[] = [];
  const scheduled = new Map<string, number>();
  const statuses = new Map<string, number>();
  let poorSeed = "";

  async function call(method: string, path: string, body?: unknown, as = key): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${as}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = ((await res.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
    const k = `${method} ${path.split("?")[0]?.replace(/[0-9a-f-]{36}/, ":id")} ${res.status}`;
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
    return { status: res.status, json };
  }
  const seedBody = () => ({
    title: `${pick(WORDS)} ${pick(WORDS)} ${Math.floor(Math.random() * 1e6)}`,
    content: `Join us for the ${pick(WORDS)} ${pick(WORDS)} this week. ${pick(WORDS)} and ${pick(WORDS)} for everyone.`,
    category: pick(["event", "tip", "story", null]),
  });

  /** `--only a,b`: the ranges of the mix kept (reads, missing, seed, generate, poor, schedule, cancel); others resample. */
  const onlyArg = process.argv.includes("--only") ? (process.argv[process.argv.indexOf("--only") + 1] ?? "") : "";
  const ranges: [string, number, number][] = [["reads", 0, 58], ["missing", 58, 61], ["seed", 61, 71], ["generate", 71, 74], ["poor", 74, 75], ["schedule", 75, 81], ["cancel", 81, 83]];
  const kept = onlyArg ? ranges.filter((r) => onlyArg.split(",").includes(r[0])) : ranges;
  async function op(): Promise<void> {
    let x = Math.random() * 83;
    while (!kept.some(([, lo, hi]) => x >= lo && x < hi)) x = Math.random() * 83;
    if (x < 10) await call("GET", "/api/v1/health");
    else if (x < 20) await call("GET", "/api/v1/seeds?limit=20");
    else if (x < 30) await call("GET", `/api/v1/seeds?limit=20&search=${pick(WORDS)}`);
    else if (x < 36) await call("GET", "/api/v1/assets?limit=20");
    else if (x < 44) await call("GET", "/api/v1/creations?limit=20");
    else if (x < 50) await call("GET", "/api/v1/credits");
    else if (x < 58) await call("GET", "/api/v1/schedule/posts?limit=20");
    else if (x < 61) await call("GET", `/api/v1/seeds/${crypto.randomUUID()}`);
    else if (x < 71 || !seeds.length) {
      const r = await call("POST", "/api/v1/seeds", seedBody());
      if (r.status === 201) seeds.push(String(r.json.id));
    } else if (x < 74 || !creations.length) {
      const r = await call("POST", "/api/v1/creations/generate", { seed_id: pick(seeds), include_visual: Math.random() < 0.5 });
      const c = r.json.creation as { id?: string } | undefined;
      if (r.status === 201 && c?.id) creations.push(c.id);
    } else if (x < 75) await call("POST", "/api/v1/creations/generate", { seed_id: poorSeed, include_visual: false }, poorKey);
    else if (x < 81) {
      const at = clock.now() + 5 * 60_000 + 5_000 + Math.floor(Math.random() * 30_000);
      const r = await call("POST", "/api/v1/schedule", { type: "social_post", creation_id: pick(creations), scheduled_time: new Date(at).toISOString(), targets: ["webhook"] });
      const post = r.json.post as { id?: string } | undefined;
      if (r.status < 300 && post?.id) scheduled.set(post.id, at);
    } else {
      const far = [...scheduled].filter(([, at]) => at - clock.now() > 60_000);
      if (!far.length) return;
      const [id] = pick(far);
      scheduled.delete(id);
      await call("DELETE", `/api/v1/schedule/${id}`);
    }
  }

  poorSeed = String((await call("POST", "/api/v1/seeds", seedBody(), poorKey)).json.id);

  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
  let first: Record<string, number> | null = null;
  let prev: Record<string, number> | null = null;
  const fds = () => readdirSync("/proc/self/fd").length;
  console.log("round  objects   heap MB  RSS MB  fds  delivered  grown types (vs round 1 | vs previous)");
  for (let round = 0; round <= ROUNDS; round++) {
    let sent = 0;
    await Promise.all(
      Array.from({ length: WORKERS }, async () => {
        while (sent < PER_ROUND) {
          sent++;
          await op();
        }
      }),
    );
    if (process.argv.includes("--phases")) {
      // Wait out the requests' own work, then measure before the posts come due (the delivery phase is measured below).
      await Bun.sleep(1000);
      for (let i = 0; i < 3; i++) Bun.gc(true);
      const h = heapStats();
      console.log(`  after requests: objects ${h.objectCount}, heap ${(h.heapSize / 1048576).toFixed(1)} MB, RSS ${rss().toFixed(1)} MB`);
    }
    // Posts scheduled this round come due after the jump; give the dispatcher a moment to deliver them.
    if (!process.argv.includes("--no-due")) offset += 6 * 60_000;
    for (const [id, at] of scheduled) if (at <= clock.now()) scheduled.delete(id);
    await Bun.sleep(3000);
    for (let i = 0; i < 3; i++) Bun.gc(true);
    await Bun.sleep(50);
    Bun.gc(true);
    const s = heapStats();
    const counts = s.objectTypeCounts as Record<string, number>;
    const delivered = readWebhookLog(receiverLog).filter((d) => d.event === "post.publish").length;
    let grown = "";
    if (first && prev) {
      const base0 = first;
      const p = prev;
      grown = Object.entries(counts)
        .map(([t, n]) => [t, n - (base0[t] ?? 0), n - (p[t] ?? 0)] as const)
        .filter(([, d0]) => d0 > 50)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([t, d0, d1]) => `${t} +${d0}|${d1 >= 0 ? "+" : ""}${d1}`)
        .join(", ");
    }
    console.log(
      `${String(round).padStart(5)}  ${String(s.objectCount).padStart(8)}  ${(s.heapSize / 1048576).toFixed(1).padStart(7)}  ${rss().toFixed(1).padStart(6)}  ${String(fds()).padStart(3)}  ${String(delivered).padStart(9)}  ${grown}`,
    );
    if (round === 0) first = { ...counts };
    prev = { ...counts };
  }
  console.log("statuses", JSON.stringify(Object.fromEntries([...statuses].sort())));
  if (process.argv.includes("--types") && prev) {
    const last = prev;
    console.log("object types, last round (count, change since round 0):");
    for (const [t, n] of Object.entries(last).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${t.padEnd(40)} ${String(n).padStart(8)} ${n - (first?.[t] ?? 0)}`);
  }
  await server.stop(true);
  await jobs.stop();
  await dispatcher.stop();
  await deps.store.close();
} finally {
  receiver.kill("SIGTERM");
  await receiver.exited;
  rmSync(tmp, { recursive: true, force: true });
}
