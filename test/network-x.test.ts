/**
 * X end to end (issue 26, decisions.md §12/§13), in process against the X stand-in (test/peers/x/server.ts, held to
 * X's OpenAPI description) reached through PLATFORM_ORIGIN_OVERRIDES: the app set on the Instance page, "Connect X"
 * (PKCE S256, Basic auth at the token endpoint), Deny, a post with 2 images, alt text and a first comment delivered
 * once, a thread as replies, caption counting with twitter-text, a lost answer looked up before any resend, and the
 * token care with the clock moved (refresh before expiry, rotation, X's dead-grant word, 503, an answer without a
 * refresh token). SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { connections } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { runDueOnce } from "../src/publishing/dispatcher";
import { xConnector, xWeightedLength, comparableText } from "../src/publishing/networks/x/connector";
import { REFRESH_AT_DELIVERY_MS, connectionForDelivery, refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { FIVE_MIN, solidPng } from "./publishing-fixtures";
import { type XStandIn, X_ACCESS_TOKEN_SECONDS, startXStandIn } from "./peers/x/server";

const CALLBACK = `${BASE}/dashboard/connections/callback/x`;
let world: World;
let x: XStandIn;
let acct: TestAccount;
let email = "";
let connectionId = "";

beforeAll(async () => {
  x = startXStandIn({ redirectUri: CALLBACK });
  world = await createWorld({ env: { PLATFORM_ORIGIN_OVERRIDES: `api.x.com=${x.origin},x.com=${x.origin}`, ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  acct = await world.createAccount({ name: "Corner Bakery", credits: 10 });
  email = (await world.sql<{ email: string }>("SELECT email FROM users WHERE id = ?", acct.userId))[0]!.email;
});
afterAll(async () => {
  await x.stop();
  await world.close();
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login(email, PASSWORD)).status).toBe(303);
  return b;
}

/** Presses "Connect X"; answers the authorization URL the browser is sent to. */
async function start(b: DashboardClient, extra: Record<string, string> = {}): Promise<URL> {
  const res = await b.submit("/dashboard/connections", "/dashboard/connections/connect/x", extra);
  expect(res.status).toBe(303);
  return new URL(res.location ?? "");
}

/** The person's answer on X's authorization page. */
async function decide(authorize: URL, allow: boolean): Promise<URL> {
  const page = await fetch(authorize);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("Seedcast wants to access your X account");
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1]!, m[2]!.replace(/&amp;/g, "&").replace(/&quot;/g, '"'));
  form.set("decision", allow ? "allow" : "deny");
  const res = await fetch(`${x.origin}/i/oauth2/authorize/decision`, { method: "POST", body: form, redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

async function callback(b: DashboardClient, back: URL) {
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return b.get(`${back.pathname}${back.search}`);
}

async function stored(id: string) {
  const row = (await world.deps.store.db.select().from(connections).where(eq(connections.id, id)).get())!;
  const open = openConnection(world.deps, row);
  return { row, token: open.credentials.token ?? "", refreshToken: open.credentials.refreshToken ?? "" };
}

async function asset(alt: string): Promise<{ asset_id: string; alt_text: string }> {
  const a = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(80 + Math.floor(Math.random() * 40), 60), fileName: "bread" });
  return { asset_id: a.id, alt_text: alt };
}

async function scheduleBody(body: Record<string, unknown>): Promise<string> {
  const made = await world.call("POST", "/api/v1/creations", { key: acct.key, body: { type: "social_post", ...body } });
  expect(made.status).toBe(201);
  const scheduled = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: [connectionId] },
  });
  if (scheduled.status !== 200) throw new Error(JSON.stringify(scheduled.json));
  return scheduled.json.post.id as string;
}

async function targetOf(postId: string) {
  return (await world.sql<{ status: string; provider_post_id: string | null; error_message: string | null }>("SELECT status, provider_post_id, error_message FROM scheduled_post_targets WHERE post_id = ?", postId))[0]!;
}

