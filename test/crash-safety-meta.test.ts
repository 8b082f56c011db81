/**
 * Crash safety on Instagram, Facebook Pages and Threads (decisions.md §12, "never twice, never silently lost"):
 * `seedcast serve` runs as a child process and delivers posts to the three stand-ins in this test's process, which
 * keep counting while the server is killed with SIGKILL at random points during dispatch, 10 times, and restarted
 * each time. Each post has a first comment (Instagram: 2 images, Instagram fetching them from the child server;
 * Threads: also a thread part), so several parts per target. The stand-ins answer slowly so kills land before and
 * after a network stored something. Must hold: no post, reply or comment twice anywhere; every target ends published
 * with each of its parts there once (these networks can be asked: the Meta containers prove absence, Facebook's Page
 * posts are looked up), none lost.
 *
 * SQLite only (like test/crash-safety-chat.test.ts: the server runs on the DATA_DIR's database file).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { connections, scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { sealJson } from "../src/store/sealing";
import { freePort } from "./helpers/child-server";
import { TEST_DIALECT } from "./helpers/world";
import { type FacebookStandIn, startFacebookStandIn } from "./peers/facebook/server";
import { type InstagramStandIn, startInstagramStandIn } from "./peers/instagram/server";
import { type ThreadsStandIn, startThreadsStandIn } from "./peers/threads/server";
import { makeCreation, solidPng } from "./publishing-fixtures";
import { countOf, crashDispatchEnv, deliverTheRest, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
const POSTS = 12;
const SPREAD_MS = 20_000;
const LEASE_MS = 5000;

let dataDir: string;
let port = 0;
let ig: InstagramStandIn;
let fb: FacebookStandIn;
let th: ThreadsStandIn;
let env: Record<string, string>;

/** Signs in on a stand-in the way the person would (authorize, code, exchange), answering the long-lived token. */
async function signIn(origin: string, authorizePath: string, decisionPath: string, exchange: (code: string) => Promise<string>, redirectUri: string, clientId: string, scope: string): Promise<string> {
  const page = await fetch(`${origin}${authorizePath}?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: "code", scope, state: "s" })}`);
  await page.text();
  const decided = await fetch(`${origin}${decisionPath}`, { method: "POST", body: new URLSearchParams({ redirect_uri: redirectUri, state: "s", scope, decision: "allow" }), redirect: "manual" });
  const code = new URL(decided.headers.get("location") ?? "").searchParams.get("code") ?? "";
  return exchange(code);
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-meta-"));
  port = await freePort();
  const redirect = (p: string) => `http://127.0.0.1:${port}/dashboard/connections/callback/${p}`;
  ig = startInstagramStandIn({ redirectUri: redirect("instagram") });
  fb = startFacebookStandIn({ redirectUri: redirect("facebook"), pages: ["Crash Page"], now: () => Date.now() });
  th = startThreadsStandIn({ redirectUri: redirect("threads") });
  ig.mode.publishLatencyMs = 150;
  fb.mode.feedLatencyMs = 150;
  th.mode.publishLatencyMs = 150;
  env = {
    DATA_DIR: dataDir,
    BASE_URL: `http://127.0.0.1:${port}`,
    ALLOW_PRIVATE_HOSTS: "127.0.0.1",
    PLATFORM_ORIGIN_OVERRIDES: [ig.overrides, fb.overrides, th.overrides].join(","),
    ...crashDispatchEnv(LEASE_MS),
  };
});

