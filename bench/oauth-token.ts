/**
 * Issue 11 bench: the OAuth token endpoint under 20 concurrent clients. Each client holds its own grant (obtained
 * through the real flow: registration, login, consent, code + PKCE) and refreshes it in a loop, rotating its refresh
 * token every time, the heaviest thing the endpoint does (a lookup, a spent-token write and two new tokens in one
 * transaction). Prints p50/p99/max latency and throughput, the p99's ratio to the goal (< 20 ms), and, measured in the
 * same run at the same concurrency, GET /livez's p99 as the floor any endpoint pays. Both are measured after a warm-up
 * (the token endpoint's: WARM_UP_MS of the same refreshes, not counted).
 * Runs dist/seedcast when built, else the sources. Usage: bun bench/oauth-token.ts [--json]; BENCH_DURATION_MS.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { FormBrowser, locationOf, parseForms } from "../test/helpers/oauth";
import { freePort, run, waitReady } from "./lib/process";

const ROOT = resolve(import.meta.dir, "..");
const BIN = resolve(ROOT, "dist/seedcast");
const COMMAND = existsSync(BIN) ? [BIN] : [process.execPath, resolve(ROOT, "src/main.ts")];
const CLIENTS = 20;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const GOAL_P99_MS = 20;
const WARM_UP_MS = 1000;
const json = process.argv.includes("--json");
const EMAIL = "bench@example.test";
const PASSWORD = "bench-password";
const REDIRECT = "http://127.0.0.1:1/callback";

function s256(verifier: string): string {
  return new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Signs in once, then consents `count` times: answers one refresh token per grant. */
async function obtainRefreshTokens(base: string, clientId: string, count: number): Promise<string[]> {
  const browser = new FormBrowser(base);
  const login = parseForms(await (await browser.get("/login")).text()).find((f) => f.action === "/login");
  if (!login) throw new Error("no login form");
  const signedIn = await browser.submit(login, { extra: [["email", EMAIL], ["password", PASSWORD]] });
  if (signedIn.status !== 303) throw new Error(`login answered ${signedIn.status}`);
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const verifier = `bench-verifier-${i}-${crypto.randomUUID()}`;
    const url = new URL(`${base}/oauth/authorize`);
    for (const [k, v] of Object.entries({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: s256(verifier), code_challenge_method: "S256", state: String(i) }))
      url.searchParams.set(k, v);
    const consent = parseForms(await (await browser.get(url.href)).text()).find((f) => f.method === "POST" && f.action === "/oauth/authorize");
    if (!consent) throw new Error("no consent form");
    const answer = await browser.submit(consent, { button: ["decision", "allow"] });
    const code = new URL(locationOf(answer, base)).searchParams.get("code") ?? "";
    const exchanged = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code, redirect_uri: REDIRECT, code_verifier: verifier }),
    });
    const body = (await exchanged.json()) as { refresh_token?: string };
    if (!body.refresh_token) throw new Error(`code exchange failed: ${JSON.stringify(body)}`);
    tokens.push(body.refresh_token);
  }
  return tokens;
}

/** `CLIENTS` loops calling `once` until the deadline; answers every latency in ms and the failures. */
async function load(once: (worker: number) => Promise<boolean>, durationMs = DURATION_MS): Promise<{ latencies: number[]; failures: number; seconds: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, worker) => {
      while (performance.now() < deadline) {
        const t = performance.now();
        const ok = await once(worker);
        latencies.push(performance.now() - t);
        if (!ok) failures++;
      }
    }),
  );
  return { latencies: latencies.sort((a, b) => a - b), failures, seconds: (performance.now() - started) / 1000 };
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-oauth-"));
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const env = { DATA_DIR: dataDir, LOG_LEVEL: "warn", HOST: "127.0.0.1", PORT: String(port), BASE_URL: base };
let server: ReturnType<typeof Bun.spawn> | null = null;
try {
  await run([...COMMAND, "account", "create", "--name", "Bench", "--email", EMAIL, "--password", PASSWORD, "--json"], env);
  server = Bun.spawn([...COMMAND, "serve"], { env: { ...process.env, ...env }, cwd: ROOT, stdout: "ignore", stderr: "inherit" });
  await waitReady(`${base}/livez`, 20_000);
  const registered = await fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "bench", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const refreshTokens = await obtainRefreshTokens(base, clientId, CLIENTS);

  // Warm-up, then the floor (GET /livez) and the token endpoint at the same concurrency.
  await Promise.all(Array.from({ length: CLIENTS * 5 }, () => fetch(`${base}/livez`).then((r) => r.arrayBuffer())));
  const floor = await load(async () => (await fetch(`${base}/livez`).then(async (r) => (await r.arrayBuffer(), r.ok))));
  const refresh = async (worker: number): Promise<boolean> => {
    const response = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=refresh_token&client_id=${encodeURIComponent(clientId)}&refresh_token=${refreshTokens[worker]}`,
    });
    const body = (await response.json()) as { refresh_token?: string };
    if (!response.ok || !body.refresh_token) return false;
    refreshTokens[worker] = body.refresh_token;
    return true;
  };
  // The token endpoint warms up too (JIT, SQLite's caches, the server's first writes) before it is measured.
  await load(refresh, WARM_UP_MS);
  const token = await load(refresh);

  const p99 = percentile(token.latencies, 99);
  const figures = {
    requests: token.latencies.length,
    failures: token.failures,
    rps: Math.round(token.latencies.length / token.seconds),
    p50: Number(percentile(token.latencies, 50).toFixed(2)),
    p99: Number(p99.toFixed(2)),
    max: Number((token.latencies.at(-1) ?? Number.NaN).toFixed(2)),
    ratioToGoal: Number((p99 / GOAL_P99_MS).toFixed(3)),
    floorP99: Number(percentile(floor.latencies, 99).toFixed(2)),
  };
  if (json) {
    console.log(
      JSON.stringify({
        bench: "oauth-token",
        figures: [
          { label: `POST /oauth/token refresh p99 (${CLIENTS} clients)`, value: figures.p99, unit: "ms", goal: `< ${GOAL_P99_MS}`, ok: figures.p99 < GOAL_P99_MS && figures.failures === 0, ceiling: GOAL_P99_MS },
          { label: "POST /oauth/token refresh p50", value: figures.p50, unit: "ms", goal: "", ok: null },
          { label: "POST /oauth/token refresh throughput", value: figures.rps, unit: "req/s", goal: "", ok: null },
          { label: `GET /livez p99 (${CLIENTS} clients, floor)`, value: figures.floorP99, unit: "ms", goal: "", ok: null },
        ],
      }),
    );
  } else {
    console.log(`POST /oauth/token (refresh, rotating), ${CLIENTS} concurrent clients, ${DURATION_MS} ms`);
    console.log(`  requests ${figures.requests}, failures ${figures.failures}, ${figures.rps} req/s`);
    console.log(`  p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms`);
    console.log(`  p99 / goal (${GOAL_P99_MS} ms) = ${figures.ratioToGoal} ${figures.p99 < GOAL_P99_MS ? "(met)" : "(MISSED)"}`);
    console.log(`GET /livez p99 at the same concurrency (floor): ${figures.floorP99} ms`);
  }
} finally {
  server?.kill("SIGTERM");
  await server?.exited;
  rmSync(dataDir, { recursive: true, force: true });
}
