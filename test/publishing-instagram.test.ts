/**
 * Instagram end to end against the stand-in (test/peers/instagram, written from Meta's documentation pages), reached
 * through PLATFORM_ORIGIN_OVERRIDES: connect by signing in through the dashboard's routes (the code exchange answered
 * flat as the live API does, then `{data: [...]}` as the page documents; a reconnect keeps the id), denied consent
 * with nothing stored; a post with 2 images (one too tall for Instagram: padded, never cropped), alt text and a first
 * comment goes out once as a carousel that Instagram fetched from this server as JPEG within 4:5 to 1.91:1; the
 * container polling's three ends (FINISHED, ERROR shown in Instagram's words, stuck IN_PROGRESS past the limit);
 * BASE_URL on localhost → not ready with the public-address reason; an answer cut off after publishing → the
 * container proves what happened, nothing twice; the long-lived token renewed ahead of expiry (ig_refresh_token),
 * a 503 leaves it ready, a revoked one → not ready with the reconnect reason.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { SCOPES } from "../src/auth/scopes";
import { connections } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { mintKey } from "../src/modules/auth/keys-service";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { runDueOnce } from "../src/publishing/dispatcher";
import { INSTAGRAM_BASE_URL_REASON, instagramConnector } from "../src/publishing/networks/instagram/connector";
import { containerPolling as instagramPolling } from "../src/publishing/networks/meta/polling";
import { type MovedPollingTimer, movePollingTimer, restorePollingTimer } from "./helpers/polling-timer";
import { connectionForDelivery, refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";
import { type InstagramStandIn, LONG_LIVED_SECONDS, startInstagramStandIn } from "./peers/instagram/server";
import { postRows, solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const CALLBACK = `${BASE}/dashboard/connections/callback/instagram`;
let world: World;
let ig: InstagramStandIn;
let owner: { accountId: string; userId: string };
let key = "";
let connectionId = "";
// Container polling runs its real schedule on a timer that moves instead of sleeping.
let polling: MovedPollingTimer;

beforeAll(async () => {
  polling = movePollingTimer();
  // "Instagram" fetches images from this server: the app's own handler, in process.
  ig = startInstagramStandIn({ redirectUri: CALLBACK, fetchImage: async (url) => world.app.handle(new Request(url)) });
  world = await createWorld({
    env: {
      PLATFORM_ORIGIN_OVERRIDES: ig.overrides,
      // BASE_URL is http://localhost: named here, it counts as reachable (decisions.md §12).
      ALLOW_PRIVATE_HOSTS: "localhost",
      INSTAGRAM_APP_ID: ig.clientId,
      INSTAGRAM_APP_SECRET: ig.clientSecret,
    },
  });
  owner = await createAccount(world.deps, { name: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD, credits: 10 });
  key = (await mintKey(world.deps, { accountId: owner.accountId, userId: owner.userId, name: "test key", groups: SCOPES, expiresDays: null })).key;
});

afterAll(async () => {
  restorePollingTimer();
  await world.close();
  await ig.stop();
});

afterEach(() => {
  expect(ig.violations).toEqual([]);
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login("anna@bakery.test")).status).toBe(303);
  return b;
}

/** Connect Instagram → the stand-in's page → Allow or Cancel → back to the callback; answers the callback's answer. */
async function connect(b: DashboardClient, allow: boolean, extra: Record<string, string> = {}) {
  const start = await b.submit("/dashboard/connections", "/dashboard/connections/connect/instagram", extra);
  expect(start.status).toBe(303);
  const authorize = new URL(start.location ?? "");
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${ig.origin}/oauth/authorize`);
  expect(authorize.searchParams.get("scope")).toBe("instagram_business_basic,instagram_business_content_publish");
  const page = await fetch(authorize);
  expect(await page.text()).toContain("Allow Seedcast to access your Instagram account?");
  const form = new URLSearchParams({ redirect_uri: authorize.searchParams.get("redirect_uri") ?? "", state: authorize.searchParams.get("state") ?? "", scope: authorize.searchParams.get("scope") ?? "", decision: allow ? "allow" : "deny" });
  const decided = await fetch(`${ig.origin}/oauth/authorize/decision`, { method: "POST", body: form, redirect: "manual" });
  expect(decided.status).toBe(302);
  const back = new URL(decided.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  // The browser keeps Instagram's "#_" to itself.
  return b.get(`${back.pathname}${back.search}`);
}

const rows = () => world.sql<{ id: string; label: string; ready_to_post: unknown; blocked_reason: string | null; token_expires_at: number | null; credentials_sealed: string }>(
  "SELECT id, label, ready_to_post, blocked_reason, token_expires_at, credentials_sealed FROM connections WHERE platform = 'instagram'",
);

/** The Instagram connection as stored. */
async function stored() {
  const row = (await world.deps.store.db.select().from(connections).where(eq(connections.id, connectionId)).get())!;
  return row;
}

/** A post with 2 images (one too tall for Instagram), each with its alt text, and a first comment, scheduled to Instagram. */
async function schedulePost(caption: string, inMs = HOUR) {
  const wide = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(320, 200), fileName: "wide" });
  const tall = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(200, 400), fileName: "tall" });
  const made = await world.call("POST", "/api/v1/creations", {
    key,
    body: {
      type: "social_post",
      caption,
      images: [
        { asset_id: wide.id, alt_text: "Sourdough loaves on a rack" },
        { asset_id: tall.id, alt_text: "A baker dusting flour" },
      ],
      first_comment: `${caption}: opening hours in our bio`,
    },
  });
  expect(made.status).toBe(201);
  const res = await world.call("POST", "/api/v1/schedule", {
    key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + inMs), targets: ["instagram"] },
  });
  expect(res.status).toBe(200);
  return res.json.post as { id: string };
}

async function deliverDue(): Promise<void> {
  world.clock.advance(HOUR + 1000);
  await runDueOnce(world.deps);
}

describe("connect Instagram by signing in", () => {
  test("denied consent: one sentence, nothing stored", async () => {
    const b = await signedIn();
    const res = await connect(b, false);
    expect(res.status).toBe(400);
    expect(res.text).toContain("You did not allow Seedcast on Instagram, so nothing was connected.");
    expect(await rows()).toEqual([]);
  });

  test("allowed: the short-lived token (answered flat) becomes a long-lived one, sealed; the account is ready", async () => {
    ig.mode.tokenShape = "flat";
    const b = await signedIn();
    const res = await connect(b, true);
    expect(res.status).toBe(303);
    expect(res.location).toContain("notice=signed-in");
    const [row] = await rows();
    expect(row).toMatchObject({ label: "@cornerbakery", blocked_reason: null });
    expect(Boolean(row!.ready_to_post)).toBe(true);
    expect(Number(row!.token_expires_at)).toBe(world.clock.now() + LONG_LIVED_SECONDS * 1000);
    expect(ig.tokenCalls.map((c) => c.grant)).toEqual(["authorization_code", "ig_exchange_token"]);
    expect(row!.credentials_sealed).not.toContain("IGAA");
    connectionId = row!.id;
  });

  test("again, with the answer shaped {data: [...]} as the page documents: reconnected, same id", async () => {
    ig.mode.tokenShape = "data";
    const b = await signedIn();
    const res = await connect(b, true);
    expect(res.location).toContain("notice=signed-in-again");
    const all = await rows();
    expect(all.map((r) => r.id)).toEqual([connectionId]);
    expect(Boolean(all[0]!.ready_to_post)).toBe(true);
    ig.mode.tokenShape = "flat";
  });

  test("BASE_URL on localhost (not named in ALLOW_PRIVATE_HOSTS): the check says Instagram cannot fetch the images", async () => {
    const raw = await stored();
    const deps = { ...world.deps, config: { ...world.deps.config, allowPrivateHosts: new Set<string>() } };
    const result = await instagramConnector.check(deps, openConnection(world.deps, raw));
    expect(result).toMatchObject({ ready: false, blockedReason: INSTAGRAM_BASE_URL_REASON });
    const ok = await instagramConnector.check(world.deps, openConnection(world.deps, raw));
    expect(ok.ready).toBe(true);
  });
});

describe("publishing to Instagram", () => {
  test("2 images with alt text and a first comment: one carousel, fetched as JPEG within 4:5 to 1.91:1, the comment under it", async () => {
    ig.mode.inProgressLooks = 2;
    const post = await schedulePost("Fresh sourdough today");
    const before = ig.media.length;
    await deliverDue();
    const made = ig.media.slice(before);
    expect(made).toHaveLength(1);
    const media = made[0]!;
    expect(media.caption).toBe("Fresh sourdough today");
    expect(media.images.map((i) => i.altText)).toEqual(["Sourdough loaves on a rack", "A baker dusting flour"]);
    // Fetched from this server's Instagram variant of each asset.
    expect(media.images.every((i) => /^http:\/\/localhost\/media\/[0-9a-f-]{36}\.instagram\.jpg$/.test(i.url))).toBe(true);
    const children = [...ig.containers.values()].filter((c) => c.carouselItem && media.images.some((i) => i.url === c.imageUrl));
    expect(children.map((c) => c.fetched?.contentType)).toEqual(["image/jpeg", "image/jpeg"]);
    // 320×200 (1.6) unchanged in shape; 200×400 (0.5) padded to 4:5, never cropped: its height kept.
    expect(media.images.map((i) => [i.width, i.height])).toEqual([
      [320, 200],
      [320, 400],
    ]);
    expect(media.comments.map((c) => c.text)).toEqual(["Fresh sourdough today: opening hours in our bio"]);
    const { targets } = await postRows(world.deps, post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: media.id, partsOut: [media.id, media.comments[0]!.id] });
    expect(targets[0]!.publishedUrl).toBe(`https://www.instagram.com/p/${media.id}/`);
    // Nothing more goes out on a later round.
    await deliverDue();
    expect(ig.media.length).toBe(before + 1);
    expect(media.comments).toHaveLength(1);
  });

  test("a container that ends in ERROR: the target fails with Instagram's words, nothing published", async () => {
    ig.mode.containerError = "Error: Media upload has failed with error code 2207003";
    const post = await schedulePost("Rye bread is back");
    const before = ig.media.length;
    await deliverDue();
    ig.mode.containerError = null;
    const { targets } = await postRows(world.deps, post.id);
    expect(targets[0]!.status).toBe("failed");
    expect(targets[0]!.errorMessage).toContain("Instagram could not prepare the post: Error: Media upload has failed with error code 2207003");
    expect(ig.media.length).toBe(before);
  });

  test("a container stuck IN_PROGRESS past the polling limit: given up for now with a clear sentence, retried later, published once", async () => {
    polling = movePollingTimer();
    ig.mode.stuck = true;
    const post = await schedulePost("Croissants at noon");
    const before = ig.media.length;
    await deliverDue();
    let { targets } = await postRows(world.deps, post.id);
    expect(targets[0]!.status).not.toBe("published");
    // The looks back off from 300 ms, doubling to one every 2 s, until the 30th look: 54.1 s of (moved) waiting.
    expect(polling.waits.slice(0, 5)).toEqual([300, 600, 1200, 2000, 2000]);
    expect(polling.waits).toHaveLength(instagramPolling.attempts - 1);
    expect(targets[0]!.errorMessage).toContain("Instagram was still preparing the images after 54 seconds (status IN_PROGRESS); nothing was published");
    expect(ig.media.length).toBe(before);
    ig.mode.stuck = false;
    for (let i = 0; i < 5 && targets[0]!.status !== "published"; i++) {
      await deliverDue();
      ({ targets } = await postRows(world.deps, post.id));
    }
    expect(targets[0]!.status).toBe("published");
    expect(ig.media.slice(before).map((m) => m.caption)).toEqual(["Croissants at noon"]);
  });

  test("the answer to media_publish cut off after Instagram published: the container says so, nothing twice", async () => {
    ig.mode.publishThenCut = 1;
    const post = await schedulePost("Pretzels on Sunday");
    const before = ig.media.length;
    await deliverDue();
    let { targets } = await postRows(world.deps, post.id);
    expect(targets[0]!.status).not.toBe("published");
    expect(ig.media.length).toBe(before + 1);
    for (let i = 0; i < 5 && targets[0]!.status !== "published"; i++) {
      await deliverDue();
      ({ targets } = await postRows(world.deps, post.id));
    }
    expect(targets[0]!.status).toBe("published");
    const made = ig.media.slice(before);
    expect(made).toHaveLength(1);
    expect(targets[0]!.providerPostId).toBe(made[0]!.id);
    expect(made[0]!.comments).toHaveLength(1);
  });

  test("a caption with 31 hashtags is refused at scheduling, naming Instagram's rule", async () => {
    const asset = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(300, 300), fileName: "sq" });
    const caption = Array.from({ length: 31 }, (_, i) => `#bread${i}`).join(" ");
    const made = await world.call("POST", "/api/v1/creations", { key, body: { type: "social_post", caption, images: [{ asset_id: asset.id }] } });
    const res = await world.call("POST", "/api/v1/schedule", {
      key,
      body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: ["instagram"] },
    });
    expect(res.status).toBe(409);
    expect(res.text).toContain("31 hashtags; Instagram allows 30");
  });
});

