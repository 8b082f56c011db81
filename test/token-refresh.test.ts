/**
 * The token refresh machinery (src/publishing/sign-in/refresh.ts, decisions.md §12 "Tokens") with a small test network
 * declaration whose token endpoint is the stand-in of test/peers/oauth-token-server.ts (RFC 6749 §5/§6 + RFC 7636,
 * rotating refresh tokens, refusing a reused one). Mastodon's tokens do not expire, so the machinery is shown here.
 * The clock is moved, never slept. Runs on SQLite and, with SEEDCAST_TEST_DATABASE=postgres, on PostgreSQL.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { connections } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { DeliveryError } from "../src/publishing/connector";
import { type SignInNetwork, deadGrantReason } from "../src/publishing/sign-in/network";
import { REFRESH_AT_DELIVERY_MS, connectionForDelivery, refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { openConnection } from "../src/store/connections";
import { sealJson } from "../src/store/sealing";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { type TokenServer, startTokenServer } from "./peers/oauth-token-server";

const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
const CLIENT = { clientId: "seedcast-test-client", clientSecret: "test-client-secret" };

let world: World;
let acct: TestAccount;
let tokens: TokenServer;

/** The test network: it only declares its token endpoint and how its app authenticates, as every network does. */
const testNetwork = (): SignInNetwork => ({
  platform: "mastodon",
  name: "Testnet",
  app: async () => {
    throw new Error("not used: these tests start from a connection that is already signed in");
  },
  appOf: async () => ({
    authorizationEndpoint: `${tokens.url}/oauth2/authorize`,
    tokenEndpoint: tokens.tokenEndpoint,
    clientId: CLIENT.clientId,
    clientSecret: CLIENT.clientSecret,
    clientAuth: "basic",
    pkce: true,
    scopes: ["post"],
    endpoint: tokens.url,
  }),
  identify: async () => ({ networkAccountId: "1", label: "@test" }),
});
const lookup = () => testNetwork();

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  acct = await world.createAccount();
});

afterAll(async () => {
  await tokens?.stop();
  await world.close();
});

beforeEach(async () => {
  await world.sql("DELETE FROM connections");
  await tokens?.stop();
  tokens = await startTokenServer({ ...CLIENT, delayMs: 30 });
});

/**
 * A signed-in connection whose access token expires `inMs` from now; its refresh token is the stand-in's current one
 * unless `grant` names another (`grant.id`: the sign-in it shares with other connections, as Pinterest boards do).
 */
async function signedInConnection(inMs: number, grant: { refreshToken?: string; id?: string } = {}): Promise<string> {
  const id = newId();
  const now = world.clock.now();
  await world.store.write((tx) =>
    tx
      .insert(connections)
      .values({
        id,
        accountId: acct.accountId,
        platform: "mastodon",
        label: `@test-${id.slice(-6)}`,
        endpoint: tokens.url,
        credentialsSealed: sealJson(world.deps.instanceSecret, id, {
          token: tokens.current.accessToken,
          refreshToken: grant.refreshToken ?? tokens.current.refreshToken,
          ...(grant.id ? { grant: grant.id } : {}),
        }),
        meta: "{}",
        readyToPost: true,
        checkedAt: now,
        tokenExpiresAt: now + inMs,
        createdAt: now,
        updatedAt: now,
      })
      .run(),
  );
  return id;
}

async function row(id: string) {
  const r = await world.store.db.select().from(connections).where(eq(connections.id, id)).get();
  if (!r) throw new Error("no such connection");
  return r;
}

async function stored(id: string) {
  const r = await row(id);
  const { token, refreshToken } = openConnection(world.deps, r).credentials;
  return { token, refreshToken, expiresAt: r.tokenExpiresAt, ready: r.readyToPost, blockedReason: r.blockedReason, lease: r.refreshLeaseToken };
}