describe("caption counting (twitter-text)", () => {
  test.each([
    ["plain ASCII", "Fresh rye today", 15],
    ["a long URL counts 23", "Order: https://cornerbakery.com/order/a/very/long/path?with=query&and=more", 7 + 23],
    ["a bare domain counts 23", "See cornerbakery.com now", 4 + 23 + 4],
    ["CJK weighs 2 each", "本日のパン", 10],
    ["an emoji with a skin tone weighs 2", "👍🏽", 2],
    ["a family emoji sequence weighs 2", "👨‍👩‍👧", 2],
    ["Latin accents weigh 1", "Crème brûlée", 12],
  ])("%s", (_name, text, expected) => {
    expect(xWeightedLength(text)).toBe(expected);
  });

  test("the connector's limit is 280 weighted: 140 CJK characters fit, 141 do not", () => {
    const limit = xConnector.captionLimit({} as never)!;
    expect(limit.maxGraphemes).toBe(280);
    expect(limit.count!("字".repeat(140))).toBe(280);
    expect(limit.count!("字".repeat(141))).toBe(282);
  });

  test("text compared after a lookup: links and X's t.co links set aside, escapes undone", () => {
    expect(comparableText("Bread &amp; butter https://t.co/abc123")).toBe(comparableText("Bread & butter"));
    expect(comparableText("Order https://t.co/xyz now")).toBe(comparableText("Order https://cornerbakery.com/order now"));
  });
});

describe("connect X", () => {
  test("without an app: Connect X is disabled with the sentence, and the admin gets a link to the setup", async () => {
    const b = await signedIn();
    const page = await b.get("/dashboard/connections");
    expect(page.text).toContain("Your instance admin has not set up X yet.");
    expect(page.text).toContain('<a href="/dashboard/instance#app-x">Set up X</a>');
    expect(page.text).toMatch(/<button type="button" disabled[^>]*>Connect X<\/button>/);
    // Pressing it anyway (a stale page): one sentence, nothing stored, no state left behind.
    const pressed = await b.request("POST", "/dashboard/connections/connect/x", { _csrf: b.csrf() });
    expect(pressed.status).toBe(400);
    expect(pressed.text).toMatch(/notice-error[^>]*>Not connected: Your instance admin has not set up X yet/);
    expect(await world.sql("SELECT * FROM sign_in_states")).toEqual([]);
    expect(await world.sql("SELECT id FROM connections WHERE platform = 'x'")).toEqual([]);
  });

  test("the admin enters the app; Connect X asks X with state and PKCE S256; Allow stores a ready connection", async () => {
    const b = await signedIn();
    await b.get("/dashboard/instance");
    const saved = await b.request("POST", "/dashboard/instance/apps/x", { _csrf: b.csrf(), clientId: x.clientId, clientSecret: x.clientSecret });
    expect(saved.status).toBe(303);
    const page = await b.get("/dashboard/connections");
    expect(page.text).toContain('action="/dashboard/connections/connect/x"');

    const authorize = await start(b);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${x.origin}/i/oauth2/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      client_id: x.clientId,
      redirect_uri: CALLBACK,
      scope: "tweet.read tweet.write users.read media.write offline.access",
      code_challenge_method: "S256",
    });
    const res = await callback(b, await decide(authorize, true));
    expect(res.status).toBe(303);
    const rows = await world.sql<{ id: string; label: string; ready_to_post: unknown; meta: string }>("SELECT id, label, ready_to_post, meta FROM connections WHERE platform = 'x'");
    expect(rows).toHaveLength(1);
    connectionId = rows[0]!.id;
    expect(rows[0]!.label).toBe("@cornerbakery");
    expect(Boolean(rows[0]!.ready_to_post)).toBe(true);
    expect(JSON.parse(rows[0]!.meta).providerAccountId).toBe(x.user.id);
    expect(x.tokenCalls).toEqual([{ grant: "authorization_code", status: 200 }]);
    const s = await stored(connectionId);
    expect(s.refreshToken).toStartWith("xrt-");
    expect(s.row.tokenExpiresAt).toBe(world.clock.now() + X_ACCESS_TOKEN_SECONDS * 1000);
    expect(x.violations).toEqual([]);
  });

  test("Deny: one sentence, nothing stored; signing in again reconnects with the same id", async () => {
    const b = await signedIn();
    const denied = await callback(b, await decide(await start(b), false));
    expect(denied.status).toBe(400);
    expect(denied.text).toContain("You did not allow Seedcast on X, so nothing was connected.");
    expect((await world.sql("SELECT id FROM connections WHERE platform = 'x'")).length).toBe(1);

    const again = await callback(b, await decide(await start(b), true));
    expect(again.status).toBe(303);
    const rows = await world.sql<{ id: string }>("SELECT id FROM connections WHERE platform = 'x'");
    expect(rows.map((r) => r.id)).toEqual([connectionId]);
  });
});

