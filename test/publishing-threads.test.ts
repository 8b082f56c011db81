/**
 * Threads end to end against the stand-in (test/peers/threads, written from Meta's Threads API pages), reached through
 * PLATFORM_ORIGIN_OVERRIDES: sign-in through the dashboard's routes (short-lived token exchanged for a long-lived
 * one), denied consent with nothing stored; a post with 2 images (alt text), a thread part and a first comment goes
 * out once: a carousel, the part as a reply to it, the first comment as a reply to the post; with BASE_URL not
 * fetchable the connection stays ready, text-only posts go and posts with images are refused with the reason; an
 * answer to a reply's publish cut off after Threads published it → the container proves it, nothing twice; the token
 * renewed with th_refresh_token, a 503 leaves it ready, a revoked one → not ready.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { SCOPES } from "../src/auth/scopes";
import { connections } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { mintKey } from "../src/modules/auth/keys-service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { THREADS_IMAGES_REASON, threadsConnector } from "../src/publishing/networks/threads/connector";
import { refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { movePollingTimer, restorePollingTimer } from "./helpers/polling-timer";
import { BASE, type World, createWorld } from "./helpers/world";
import { THREADS_LONG_LIVED_SECONDS, type ThreadsStandIn, startThreadsStandIn } from "./peers/threads/server";
import { postRows, solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const CALLBACK = `${BASE}/dashboard/connections/callback/threads`;
let world: World;
let th: ThreadsStandIn;
let owner: { accountId: string; userId: string };
let key = "";
let connectionId = "";

beforeAll(async () => {
  th = startThreadsStandIn({ redirectUri: CALLBACK, fetchImage: async (url) => world.app.handle(new Request(url)) });
  world = await createWorld({ env: { PLATFORM_ORIGIN_OVERRIDES: th.overrides, ALLOW_PRIVATE_HOSTS: "localhost", THREADS_APP_ID: th.clientId, THREADS_APP_SECRET: th.clientSecret } });
  owner = await createAccount(world.deps, { name: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD, credits: 10 });
  key = (await mintKey(world.deps, { accountId: owner.accountId, userId: owner.userId, name: "test key", groups: SCOPES, expiresDays: 90 })).key;
  movePollingTimer();
});

afterAll(async () => {
  restorePollingTimer();
  await world.close();
  await th.stop();
});

afterEach(() => {
  expect(th.violations).toEqual([]);
});

async function connect(allow: boolean) {
  const b = new DashboardClient(world);
  expect((await b.login("anna@bakery.test")).status).toBe(303);
  const start = await b.submit("/dashboard/connections", "/dashboard/connections/connect/threads", {});
  expect(start.status).toBe(303);
  const authorize = new URL(start.location ?? "");
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${th.origin}/oauth/authorize`);
  expect(authorize.searchParams.get("scope")).toBe("threads_basic,threads_content_publish,threads_manage_replies");
  const form = new URLSearchParams({ redirect_uri: authorize.searchParams.get("redirect_uri") ?? "", state: authorize.searchParams.get("state") ?? "", decision: allow ? "allow" : "deny" });
  const decided = await fetch(`${th.origin}/oauth/authorize/decision`, { method: "POST", body: form, redirect: "manual" });
  const back = new URL(decided.headers.get("location") ?? "");
  return b.get(`${back.pathname}${back.search}`);
}

async function stored() {
  return (await world.deps.store.db.select().from(connections).where(eq(connections.id, connectionId)).get())!;
}

async function schedule(body: Record<string, unknown>) {
  const made = await world.call("POST", "/api/v1/creations", { key, body: { type: "social_post", ...body } });
  expect(made.status).toBe(201);
  return world.call("POST", "/api/v1/schedule", { key, body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: ["threads"] } });
}

async function twoImages() {
  const wide = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(320, 200), fileName: "wide" });
  const tall = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(200, 320), fileName: "tall" });
  return [
    { asset_id: wide.id, alt_text: "Sourdough loaves on a rack" },
    { asset_id: tall.id, alt_text: "A baker dusting flour" },
  ];
}

async function untilSettled(postId: string) {
  let { targets } = await postRows(world.deps, postId);
  for (let i = 0; i < 6 && targets[0]!.status !== "published" && targets[0]!.status !== "failed"; i++) {
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    ({ targets } = await postRows(world.deps, postId));
  }
  return targets[0]!;
}

describe("Threads", () => {
  test("denied consent: nothing stored; allowed: a long-lived token, sealed, the account ready", async () => {
    const denied = await connect(false);
    expect(denied.status).toBe(400);
    expect(denied.text).toContain("You did not allow Seedcast on Threads, so nothing was connected.");
    expect(await world.sql("SELECT id FROM connections")).toEqual([]);
    const res = await connect(true);
    expect(res.status).toBe(303);
    const [row] = await world.sql<{ id: string; label: string; token_expires_at: unknown }>("SELECT id, label, token_expires_at FROM connections WHERE platform = 'threads'");
    expect(row!.label).toBe("@cornerbakery");
    expect(Number(row!.token_expires_at)).toBe(world.clock.now() + THREADS_LONG_LIVED_SECONDS * 1000);
    connectionId = row!.id;
    expect((await stored()).readyToPost).toBe(true);
    expect(th.tokenCalls.map((c) => c.grant)).toEqual(["authorization_code", "th_exchange_token"]);
  });

  test("2 images with alt text, a thread part and a first comment: a carousel, then replies in order, once", async () => {
    const res = await schedule({ caption: "Fresh sourdough today", images: await twoImages(), thread: [{ caption: "Rye is back too" }], first_comment: "Opening hours: 7 to 2" });
    expect(res.status, res.text).toBe(200);
    const target = await untilSettled(res.json.post.id);
    expect(th.media.map((m) => m.text)).toEqual(["Fresh sourdough today", "Rye is back too", "Opening hours: 7 to 2"]);
    const [post, part, comment] = th.media;
    expect(post!.images.map((i) => i.altText)).toEqual(["Sourdough loaves on a rack", "A baker dusting flour"]);
    expect(post!.images.every((i) => /^http:\/\/localhost\/media\/[0-9a-f-]{36}\.png$/.test(i.url))).toBe(true);
    expect(part!.replyTo).toBe(post!.id);
    expect(comment!.replyTo).toBe(post!.id);
    expect(target).toMatchObject({ status: "published", providerPostId: post!.id, partsOut: [post!.id, part!.id, comment!.id] });
    expect(target.publishedUrl).toBe(`https://www.threads.net/@cornerbakery/post/${post!.id}`);
  });

  test("BASE_URL not fetchable: still ready for text; images refused at scheduling with the reason; a text post goes", async () => {
    const deps = { ...world.deps, config: { ...world.deps.config, allowPrivateHosts: new Set<string>() } };
    const result = await threadsConnector.check(deps, openConnection(world.deps, await stored()));
    expect(result.ready).toBe(true);
    expect(result.meta?.imagesFetchable).toBe(false);
    const original = (await stored()).meta;
    await world.sql("UPDATE connections SET meta = ? WHERE id = ?", JSON.stringify(result.meta), connectionId);
    const refused = await schedule({ caption: "With a photo", images: (await twoImages()).slice(0, 1) });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(THREADS_IMAGES_REASON);
    const text = await schedule({ caption: "Text only still goes" });
    expect(text.status).toBe(200);
    expect((await untilSettled(text.json.post.id)).status).toBe("published");
    expect(th.media.at(-1)!.text).toBe("Text only still goes");
    await world.sql("UPDATE connections SET meta = ? WHERE id = ?", original, connectionId);
  });

  test("the answer to a reply's publish cut off after Threads published it: its container proves it, nothing twice", async () => {
    const res = await schedule({ caption: "Pretzels on Sunday", thread: [{ caption: "Pre-order at the counter" }] });
    const before = th.media.length;
    world.clock.advance(HOUR + 1000);
    // The post's publish is answered; the reply's is cut off after Threads published it.
    th.mode.publishCutSkip = 1;
    th.mode.publishThenCut = 1;
    await runDueOnce(world.deps);
    const cut = (await postRows(world.deps, res.json.post.id)).targets[0]!;
    expect(cut.status).not.toBe("published");
    expect(cut.partsOut).toHaveLength(1);
    expect(th.media.length).toBe(before + 2);
    const target = await untilSettled(res.json.post.id);
    expect(target.status).toBe("published");
    expect(th.media.slice(before).map((m) => m.text)).toEqual(["Pretzels on Sunday", "Pre-order at the counter"]);
  });

  test("the long-lived token renewed with th_refresh_token; a 503 leaves it ready; revoked → not ready", async () => {
    const first = await stored();
    world.clock.set(Number(first.tokenExpiresAt) - 6 * DAY);
    th.mode.tokenUnavailable = 1;
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 0, failed: 1 });
    expect((await stored()).readyToPost).toBe(true);
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 1, failed: 0 });
    const renewed = await stored();
    expect(Number(renewed.tokenExpiresAt)).toBe(world.clock.now() + THREADS_LONG_LIVED_SECONDS * 1000);
    th.revokeAll();
    world.clock.set(Number(renewed.tokenExpiresAt) - 6 * DAY);
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 0, failed: 1 });
    const dead = await stored();
    expect(dead.readyToPost).toBe(false);
    expect(dead.blockedReason).toBe("Threads no longer accepts Seedcast's sign-in: reconnect Threads");
  });
});
