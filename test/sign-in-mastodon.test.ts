/**
 * Mastodon by sign-in through the dashboard's routes (in process), against the Mastodon-API fake's apps endpoint,
 * authorization page and token endpoint (test/peers/mastodon-sign-in.ts, written from docs.joinmastodon.org):
 * Seedcast registers once per server, sends the person to the server with a `state` and PKCE S256, and on the way
 * back stores a connection that is checked and ready. Denied consent, a forged, stale, reused or foreign `state`,
 * and a refused code exchange each end on the connections page with one sentence and nothing stored. Signing in
 * again with the same account reconnects (same id, new token, pending posts keep it).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount } from "../src/modules/accounts/service";
import { schedulePost } from "../src/modules/schedule/service";
import { checkConnection } from "../src/modules/connections/service";
import { isoAt } from "../src/lib/clock";
import { makeCreation } from "./publishing-fixtures";
import { openConnection } from "../src/store/connections";
import { SIGN_IN_STATE_TTL_MS, tidySignInStates } from "../src/publishing/sign-in/state";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";
import { type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { startWebhookReceiver } from "./peers/webhook-receiver";

let world: World;
let mastodon: MastodonServer;
let owner: { accountId: string; userId: string };
let notMastodon: Awaited<ReturnType<typeof startWebhookReceiver>>;
const CALLBACK = `${BASE}/dashboard/connections/callback/mastodon`;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  mastodon = await startMastodonServer({ now: () => world.clock.now() });
  notMastodon = await startWebhookReceiver({ secret: "whsec-0123456789abcdef" });
  owner = await createAccount(world.deps, { name: "Harbour Café", email: "o@harbour.test", password: PASSWORD });
});

afterAll(async () => {
  await mastodon.stop();
  await notMastodon.stop();
  await world.close();
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login("o@harbour.test")).status).toBe(303);
  return b;
}

/** Presses "Sign in with Mastodon" with `server`; answers the 303's authorization URL. */
async function start(b: DashboardClient, server: string, extra: Record<string, string> = {}): Promise<URL> {
  const res = await b.submit("/dashboard/connections", "/dashboard/connections/connect/mastodon", { server, ...extra });
  expect(res.status).toBe(303);
  return new URL(res.location ?? "");
}