afterAll(async () => {
  await Promise.all([ig.stop(), fb.stop(), th.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = () => startServe(dataDir, env, port);


test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during Instagram, Facebook and Threads deliveries ${KILLS} times: nothing twice; every target published whole`,
  async () => {
    const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash-meta@example.test", password: "correct horse battery", credits: 0 });
    // Tokens got the way each network hands them out (the stand-ins' own sign-in), stored as a sign-in stores them.
    const igToken = await signIn(ig.origin, "/oauth/authorize", "/oauth/authorize/decision", async (code) => {
      const short = (await (await fetch(`${ig.origin}/oauth/access_token`, { method: "POST", body: new URLSearchParams({ client_id: ig.clientId, client_secret: ig.clientSecret, grant_type: "authorization_code", redirect_uri: `http://127.0.0.1:${port}/dashboard/connections/callback/instagram`, code }) })).json()) as { access_token: string };
      return ((await (await fetch(`${ig.origin}/access_token?${new URLSearchParams({ grant_type: "ig_exchange_token", client_secret: ig.clientSecret, access_token: short.access_token })}`)).json()) as { access_token: string }).access_token;
    }, `http://127.0.0.1:${port}/dashboard/connections/callback/instagram`, ig.clientId, "instagram_business_basic,instagram_business_content_publish");
    const thToken = await signIn(th.origin, "/oauth/authorize", "/oauth/authorize/decision", async (code) => {
      const short = (await (await fetch(`${th.origin}/oauth/access_token`, { method: "POST", body: new URLSearchParams({ client_id: th.clientId, client_secret: th.clientSecret, grant_type: "authorization_code", redirect_uri: `http://127.0.0.1:${port}/dashboard/connections/callback/threads`, code }) })).json()) as { access_token: string };
      return ((await (await fetch(`${th.origin}/access_token?${new URLSearchParams({ grant_type: "th_exchange_token", client_secret: th.clientSecret, access_token: short.access_token })}`)).json()) as { access_token: string }).access_token;
    }, `http://127.0.0.1:${port}/dashboard/connections/callback/threads`, th.clientId, "threads_basic,threads_content_publish,threads_manage_replies");
    const page = fb.pages[0]!;
    const now = Date.now();
    const made: { id: string; platform: "instagram" | "facebook" | "threads"; label: string }[] = [];
    for (const [platform, label, endpoint, token, providerAccountId] of [
      ["instagram", "@cornerbakery", "https://graph.instagram.com", igToken, ig.user.id],
      ["facebook", page.name, "https://graph.facebook.com", page.token, page.id],
      ["threads", "@cornerbakery", "https://graph.threads.net", thToken, th.user.id],
    ] as const) {
      const id = newId();
      await setup.store.write((tx) =>
        tx
          .insert(connections)
          .values({
            id,
            accountId,
            platform,
            label,
            endpoint,
            credentialsSealed: sealJson(setup.instanceSecret, id, { token }),
            meta: JSON.stringify({ providerAccountId, imagesFetchable: true }),
            readyToPost: true,
            tokenExpiresAt: platform === "facebook" ? null : now + 50 * 24 * 60 * 60 * 1000,
            createdAt: now,
            updatedAt: now,
          })
          .run(),
      );
      made.push({ id, platform, label });
    }
    const first = await ingestImageBytes(setup, accountId, { bytes: await solidPng(320, 200), fileName: "wide" });
    const second = await ingestImageBytes(setup, accountId, { bytes: await solidPng(200, 400), fileName: "tall" });
    const images = [
      { assetId: first.id, altText: "Wide" },
      { assetId: second.id, altText: "Tall" },
    ];
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS, maxDelayMs: 900 });
    const start = Date.now() + 1500;
    await setup.store.write(async (tx) => {
      for (let i = 0; i < POSTS; i++) {
        const due = start + Math.floor((i * spread) / POSTS);
        for (const c of made) {
          // One post per network (Facebook and Instagram take no thread; each has its own first comment).
          const postId = newId();
          const thread = c.platform === "threads" ? [{ caption: `${c.platform} ${i} part`, images: [] }] : [];
          const withImages = c.platform === "instagram" ? images : [];
          await tx
            .insert(scheduledPosts)
            .values({
              id: postId,
              accountId,
              creationId: creation.id,
              scheduledTime: due,
              status: "scheduled",
              caption: `${c.platform} ${i} post`,
              images: withImages,
              imageAssetId: withImages[0]?.assetId ?? null,
              altText: withImages[0]?.altText ?? null,
              thread,
              firstComment: `${c.platform} ${i} comment`,
              createdAt: now,
              updatedAt: now,
            })
            .run();
          await tx
            .insert(scheduledPostTargets)
            .values({ id: newId(), postId, accountId, connectionId: c.id, platform: c.platform, label: c.label, status: "scheduled", nextAttemptAt: due, createdAt: now, updatedAt: now })
            .run();
        }
      }
    });
    await setup.store.close();

    const outCount = () => ig.media.length + fb.posts.length + th.media.filter((m) => m.replyTo === null).length;
    const { kills, killsDuringDispatch } = await killDuringDispatch({ rounds: KILLS, start: startServer, progress: outCount, total: 3 * POSTS, maxDelayMs: 900 });

    const { sqlite, close } = await deliverTheRest(startServer, config, 90_000);
    const rows = sqlite
      .query<{ platform: string; status: string; caption: string; parts_out: string; error_message: string | null }, []>(
        "SELECT t.platform, t.status, p.caption, t.parts_out, t.error_message FROM scheduled_post_targets t JOIN scheduled_posts p ON p.id = t.post_id",
      )
      .all();
    await close();

    expect([ig.violations, fb.violations, th.violations]).toEqual([[], [], []]);
    const sent = {
      instagram: countOf([...ig.media.map((m) => m.caption), ...ig.media.flatMap((m) => m.comments.map((c) => c.text))]),
      facebook: countOf([...fb.posts.filter((p) => !p.deleted).map((p) => p.message), ...fb.posts.flatMap((p) => p.comments.map((c) => c.message))]),
      threads: countOf(th.media.map((m) => m.text)),
    };
    const summary: Record<string, Record<string, number>> = { instagram: {}, facebook: {}, threads: {} };
    for (const row of rows) {
      const platform = row.platform as keyof typeof sent;
      summary[platform]![row.status] = (summary[platform]![row.status] ?? 0) + 1;
      const base = row.caption.replace(/ post$/, "");
      const texts = [`${base} post`, ...(platform === "threads" ? [`${base} part`] : []), `${base} comment`];
      const n = texts.map((t) => sent[platform].get(t) ?? 0);
      expect(row.status, `${platform} ${base}: ${row.error_message}`).toBe("published");
      expect(n, `${platform} ${base}`).toEqual(texts.map(() => 1));
      expect(JSON.parse(row.parts_out)).toHaveLength(texts.length);
    }
    const duplicates = Object.fromEntries(Object.entries(sent).map(([k, m]) => [k, [...m.values()].filter((x) => x > 1).length]));
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, targets: summary, duplicates }));
    expect(duplicates).toEqual({ instagram: 0, facebook: 0, threads: 0 });
    expect(rows).toHaveLength(3 * POSTS);
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(5);
  },
  { timeout: 300_000 },
);
