/**
 * Issue 2 bench: wrk against the built binary's authenticated GET /api/v1/health and against a bare Bun.serve "ok" in
 * the same run; prints both, their ratio (goal ≥ 0.70), the binary's start-to-ready time (goal < 150 ms) and idle RSS
 * (goal < 80 MB). Needs `npm run build` first and wrk (apt-get install wrk). Usage: bun bench/health.ts [--json]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, run, waitReady } from "./lib/process";

// BENCH_BIN: another build to compare in the same session (e.g. main's), default this checkout's.
const BIN = resolve(process.env.BENCH_BIN ?? "dist/seedcast");
const DURATION = process.env.BENCH_DURATION ?? "10s";
const json = process.argv.includes("--json");

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function wrk(url: string, headers: string[] = []): Promise<number> {
  const args = ["wrk", "-t2", "-c50", `-d${DURATION}`, ...headers.flatMap((h) => ["-H", h]), url];
  const out = await run(args, {});
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`wrk saw ${non2xx} non-2xx answers from ${url}`);
  return Number(rps);
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-"));
const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "100000000" };
try {
  const account = JSON.parse(await run([BIN, "account", "create", "--name", "Bench", "--email", "bench@example.test", "--password", "bench-password", "--json"], env));
  const key = JSON.parse(await run([BIN, "keys", "mint", "--account", account.accountId, "--name", "bench", "--groups", "read", "--json"], env)).key as string;

  const port = freePort();
  const started = performance.now();
  const app = Bun.spawn([BIN, "serve"], { env: { ...process.env, ...env, PORT: String(port) }, cwd: "/", stdout: "ignore", stderr: "inherit" });
  await waitReady(`http://127.0.0.1:${port}/livez`);
  const readyMs = performance.now() - started;
  await Bun.sleep(1000);
  const idleRss = rssMb(app.pid);

  const barePort = freePort();
  const bare = Bun.spawn([process.execPath, "bench/bare-server.ts"], { env: { ...process.env, PORT: String(barePort) }, stdout: "ignore" });
  await waitReady(`http://127.0.0.1:${barePort}/`);

  const bareRps = await wrk(`http://127.0.0.1:${barePort}/`);
  const appRps = await wrk(`http://127.0.0.1:${port}/api/v1/health`, [`Authorization: Bearer ${key}`]);
  const loadedRss = rssMb(app.pid);
  app.kill("SIGTERM");
  bare.kill("SIGTERM");
  await Promise.all([app.exited, bare.exited]);

  const figures = {
    healthRps: Math.round(appRps),
    bareRps: Math.round(bareRps),
    ratio: Number((appRps / bareRps).toFixed(3)),
    startToReadyMs: Math.round(readyMs),
    idleRssMb: Number(idleRss.toFixed(1)),
    rssAfterLoadMb: Number(loadedRss.toFixed(1)),
  };
  if (json) {
    // One line for bench/run: the health rate carries its ceiling (the bare server) measured in the same run.
    console.log(
      JSON.stringify({
        bench: "health",
        figures: [
          { label: "authenticated GET /api/v1/health", value: figures.healthRps, unit: "req/s", goal: "≥ 0.70 × ceiling", ok: figures.ratio >= 0.7, ceiling: figures.bareRps },
          { label: "bare Bun.serve (ceiling)", value: figures.bareRps, unit: "req/s", goal: "", ok: null },
          { label: "start to ready", value: figures.startToReadyMs, unit: "ms", goal: "< 150", ok: figures.startToReadyMs < 150 },
          { label: "idle RSS", value: figures.idleRssMb, unit: "MB", goal: "< 80", ok: figures.idleRssMb < 80 },
          { label: "RSS after load", value: figures.rssAfterLoadMb, unit: "MB", goal: "", ok: null },
        ],
      }),
    );
  }
  else {
    console.log(`authenticated GET /api/v1/health : ${figures.healthRps} req/s`);
    console.log(`bare Bun.serve "ok" (ceiling)     : ${figures.bareRps} req/s`);
    console.log(`ratio                            : ${figures.ratio} (goal ≥ 0.70)`);
    console.log(`start to ready                   : ${figures.startToReadyMs} ms (goal < 150 ms)`);
    console.log(`idle RSS                         : ${figures.idleRssMb} MB (goal < 80 MB)`);
    console.log(`RSS after load                   : ${figures.rssAfterLoadMb} MB`);
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
