/**
 * The MCP bench: /mcp against the SDK's own handler answering a constant, wrk against the built binary in one run.
 * `tools/call get_credits` through /mcp (revision 2026-07-28, and a 2025-era client's stateless form), and the same
 * call to the SDK's floor (bench/mcp-sdk-floor.ts: the SDK's handler alone on a bare Bun.serve, one tool answering a
 * constant, no credential, database, rate limit or schemas). /mcp is built on that handler, so the floor is its
 * ceiling: the goal is /mcp ≥ 0.6 × the floor of the same era, in the same run (what Seedcast adds above the SDK,
 * the OAuth check, the group gate, the rate limit, the argument check, the service and its database read, may cost
 * at most 40 % of the rate). `GET /api/v1/credits` with an API key is printed beside it for scale (no goal).
 * Also the server's CPU per request of each (from /proc: steadier than rates on a shared machine, where wrk and other
 * work compete for the same cores). Needs `npm run build` first and wrk (apt-get install wrk).
 * Usage: bun bench/mcp.ts [--json]   (BENCH_DURATION, default 10s per measurement)
 *
 * The access token comes from the OAuth service (a grant made on the data dir before the server starts): the bench
 * measures /mcp, not the sign-in, which test/mcp-oauth.test.ts and scripts/mcp-conformance.sh drive for real.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { registerClient } from "../src/modules/oauth/clients";
import { createGrant } from "../src/modules/oauth/service";
import { freePort, run, waitReady } from "./lib/process";

const BIN = resolve("dist/seedcast");
const DURATION = process.env.BENCH_DURATION ?? "10s";
/** /mcp ÷ the SDK floor of the same era, in the same run. */
const GOAL = 0.6;
const json = process.argv.includes("--json");
/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these. */
const CLOCK_TICKS = 100;

