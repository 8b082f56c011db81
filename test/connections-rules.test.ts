/**
 * The rules for adding a connection (decisions.md §15), on the service the dashboard and the CLI share, and through the
 * dashboard's form: an account already connected is not added twice (the refusal names the existing connection); an
 * address typed without a scheme means https; a server that does not answer like the network it claims to be is
 * refused with nothing stored (the fake Mastodon that answers `{}` everywhere, which once became "@undefined"); a
 * failed check through the dashboard stores nothing and comes back with what was typed and what to fix.
 * Runs on SQLite and, with SEEDCAST_TEST_DATABASE=postgres, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { AppError } from "../src/lib/errors";
import { addConnection } from "../src/modules/connections/service";
import { DashboardClient } from "./helpers/dashboard-client";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";

let world: World;
let mastodon: MastodonServer;
/** Answers 200 `{}` to everything: not a Mastodon server, whatever it is called. */
let anythingGoes: Server<undefined>;
/** Answers every path with an HTML 404, like an ordinary web site. */
let website: Server<undefined>;
/** Looks like a Bluesky server (describeServer) but refuses every sign-in, as for a wrong app password. */
let blueskyRefusing: Server<undefined>;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  mastodon = await startMastodonServer({ now: () => world.clock.now() });
  anythingGoes = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({}) });
  website = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Not found</title><h1>Not found</h1>", { status: 404, headers: { "content-type": "text/html" } }),
  });
  blueskyRefusing = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/xrpc/com.atproto.server.describeServer") return Response.json({ did: "did:web:pds.test", availableUserDomains: [".pds.test"] });
      if (path === "/xrpc/com.atproto.server.createSession") return Response.json({ error: "AuthenticationRequired", message: "Invalid identifier or password" }, { status: 401 });
      return Response.json({ error: "MethodNotImplemented" }, { status: 501 });
    },
  });
});

afterAll(async () => {
  await mastodon.stop();
  await anythingGoes.stop(true);
  await website.stop(true);
  await blueskyRefusing.stop(true);
  await world.close();
});

const urlOf = (server: Server<undefined>) => `http://127.0.0.1:${server.port}`;
const countFor = async (accountId: string) => Number((await world.sql<{ n: number }>("SELECT count(*) AS n FROM connections WHERE account_id = ?", accountId))[0]?.n);

/** The AppError `run` rejects with (fails the test when it resolves). */
async function refusal(run: Promise<unknown>): Promise<AppError> {
  const outcome = await run.then(
    () => null,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(AppError);
  return outcome as AppError;
}

describe("the service (dashboard and CLI)", () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await world.createAccount();
  });

  test("a server that answers {} everywhere is not Mastodon: refused beside the server field, nothing stored", async () => {
    const error = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: urlOf(anythingGoes), token: "any-token" }));
    expect(error.code).toBe("invalid_request");
    expect(error.extra.details).toEqual([{ field: "instance", problem: expect.stringContaining("does not answer like a Mastodon server") }]);
    expect(error.message).not.toContain("undefined");
    expect(await countFor(acct.accountId)).toBe(0);
  });

  test("an ordinary web site is neither Mastodon nor Bluesky: both refused, nothing stored", async () => {
    const m = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: urlOf(website), token: "any-token" }));
    expect(m.extra.details).toEqual([{ field: "instance", problem: expect.stringContaining("does not answer like a Mastodon server") }]);
    const b = await refusal(
      addConnection(world.deps, { accountId: acct.accountId, platform: "bluesky", handle: "alice.example.com", appPassword: "abcd-efgh-ijkl-mnop", service: urlOf(website) }),
    );
    expect(b.extra.details).toEqual([{ field: "service", problem: expect.stringContaining("does not answer like a Bluesky server") }]);
    expect(await countFor(acct.accountId)).toBe(0);
  });

  test("the same Mastodon account on the same server is not added twice; the refusal names the existing connection", async () => {
    const first = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    expect(first.readyToPost).toBe(true);
    expect(first.label).toBe(`@${mastodon.state.account.username}@${new URL(mastodon.url).host}`);
    const again = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: `${mastodon.url}/`, token: DEFAULT_TOKEN }));
    expect(again.code).toBe("invalid_request");
    expect(again.extra.connectionId).toBe(first.accountId);
    expect(again.message).toContain(`${first.label} is already connected`);
    // A wrong token for the same server names no account, so it points at the connection that is there.
    const wrong = await refusal(addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: mastodon.url, token: "not-the-token" }));
    expect(wrong.extra.connectionId).toBe(first.accountId);
    expect(await countFor(acct.accountId)).toBe(1);
    // Another account of this instance may connect the same Mastodon account: duplicates are per account.
    const other = await world.createAccount();
    expect((await addConnection(world.deps, { accountId: other.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN })).readyToPost).toBe(true);
  });

  test("a Bluesky handle is not added twice (whatever its case or a leading @), even when its first check failed", async () => {
    const service = urlOf(blueskyRefusing);
    const first = await addConnection(world.deps, { accountId: acct.accountId, platform: "bluesky", handle: "bakery.pds.test", appPassword: "wron-gpas-swor-dxxx", service });
    // The CLI's way: a failed check is stored, not ready, with what to fix.
    expect(first.readyToPost).toBe(false);
    expect(first.blockedReason).toContain("Invalid identifier or password");
    const again = await refusal(
      addConnection(world.deps, { accountId: acct.accountId, platform: "bluesky", handle: "@Bakery.PDS.test", appPassword: "abcd-efgh-ijkl-mnop", service: `${service}/` }),
    );
    expect(again.extra.connectionId).toBe(first.accountId);
    expect(again.extra.details).toEqual([{ field: "handle", problem: expect.stringContaining("@bakery.pds.test is already connected; use Reconnect") }]);
  });

  test("two adds of the same account at once: one is added, the other refused", async () => {
    const other = await world.createAccount();
    const input = { accountId: other.accountId, platform: "mastodon" as const, instance: mastodon.url, token: DEFAULT_TOKEN };
    const outcomes = await Promise.allSettled([addConnection(world.deps, input), addConnection(world.deps, input)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const refused = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect((refused.reason as AppError).extra.connectionId).toBeString();
    expect(await countFor(other.accountId)).toBe(1);
  });

  test("a server address without a scheme means https://", async () => {
    const other = await world.createAccount();
    // A plain-HTTP server answers there, so the https:// check cannot reach it: stored (CLI's way) with the https address.
    const view = await addConnection(world.deps, { accountId: other.accountId, platform: "mastodon", instance: `127.0.0.1:${mastodon.port}`, token: DEFAULT_TOKEN });
    expect(view.readyToPost).toBe(false);
    const [row] = await world.sql<{ endpoint: string }>("SELECT endpoint FROM connections WHERE id = ?", view.accountId);
    expect(row?.endpoint).toBe(`https://127.0.0.1:${mastodon.port}`);
    expect(view.blockedReason).toContain("could not be reached");
    // With the scheme typed, http is kept as typed (and works here).
    const third = await world.createAccount();
    const typed = await addConnection(world.deps, { accountId: third.accountId, platform: "mastodon", instance: `http://127.0.0.1:${mastodon.port}`, token: DEFAULT_TOKEN });
    expect(typed.readyToPost).toBe(true);
  });
});

