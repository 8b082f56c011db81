/**
 * Pinterest end to end against the stand-in held to Pinterest's OpenAPI description (test/peers/pinterest/server.ts:
 * every request Seedcast sends and every answer is validated; `violations` must stay empty), reached through
 * PLATFORM_ORIGIN_OVERRIDES: sign in through the dashboard's routes, tick boards in the chooser (one connection per
 * board; Cancel and ticking nothing store nothing), a carousel pin of 2 images with alt text delivered once, what
 * Pinterest cannot take refused at scheduling (409), a lost answer found on the board, and token care with the clock
 * moved: a refresh before expiry, continuous refresh tokens used once (shared by the boards of one sign-in), 503
 * stays ready, an answer without a refresh token keeps the old one, and a dead grant (code 283) → not ready plus the
 * connection.needs_attention event.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { runDueOnce } from "../src/publishing/dispatcher";
import { refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { DashboardClient } from "./helpers/dashboard-client";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { type PinterestStandIn, startPinterestStandIn } from "./peers/pinterest/server";
import { postRows, solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const CALLBACK = `${BASE}/dashboard/connections/callback/pinterest`;
let world: World;
let pinterest: PinterestStandIn;
let acct: TestAccount;
let email = "";
let boardConnection = "";

beforeAll(async () => {
  let now = () => Date.now();
  pinterest = startPinterestStandIn({ now: () => now() });
  world = await createWorld({
    env: {
      PLATFORM_ORIGIN_OVERRIDES: `www.pinterest.com=${pinterest.origin},api.pinterest.com=${pinterest.origin}`,
      PINTEREST_APP_ID: pinterest.clientId,
      PINTEREST_APP_SECRET: pinterest.clientSecret,
      // The needs-attention webhook's receiver address in the last test.
      ALLOW_PRIVATE_HOSTS: "127.0.0.1",
    },
  });
  now = () => world.clock.now();
  acct = await world.createAccount();
  const [user] = await world.sql<{ email: string }>("SELECT email FROM users WHERE id = ?", acct.userId);
  email = user!.email;
});

afterAll(async () => {
  await world.close();
  await pinterest.stop();
});

afterEach(() => {
  expect(pinterest.violations).toEqual([]);
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login(email)).status).toBe(303);
  return b;
}

/** Connect Pinterest → Pinterest's page (Give access or Cancel) → back in the dashboard. */
async function signIn(b: DashboardClient, allow: boolean) {
  const res = await b.submit("/dashboard/connections", "/dashboard/connections/connect/pinterest", {});
  expect(res.status).toBe(303);
  const authorize = new URL(res.location ?? "");
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${pinterest.origin}/oauth/`);
  expect(authorize.searchParams.get("scope")).toBe("boards:read,pins:read,pins:write");
  const form = new URLSearchParams(authorize.searchParams);
  form.set("decision", allow ? "allow" : "cancel");
  const answer = await fetch(`${pinterest.origin}/oauth/`, { method: "POST", body: form, redirect: "manual" });
  const back = new URL(answer.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return b.get(`${back.pathname}${back.search}`);
}

/** The Pinterest connections (token_expires_at as a number: PostgreSQL answers bigint as text). */
const rows = async () =>
  (
    await world.sql<{ id: string; label: string; ready_to_post: unknown; token_expires_at: number | string | null; meta: string; blocked_reason: string | null }>(
      "SELECT id, label, ready_to_post, token_expires_at, meta, blocked_reason FROM connections WHERE platform = 'pinterest' ORDER BY label",
    )
  ).map((r) => ({ ...r, token_expires_at: r.token_expires_at === null ? null : Number(r.token_expires_at) }));

async function credentialsOf(id: string) {
  const [row] = await world.sql("SELECT * FROM connections WHERE id = ?", id);
  return openConnection(world.deps, { ...row, readyToPost: Boolean(row.ready_to_post), accountId: row.account_id, credentialsSealed: row.credentials_sealed, sessionSealed: row.session_sealed }).credentials;
}

describe("connect Pinterest: sign in, then choose boards", () => {
  test("Cancel: one sentence, nothing stored", async () => {
    const res = await signIn(await signedIn(), false);
    expect(res.status).toBe(400);
    expect(res.text).toContain("You did not allow Seedcast on Pinterest, so nothing was connected.");
    expect(await rows()).toEqual([]);
  });

  test("the chooser lists the boards; ticking nothing connects nothing", async () => {
    const b = await signedIn();
    const chooser = await signIn(b, true);
    expect(chooser.status).toBe(200);
    for (const board of pinterest.boards) expect(chooser.text).toContain(board.name);
    const state = /name="chooser" value="([^"]+)"/.exec(chooser.text)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(chooser.text)![1]!;
    const res = await b.request("POST", "/dashboard/connections/choose/pinterest", { _csrf: csrf, chooser: state });
    expect(res.status).toBe(400);
    expect(res.text).toContain("Nothing was ticked, so nothing was connected.");
    expect(await rows()).toEqual([]);
  });

  test("two boards ticked: two ready connections with the sign-in's tokens; the chooser cannot be used twice", async () => {
    const b = await signedIn();
    const chooser = await signIn(b, true);
    const [bread, cakes] = pinterest.boards;
    const state = /name="chooser" value="([^"]+)"/.exec(chooser.text)![1]!;
    const csrf = /name="_csrf" value="([^"]+)"/.exec(chooser.text)![1]!;
    const body = { _csrf: csrf, chooser: state, account: [bread!.id, cakes!.id] };
    const res = await b.request("POST", "/dashboard/connections/choose/pinterest", body);
    expect(res.status).toBe(303);
    const made = await rows();
    expect(made.map((r) => r.label)).toEqual(["Bread we bake (@harbourbakery)", "Cakes for weddings (@harbourbakery)"]);
    expect(made.every((r) => Boolean(r.ready_to_post) && r.token_expires_at === world.clock.now() + 30 * DAY)).toBe(true);
    expect(made.map((r) => JSON.parse(r.meta).providerAccountId)).toEqual([bread!.id, cakes!.id]);
    boardConnection = made[0]!.id;
    const again = await b.request("POST", "/dashboard/connections/choose/pinterest", body);
    expect(again.status).toBe(400);
    expect(again.text).toContain("That Pinterest sign-in link is no longer valid");
    expect(await rows()).toHaveLength(2);
  });
});

async function schedule(caption: string, extra: Record<string, unknown> = {}, images = 2) {
  const assets = [];
  for (let i = 0; i < images; i++) assets.push(await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(300 + i, 400), fileName: `pin${i}` }));
  const made = await world.call("POST", "/api/v1/creations", {
    key: acct.key,
    body: { type: "social_post", caption, images: assets.map((a, i) => ({ asset_id: a.id, alt_text: `Loaf number ${i + 1}` })), ...extra },
  });
  expect(made.status).toBe(201);
  return world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: [boardConnection] },
  });
}

describe("pinning", () => {
  test("2 images → one carousel pin on the board, title from the first line, alt text; once", async () => {
    const res = await schedule("Sourdough week\nEvery loaf is shaped by hand.");
    expect(res.status).toBe(200);
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    await runDueOnce(world.deps);
    expect(pinterest.pins).toHaveLength(1);
    const pin = pinterest.pins[0]!;
    expect(pin).toMatchObject({ boardId: pinterest.boards[0]!.id, sourceType: "multiple_image_base64", title: "Sourdough week", description: "Sourdough week\nEvery loaf is shaped by hand.", altText: "Loaf number 1; Loaf number 2" });
    expect(pin.images.map((i) => i.contentType)).toEqual(["image/png", "image/png"]);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: pin.id, publishedUrl: `https://www.pinterest.com/pin/${pin.id}/` });
  });

  test("a first comment, or no image: refused at scheduling (409), nothing scheduled", async () => {
    const comment = await schedule("With a comment", { first_comment: "Hello" });
    expect(comment.status).toBe(409);
    expect(comment.json).toMatchObject({ error: "not_schedulable", problems: [{ platform: "pinterest" }] });
    const bare = await schedule("No picture", {}, 0);
    expect(bare.status).toBe(409);
    expect(bare.json).toMatchObject({ error: "not_schedulable", problems: [{ platform: "pinterest" }] });
  });

  test("the answer is lost after Pinterest stored the pin: the board look-up finds it, nothing pinned twice", async () => {
    const res = await schedule("Rye\nDark and dense.");
    const before = pinterest.pins.length;
    pinterest.mode.storeThenCut = 1;
    world.clock.advance(HOUR + 1000);
    for (let i = 0; i < 4; i++) {
      await runDueOnce(world.deps);
      world.clock.advance(10 * 60 * 1000);
    }
    expect(pinterest.pins.length - before).toBe(1);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: pinterest.pins.at(-1)!.id });
  });
});

