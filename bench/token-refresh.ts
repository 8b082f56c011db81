/**
 * Issue 26 bench, token care at scale: 10,000 X connections (each its own sign-in at the X stand-in,
 * test/peers/x/server.ts, whose token endpoint rotates refresh tokens and refuses a spent one) whose access tokens
 * expire within 7 days, then the daily refresh job (src/publishing/sign-in/refresh.ts `refreshExpiringTokens`) run
 * once in this process on SQLite, reaching the stand-in through PLATFORM_ORIGIN_OVERRIDES. A small counting proxy in
 * front of the stand-in records the refresh token of every token-endpoint request, so "each refreshed exactly once"
 * is counted from the wire: every stored refresh token presented once, no other token presented, none refused.
 * Then every connection is read back: its stored refresh token is a new one and its expiry changed (X's new access
 * tokens last 2 h), and the stand-in holds exactly as many live refresh tokens as there are connections. Prints: refreshed, failed, presentations per refresh token, wire refusals, total time, refreshes/s.
 * `--latency-ms L` makes the proxy hold every token-endpoint answer L ms before passing it on, so the job's time at a
 * real endpoint (X's answers in roughly 100–300 ms) is measured rather than estimated; `--concurrency C` sets the job's
 * pool (TOKEN_REFRESH_CONCURRENCY, default 8).
 * Usage: bun bench/token-refresh.ts [--connections N] [--latency-ms L] [--concurrency C] [--json]
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { TOKEN_REFRESH_CONCURRENCY_DEFAULT, loadConfig } from "../src/config";
import { connections } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { REFRESH_AHEAD_MS, refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { sealJson } from "../src/store/sealing";
import { startXStandIn } from "../test/peers/x/server";

const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CONNECTIONS = argOf("connections", 10_000);
const LATENCY_MS = argOf("latency-ms", 0);
const CONCURRENCY = argOf("concurrency", TOKEN_REFRESH_CONCURRENCY_DEFAULT);
const json = args.includes("--json");
const HOUR = 60 * 60 * 1000;
const CALLBACK = "http://localhost/dashboard/connections/callback/x";

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-refresh-"));
const x = startXStandIn({ redirectUri: CALLBACK });
/** Refresh tokens presented at the token endpoint, with how often; and the answers' statuses. */
const presented = new Map<string, number>();
const statuses = new Map<number, number>();
const proxy = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const url = new URL(req.url);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
    const isToken = url.pathname === "/2/oauth2/token";
    if (isToken && body) {
      const form = new URLSearchParams(new TextDecoder().decode(body));
      if (form.get("grant_type") === "refresh_token") {
        const t = form.get("refresh_token") ?? "";
        presented.set(t, (presented.get(t) ?? 0) + 1);
      }
    }
    const res = await fetch(`${x.origin}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body, redirect: "manual" });
    if (isToken) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    // The simulated endpoint latency: the answer reaches Seedcast L ms later.
    if (isToken && LATENCY_MS > 0) await Bun.sleep(LATENCY_MS);
    return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  },
});
const proxyOrigin = `http://127.0.0.1:${proxy.port}`;
const env = {
  DATA_DIR: dataDir,
  BASE_URL: "http://localhost",
  PLATFORM_ORIGIN_OVERRIDES: `api.x.com=${proxyOrigin},x.com=${proxyOrigin}`,
  ALLOW_PRIVATE_HOSTS: "127.0.0.1",
  X_CLIENT_ID: x.clientId,
  X_CLIENT_SECRET: x.clientSecret,
  LOG_LEVEL: "silent",
  TOKEN_REFRESH_CONCURRENCY: String(CONCURRENCY),
};

/** A person allows Seedcast at the stand-in's authorization page; answers the token endpoint's pair. */
async function signIn(): Promise<{ access_token: string; refresh_token: string }> {
  const verifier = randomBytes(32).toString("base64url");
  const back = await fetch(`${x.origin}/i/oauth2/authorize/decision`, {
    method: "POST",
    body: new URLSearchParams({ redirect_uri: CALLBACK, state: "s", code_challenge: createHash("sha256").update(verifier).digest("base64url"), scope: "tweet.read tweet.write users.read media.write offline.access", decision: "allow" }),
    redirect: "manual",
  });
  const code = new URL(back.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const res = await fetch(`${x.origin}/2/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, code_verifier: verifier }),
  });
  if (res.status !== 200) throw new Error(`sign-in refused: ${res.status} ${await res.text()}`);
  return (await res.json()) as { access_token: string; refresh_token: string };
}

try {
  const deps = await bootstrap(loadConfig(env), { log: silentLogger });
  const { accountId } = await createAccount(deps, { name: "Bench", email: "bench-refresh@example.test", password: "correct horse battery", credits: 0 });
  const setupStart = performance.now();
  const pairs: { access_token: string; refresh_token: string }[] = [];
  while (pairs.length < CONNECTIONS) pairs.push(...(await Promise.all(Array.from({ length: Math.min(50, CONNECTIONS - pairs.length) }, signIn))));
  const now = deps.clock.now();
  const initial = new Map<string, string>(); // connection id → its refresh token before the job
  const expiresBefore = new Map<string, number>();
  await deps.store.write(async (tx) => {
    for (let i = 0; i < CONNECTIONS; i++) {
      const id = newId();
      // Spread from 1 h to just under 7 days ahead: all within the job's horizon.
      const expiresAt = now + HOUR + Math.floor((i * (REFRESH_AHEAD_MS - 2 * HOUR)) / CONNECTIONS);
      initial.set(id, pairs[i]!.refresh_token);
      expiresBefore.set(id, expiresAt);
      await tx
        .insert(connections)
        .values({
          id, accountId, platform: "x", label: `@bench${i}`, endpoint: "https://api.x.com",
          credentialsSealed: sealJson(deps.instanceSecret, id, { token: pairs[i]!.access_token, refreshToken: pairs[i]!.refresh_token }),
          meta: JSON.stringify({ providerAccountId: x.user.id }), readyToPost: true, checkedAt: now, tokenExpiresAt: expiresAt, createdAt: now, updatedAt: now,
        })
        .run();
    }
  });
  const setupMs = Math.round(performance.now() - setupStart);

  const t0 = performance.now();
  const result = await refreshExpiringTokens(deps);
  const totalMs = performance.now() - t0;

  // From the wire: each stored refresh token presented once, nothing else presented.
  const initialTokens = new Set(initial.values());
  let presentedOnce = 0;
  let presentedMoreThanOnce = 0;
  let neverPresented = 0;
  for (const t of initialTokens) {
    const n = presented.get(t) ?? 0;
    if (n === 1) presentedOnce++;
    else if (n > 1) presentedMoreThanOnce++;
    else neverPresented++;
  }
  const otherPresented = [...presented.keys()].filter((t) => !initialTokens.has(t)).length;
  // From the database: a new refresh token stored, still live at the stand-in, the expiry moved.
  let rotatedAndStored = 0;
  let notReady = 0;
  const rows = await deps.store.db.select().from(connections).all();
  for (const row of rows) {
    if (!initial.has(row.id)) continue;
    if (!row.readyToPost) notReady++;
    const stored = openConnection(deps, row).credentials;
    if (stored.refreshToken && stored.refreshToken !== initial.get(row.id) && row.tokenExpiresAt !== expiresBefore.get(row.id)) rotatedAndStored++;
  }
  await deps.store.close();

  const refreshedOnce = presentedOnce === CONNECTIONS && otherPresented === 0 && rotatedAndStored === CONNECTIONS;
  const summary = {
    bench: "token-refresh",
    network: "x",
    connections: CONNECTIONS,
    latencyMs: LATENCY_MS,
    concurrency: CONCURRENCY,
    loadAverage: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
    setupMs,
    job: result,
    wire: {
      refreshRequests: [...presented.values()].reduce((a, b) => a + b, 0),
      presentedOnce,
      presentedMoreThanOnce,
      neverPresented,
      otherTokensPresented: otherPresented,
      statuses: Object.fromEntries(statuses),
    },
    stored: { rotatedAndStored, notReady, liveAtStandIn: x.liveRefreshTokens() },
    totalMs: Math.round(totalMs),
    perSecond: Math.round((result.refreshed / totalMs) * 1000),
    goalsMet: result.refreshed === CONNECTIONS && result.failed === 0 && refreshedOnce,
    // The rows bench/run.ts tables.
    figures: [
      { label: "refreshed", value: result.refreshed, unit: "", goal: `${CONNECTIONS}`, ok: result.refreshed === CONNECTIONS },
      { label: "each refresh token presented once", value: presentedOnce, unit: "", goal: `${CONNECTIONS}, no other`, ok: refreshedOnce },
      { label: "failed", value: result.failed, unit: "", goal: "0", ok: result.failed === 0 },
      { label: "job time", value: Math.round(totalMs), unit: "ms", goal: "", ok: null },
      { label: "rate", value: Math.round((result.refreshed / totalMs) * 1000), unit: "/s", goal: "", ok: null },
    ],
  };
  console.log(json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
} finally {
  proxy.stop(true);
  await x.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