describe("reconnect X from its card", () => {
  test("the reconnect page signs in to X for that connection: same id, new token", async () => {
    const b = await signedIn();
    const before = await stored(connectionId);
    const page = await b.get(`/dashboard/connections/${connectionId}/reconnect`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`<input type="hidden" name="connection" value="${connectionId}">`);
    expect(page.text).toContain("Sign in to X</button>");
    const res = await b.request("POST", "/dashboard/connections/connect/x", { _csrf: b.csrf(), connection: connectionId });
    expect(res.status).toBe(303);
    const back = await callback(b, await decide(new URL(res.location ?? ""), true));
    expect(back.status).toBe(303);
    expect(back.location).toBe(`/dashboard/connections?notice=signed-in-again#connection-${connectionId}`);
    const after = await stored(connectionId);
    expect(after.token).not.toBe(before.token);
    expect((await world.sql("SELECT id FROM connections WHERE platform = 'x'")).length).toBe(1);
  });
});

describe("publishing to X", () => {
  test("2 images with alt text and a first comment: delivered once, the comment a reply to the post", async () => {
    const before = x.posts.length;
    const postId = await scheduleBody({
      caption: "Rye loaves are back on Saturday 🍞 https://cornerbakery.com/rye",
      images: [await asset("Two dark rye loaves on a wooden board"), await asset("The bakery's window at dawn")],
      first_comment: "Pre-order until Friday noon.",
    });
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    const target = await targetOf(postId);
    expect(target.status).toBe("published");
    const sent = x.posts.slice(before);
    expect(sent).toHaveLength(2);
    const [post, comment] = sent as [(typeof sent)[0], (typeof sent)[0]];
    expect(post.text).toBe("Rye loaves are back on Saturday 🍞 https://cornerbakery.com/rye");
    expect(post.mediaIds).toHaveLength(2);
    expect(post.mediaIds.map((id) => x.media.get(id)?.altText)).toEqual(["Two dark rye loaves on a wooden board", "The bakery's window at dawn"]);
    expect(comment).toMatchObject({ text: "Pre-order until Friday noon.", inReplyTo: post.id, mediaIds: [] });
    expect(target.provider_post_id).toBe(post.id);
    // Run again: nothing more is sent.
    await runDueOnce(world.deps);
    expect(x.posts.length).toBe(before + 2);
    expect(x.violations).toEqual([]);
  });

  test("a thread: each part a reply to the one before it", async () => {
    const before = x.posts.length;
    const postId = await scheduleBody({ caption: "Our week in bread, a thread", thread: [{ caption: "Monday: spelt" }, { caption: "Tuesday: rye" }] });
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect((await targetOf(postId)).status).toBe("published");
    const [a, b, c] = x.posts.slice(before);
    expect(b!.inReplyTo).toBe(a!.id);
    expect(c!.inReplyTo).toBe(b!.id);
  });

  test("over 280 weighted: refused at scheduling with X named", async () => {
    const made = await world.call("POST", "/api/v1/creations", { key: acct.key, body: { type: "social_post", caption: "字".repeat(141) } });
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: [connectionId] },
    });
    expect(scheduled.status).toBe(409);
    expect(scheduled.json.error).toBe("not_schedulable");
    expect(JSON.stringify(scheduled.json)).toContain("X");
  });

  test("the answer to the post is lost: the post is looked up and found, nothing is sent twice", async () => {
    const before = x.posts.length;
    const postId = await scheduleBody({ caption: "Bread & butter day https://cornerbakery.com/b", images: [await asset("Butter on bread")], first_comment: "Doors open at 8." });
    world.clock.advance(FIVE_MIN + 60_000);
    x.mode.storeThenCut = 1;
    await runDueOnce(world.deps);
    // The dispatcher retries after its backoff: the lookup finds the post, then the comment goes out once.
    for (let i = 0; i < 5 && (await targetOf(postId)).status !== "published"; i++) {
      world.clock.advance(10 * 60_000);
      await runDueOnce(world.deps);
    }
    const target = await targetOf(postId);
    expect(target.status).toBe("published");
    const sent = x.posts.slice(before);
    expect(sent.map((p) => p.text)).toEqual(["Bread & butter day https://cornerbakery.com/b", "Doors open at 8."]);
    expect(sent[1]!.inReplyTo).toBe(sent[0]!.id);
    expect(target.provider_post_id).toBe(sent[0]!.id);
    expect(x.violations).toEqual([]);
  });
});