describe("refreshed ahead of expiry", () => {
  test("the daily job refreshes what expires within 7 days, and nothing else; the new pair is stored together", async () => {
    const soon = await signedInConnection(3 * DAY);
    const firstRefresh = tokens.current.refreshToken;
    const later = await signedInConnection(8 * DAY);
    const result = await refreshExpiringTokens(world.deps, lookup);
    expect(result).toEqual({ refreshed: 1, failed: 0 });
    expect(tokens.refreshes).toBe(1);
    expect(tokens.presentedRefreshTokens).toEqual([firstRefresh]);
    const after = await stored(soon);
    expect(after).toMatchObject({ token: tokens.current.accessToken, refreshToken: tokens.current.refreshToken, ready: true, lease: null });
    expect(after.refreshToken).not.toBe(firstRefresh);
    expect(after.expiresAt).toBe(world.clock.now() + 3600 * 1000);
    expect((await row(later)).tokenExpiresAt).toBe(world.clock.now() + 8 * DAY);
  });

  test("a delivery refreshes a token with under 5 minutes left, and leaves one with more alone", async () => {
    const fresh = await signedInConnection(REFRESH_AT_DELIVERY_MS + MINUTE);
    const before = await stored(fresh);
    const same = await connectionForDelivery(world.deps, await row(fresh), lookup);
    expect(same.credentials.token).toBe(before.token ?? "");
    expect(tokens.refreshes).toBe(0);
    world.clock.advance(2 * MINUTE);
    const renewed = await connectionForDelivery(world.deps, await row(fresh), lookup);
    expect(tokens.refreshes).toBe(1);
    expect(renewed.credentials.token).toBe(tokens.current.accessToken);
    expect(renewed.credentials.token).not.toBe(before.token ?? "");
  });

  test("rotated refresh tokens are each used exactly once across many refreshes; the stand-in refuses a reused one", async () => {
    const id = await signedInConnection(MINUTE);
    for (let round = 0; round < 5; round++) {
      await connectionForDelivery(world.deps, await row(id), lookup);
      world.clock.advance(58 * MINUTE);
    }
    expect(tokens.refreshes).toBe(5);
    expect(new Set(tokens.presentedRefreshTokens).size).toBe(5);
    // The stand-in really rotates: the first refresh token, presented again, is refused.
    const reuse = await fetch(tokens.tokenEndpoint, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${CLIENT.clientId}:${CLIENT.clientSecret}`)}` },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: tokens.presentedRefreshTokens[0]! }),
    });
    expect(reuse.status).toBe(400);
    expect(((await reuse.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await stored(id)).ready).toBe(true);
  });
});

describe("refusals", () => {
  test("invalid_grant: not ready with the reconnect sentence, the needs-attention notice and the connection.needs_attention event", async () => {
    const hook = await world.call("POST", "/api/v1/webhooks", { key: acct.key, body: { url: "http://127.0.0.1:9/hook", events: ["connection.needs_attention"] } });
    expect(hook.status).toBe(201);
    const id = await signedInConnection(MINUTE);
    tokens.setMode("revoked");
    const error = await connectionForDelivery(world.deps, await row(id), lookup).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe("auth");
    const after = await stored(id);
    expect(after).toMatchObject({ ready: false, blockedReason: "Testnet no longer accepts Seedcast's sign-in: reconnect Testnet", lease: null });
    expect(deadGrantReason({ name: "X" })).toBe("X no longer accepts Seedcast's sign-in: reconnect X");
    const events = await world.sql<{ type: string; body: string }>("SELECT type, body FROM webhook_events WHERE account_id = ?", acct.accountId);
    expect(events.map((e) => e.type)).toEqual(["connection.needs_attention"]);
    expect(JSON.parse(events[0]!.body).data).toEqual({
      accountId: id,
      platform: "mastodon",
      label: (await row(id)).label,
      blockedReason: "Testnet no longer accepts Seedcast's sign-in: reconnect Testnet",
    });
    const notices = await world.sql<{ title: string }>("SELECT title FROM notices WHERE account_id = ? AND kind = 'connection_needs_attention'", acct.accountId);
    expect(notices.some((n) => n.title.includes("no longer accepts Seedcast's sign-in"))).toBe(true);
    // The daily job leaves a connection that is not ready alone: it needs a person.
    const presented = tokens.presentedRefreshTokens.length;
    await refreshExpiringTokens(world.deps, lookup);
    expect(tokens.presentedRefreshTokens.length).toBe(presented);
  });

  test("503 is transient: the connection stays ready with its token; the next attempt refreshes", async () => {
    const id = await signedInConnection(3 * MINUTE);
    const before = await stored(id);
    tokens.setMode("unavailable");
    const same = await connectionForDelivery(world.deps, await row(id), lookup);
    expect(same.credentials.token).toBe(before.token ?? "");
    expect(await stored(id)).toEqual(before);
    expect(await refreshExpiringTokens(world.deps, lookup)).toEqual({ refreshed: 0, failed: 1 });
    expect((await stored(id)).ready).toBe(true);
    tokens.setMode("ok");
    const renewed = await connectionForDelivery(world.deps, await row(id), lookup);
    expect(renewed.credentials.token).toBe(tokens.current.accessToken);
    expect(tokens.refreshes).toBe(1);
  });

  test("503 after the token ran out: a transient failure for the delivery, still ready", async () => {
    const id = await signedInConnection(MINUTE);
    world.clock.advance(2 * MINUTE);
    tokens.setMode("unavailable");
    const error = await connectionForDelivery(world.deps, await row(id), lookup).catch((e: unknown) => e);
    expect((error as DeliveryError).kind).toBe("transient");
    expect((await stored(id)).ready).toBe(true);
  });

  test("an answer without a refresh token keeps the stored one", async () => {
    const id = await signedInConnection(MINUTE);
    const before = await stored(id);
    tokens.setMode("no_refresh_token");
    const renewed = await connectionForDelivery(world.deps, await row(id), lookup);
    const after = await stored(id);
    expect(renewed.credentials.token).toBe(tokens.current.accessToken);
    expect(after.token).toBe(tokens.current.accessToken);
    expect(after.refreshToken).toBe(before.refreshToken ?? "(none)");
    expect(after.expiresAt).toBe(world.clock.now() + 3600 * 1000);
  });
});

