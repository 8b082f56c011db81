/**
 * Crash safety on X (issue 26, decisions.md §12 "never twice, never silently lost"): `seedcast serve` runs as a child
 * process with the X app in the environment (X_CLIENT_ID/X_CLIENT_SECRET) and delivers posts (each a post, a thread
 * part and a first comment: 3 posts at X) to the X stand-in in this test's process, which keeps counting while the
 * server is killed with SIGKILL at random points during dispatch, 10 times, and restarted each time. X takes no
 * idempotency key, so a send whose answer was lost is looked up among the account's posts before any resend. Must
 * hold: no text posted twice; every target ends published with its 3 parts at X once each, the replies in place.
 *
 * SQLite only (like test/crash-safety.test.ts: the server runs on the DATA_DIR's database file).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { connections, scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { sealJson } from "../src/store/sealing";
import { TEST_DIALECT } from "./helpers/world";
import { type XStandIn, startXStandIn } from "./peers/x/server";
import { makeCreation } from "./publishing-fixtures";
import { crashDispatchEnv, deliverTheRest, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
const POSTS = 24;
const SPREAD_MS = 20_000;
const LEASE_MS = 1500;
const PARTS = 3;
const CALLBACK = "http://localhost/dashboard/connections/callback/x";

let dataDir: string;
let x: XStandIn;
let env: Record<string, string>;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-x-"));
  x = startXStandIn({ redirectUri: CALLBACK });
  // Every post takes a while, so kills land before and after X stored it.
  x.mode.postLatencyMs = 250;
  env = {
    DATA_DIR: dataDir,
    PLATFORM_ORIGIN_OVERRIDES: `api.x.com=${x.origin},x.com=${x.origin}`,
    X_CLIENT_ID: x.clientId,
    X_CLIENT_SECRET: x.clientSecret,
    ...crashDispatchEnv(LEASE_MS),
  };
});

afterAll(async () => {
  await x.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = () => startServe(dataDir, env);

/** A person allows Seedcast at the stand-in's authorization page; answers the token endpoint's pair. */
async function signIn(): Promise<{ access_token: string; refresh_token: string; expires_in: number }> {
  const verifier = randomBytes(32).toString("base64url");
  const form = new URLSearchParams({
    redirect_uri: CALLBACK,
    state: "s",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    scope: "tweet.read tweet.write users.read media.write offline.access",
    decision: "allow",
  });
  const back = await fetch(`${x.origin}/i/oauth2/authorize/decision`, { method: "POST", body: form, redirect: "manual" });
  const code = new URL(back.headers.get("location") ?? "").searchParams.get("code") ?? "";
  const res = await fetch(`${x.origin}/2/oauth2/token`, {
    method: "POST",
    headers: { authorization: `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, code_verifier: verifier }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
}

test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during X deliveries ${KILLS} times: no post twice; every target published whole`,
  async () => {
    const config = loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash-x@example.test", password: "correct horse battery", credits: 0 });
    const tokens = await signIn();
    const connectionId = newId();
    const now = Date.now();
    await setup.store.write((tx) =>
      tx
        .insert(connections)
        .values({
          id: connectionId,
          accountId,
          platform: "x",
          label: `@${x.user.username}`,
          endpoint: "https://api.x.com",
          credentialsSealed: sealJson(setup.instanceSecret, connectionId, { token: tokens.access_token, refreshToken: tokens.refresh_token }),
          meta: JSON.stringify({ providerAccountId: x.user.id }),
          readyToPost: true,
          tokenExpiresAt: now + tokens.expires_in * 1000,
          createdAt: now,
          updatedAt: now,
        })
        .run(),
    );
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS, maxDelayMs: 900 });
    const start = Date.now() + 3000;
    await setup.store.write(async (tx) => {
      for (let i = 0; i < POSTS; i++) {
        const postId = newId();
        const due = start + Math.floor((i * spread) / POSTS);
        await tx
          .insert(scheduledPosts)
          .values({
            id: postId,
            accountId,
            creationId: creation.id,
            scheduledTime: due,
            status: "scheduled",
            caption: `Post ${i} (1/${PARTS})`,
            thread: [{ caption: `Post ${i} (2/${PARTS})`, images: [] }],
            firstComment: `Post ${i} (3/${PARTS})`,
            createdAt: now,
            updatedAt: now,
          })
          .run();
        await tx
          .insert(scheduledPostTargets)
          .values({ id: newId(), postId, accountId, connectionId, platform: "x", label: `@${x.user.username}`, status: "scheduled", nextAttemptAt: due, createdAt: now, updatedAt: now })
          .run();
      }
    });
    await setup.store.close();

    const { kills, killsDuringDispatch } = await killDuringDispatch({ rounds: KILLS, start: startServer, progress: () => x.posts.length, total: POSTS * PARTS, maxDelayMs: 900 });

    const { sqlite, close } = await deliverTheRest(startServer, config, 90_000);
    const rows = sqlite
      .query<{ status: string; caption: string; parts_out: string; error_message: string | null }, []>(
        "SELECT t.status, p.caption, t.parts_out, t.error_message FROM scheduled_post_targets t JOIN scheduled_posts p ON p.id = t.post_id",
      )
      .all();
    await close();

    expect(x.violations).toEqual([]);
    const byText = new Map<string, typeof x.posts>();
    for (const p of x.posts) byText.set(p.text, [...(byText.get(p.text) ?? []), p]);
    const summary: Record<string, number> = {};
    for (const row of rows) {
      summary[row.status] = (summary[row.status] ?? 0) + 1;
      const base = row.caption.replace(` (1/${PARTS})`, "");
      const parts = [1, 2, 3].map((n) => byText.get(`${base} (${n}/${PARTS})`) ?? []);
      expect(parts.map((p) => p.length), `${base}: ${row.status} ${row.error_message}`).toEqual([1, 1, 1]);
      expect(row.status, `${base}: ${row.error_message}`).toBe("published");
      const [post, threadPart, comment] = parts.map((p) => p[0]!);
      expect(threadPart!.inReplyTo).toBe(post!.id);
      expect(comment!.inReplyTo).toBe(post!.id);
      expect(JSON.parse(row.parts_out)).toEqual([post!.id, threadPart!.id, comment!.id]);
    }
    const duplicates = [...byText.values()].filter((p) => p.length > 1).length;
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, targets: summary, duplicates, xPosts: x.posts.length }));
    expect(duplicates).toBe(0);
    expect(rows).toHaveLength(POSTS);
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(5);
  },
  { timeout: 300_000 },
);