describe("Instagram's long-lived token", () => {
  test("50 deliveries at once on a token with under 5 minutes left: one ig_refresh_token, all with the new token", async () => {
    const before = await stored();
    world.clock.set(Number(before.tokenExpiresAt) - 60_000);
    const calls = ig.tokenCalls.length;
    const opened = await Promise.all(Array.from({ length: 50 }, async () => connectionForDelivery(world.deps, await stored())));
    expect(ig.tokenCalls.slice(calls)).toEqual([{ grant: "ig_refresh_token", status: 200 }]);
    const renewed = openConnection(world.deps, await stored()).credentials.token;
    expect(renewed).not.toBe(openConnection(world.deps, before).credentials.token);
    expect(new Set(opened.map((c) => c.credentials.token))).toEqual(new Set([renewed]));
  });

  test("renewed ahead of expiry with ig_refresh_token (no refresh token exists); a 503 leaves it ready; revoked → not ready, notice and connection.needs_attention", async () => {
    const first = await stored();
    const expiresAt = Number(first.tokenExpiresAt);
    // 6 days before it expires: the daily job renews it.
    world.clock.set(expiresAt - 6 * DAY);
    ig.mode.tokenUnavailable = 1;
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 0, failed: 1 });
    const afterOutage = await stored();
    expect(afterOutage.readyToPost).toBe(true);
    expect(afterOutage.credentialsSealed).toBe(first.credentialsSealed);

    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 1, failed: 0 });
    const renewed = await stored();
    expect(Number(renewed.tokenExpiresAt)).toBe(world.clock.now() + LONG_LIVED_SECONDS * 1000);
    expect(openConnection(world.deps, renewed).credentials.token).not.toBe(openConnection(world.deps, first).credentials.token);
    expect(openConnection(world.deps, renewed).credentials.refreshToken).toBeUndefined();
    expect(ig.tokenCalls.filter((c) => c.grant === "ig_refresh_token").map((c) => c.status)).toEqual([200, 503, 200]);

    // The person removed the app in Instagram: the next renewal is refused with code 190.
    const hook = await world.call("POST", "/api/v1/webhooks", { key, body: { url: "http://localhost:9/hook", events: ["connection.needs_attention"] } });
    expect(hook.status, hook.text).toBe(201);
    ig.revokeAll();
    world.clock.set(Number(renewed.tokenExpiresAt) - 6 * DAY);
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 0, failed: 1 });
    const dead = await stored();
    expect(dead.readyToPost).toBe(false);
    expect(dead.blockedReason).toBe("Instagram no longer accepts Seedcast's sign-in: reconnect Instagram");
    const notices = await world.sql<{ title: string }>("SELECT title FROM notices WHERE account_id = ? AND kind = 'connection_needs_attention'", owner.accountId);
    expect(notices.length).toBe(1);
    const events = await world.sql<{ type: string; body: string }>("SELECT type, body FROM webhook_events WHERE account_id = ?", owner.accountId);
    expect(events.map((e) => e.type)).toEqual(["connection.needs_attention"]);
    expect(JSON.parse(events[0]!.body).data).toMatchObject({ accountId: connectionId, platform: "instagram", label: "@cornerbakery", blockedReason: "Instagram no longer accepts Seedcast's sign-in: reconnect Instagram" });
  });
});