describe("token care (the clock moved)", () => {
  test("a delivery refreshes a token with under 5 minutes left; the refresh token rotates and the old one is refused", async () => {
    const before = await stored(connectionId);
    const live = x.liveRefreshTokens();
    world.clock.set(before.row.tokenExpiresAt! - REFRESH_AT_DELIVERY_MS + 60_000);
    const fresh = await connectionForDelivery(world.deps, before.row);
    const after = await stored(connectionId);
    expect(fresh.credentials.token).toBe(after.token);
    expect(after.token).not.toBe(before.token);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(x.tokenCalls.at(-1)).toEqual({ grant: "refresh_token", status: 200 });
    // The spent refresh token is refused by X with its own word.
    const reuse = await fetch(`${x.origin}/2/oauth2/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${x.clientId}:${x.clientSecret}`).toString("base64")}`, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: before.refreshToken }),
    });
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toEqual({ error: "invalid_request", error_description: "Value passed for the token was invalid." });
    // Rotation: the spent one is gone, one new one lives.
    expect(x.liveRefreshTokens()).toBe(live);
  });

  test("the daily job refreshes what expires within 7 days", async () => {
    const before = await stored(connectionId);
    const calls = x.tokenCalls.length;
    world.clock.advance(60_000); // (a refresh at the same instant would give the same expiry)
    expect(await refreshExpiringTokens(world.deps)).toMatchObject({ refreshed: 1, failed: 0 });
    expect(x.tokenCalls.length).toBe(calls + 1);
    expect((await stored(connectionId)).refreshToken).not.toBe(before.refreshToken);
  });

  test("50 concurrent deliveries on the expiring connection: one refresh, all with the new token", async () => {
    const before = await stored(connectionId);
    world.clock.set(before.row.tokenExpiresAt! - 60_000);
    const calls = x.tokenCalls.length;
    const opened = await Promise.all(Array.from({ length: 50 }, async () => connectionForDelivery(world.deps, (await stored(connectionId)).row)));
    expect(x.tokenCalls.length).toBe(calls + 1);
    const after = await stored(connectionId);
    expect(new Set(opened.map((c) => c.credentials.token))).toEqual(new Set([after.token]));
    expect(after.token).not.toBe(before.token);
  });

  test("503 stays ready with its token; an answer without a refresh token keeps the stored one", async () => {
    const before = await stored(connectionId);
    x.mode.tokenUnavailable = 1;
    expect(await refreshExpiringTokens(world.deps)).toMatchObject({ refreshed: 0, failed: 1 });
    const still = await stored(connectionId);
    expect(Boolean(still.row.readyToPost)).toBe(true);
    expect(still.token).toBe(before.token);

    x.mode.refreshWithoutNewToken = true;
    world.clock.advance(60_000);
    expect(await refreshExpiringTokens(world.deps)).toMatchObject({ refreshed: 1, failed: 0 });
    x.mode.refreshWithoutNewToken = false;
    const kept = await stored(connectionId);
    expect(kept.token).not.toBe(before.token);
    expect(kept.refreshToken).toBe(before.refreshToken);
  });

  test("X's invalid_request for a revoked refresh token: not ready with the reconnect sentence, and the event", async () => {
    const hook = await world.call("POST", "/api/v1/webhooks", { key: acct.key, body: { url: "http://127.0.0.1:9/hook", events: ["connection.needs_attention"] } });
    expect(hook.status).toBe(201);
    x.revokeAll();
    world.clock.advance(60_000);
    await refreshExpiringTokens(world.deps);
    const after = await stored(connectionId);
    expect(Boolean(after.row.readyToPost)).toBe(false);
    expect(after.row.blockedReason).toBe("X no longer accepts Seedcast's sign-in: reconnect X");
    const notices = await world.sql<{ title: string }>("SELECT title FROM notices WHERE account_id = ? AND kind = 'connection_needs_attention'", acct.accountId);
    expect(notices.some((n) => n.title.includes("X no longer accepts Seedcast's sign-in"))).toBe(true);
    const events = await world.sql<{ type: string; body: string }>("SELECT type, body FROM webhook_events WHERE account_id = ?", acct.accountId);
    expect(events.map((e) => e.type)).toEqual(["connection.needs_attention"]);
    expect(JSON.parse(events[0]!.body).data).toMatchObject({ platform: "x", label: "@cornerbakery", blockedReason: "X no longer accepts Seedcast's sign-in: reconnect X" });
  });
});