describe("token care, the clock moved", () => {
  test("503 at the token endpoint: both boards stay ready, tokens unchanged", async () => {
    const [a] = await rows();
    const before = await credentialsOf(a!.id);
    world.clock.advance(24 * DAY); // inside the 7 days before expiry
    pinterest.mode.tokenUnavailable = 5;
    await refreshExpiringTokens(world.deps);
    pinterest.mode.tokenUnavailable = 0;
    const after = await rows();
    expect(after.every((r) => Boolean(r.ready_to_post))).toBe(true);
    expect(await credentialsOf(a!.id)).toEqual(before);
  });

  test("a refresh before expiry: the continuous refresh token is used once, both boards take the new pair", async () => {
    const [a, b] = await rows();
    const old = (await credentialsOf(a!.id)).refreshToken!;
    expect((await credentialsOf(b!.id)).refreshToken).toBe(old);
    // One refresh for the two boards: the second was renewed by the first's write.
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 1, failed: 0 });
    const uses = pinterest.tokenRequests.filter((r) => r.grantType === "refresh_token" && r.refreshToken === old && r.status === 200);
    expect(uses).toHaveLength(1);
    const newA = await credentialsOf(a!.id);
    const newB = await credentialsOf(b!.id);
    expect(newA.refreshToken).not.toBe(old);
    expect(newB).toMatchObject({ token: newA.token, refreshToken: newA.refreshToken });
    expect(pinterest.liveRefreshTokens.has(old)).toBe(false);
    const after = await rows();
    expect(after.every((r) => Boolean(r.ready_to_post) && r.token_expires_at === world.clock.now() + 30 * DAY)).toBe(true);
  });

  test("a refresh answer without a refresh token keeps the one stored", async () => {
    const [a, b] = await rows();
    const before = await credentialsOf(a!.id);
    world.clock.advance(24 * DAY);
    pinterest.mode.refreshWithoutRefreshToken = 2;
    expect(await refreshExpiringTokens(world.deps)).toEqual({ refreshed: 2, failed: 0 });
    for (const id of [a!.id, b!.id]) {
      const now = await credentialsOf(id);
      expect(now.refreshToken).toBe(before.refreshToken);
      expect(now.token).not.toBe(before.token);
    }
    expect((await rows()).every((r) => Boolean(r.ready_to_post))).toBe(true);
  });

  test("the grant revoked (code 283): not ready with the reconnect sentence, and connection.needs_attention", async () => {
    const hook = await world.call("POST", "/api/v1/webhooks", { key: acct.key, body: { url: "http://127.0.0.1:9/hook", events: ["connection.needs_attention"] } });
    expect(hook.status).toBe(201);
    world.clock.advance(24 * DAY);
    pinterest.revokeAll();
    await refreshExpiringTokens(world.deps);
    const after = await rows();
    expect(after.every((r) => !r.ready_to_post && r.blocked_reason === "Pinterest no longer accepts Seedcast's sign-in: reconnect Pinterest")).toBe(true);
    const events = await world.sql<{ type: string }>("SELECT type FROM webhook_events WHERE account_id = ?", acct.accountId);
    expect(events.map((e) => e.type)).toEqual(["connection.needs_attention", "connection.needs_attention"]);
  });
});
