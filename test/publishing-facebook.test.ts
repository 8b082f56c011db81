/**
 * Facebook Pages end to end against the stand-in (test/peers/facebook, written from Meta's documentation pages),
 * reached through PLATFORM_ORIGIN_OVERRIDES: Facebook Login through the dashboard's routes, then the chooser (one
 * connection per ticked Page, the Page token sealed; signing in again reconnects the same Page, keeping its id);
 * denied consent with nothing stored; a post with 2 photos (alt text as `alt_text_custom`) and a first comment
 * delivered once at its time (photos unpublished, then one feed post with attached_media, then the comment); a post
 * due in an hour held by Facebook itself (`scheduled_publish_time`, photos `temporary`), confirmed once Facebook
 * publishes it; cancel withdraws a held one; an answer to the feed post cut off after Facebook stored it → the Page's
 * posts are looked up, nothing twice; a revoked Page token → the check is not ready with the reconnect reason.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { SCOPES } from "../src/auth/scopes";
import { connections } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { mintKey } from "../src/modules/auth/keys-service";
import { checkConnection } from "../src/modules/connections/service";
import { confirmProviderHeldPosts } from "../src/modules/schedule/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { openConnection } from "../src/store/connections";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";
import { type FacebookStandIn, startFacebookStandIn } from "./peers/facebook/server";
import { postRows, solidPng } from "./publishing-fixtures";

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const CALLBACK = `${BASE}/dashboard/connections/callback/facebook`;
let world: World;
let fb: FacebookStandIn;
let owner: { accountId: string; userId: string };
let key = "";
let bakeryId = "";

beforeAll(async () => {
  fb = startFacebookStandIn({ redirectUri: CALLBACK, pages: ["Corner Bakery", "Bakery Events"], now: () => world.clock.now() });
  world = await createWorld({ env: { PLATFORM_ORIGIN_OVERRIDES: fb.overrides, META_APP_ID: fb.clientId, META_APP_SECRET: fb.clientSecret } });
  owner = await createAccount(world.deps, { name: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD, credits: 10 });
  key = (await mintKey(world.deps, { accountId: owner.accountId, userId: owner.userId, name: "test key", groups: SCOPES, expiresDays: 90 })).key;
});

afterAll(async () => {
  await world.close();
  await fb.stop();
});

afterEach(() => {
  expect(fb.violations).toEqual([]);
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login("anna@bakery.test")).status).toBe(303);
  return b;
}

/** Connect Facebook Page → Facebook's dialog → Continue or Cancel → back to the callback. */
async function connect(b: DashboardClient, allow: boolean) {
  const start = await b.submit("/dashboard/connections", "/dashboard/connections/connect/facebook", {});
  expect(start.status).toBe(303);
  const dialog = new URL(start.location ?? "");
  expect(`${dialog.origin}${dialog.pathname}`).toBe(`${fb.origin}/v23.0/dialog/oauth`);
  expect(dialog.searchParams.get("scope")).toBe("pages_show_list,pages_manage_posts,pages_read_engagement");
  expect(await (await fetch(dialog)).text()).toContain("Seedcast is requesting access to your Pages");
  const form = new URLSearchParams({ redirect_uri: dialog.searchParams.get("redirect_uri") ?? "", state: dialog.searchParams.get("state") ?? "", scope: dialog.searchParams.get("scope") ?? "", decision: allow ? "allow" : "deny" });
  const decided = await fetch(`${fb.origin}/dialog/oauth/decision`, { method: "POST", body: form, redirect: "manual" });
  const back = new URL(decided.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return b.get(`${back.pathname}${back.search}`);
}

/** The chooser's hidden token and the Pages it offers, read from the page. */
function chooserOf(text: string): { chooser: string; pages: string[] } {
  const chooser = /name="chooser" value="([^"]+)"/.exec(text)?.[1] ?? "";
  const pages = [...text.matchAll(/name="account" value="([^"]+)"/g)].map((m) => m[1]!);
  return { chooser, pages };
}