describe("single flight", () => {
  test("50 concurrent deliveries on one expiring connection: one refresh, every one sends with the new token", async () => {
    const id = await signedInConnection(2 * MINUTE);
    const snapshot = await row(id);
    const opened = await Promise.all(Array.from({ length: 50 }, () => connectionForDelivery(world.deps, snapshot, lookup)));
    expect(tokens.refreshes).toBe(1);
    expect(tokens.presentedRefreshTokens).toHaveLength(1);
    expect(new Set(opened.map((c) => c.credentials.token))).toEqual(new Set([tokens.current.accessToken]));
    expect((await stored(id)).lease).toBeNull();
  });

  test("two replicas (two stores on one database), 25 deliveries each: one refresh", async () => {
    const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...world.env(), DATA_DIR: world.dataDir });
    const replica = await bootstrap(config, { clock: world.clock, log: silentLogger });
    try {
      const id = await signedInConnection(2 * MINUTE);
      const snapshot = await row(id);
      const opened = await Promise.all(
        Array.from({ length: 50 }, (_, i) => connectionForDelivery(i % 2 === 0 ? world.deps : replica, snapshot, lookup)),
      );
      expect(tokens.refreshes).toBe(1);
      expect(new Set(opened.map((c) => c.credentials.token))).toEqual(new Set([tokens.current.accessToken]));
    } finally {
      await replica.store.close();
    }
  });
});

describe("one sign-in, several connections (Pinterest boards: one rotating refresh token)", () => {
  test("a delivery on one board and a delivery on its sibling at the same moment: one refresh, both take the new pair, neither blocked", async () => {
    const shared = { refreshToken: tokens.newGrant(), id: "grant-two-boards" };
    const a = await signedInConnection(2 * MINUTE, shared);
    const b = await signedInConnection(2 * MINUTE, shared);
    const [rowA, rowB] = [await row(a), await row(b)];
    const [openA, openB] = await Promise.all([connectionForDelivery(world.deps, rowA, lookup), connectionForDelivery(world.deps, rowB, lookup)]);
    expect(tokens.presentedRefreshTokens).toEqual([shared.refreshToken]);
    const [afterA, afterB] = [await stored(a), await stored(b)];
    expect(afterA).toMatchObject({ ready: true, blockedReason: null, lease: null });
    expect(afterA.refreshToken).not.toBe(shared.refreshToken);
    expect(afterB).toMatchObject({ ready: true, blockedReason: null, lease: null, refreshToken: afterA.refreshToken, token: afterA.token });
    // Both deliveries send with the new access token.
    expect([openA.credentials.token, openB.credentials.token]).toEqual([afterA.token, afterA.token]);
  });

  test("the same on two replicas, a board each, 10 times over: each shared refresh token presented once, nothing blocked", async () => {
    const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...world.env(), DATA_DIR: world.dataDir });
    const replica = await bootstrap(config, { clock: world.clock, log: silentLogger });
    try {
      for (let round = 0; round < 10; round++) {
        const shared = { refreshToken: tokens.newGrant(), id: `grant-round-${round}` };
        const ids = [await signedInConnection(2 * MINUTE, shared), await signedInConnection(2 * MINUTE, shared), await signedInConnection(2 * MINUTE, shared)];
        const rows = await Promise.all(ids.map(row));
        await Promise.all(rows.map((r, i) => connectionForDelivery(i % 2 === 0 ? world.deps : replica, r, lookup)));
        expect(tokens.presentedRefreshTokens.filter((t) => t === shared.refreshToken)).toHaveLength(1);
        for (const id of ids) expect(await stored(id)).toMatchObject({ ready: true, blockedReason: null, lease: null });
      }
    } finally {
      await replica.store.close();
    }
  });

  test("a board of another sign-in is not held up: its own refresh runs beside", async () => {
    const a = await signedInConnection(2 * MINUTE, { refreshToken: tokens.newGrant(), id: "grant-one" });
    const b = await signedInConnection(2 * MINUTE, { refreshToken: tokens.newGrant(), id: "grant-two" });
    await Promise.all([connectionForDelivery(world.deps, await row(a), lookup), connectionForDelivery(world.deps, await row(b), lookup)]);
    expect(tokens.refreshes).toBe(2);
    expect(tokens.maxRefreshesInFlight).toBe(2);
  });
});