/** The person's answer on the server's authorization page (its two forms post the request back, Deny with _method=delete). */
async function answer(authorize: URL, allow: boolean): Promise<URL> {
  const page = await fetch(authorize);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("would like permission to access your account");
  const form = new URLSearchParams(authorize.searchParams);
  if (!allow) form.set("_method", "delete");
  const res = await fetch(`${mastodon.url}/oauth/authorize`, { method: "POST", body: form, redirect: "manual" });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

/** Follows the server's redirect back into the dashboard. */
async function callback(b: DashboardClient, back: URL) {
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  return b.get(`${back.pathname}${back.search}`);
}

const connectionRows = () => world.sql<{ id: string; label: string; ready_to_post: unknown; meta: string }>("SELECT id, label, ready_to_post, meta FROM connections");

describe("connect Mastodon by signing in", () => {
  let connectionId = "";

  test("the first sign-in registers Seedcast at the server once, asks with state and PKCE S256, and stores a ready connection", async () => {
    const b = await signedIn();
    const authorize = await start(b, mastodon.url);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${mastodon.url}/oauth/authorize`);
    const app = mastodon.state.signIn.apps[0]!;
    expect(mastodon.state.signIn.apps).toHaveLength(1);
    expect(app.redirectUris).toEqual([CALLBACK]);
    expect(app.scopes).toEqual(["read:accounts", "write:statuses", "write:media"]);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: "code",
      client_id: app.clientId,
      redirect_uri: CALLBACK,
      scope: "read:accounts write:statuses write:media",
      code_challenge_method: "S256",
    });
    expect(authorize.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The client secret is kept sealed, never in clear.
    const kept = await world.sql<{ client_id: string; client_secret_sealed: string }>("SELECT client_id, client_secret_sealed FROM sign_in_apps");
    expect(kept).toHaveLength(1);
    expect(kept[0]!.client_secret_sealed).not.toContain(app.clientSecret);

    const back = await answer(authorize, true);
    const res = await callback(b, back);
    expect(res.status).toBe(303);
    const rows = await connectionRows();
    expect(rows).toHaveLength(1);
    connectionId = rows[0]!.id;
    expect(res.location).toBe(`/dashboard/connections?notice=signed-in#connection-${connectionId}`);
    expect(rows[0]!.label).toBe(`@seedcast@${new URL(mastodon.url).host}`);
    expect(Boolean(rows[0]!.ready_to_post)).toBe(true);
    expect(JSON.parse(rows[0]!.meta)).toMatchObject({ providerAccountId: mastodon.state.account.id, software: "mastodon", nativeScheduling: true, maxCharacters: 500 });
    // The token the server issued is the one stored (sealed), and the exchange carried the PKCE verifier.
    const [row] = await world.sql("SELECT * FROM connections WHERE id = ?", connectionId);
    const open = openConnection(world.deps, { ...row, readyToPost: true, accountId: row.account_id, credentialsSealed: row.credentials_sealed, sessionSealed: row.session_sealed });
    expect(mastodon.state.signIn.issuedTokens.has(open.credentials.token ?? "")).toBe(true);
    expect(mastodon.state.signIn.tokenRequests.at(-1)).toMatchObject({ grantType: "authorization_code", status: 200 });
    expect(mastodon.state.signIn.tokenRequests.at(-1)!.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const page = await b.get("/dashboard/connections?notice=signed-in");
    expect(page.text).toContain("Ready to post.");
    expect(page.text).not.toContain(open.credentials.token ?? "(none)");
  });

  test("the same callback a second time: the state was used, one sentence, nothing changes", async () => {
    const b = await signedIn();
    const back = await answer(await start(b, mastodon.url), true);
    expect((await callback(b, back)).status).toBe(303);
    const before = await world.sql("SELECT id, updated_at FROM connections");
    const again = await callback(b, back);
    expect(again.status).toBe(400);
    expect(again.text).toContain("That Mastodon sign-in link is no longer valid");
    expect(await world.sql("SELECT id, updated_at FROM connections")).toEqual(before);
  });

  test("Deny: one sentence, nothing stored", async () => {
    await world.sql("DELETE FROM connections");
    const b = await signedIn();
    const back = await answer(await start(b, mastodon.url), false);
    expect(back.searchParams.get("error")).toBe("access_denied");
    const res = await callback(b, back);
    expect(res.status).toBe(400);
    expect(res.text).toContain("You did not allow Seedcast on Mastodon, so nothing was connected.");
    expect(await connectionRows()).toEqual([]);
  });

  test("a forged state, a stale one (past 10 minutes) and another session's: one sentence each, nothing stored", async () => {
    const b = await signedIn();
    const back = await answer(await start(b, mastodon.url), true);
    const forged = new URL(back);
    forged.searchParams.set("state", "A".repeat(43));
    const forgedRes = await callback(b, forged);
    expect(forgedRes.status).toBe(400);
    expect(forgedRes.text).toContain("That Mastodon sign-in link is no longer valid");

    // Another browser (another session) cannot finish this one's sign-in…
    const other = await signedIn();
    const stolen = await callback(other, back);
    expect(stolen.status).toBe(400);
    expect(stolen.text).toContain("no longer valid");

    // …and the state dies after 10 minutes.
    const late = await answer(await start(b, mastodon.url), true);
    world.clock.advance(SIGN_IN_STATE_TTL_MS + 1000);
    const lateRes = await callback(b, late);
    expect(lateRes.status).toBe(400);
    expect(lateRes.text).toContain("no longer valid");
    expect(await connectionRows()).toEqual([]);
    // Sign-ins never finished are tidied once their ten minutes are over; one just started stays.
    await start(b, mastodon.url);
    expect(await tidySignInStates(world.deps)).toBeGreaterThan(0);
    expect(await world.sql("SELECT state_hash FROM sign_in_states")).toHaveLength(1);
  });

  test("a refused code exchange: the server's words in one sentence, nothing stored", async () => {
    const b = await signedIn();
    const back = await answer(await start(b, mastodon.url), true);
    back.searchParams.set("code", "not-the-code");
    const res = await callback(b, back);
    expect(res.status).toBe(400);
    expect(res.text).toContain("Mastodon refused to finish the sign-in (invalid_grant");
    expect(await connectionRows()).toEqual([]);
  });

  test("a server that is not Mastodon: said beside the field; nothing registered, nothing stored", async () => {
    const b = await signedIn();
    const states = await world.sql("SELECT state_hash FROM sign_in_states");
    const res = await b.submit("/dashboard/connections", "/dashboard/connections/connect/mastodon", { server: notMastodon.url });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/id="mastodon-signin-server-error">[^<]*does not answer like a Mastodon server/);
    expect(await world.sql("SELECT state_hash FROM sign_in_states")).toEqual(states);
    expect(await connectionRows()).toEqual([]);
  });

  test("signing in again reconnects: same id, new token, a pending post keeps it as its target; the registration is reused", async () => {
    const b = await signedIn();
    expect((await callback(b, await answer(await start(b, mastodon.url), true))).status).toBe(303);
    const [first] = await connectionRows();
    connectionId = first!.id;
    const apps = mastodon.state.signIn.apps.length;
    const creation = await makeCreation(world.deps, owner.accountId, { caption: "Still going out" });
    const { post } = await schedulePost(world.deps, owner.accountId, { creationId: creation.id, scheduledTime: isoAt(world.clock.now() + 3_600_000), targets: [connectionId] });
    expect(post.targets[0]).toMatchObject({ accountId: connectionId, status: "scheduled" });
    const res = await callback(b, await answer(await start(b, mastodon.url), true));
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/connections?notice=signed-in-again#connection-${connectionId}`);
    const rows = await connectionRows();
    expect(rows.map((r) => r.id)).toEqual([connectionId]);
    expect(mastodon.state.signIn.apps.length).toBe(apps);
    // The Reconnect button of the card signs in again for that connection.
    const reconnectPage = await b.get(`/dashboard/connections/${connectionId}/reconnect`);
    expect(reconnectPage.text).toContain("Sign in with Mastodon");
    const viaButton = await b.request("POST", "/dashboard/connections/connect/mastodon", { _csrf: b.csrf(), server: mastodon.url, connection: connectionId });
    expect(viaButton.status).toBe(303);
    const done = await callback(b, await answer(new URL(viaButton.location ?? ""), true));
    expect(done.location).toBe(`/dashboard/connections?notice=signed-in-again#connection-${connectionId}`);
    expect((await connectionRows()).map((r) => r.id)).toEqual([connectionId]);
    const targets = await world.sql<{ connection_id: string; status: string }>("SELECT connection_id, status FROM scheduled_post_targets WHERE post_id = ?", post.id);
    expect(targets).toEqual([{ connection_id: connectionId, status: "scheduled" }]);
  });

  test("Seedcast revoked on the server: the check says to reconnect (sign in again), not to paste a token", async () => {
    mastodon.state.signIn.issuedTokens.clear();
    const view = await checkConnection(world.deps, connectionId);
    expect(view).toMatchObject({ readyToPost: false, blockedReason: "Mastodon no longer accepts Seedcast's sign-in: reconnect Mastodon (The access token is invalid)." });
  });
});