const rows = () => world.sql<{ id: string; label: string; ready_to_post: unknown; meta: string; credentials_sealed: string; token_expires_at: unknown }>(
  "SELECT id, label, ready_to_post, meta, credentials_sealed, token_expires_at FROM connections WHERE platform = 'facebook' ORDER BY label",
);

async function schedulePost(caption: string, inMs: number, firstComment: string | null) {
  const wide = await ingestImageBytes(world.deps, owner.accountId, { bytes: await solidPng(320, 200), fileName: "wide" });
  const webp = new Uint8Array(await (await import("sharp")).default({ create: { width: 200, height: 300, channels: 3, background: "#c84" } }).webp().toBuffer());
  const tall = await ingestImageBytes(world.deps, owner.accountId, { bytes: webp, fileName: "tall" });
  const made = await world.call("POST", "/api/v1/creations", {
    key,
    body: {
      type: "social_post",
      caption,
      images: [
        { asset_id: wide.id, alt_text: "Sourdough loaves on a rack" },
        { asset_id: tall.id, alt_text: "A baker dusting flour" },
      ],
      ...(firstComment ? { first_comment: firstComment } : {}),
    },
  });
  expect(made.status).toBe(201);
  const res = await world.call("POST", "/api/v1/schedule", {
    key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + inMs), targets: [bakeryId] },
  });
  expect(res.status, res.text).toBe(200);
  return res.json.post as { id: string };
}

describe("connect Facebook Pages by signing in, with the chooser", () => {
  test("denied consent: one sentence, nothing stored", async () => {
    const res = await connect(await signedIn(), false);
    expect(res.status).toBe(400);
    expect(res.text).toContain("You did not allow Seedcast on Facebook, so nothing was connected.");
    expect(await rows()).toEqual([]);
  });

  test("allowed: the chooser lists the Pages; the one ticked becomes a ready connection holding its Page token, sealed", async () => {
    const b = await signedIn();
    const res = await connect(b, true);
    expect(res.status).toBe(200);
    expect(res.text).toContain("Choose the Pages to connect");
    const { chooser, pages } = chooserOf(res.text);
    expect(pages).toEqual(fb.pages.map((p) => p.id));
    expect(await rows()).toEqual([]);
    const bakery = fb.pages.find((p) => p.name === "Corner Bakery")!;
    const chosen = await b.request("POST", "/dashboard/connections/choose/facebook", { _csrf: b.csrf(), chooser, account: [bakery.id] });
    expect(chosen.status).toBe(303);
    expect(chosen.location).toContain("notice=signed-in");
    const [row] = await rows();
    expect(row).toMatchObject({ label: "Corner Bakery", token_expires_at: null });
    expect(Boolean(row!.ready_to_post)).toBe(true);
    expect(JSON.parse(row!.meta).providerAccountId).toBe(bakery.id);
    expect(row!.credentials_sealed).not.toContain(bakery.token);
    const raw = (await world.deps.store.db.select().from(connections).where(eq(connections.id, row!.id)).get())!;
    expect(openConnection(world.deps, raw).credentials.token).toBe(bakery.token);
    bakeryId = row!.id;
    // The chooser is good once.
    const again = await b.request("POST", "/dashboard/connections/choose/facebook", { _csrf: b.csrf(), chooser, account: [bakery.id] });
    expect(again.status).toBe(400);
    expect(await rows()).toHaveLength(1);
  });

  test("again, both Pages ticked: the connected one reconnects (same id), the other is added", async () => {
    const b = await signedIn();
    const { chooser, pages } = chooserOf((await connect(b, true)).text);
    const chosen = await b.request("POST", "/dashboard/connections/choose/facebook", { _csrf: b.csrf(), chooser, account: pages });
    expect(chosen.status).toBe(303);
    const all = await rows();
    expect(all.map((r) => r.label)).toEqual(["Bakery Events", "Corner Bakery"]);
    expect(all.find((r) => r.label === "Corner Bakery")!.id).toBe(bakeryId);
  });
});

