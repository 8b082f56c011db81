/**
 * Issue 26 bench, the six sign-in networks: 1,000 posts spread evenly over X, LinkedIn, Pinterest, Facebook Pages,
 * Instagram and Threads, all due within 10 s, delivered by `seedcast serve` (a child process, from source, SQLite) to
 * the stand-ins (test/peers/<network>) running in this process, reached through PLATFORM_ORIGIN_OVERRIDES. The
 * connections are stored as a sign-in leaves them (tokens got from each stand-in's own sign-in or issued by it, as
 * test/crash-safety-x.test.ts, crash-safety-linkedin-pinterest.test.ts and crash-safety-meta.test.ts do). Each post is
 * a caption; Pinterest and Instagram posts carry one image (Instagram fetches it from the child server's BASE_URL,
 * 127.0.0.1, allowed by ALLOW_PRIVATE_HOSTS as those tests do).
 *
 * Receive time: the Meta stand-ins record no store time, so this process watches every stand-in's list of stored
 * posts every 10 ms and stamps each new entry when it first sees it (the same for all six: resolution ≤ 10 ms plus
 * this event loop's lag). Lateness = that stamp − the post's scheduled time. Prints per network and overall:
 * delivered, lateness percentiles, duplicates (a caption stored more than once), the target states, violations, and
 * p99 ÷ the 2 s goal. Goals: all delivered, p99 lateness < 2 s, 0 duplicates.
 * NB: the stand-ins keep their default behaviour (Instagram's and Threads' containers answer IN_PROGRESS on the first
 * status look, so Seedcast's container polling looks again after its first wait, 300 ms), and do not rate-limit as the
 * real networks do. `--containers-ready` makes those containers FINISHED on the first look, to show the rest of the path.
 * Usage: bun bench/networks-six.ts [--posts N] [--window-ms W] [--containers-ready] [--json]
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { isSqliteStore } from "../src/db/store";
import { connections, scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { sealJson } from "../src/store/sealing";
import { freePort, startChildServer } from "../test/helpers/child-server";
import { startFacebookStandIn } from "../test/peers/facebook/server";
import { startInstagramStandIn } from "../test/peers/instagram/server";
import { LINKEDIN_MEMBER, startLinkedInStandIn } from "../test/peers/linkedin/server";
import { startPinterestStandIn } from "../test/peers/pinterest/server";
import { startThreadsStandIn } from "../test/peers/threads/server";
import { startXStandIn } from "../test/peers/x/server";
import { makeCreation, solidPng } from "../test/publishing-fixtures";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 1000);
const WINDOW_MS = argOf("window-ms", 10_000);
const LEAD_MS = 5_000;
const GOAL_P99_MS = 2_000;
const DAY = 24 * 60 * 60 * 1000;
const json = args.includes("--json");
const NETWORKS = ["x", "linkedin", "pinterest", "facebook", "instagram", "threads"] as const;
type Network = (typeof NETWORKS)[number];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Signs in on a Meta stand-in the way the person would (authorize, code, exchange, long-lived token). */
async function metaSignIn(origin: string, redirectUri: string, clientId: string, clientSecret: string, scope: string, exchangeGrant: string): Promise<string> {
  await (await fetch(`${origin}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope, state: "s" })}`)).text();
  const decided = await fetch(`${origin}/oauth/authorize/decision`, { method: "POST", body: new URLSearchParams({ redirect_uri: redirectUri, state: "s", scope, decision: "allow" }), redirect: "manual" });
  const code = new URL(decided.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const short = (await (await fetch(`${origin}/oauth/access_token`, { method: "POST", body: new URLSearchParams({ client_id: clientId, client_secret: clientSecret, grant_type: "authorization_code", redirect_uri: redirectUri, code }) })).json()) as { access_token: string };
  return ((await (await fetch(`${origin}/access_token?${new URLSearchParams({ grant_type: exchangeGrant, client_secret: clientSecret, access_token: short.access_token })}`)).json()) as { access_token: string }).access_token;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-six-"));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const callback = (p: string) => `${base}/dashboard/connections/callback/${p}`;
const x = startXStandIn({ redirectUri: callback("x") });
const linkedin = startLinkedInStandIn({ now: () => Date.now() });
const pinterest = startPinterestStandIn({ now: () => Date.now() });
const fb = startFacebookStandIn({ redirectUri: callback("facebook"), pages: ["Bench Page"], now: () => Date.now() });
const ig = startInstagramStandIn({ redirectUri: callback("instagram") });
const th = startThreadsStandIn({ redirectUri: callback("threads") });
const containersReady = args.includes("--containers-ready");
if (containersReady) {
  ig.mode.inProgressLooks = 0;
  th.mode.inProgressLooks = 0;
}
const env = {
  DATA_DIR: dataDir,
  BASE_URL: base,
  ALLOW_PRIVATE_HOSTS: "127.0.0.1",
  PLATFORM_ORIGIN_OVERRIDES: [
    `api.x.com=${x.origin},x.com=${x.origin}`,
    `www.linkedin.com=${linkedin.origin},api.linkedin.com=${linkedin.origin}`,
    `www.pinterest.com=${pinterest.origin},api.pinterest.com=${pinterest.origin}`,
    fb.overrides,
    ig.overrides,
    th.overrides,
  ].join(","),
  X_CLIENT_ID: x.clientId,
  X_CLIENT_SECRET: x.clientSecret,
  LINKEDIN_CLIENT_ID: linkedin.clientId,
  LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
  PINTEREST_APP_ID: pinterest.clientId,
  PINTEREST_APP_SECRET: pinterest.clientSecret,
  LOG_LEVEL: "warn",
};

/** Each stand-in's stored posts as captions, in store order. */
const stored: Record<Network, () => string[]> = {
  x: () => x.posts.map((p) => p.text),
  linkedin: () => linkedin.posts.map((p) => p.commentary),
  pinterest: () => pinterest.pins.map((p) => p.description ?? ""),
  facebook: () => fb.posts.filter((p) => !p.deleted).map((p) => p.message),
  instagram: () => ig.media.map((m) => m.caption),
  threads: () => th.media.filter((m) => m.replyTo === null).map((m) => m.text),
};
const seenAt: Record<Network, { text: string; at: number }[]> = { x: [], linkedin: [], pinterest: [], facebook: [], instagram: [], threads: [] };
const watcher = setInterval(() => {
  const now = Date.now();
  for (const n of NETWORKS) {
    const list = stored[n]();
    for (let i = seenAt[n].length; i < list.length; i++) seenAt[n].push({ text: list[i]!, at: now });
  }
}, 10);

try {
  const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
  const setup = await bootstrap(config, { log: silentLogger });
  const { accountId } = await createAccount(setup, { name: "Bench", email: "bench-six@example.test", password: "correct horse battery", credits: 0 });

  // X: the stand-in's OAuth 2.0 PKCE sign-in.
  const verifier = randomBytes(32).toString("base64url");
  const decided = await fetch(`${x.origin}/i/oauth2/authorize/decision`, {
    method: "POST",
    body: new URLSearchParams({ redirect_uri: callback("x"), state: "s", code_challenge: createHash("sha256").update(verifier).digest("base64url"), scope: "tweet.read tweet.write users.read media.write offline.access", decision: "allow" }),
    redirect: "manual",
  });
  const xCode = new URL(decided.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const xTokens = (await (
    await fetch(`${x.origin}/2/oauth2/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: xCode, redirect_uri: callback("x"), code_verifier: verifier }),
    })
  ).json()) as { access_token: string; refresh_token: string; expires_in: number };
  const igToken = await metaSignIn(ig.origin, callback("instagram"), ig.clientId, ig.clientSecret, "instagram_business_basic,instagram_business_content_publish", "ig_exchange_token");
  const thToken = await metaSignIn(th.origin, callback("threads"), th.clientId, th.clientSecret, "threads_basic,threads_content_publish,threads_manage_replies", "th_exchange_token");
  const page = fb.pages[0]!;
  const board = pinterest.boards[0]!;
  const now = Date.now();
  const specs: Record<Network, { label: string; endpoint: string; credentials: Record<string, string>; providerAccountId: string; expiresAt: number | null; extra?: Record<string, unknown> }> = {
    x: { label: `@${x.user.username}`, endpoint: "https://api.x.com", credentials: { token: xTokens.access_token, refreshToken: xTokens.refresh_token }, providerAccountId: x.user.id, expiresAt: now + xTokens.expires_in * 1000 },
    linkedin: { label: LINKEDIN_MEMBER.name, endpoint: "https://api.linkedin.com", credentials: { token: linkedin.issueToken() }, providerAccountId: LINKEDIN_MEMBER.sub, expiresAt: now + 60 * DAY },
    pinterest: { label: `${board.name} (@${pinterest.account.username})`, endpoint: "https://api.pinterest.com/v5", credentials: { token: pinterest.issueToken(), refreshToken: "pinr_unused" }, providerAccountId: board.id, expiresAt: now + 30 * DAY },
    facebook: { label: page.name, endpoint: "https://graph.facebook.com", credentials: { token: page.token }, providerAccountId: page.id, expiresAt: null, extra: { imagesFetchable: true } },
    instagram: { label: `@${ig.user.username}`, endpoint: "https://graph.instagram.com", credentials: { token: igToken }, providerAccountId: ig.user.id, expiresAt: now + 50 * DAY, extra: { imagesFetchable: true } },
    threads: { label: `@${th.user.username}`, endpoint: "https://graph.threads.net", credentials: { token: thToken }, providerAccountId: th.user.id, expiresAt: now + 50 * DAY, extra: { imagesFetchable: true } },
  };
  const connectionIds = {} as Record<Network, string>;
  await setup.store.write(async (tx) => {
    for (const n of NETWORKS) {
      const s = specs[n];
      const id = newId();
      connectionIds[n] = id;
      await tx
        .insert(connections)
        .values({
          id, accountId, platform: n, label: s.label, endpoint: s.endpoint, credentialsSealed: sealJson(setup.instanceSecret, id, s.credentials),
          meta: JSON.stringify({ providerAccountId: s.providerAccountId, ...s.extra }), readyToPost: true, tokenExpiresAt: s.expiresAt, createdAt: now, updatedAt: now,
        })
        .run();
    }
  });
  const image = await ingestImageBytes(setup, accountId, { bytes: await solidPng(320, 240), fileName: "bench" });
  const images = [{ assetId: image.id, altText: "A blue field" }];
  const creation = await makeCreation(setup, accountId, { caption: "Bench" });
  const firstDue = Date.now() + LEAD_MS;
  const due = new Map<string, number>();
  const planned: Record<Network, number> = { x: 0, linkedin: 0, pinterest: 0, facebook: 0, instagram: 0, threads: 0 };
  await setup.store.write(async (tx) => {
    for (let i = 0; i < POSTS; i++) {
      const n = NETWORKS[i % NETWORKS.length]!;
      const at = firstDue + Math.floor((i * WINDOW_MS) / POSTS);
      const caption = `${n} post ${i}`;
      const withImages = n === "pinterest" || n === "instagram" ? images : [];
      const postId = newId();
      due.set(caption, at);
      planned[n]++;
      await tx
        .insert(scheduledPosts)
        .values({ id: postId, accountId, creationId: creation.id, scheduledTime: at, status: "scheduled", caption, images: withImages, imageAssetId: withImages[0]?.assetId ?? null, altText: withImages[0]?.altText ?? null, createdAt: now, updatedAt: now })
        .run();
      await tx
        .insert(scheduledPostTargets)
        .values({ id: newId(), postId, accountId, connectionId: connectionIds[n], platform: n, label: specs[n].label, status: "scheduled", nextAttemptAt: at, createdAt: now, updatedAt: now })
        .run();
    }
  });
  await setup.store.close();

  const server = await startChildServer([process.execPath, "src/main.ts", "serve"], { cwd: ROOT, port, logFile: join(dataDir, "server.log"), timeoutMs: 20_000, env });
  const delivered = () => NETWORKS.reduce((sum, n) => sum + seenAt[n].length, 0);
  const deadline = firstDue + WINDOW_MS + 60_000;
  while (Date.now() < deadline && delivered() < POSTS) await Bun.sleep(100);
  await Bun.sleep(500);
  server.proc.kill("SIGTERM");
  await server.proc.exited;

  const watch = await bootstrap(config, { log: silentLogger });
  const states = isSqliteStore(watch.store)
    ? watch.store.sqlite.query<{ platform: string; status: string; n: number }, []>("SELECT platform, status, count(*) AS n FROM scheduled_post_targets GROUP BY platform, status").all()
    : [];
  await watch.store.close();

  const figures = (entries: { text: string; at: number }[]) => {
    const counts = new Map<string, number>();
    for (const e of entries) counts.set(e.text, (counts.get(e.text) ?? 0) + 1);
    const firsts = new Map<string, number>();
    for (const e of entries) if (!firsts.has(e.text)) firsts.set(e.text, e.at);
    const lateness = [...firsts].map(([text, at]) => Math.max(0, at - (due.get(text) ?? at))).sort((a, b) => a - b);
    const p99 = percentile(lateness, 99);
    return {
      delivered: firsts.size,
      duplicates: [...counts.values()].filter((c) => c > 1).length,
      latenessMs: { p50: percentile(lateness, 50), p95: percentile(lateness, 95), p99, max: lateness.at(-1) ?? 0 },
      p99OverGoal: Number((p99 / GOAL_P99_MS).toFixed(2)),
    };
  };
  const results = NETWORKS.map((n) => ({
    network: n,
    planned: planned[n],
    ...figures(seenAt[n]),
    targets: Object.fromEntries(states.filter((s) => s.platform === n).map((s) => [s.status, s.n])),
  }));
  const overall = figures(NETWORKS.flatMap((n) => seenAt[n]));
  const summary = {
    bench: "networks-six",
    posts: POSTS,
    windowMs: WINDOW_MS,
    networks: NETWORKS,
    containerFirstLook: containersReady ? "FINISHED" : "IN_PROGRESS",
    left_out: [] as string[],
    loadAverage: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
    results,
    overall,
    violations: x.violations.length + linkedin.violations.length + pinterest.violations.length + fb.violations.length + ig.violations.length + th.violations.length,
    goalsMet: overall.delivered === POSTS && overall.duplicates === 0 && overall.latenessMs.p99 < GOAL_P99_MS,
    // The rows bench/run.ts tables.
    figures: [...results, { network: "overall", planned: POSTS, ...overall }].flatMap((r) => [
      { label: `${r.network}: delivered`, value: r.delivered, unit: "", goal: `${r.planned}`, ok: r.delivered === r.planned },
      { label: `${r.network}: p99 lateness`, value: r.latenessMs.p99, unit: "ms", goal: `< ${GOAL_P99_MS} ms`, ok: r.latenessMs.p99 < GOAL_P99_MS },
      { label: `${r.network}: p99 ÷ the 2 s goal`, value: r.p99OverGoal, unit: "", goal: "< 1", ok: r.p99OverGoal < 1 },
      { label: `${r.network}: duplicates`, value: r.duplicates, unit: "", goal: "0", ok: r.duplicates === 0 },
    ]),
  };
  console.log(json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
} finally {
  clearInterval(watcher);
  await Promise.all([x.stop(), linkedin.stop(), pinterest.stop(), fb.stop(), ig.stop(), th.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