interface Load {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

/** One request as wrk's Lua script sends it. */
function wrkScript(load: Load, dir: string, name: string): string {
  const lua = [
    `wrk.method = ${JSON.stringify(load.method)}`,
    ...Object.entries(load.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
    ...(load.body !== undefined ? [`wrk.body = ${JSON.stringify(load.body)}`] : []),
  ].join("\n");
  const file = join(dir, `${name}.lua`);
  writeFileSync(file, `${lua}\n`);
  return file;
}

/** Sends the request once and checks the answer carries the balance: a bench of refusals would measure nothing. */
async function check(url: string, load: Load): Promise<void> {
  const res = await fetch(url, { method: load.method, headers: load.headers, body: load.body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"balance":100')) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
}

/** CPU time (user + system, ms) the process `pid` has used so far, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** The rate wrk reached, and the server's CPU per answered request (µs): the figure a noisy machine disturbs least. */
async function wrk(url: string, script: string, serverPid: number): Promise<{ rps: number; cpuUs: number }> {
  const before = cpuMs(serverPid);
  const out = await run(["wrk", "-t2", "-c50", `-d${DURATION}`, "-s", script, url], {});
  const used = cpuMs(serverPid) - before;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`wrk saw ${non2xx} non-2xx answers from ${url}`);
  return { rps: Number(rps), cpuUs: (used * 1000) / requests };
}

/** Waits for the floor server to listen, then checks its answer like the others'. */
async function waitFloor(url: string, load: Load): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    try {
      await check(url, load);
      return;
    } catch (error) {
      if (Date.now() > end) throw error;
      await Bun.sleep(20);
    }
  }
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-mcp-"));
const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "100000000" };
let app: ReturnType<typeof Bun.spawn> | null = null;
let floor: ReturnType<typeof Bun.spawn> | null = null;
try {
  const account = JSON.parse(await run([BIN, "account", "create", "--name", "Bench", "--email", "bench@example.test", "--password", "bench-password", "--json"], env));
  const key = JSON.parse(await run([BIN, "keys", "mint", "--account", account.accountId, "--name", "bench", "--groups", "read", "--json"], env)).key as string;
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;

  // The grant, made with the OAuth service on the same data dir (same instance secret) before the server starts.
  const deps = await bootstrap(loadConfig({ ...env, BASE_URL: base }), { log: silentLogger });
  const clientId = (await registerClient(deps, { client_name: "bench", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" })).client_id;
  const token = (await createGrant(deps, { clientId, accountId: account.accountId, userId: account.userId, scopes: ["read"] })).accessToken;
  await deps.store.close();

  app = Bun.spawn([BIN, "serve"], { env: { ...process.env, ...env, PORT: String(port), BASE_URL: base }, cwd: "/", stdout: "ignore", stderr: "inherit" });
  await waitReady(`${base}/livez`);

  const rest: Load = { method: "GET", headers: { authorization: `Bearer ${key}` } };
  const mcpHeaders = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  // What the v2 SDK client sends for a call on revision 2026-07-28 (the envelope in _meta, the routing headers).
  const modern: Load = {
    method: "POST",
    headers: { ...mcpHeaders, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "get_credits" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        name: "get_credits",
        arguments: {},
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  };
  // A 2025-era client after its initialize: served statelessly, the call needs nothing else.
  const legacy: Load = {
    method: "POST",
    headers: { ...mcpHeaders, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_credits", arguments: {} } }),
  };
  const floorPort = freePort();
  const floorUrl = `http://127.0.0.1:${floorPort}/mcp`;
  floor = Bun.spawn([process.execPath, "bench/mcp-sdk-floor.ts"], { env: { ...process.env, PORT: String(floorPort) }, stdout: "ignore", stderr: "inherit" });
  for (const [url, load] of [[`${base}/api/v1/credits`, rest], [`${base}/mcp`, modern], [`${base}/mcp`, legacy]] as const) await check(url, load);
  // The floor has no credential to check: the same requests without one.
  const withoutCredential = ({ headers: { authorization: _token, ...headers }, ...load }: Load): Load => ({ ...load, headers });
  const [floorModern, floorLegacy] = [withoutCredential(modern), withoutCredential(legacy)];
  await waitFloor(floorUrl, floorModern);
  await check(floorUrl, floorLegacy);

  const pid = app.pid;
  const restRun = await wrk(`${base}/api/v1/credits`, wrkScript(rest, dataDir, "rest"), pid);
  const modernRun = await wrk(`${base}/mcp`, wrkScript(modern, dataDir, "modern"), pid);
  const legacyRun = await wrk(`${base}/mcp`, wrkScript(legacy, dataDir, "legacy"), pid);
  const floorModernRun = await wrk(floorUrl, wrkScript(floorModern, dataDir, "floor-modern"), floor.pid);
  const floorLegacyRun = await wrk(floorUrl, wrkScript(floorLegacy, dataDir, "floor-legacy"), floor.pid);
  const [restRps, modernRps, legacyRps] = [restRun.rps, modernRun.rps, legacyRun.rps];

  const [floorModernRps, floorLegacyRps] = [floorModernRun.rps, floorLegacyRun.rps];

  /** `value` ÷ `of`, to three places. */
  const ratio = (value: number, of: number) => Number((value / of).toFixed(3));
  const us = (value: number) => Math.round(value);
  const rounded = Math.round;
  if (json) {
    // One line for bench/run: each /mcp rate carries its ceiling, the SDK floor of the same era in the same run.
    console.log(
      JSON.stringify({
        bench: "mcp",
        figures: [
          { label: "tools/call get_credits via /mcp (2026-07-28)", value: rounded(modernRps), unit: "req/s", goal: `≥ ${GOAL} × ceiling (SDK floor)`, ok: ratio(modernRps, floorModernRps) >= GOAL, ceiling: rounded(floorModernRps) },
          { label: "tools/call get_credits via /mcp (2025 stateless)", value: rounded(legacyRps), unit: "req/s", goal: `≥ ${GOAL} × ceiling (SDK floor)`, ok: ratio(legacyRps, floorLegacyRps) >= GOAL, ceiling: rounded(floorLegacyRps) },
          { label: "the SDK's handler alone, a constant answer (2026-07-28)", value: rounded(floorModernRps), unit: "req/s", goal: "", ok: null },
          { label: "the SDK's handler alone, a constant answer (2025 stateless)", value: rounded(floorLegacyRps), unit: "req/s", goal: "", ok: null },
          { label: "GET /api/v1/credits (REST, for scale)", value: rounded(restRps), unit: "req/s", goal: "", ok: null },
          { label: "server CPU per tools/call via /mcp (2026-07-28)", value: us(modernRun.cpuUs), unit: "µs", goal: "", ok: null, ceiling: us(floorModernRun.cpuUs) },
          { label: "server CPU per tools/call via /mcp (2025 stateless)", value: us(legacyRun.cpuUs), unit: "µs", goal: "", ok: null, ceiling: us(floorLegacyRun.cpuUs) },
          { label: "server CPU per GET /api/v1/credits (REST, for scale)", value: us(restRun.cpuUs), unit: "µs", goal: "", ok: null },
        ],
      }),
    );
  } else {
    const verdict = (value: number, floorRps: number) => (ratio(value, floorRps) >= GOAL ? "met" : "MISSED");
    console.log(`the SDK's handler alone, constant answer, 2026-07-28: ${rounded(floorModernRps)} req/s, ${us(floorModernRun.cpuUs)} µs CPU per call`);
    console.log(`the SDK's handler alone, constant answer, 2025      : ${rounded(floorLegacyRps)} req/s, ${us(floorLegacyRun.cpuUs)} µs CPU per call`);
    console.log(
      `tools/call get_credits via /mcp, 2026-07-28        : ${rounded(modernRps)} req/s, ${us(modernRun.cpuUs)} µs CPU = ` +
        `${ratio(modernRps, floorModernRps)} × the SDK floor (goal ≥ ${GOAL}: ${verdict(modernRps, floorModernRps)})`,
    );
    console.log(
      `tools/call get_credits via /mcp, 2025 stateless    : ${rounded(legacyRps)} req/s, ${us(legacyRun.cpuUs)} µs CPU = ` +
        `${ratio(legacyRps, floorLegacyRps)} × the SDK floor (goal ≥ ${GOAL}: ${verdict(legacyRps, floorLegacyRps)})`,
    );
    console.log(
      `GET /api/v1/credits (REST, for scale)              : ${rounded(restRps)} req/s, ${us(restRun.cpuUs)} µs CPU; ` +
        `/mcp is ${ratio(modernRps, restRps)} (2026-07-28) and ${ratio(legacyRps, restRps)} (2025) × REST`,
    );
  }
} finally {
  for (const child of [app, floor]) {
    if (!child) continue;
    child.kill("SIGTERM");
    await child.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}