describe("publishing to a Facebook Page", () => {
  test("2 photos with alt text and a first comment, due in 6 minutes: one feed post with both photos, then the comment, once", async () => {
    const post = await schedulePost("Fresh sourdough today", 6 * MINUTE, "Opening hours: 7 to 2");
    world.clock.advance(6 * MINUTE + 1000);
    await runDueOnce(world.deps);
    await runDueOnce(world.deps);
    expect(fb.posts).toHaveLength(1);
    const sent = fb.posts[0]!;
    expect(sent).toMatchObject({ message: "Fresh sourdough today", scheduledAt: null, published: true });
    const photos = sent.photoIds.map((id) => fb.photos.get(id)!);
    expect(photos.map((p) => [p.altText, p.type, p.published, p.temporary])).toEqual([
      ["Sourdough loaves on a rack", "image/png", false, false],
      ["A baker dusting flour", "image/jpeg", false, false],
    ]);
    expect(sent.comments.map((c) => c.message)).toEqual(["Opening hours: 7 to 2"]);
    const { targets } = await postRows(world.deps, post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: sent.id, partsOut: [sent.id, sent.comments[0]!.id] });
    expect(targets[0]!.publishedUrl).toBe(`https://www.facebook.com/${sent.pageId}/posts/${sent.id.split("_")[1]}`);
  });

  test("due in an hour without a first comment: Facebook holds it (scheduled_publish_time, temporary photos); confirmed once it is out", async () => {
    const post = await schedulePost("Rye bread is back", HOUR, null);
    const held = fb.posts.at(-1)!;
    expect(held.message).toBe("Rye bread is back");
    expect(held.published).toBe(false);
    expect(held.scheduledAt).toBe(Math.floor((world.clock.now() + HOUR) / 1000));
    expect(held.photoIds.map((id) => fb.photos.get(id)!.temporary)).toEqual([true, true]);
    let { targets } = await postRows(world.deps, post.id);
    expect(targets[0]).toMatchObject({ status: "scheduled", heldByProvider: true, providerPostId: held.id });
    world.clock.advance(HOUR + 5 * MINUTE);
    fb.publishDue(world.clock.now());
    await confirmProviderHeldPosts(world.deps);
    ({ targets } = await postRows(world.deps, post.id));
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: held.id });
    expect(fb.posts.filter((p) => p.message === "Rye bread is back")).toHaveLength(1);
  });

  test("cancel withdraws a post Facebook holds", async () => {
    const post = await schedulePost("Cancelled croissants", HOUR, null);
    const held = fb.posts.at(-1)!;
    const del = await world.call("DELETE", `/api/v1/schedule/${post.id}`, { key });
    expect(del.json).toEqual({ id: post.id, cancelled: true, providerPostWithdrawn: true });
    expect(held.deleted).toBe(true);
  });

  test("the answer to the feed post cut off after Facebook stored it: looked up on the Page, nothing twice", async () => {
    fb.mode.feedThenCut = 1;
    const post = await schedulePost("Pretzels on Sunday", 6 * MINUTE, "Pre-order at the counter");
    world.clock.advance(6 * MINUTE + 1000);
    await runDueOnce(world.deps);
    let { targets } = await postRows(world.deps, post.id);
    expect(targets[0]!.status).not.toBe("published");
    for (let i = 0; i < 5 && targets[0]!.status !== "published"; i++) {
      world.clock.advance(HOUR);
      await runDueOnce(world.deps);
      ({ targets } = await postRows(world.deps, post.id));
    }
    expect(targets[0]!.status).toBe("published");
    const made = fb.posts.filter((p) => p.message === "Pretzels on Sunday");
    expect(made).toHaveLength(1);
    expect(made[0]!.comments.map((c) => c.message)).toEqual(["Pre-order at the counter"]);
    expect(targets[0]!.providerPostId).toBe(made[0]!.id);
  });

  test("a revoked Page token: the check is not ready, saying to reconnect Facebook", async () => {
    fb.revokeAll();
    const view = await checkConnection(world.deps, bakeryId);
    expect(view.readyToPost).toBe(false);
    expect(view.blockedReason).toContain("Facebook no longer accepts Seedcast's sign-in: reconnect Facebook");
  });
});
