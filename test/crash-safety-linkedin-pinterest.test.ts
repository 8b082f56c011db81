/**
 * Crash safety on LinkedIn and Pinterest (decisions.md §12, "never twice, never silently lost"): `seedcast serve` runs
 * as a child process and delivers LinkedIn posts (a post and its first comment) and Pinterest pins (one image each) to
 * the stand-ins in this test's process, which keep counting while the server is killed with SIGKILL at random points
 * during dispatch, 10 times, and restarted each time. Both networks can be asked what was posted (the author's recent
 * posts and the post's comments; the board's pins), so an interrupted send is looked up before anything is sent
 * again. Must hold: nothing twice on either network, every target ends published (or unconfirmed), none lost.
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
import { sealJson } from "../src/store/sealing";
import { TEST_DIALECT } from "./helpers/world";
import { LINKEDIN_MEMBER, type LinkedInStandIn, startLinkedInStandIn } from "./peers/linkedin/server";
import { type PinterestStandIn, startPinterestStandIn } from "./peers/pinterest/server";
import { makeCreation, solidPng } from "./publishing-fixtures";
import { countOf, crashDispatchEnv, deliverTheRest, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
const POSTS = 12;
const SPREAD_MS = 14_000;
const LEASE_MS = 1500;
const DAY = 24 * 60 * 60 * 1000;

let dataDir: string;
let linkedin: LinkedInStandIn;
let pinterest: PinterestStandIn;
let env: Record<string, string>;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-lipin-"));
  linkedin = startLinkedInStandIn({ now: () => Date.now() });
  pinterest = startPinterestStandIn({ now: () => Date.now() });
  // Every send takes a while, so kills land before and after the networks stored it.
  linkedin.mode.latencyMs = 250;
  pinterest.mode.latencyMs = 250;
  env = {
    DATA_DIR: dataDir,
    PLATFORM_ORIGIN_OVERRIDES: `www.linkedin.com=${linkedin.origin},api.linkedin.com=${linkedin.origin},www.pinterest.com=${pinterest.origin},api.pinterest.com=${pinterest.origin}`,
    LINKEDIN_CLIENT_ID: linkedin.clientId,
    LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
    PINTEREST_APP_ID: pinterest.clientId,
    PINTEREST_APP_SECRET: pinterest.clientSecret,
    ...crashDispatchEnv(LEASE_MS),
  };
});

afterAll(async () => {
  await linkedin.stop();
  await pinterest.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = () => startServe(dataDir, env);


test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during LinkedIn and Pinterest deliveries ${KILLS} times: nothing twice; every target published or unconfirmed`,
  async () => {
    const config = loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash-lipin@example.test", password: "correct horse battery", credits: 0 });
    const now = Date.now();
    // Connections as a sign-in leaves them (the tokens sealed, the member's and the board's ids kept).
    const li = newId();
    const pin = newId();
    const board = pinterest.boards[0]!;
    await setup.store.write(async (tx) => {
      await tx.insert(connections).values({
        id: li, accountId, platform: "linkedin", label: LINKEDIN_MEMBER.name, endpoint: "https://api.linkedin.com",
        credentialsSealed: sealJson(setup.instanceSecret, li, { token: linkedin.issueToken() }),
        meta: JSON.stringify({ providerAccountId: LINKEDIN_MEMBER.sub }), readyToPost: true, tokenExpiresAt: now + 60 * DAY, createdAt: now, updatedAt: now,
      }).run();
      await tx.insert(connections).values({
        id: pin, accountId, platform: "pinterest", label: `${board.name} (@${pinterest.account.username})`, endpoint: "https://api.pinterest.com/v5",
        credentialsSealed: sealJson(setup.instanceSecret, pin, { token: pinterest.issueToken(), refreshToken: "pinr_unused" }),
        meta: JSON.stringify({ providerAccountId: board.id }), readyToPost: true, tokenExpiresAt: now + 30 * DAY, createdAt: now, updatedAt: now,
      }).run();
    });
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe", image: await solidPng(120, 90), altText: "A grey field" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS, maxDelayMs: 900 });
    const start = Date.now() + 1500;
    await setup.store.write(async (tx) => {
      for (let i = 0; i < POSTS; i++) {
        const due = start + Math.floor((i * spread) / POSTS);
        const liPost = newId();
        await tx.insert(scheduledPosts).values({ id: liPost, accountId, creationId: creation.id, scheduledTime: due, status: "scheduled", caption: `Update ${i}`, firstComment: `Comment ${i}`, createdAt: now, updatedAt: now }).run();
        await tx.insert(scheduledPostTargets).values({ id: newId(), postId: liPost, accountId, connectionId: li, platform: "linkedin", label: LINKEDIN_MEMBER.name, status: "scheduled", nextAttemptAt: due, createdAt: now, updatedAt: now }).run();
        const pinPost = newId();
        await tx
          .insert(scheduledPosts)
          .values({
            id: pinPost, accountId, creationId: creation.id, scheduledTime: due, status: "scheduled", caption: `Pin ${i}`,
            imageAssetId: creation.imageAssetId, altText: "A grey field", images: [{ assetId: creation.imageAssetId!, altText: "A grey field" }], createdAt: now, updatedAt: now,
          })
          .run();
        await tx.insert(scheduledPostTargets).values({ id: newId(), postId: pinPost, accountId, connectionId: pin, platform: "pinterest", label: board.name, status: "scheduled", nextAttemptAt: due, createdAt: now, updatedAt: now }).run();
      }
    });
    await setup.store.close();

    const { kills, killsDuringDispatch } = await killDuringDispatch({
      rounds: KILLS,
      start: startServer,
      progress: () => linkedin.posts.length + linkedin.comments.length + pinterest.pins.length,
      total: POSTS * 3, // LinkedIn: post + comment; Pinterest: the pin
      maxDelayMs: 900,
    });

    const { sqlite, close } = await deliverTheRest(startServer, config, 90_000);
    const rows = sqlite
      .query<{ platform: string; status: string; caption: string; parts_out: string }, []>(
        "SELECT t.platform, t.status, p.caption, t.parts_out FROM scheduled_post_targets t JOIN scheduled_posts p ON p.id = t.post_id",
      )
      .all();
    await close();

    expect(linkedin.violations).toEqual([]);
    expect(pinterest.violations).toEqual([]);
    const posts = countOf(linkedin.posts.map((p) => p.commentary));
    const comments = countOf(linkedin.comments.map((c) => c.text));
    const pins = countOf(pinterest.pins.map((p) => p.description ?? ""));
    const summary: Record<string, Record<string, number>> = { linkedin: {}, pinterest: {} };
    for (const row of rows) {
      summary[row.platform]![row.status] = (summary[row.platform]![row.status] ?? 0) + 1;
      if (row.platform === "linkedin") {
        const i = row.caption.replace("Update ", "");
        const sent = [posts.get(`Update ${i}`) ?? 0, comments.get(`Comment ${i}`) ?? 0];
        expect(sent.every((n) => n <= 1), `linkedin ${i}: ${sent}`).toBe(true);
        if (row.status === "published") expect(sent, `linkedin ${i}`).toEqual([1, 1]);
        else expect(row.status, `linkedin ${i}`).toBe("unconfirmed");
      } else {
        const sent = pins.get(row.caption) ?? 0;
        expect(sent, row.caption).toBeLessThanOrEqual(1);
        if (row.status === "published") expect(sent, row.caption).toBe(1);
        else expect(row.status, row.caption).toBe("unconfirmed");
      }
    }
    const duplicates = {
      linkedin: [...posts.values(), ...comments.values()].filter((n) => n > 1).length,
      pinterest: [...pins.values()].filter((n) => n > 1).length,
    };
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, targets: summary, duplicates }));
    expect(duplicates).toEqual({ linkedin: 0, pinterest: 0 });
    expect(rows).toHaveLength(2 * POSTS);
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(5);
  },
  { timeout: 300_000 },
);