describe("the daily job, several at once", () => {
  // New tokens last 60 days here (LinkedIn's and Pinterest's scale), so a refreshed connection is outside the 7-day
  // horizon afterwards and a second look at it refreshes nothing.
  const LONG_LIVED = 60 * 24 * 3600;
  beforeEach(async () => {
    await tokens.stop();
    tokens = await startTokenServer({ ...CLIENT, delayMs: 150, expiresIn: LONG_LIVED });
  });

  test("24 sign-ins of one account, a pool of 8: all refreshed, each refresh token presented once, at most 8 at the endpoint at once", async () => {
    const firstTokens: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const refreshToken = tokens.newGrant();
      firstTokens.push(refreshToken);
      ids.push(await signedInConnection(2 * DAY, { refreshToken }));
    }
    expect(await refreshExpiringTokens(world.deps, lookup, 8)).toEqual({ refreshed: 24, failed: 0 });
    expect(tokens.refreshes).toBe(24);
    expect([...tokens.presentedRefreshTokens].sort()).toEqual([...firstTokens].sort());
    expect(tokens.maxRefreshesInFlight).toBeGreaterThan(1);
    expect(tokens.maxRefreshesInFlight).toBeLessThanOrEqual(8);
    for (const id of ids) {
      const after = await stored(id);
      expect(after).toMatchObject({ ready: true, lease: null, expiresAt: world.clock.now() + LONG_LIVED * 1000 });
      expect(firstTokens).not.toContain(after.refreshToken);
    }
  });

  test("TOKEN_REFRESH_CONCURRENCY=1 (the config's value is the default): one refresh at the endpoint at a time", async () => {
    const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...world.env(), DATA_DIR: world.dataDir, TOKEN_REFRESH_CONCURRENCY: "1" });
    expect(config.tokenRefreshConcurrency).toBe(1);
    expect(world.deps.config.tokenRefreshConcurrency).toBe(8);
    const replica = await bootstrap(config, { clock: world.clock, log: silentLogger });
    try {
      for (let i = 0; i < 4; i++) await signedInConnection(2 * DAY, { refreshToken: tokens.newGrant() });
      expect(await refreshExpiringTokens(replica, lookup)).toEqual({ refreshed: 4, failed: 0 });
      expect(tokens.maxRefreshesInFlight).toBe(1);
    } finally {
      await replica.store.close();
    }
  });

  test("two connections of one sign-in (one rotating refresh token, as Pinterest boards): refreshed once, both take the new pair, neither blocked", async () => {
    const shared = { refreshToken: tokens.newGrant(), id: "grant-boards" };
    const a = await signedInConnection(2 * DAY, shared);
    const b = await signedInConnection(2 * DAY, shared);
    // Other sign-ins of the same account fill the pool beside them.
    for (let i = 0; i < 6; i++) await signedInConnection(2 * DAY, { refreshToken: tokens.newGrant() });
    expect(await refreshExpiringTokens(world.deps, lookup, 8)).toEqual({ refreshed: 7, failed: 0 });
    expect(tokens.presentedRefreshTokens.filter((t) => t === shared.refreshToken)).toHaveLength(1);
    const [afterA, afterB] = [await stored(a), await stored(b)];
    expect(afterA).toMatchObject({ ready: true, blockedReason: null });
    expect(afterB).toMatchObject({ ready: true, blockedReason: null, refreshToken: afterA.refreshToken, token: afterA.token });
  });

  test("two replicas run the job at the same moment over 16 sign-ins: each refreshed exactly once", async () => {
    const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...world.env(), DATA_DIR: world.dataDir });
    const replica = await bootstrap(config, { clock: world.clock, log: silentLogger });
    try {
      const firstTokens: string[] = [];
      for (let i = 0; i < 16; i++) {
        const refreshToken = tokens.newGrant();
        firstTokens.push(refreshToken);
        await signedInConnection(2 * DAY, { refreshToken });
      }
      const [one, two] = await Promise.all([refreshExpiringTokens(world.deps, lookup, 8), refreshExpiringTokens(replica, lookup, 8)]);
      // Each job counts the connections it saw renewed (some by the other replica); the wire shows what happened.
      expect(one.failed + two.failed).toBe(0);
      expect(tokens.refreshes).toBe(16);
      expect([...tokens.presentedRefreshTokens].sort()).toEqual([...firstTokens].sort());
    } finally {
      await replica.store.close();
    }
  });
});