describe("the dashboard's connect form", () => {
  let client: DashboardClient;
  let accountId: string;
  beforeAll(async () => {
    const acct = await world.createAccount({ name: "Corner Bakery" });
    accountId = acct.accountId;
    const [owner] = await world.sql<{ email: string }>("SELECT u.email FROM users u JOIN members m ON m.user_id = u.id WHERE m.account_id = ?", accountId);
    client = new DashboardClient(world);
    const login = await client.login(owner?.email ?? "");
    expect(login.status).toBe(303);
  });

  test("a failed check adds nothing: the form keeps the server typed, never the token, and says what to fix beside it", async () => {
    const res = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: mastodon.url, token: "typo-token-123" });
    expect(res.status).toBe(400);
    expect(await countFor(accountId)).toBe(0);
    expect(res.text).toContain("Not connected: the check failed.");
    expect(res.text).toMatch(/id="mastodon-token-error">The Mastodon server refused the access token \(The access token is invalid\)/);
    expect(res.text).toContain(`value="${mastodon.url}"`);
    expect(res.text).not.toContain("typo-token-123");
    const fake = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: urlOf(anythingGoes), token: "x" });
    expect(fake.status).toBe(400);
    expect(fake.text).toMatch(/id="mastodon-instance-error">http:\/\/127\.0\.0\.1:\d+ does not answer like a Mastodon server/);
    expect(await countFor(accountId)).toBe(0);
  });

  test("connecting the same account again points at its card with Reconnect", async () => {
    const ok = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    expect(ok.location).toBe("/dashboard/connections?notice=connected");
    const [row] = await world.sql<{ id: string; label: string }>("SELECT id, label FROM connections WHERE account_id = ?", accountId);
    const again = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    expect(again.status).toBe(409);
    expect(again.text).toContain(`${row?.label} is already connected; use Reconnect on it to enter new credentials.`);
    expect(again.text).toContain(`<a href="/dashboard/connections/${row?.id}/reconnect">reconnect it</a>`);
    expect(again.text).toContain(`class="post connection highlight" id="connection-${row?.id}"`);
    expect(await countFor(accountId)).toBe(1);
    // Reconnecting it to something that is not Mastodon changes nothing and says why beside the server field.
    const reconnect = `/dashboard/connections/${row?.id}/reconnect`;
    const wrongPlace = await client.submit(reconnect, reconnect, { instance: urlOf(anythingGoes), token: DEFAULT_TOKEN });
    expect(wrongPlace.status).toBe(400);
    expect(wrongPlace.text).toMatch(/id="mastodon-instance-error">http:\/\/127\.0\.0\.1:\d+ does not answer like a Mastodon server/);
    expect(wrongPlace.text).toContain(`value="${urlOf(anythingGoes)}"`);
    const [kept] = await world.sql<{ endpoint: string; ready: unknown }>("SELECT endpoint, ready_to_post AS ready FROM connections WHERE id = ?", row?.id);
    expect([kept?.endpoint, Boolean(kept?.ready)]).toEqual([mastodon.url, true]);
    // The card speaks of the server, not of ids.
    const page = await client.get("/dashboard/connections");
    expect(page.text).not.toContain("target id");
    expect(page.text).not.toContain(`<code>${row?.id}</code>`);
  });
});
