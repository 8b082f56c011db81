/**
 * Issue 11 bench: the MCP endpoint against the REST API for the same read, wrk against the built binary in one run:
 * `tools/call get_credits` through /mcp (revision 2026-07-28, and a 2025-era client's stateless form) and
 * `GET /api/v1/credits` with an API key. Prints each rate and MCP ÷ REST (goal ≥ 0.5: the protocol layer may cost at
 * most half of the REST rate). Needs `npm run build` first and wrk (apt-get install wrk).
 * Usage: bun bench/mcp.ts [--json]   (BENCH_DURATION, default 10s per measurement)
 *
 * The access token comes from the OAuth service (a grant made on the data dir before the server starts): the bench
 * measures /mcp, not the sign-in, which test/mcp-oauth.test.ts and scripts/mcp-conformance.sh drive for real.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { registerClient } from "../src/modules/oauth/clients";
import { createGrant } from "../src/modules/oauth/service";

const BIN = resolve("dist/seedcast");
const DURATION = process.env.BENCH_DURATION ?? "10s";
const GOAL = 0.5;
const json = process.argv.includes("--json");

function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
}

async function run(cmd: string[], env: Record<string, string>): Promise<string> {
  const p = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", cwd: "/" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed: ${await new Response(p.stderr).text()}`);
  return out;
}

async function waitReady(url: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(2);
  }
  throw new Error(`${url} never became ready`);
}

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

async function wrk(url: string, script: string): Promise<number> {
  const out = await run(["wrk", "-t2", "-c50", `-d${DURATION}`, "-s", script, url], {});
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1];
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  if (non2xx) throw new Error(`wrk saw ${non2xx} non-2xx answers from ${url}`);
  return Number(rps);
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-mcp-"));
const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn", HOST: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "100000000" };
let app: ReturnType<typeof Bun.spawn> | null = null;
try {
  const account = JSON.parse(await run([BIN, "account", "create", "--name", "Bench", "--email", "bench@example.test", "--password", "bench-password", "--json"], env));
  const key = JSON.parse(await run([BIN, "keys", "mint", "--account", account.accountId, "--name", "bench", "--groups", "read", "--json"], env)).key as string;
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;

  // The grant, made with the OAuth service on the same data dir (same instance secret) before the server starts.
  const deps = bootstrap(loadConfig({ ...env, BASE_URL: base }), { log: silentLogger });
  const clientId = registerClient(deps, { client_name: "bench", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }).client_id;
  const token = createGrant(deps, { clientId, accountId: account.accountId, userId: account.userId, scopes: ["read"] }).accessToken;
  deps.sqlite.close();

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
  for (const [url, load] of [[`${base}/api/v1/credits`, rest], [`${base}/mcp`, modern], [`${base}/mcp`, legacy]] as const) await check(url, load);

  const restRps = await wrk(`${base}/api/v1/credits`, wrkScript(rest, dataDir, "rest"));
  const modernRps = await wrk(`${base}/mcp`, wrkScript(modern, dataDir, "modern"));
  const legacyRps = await wrk(`${base}/mcp`, wrkScript(legacy, dataDir, "legacy"));

  const ratio = (value: number) => Number((value / restRps).toFixed(3));
  if (json) {
    // One line for bench/run: each MCP rate carries its ceiling, the REST rate of the same read in the same run.
    console.log(
      JSON.stringify({
        bench: "mcp",
        figures: [
          { label: "tools/call get_credits via /mcp (2026-07-28)", value: Math.round(modernRps), unit: "req/s", goal: `≥ ${GOAL} × ceiling`, ok: ratio(modernRps) >= GOAL, ceiling: Math.round(restRps) },
          { label: "tools/call get_credits via /mcp (2025 stateless)", value: Math.round(legacyRps), unit: "req/s", goal: `≥ ${GOAL} × ceiling`, ok: ratio(legacyRps) >= GOAL, ceiling: Math.round(restRps) },
          { label: "GET /api/v1/credits (ceiling)", value: Math.round(restRps), unit: "req/s", goal: "", ok: null },
        ],
      }),
    );
  } else {
    console.log(`GET /api/v1/credits (REST, the ceiling)            : ${Math.round(restRps)} req/s`);
    console.log(`tools/call get_credits via /mcp, 2026-07-28        : ${Math.round(modernRps)} req/s = ${ratio(modernRps)} × REST (goal ≥ ${GOAL})`);
    console.log(`tools/call get_credits via /mcp, 2025 stateless    : ${Math.round(legacyRps)} req/s = ${ratio(legacyRps)} × REST (goal ≥ ${GOAL})`);
  }
} finally {
  if (app) {
    app.kill("SIGTERM");
    await app.exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}
