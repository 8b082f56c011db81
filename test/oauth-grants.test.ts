/**
 * The OAuth grant and token services without HTTP: createGrant, authenticateAccessToken (expiry by the manual clock,
 * role cap, removed member, disabled account, revocation), refresh rotation with reuse detection, and an access
 * token refused under /api/v1 with the one 401 body.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { removeMember, setAccountDisabled, setMemberRole } from "../src/modules/accounts/service";
import { authenticateAccessToken, takeGrantRequest } from "../src/modules/oauth/access-token";
import { registerClient } from "../src/modules/oauth/clients";
import { OAuthError } from "../src/modules/oauth/errors";
import { createGrant, listGrants, refreshGrant, revokeAccountGrant, revokeToken } from "../src/modules/oauth/service";
import { type World, createWorld } from "./helpers/world";

let world: World;
let clientId: string;

beforeAll(async () => {
  world = await createWorld();
  clientId = (await registerClient(world.deps, {
    client_name: "Test assistant",
    redirect_uris: ["http://127.0.0.1:9/callback"],
    token_endpoint_auth_method: "none",
  })).client_id;
});
afterAll(() => world.close());

describe("createGrant and authenticateAccessToken", () => {
  test("a fresh pair authenticates with the grant's groups, and tokens carry their prefixes", async () => {
    const a = await world.createAccount();
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read", "create"] });
    expect(pair.accessToken.startsWith("sco_")).toBe(true);
    expect(pair.refreshToken.startsWith("scr_")).toBe(true);
    expect(pair.expiresIn).toBe(3600);
    const principal = await authenticateAccessToken(world.deps, pair.accessToken);
    expect(principal).toEqual({ grantId: pair.grantId, clientId, accountId: a.accountId, userId: a.userId, role: "owner", scopes: ["read", "create"] });
    // The refresh token is not an access token, and a mistyped token fails its checksum.
    expect(await authenticateAccessToken(world.deps, pair.refreshToken)).toBeNull();
    expect(await authenticateAccessToken(world.deps, `${pair.accessToken.slice(0, -1)}${pair.accessToken.endsWith("x") ? "y" : "x"}`)).toBeNull();
  });

  test("an access token expires after one hour (clock-driven)", async () => {
    const a = await world.createAccount();
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    world.clock.advance(3600 * 1000 - 1);
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).not.toBeNull();
    world.clock.advance(1);
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).toBeNull();
  });

  test("a viewer's grant never holds more than read, and a role change caps the grant at the next request", async () => {
    const a = await world.createAccount();
    const viewer = await a.addMember("viewer");
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: viewer, scopes: ["read", "create", "voice"] });
    expect(pair.scopes).toEqual(["read"]);
    expect((await authenticateAccessToken(world.deps, pair.accessToken))?.scopes).toEqual(["read"]);

    const editor = await a.addMember("editor");
    const full = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: editor, scopes: ["read", "create", "schedule", "voice"] });
    await setMemberRole(world.deps, editor, "viewer", a.accountId);
    expect((await authenticateAccessToken(world.deps, full.accessToken))?.scopes).toEqual(["read"]);
    await setMemberRole(world.deps, editor, "editor", a.accountId);
    expect((await authenticateAccessToken(world.deps, full.accessToken))?.scopes).toEqual(["read", "create", "schedule", "voice"]);
  });

  test("a removed member's and a disabled account's grants authenticate as null", async () => {
    const a = await world.createAccount();
    const editor = await a.addMember("editor");
    const memberPair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: editor, scopes: ["read"] });
    const ownerPair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    await removeMember(world.deps, a.accountId, editor);
    expect(await authenticateAccessToken(world.deps, memberPair.accessToken)).toBeNull();
    expect(await authenticateAccessToken(world.deps, ownerPair.accessToken)).not.toBeNull();
    await setAccountDisabled(world.deps, a.accountId, true);
    expect(await authenticateAccessToken(world.deps, ownerPair.accessToken)).toBeNull();
    await setAccountDisabled(world.deps, a.accountId, false);
    expect(await authenticateAccessToken(world.deps, ownerPair.accessToken)).not.toBeNull();
  });

  test("revocation from the dashboard service and RFC 7009 apply at the next request", async () => {
    const a = await world.createAccount();
    const one = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    const two = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    expect((await listGrants(world.deps, a.accountId)).map((g) => g.id).sort()).toEqual([one.grantId, two.grantId].sort());
    await revokeAccountGrant(world.deps, a.accountId, one.grantId);
    expect(await authenticateAccessToken(world.deps, one.accessToken)).toBeNull();
    expect(await revokeToken(world.deps, two.refreshToken, clientId)).toBe(true);
    expect(await authenticateAccessToken(world.deps, two.accessToken)).toBeNull();
    expect(await listGrants(world.deps, a.accountId)).toEqual([]);
    // Another account cannot revoke this account's grant.
    const b = await world.createAccount();
    const three = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    await expect(revokeAccountGrant(world.deps, b.accountId, three.grantId)).rejects.toThrow();
    expect(await authenticateAccessToken(world.deps, three.accessToken)).not.toBeNull();
  });
});

describe("the access token cache and the grant's last use", () => {
  test("a revocation applies at the next request although the API key cache looked at the store's changes first", async () => {
    const a = await world.createAccount();
    // The key is used once first, so the request below writes no last use of its own (a commit that would hide the case).
    expect((await world.call("GET", "/api/v1/credits", { key: a.key })).status).toBe(200);
    await Bun.sleep(20);
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).not.toBeNull();
    await Bun.sleep(20);
    await revokeAccountGrant(world.deps, a.accountId, pair.grantId);
    // An API key request in between: each cache has its own watch, so this look does not hide the change from the other.
    expect((await world.call("GET", "/api/v1/credits", { key: a.key })).status).toBe(200);
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).toBeNull();
  });

  test("the last use is written after the answer, in a write of its own, at most once a minute per grant", async () => {
    const a = await world.createAccount();
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    const lastUsed = async () => {
      const t = (await world.sql("SELECT last_used_at AS t FROM oauth_grants WHERE id = ?", pair.grantId))[0]?.t;
      return t === null || t === undefined ? null : Number(t);
    };
    /** The write is not awaited by the request: wait (bounded) until it has committed. */
    const settled = async (expected: number) => {
      for (let i = 0; i < 200 && (await lastUsed()) !== expected; i++) await Bun.sleep(5);
      return lastUsed();
    };
    expect(await lastUsed()).toBeNull();
    const first = world.clock.now();
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).not.toBeNull();
    expect(await settled(first)).toBe(first);
    // Within the minute: answered, nothing written.
    world.clock.advance(30_000);
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).not.toBeNull();
    await Bun.sleep(20);
    expect(await lastUsed()).toBe(first);
    // A minute after the last write: written again.
    world.clock.advance(30_000);
    expect(await authenticateAccessToken(world.deps, pair.accessToken)).not.toBeNull();
    expect(await settled(world.clock.now())).toBe(world.clock.now());
  });
});

describe("refresh rotation", () => {
  test("each refresh rotates; presenting a spent refresh token revokes the whole grant", async () => {
    const a = await world.createAccount();
    const first = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read", "schedule"] });
    const second = await refreshGrant(world.deps, { refreshToken: first.refreshToken, clientId });
    expect(second.grantId).toBe(first.grantId);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await authenticateAccessToken(world.deps, second.accessToken))?.scopes).toEqual(["read", "schedule"]);
    const replay = await (async () => {
      try {
        await refreshGrant(world.deps, { refreshToken: first.refreshToken, clientId });
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(replay).toBeInstanceOf(OAuthError);
    expect((replay as OAuthError).code).toBe("invalid_grant");
    expect(await authenticateAccessToken(world.deps, second.accessToken)).toBeNull();
    await expect(refreshGrant(world.deps, { refreshToken: second.refreshToken, clientId })).rejects.toThrow(OAuthError);
  });

  test("another client's refresh token is refused", async () => {
    const a = await world.createAccount();
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    const other = (await registerClient(world.deps, { redirect_uris: ["https://other.example/cb"], token_endpoint_auth_method: "none" })).client_id;
    await expect(refreshGrant(world.deps, { refreshToken: pair.refreshToken, clientId: other })).rejects.toThrow(OAuthError);
    expect((await refreshGrant(world.deps, { refreshToken: pair.refreshToken, clientId })).grantId).toBe(pair.grantId);
  });
});

describe("under /api/v1", () => {
  test("an access token is refused with the one 401 body", async () => {
    const a = await world.createAccount();
    const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read", "create", "schedule", "voice"] });
    for (const path of ["/api/v1/health", "/api/v1/credits", "/api/v1/seeds"]) {
      const res = await world.call("GET", path, { key: pair.accessToken });
      expect(res.status).toBe(401);
      expect(res.text).toBe('{"error":"Invalid API key"}');
    }
    // The same account's key works, so the refusal is the token's kind, not the account.
    expect((await world.call("GET", "/api/v1/credits", { key: a.key })).status).toBe(200);
  });
});

test("the per-grant rate limit counts each grant separately", async () => {
  const a = await world.createAccount();
  const pair = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
  const budget = world.deps.config.rateLimitPerMinute;
  let refused = 0;
  for (let i = 0; i < budget + 1; i++) if ((await takeGrantRequest(world.deps, pair.grantId)) > 0) refused++;
  expect(refused).toBe(1);
  expect(await takeGrantRequest(world.deps, "another-grant")).toBe(0);
});

describe("the tidy job", () => {
  test("deletes only what can never work again", async () => {
    const { tidyOAuth } = await import("../src/modules/oauth/tidy");
    const { oauthGrants, oauthTokens } = await import("../src/db/tables");
    const { eq } = await import("drizzle-orm");
    const a = await world.createAccount();
    const live = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    const revoked = await createGrant(world.deps, { clientId, accountId: a.accountId, userId: a.userId, scopes: ["read"] });
    await revokeAccountGrant(world.deps, a.accountId, revoked.grantId);
    await tidyOAuth(world.deps);
    // Nothing expired yet: everything stays (the revoked grant too, for 30 days).
    const tokensOf = async (grantId: string) => (await world.store.db.select().from(oauthTokens).where(eq(oauthTokens.grantId, grantId)).all()).length;
    expect(await tokensOf(live.grantId)).toBe(2);
    expect(await tokensOf(revoked.grantId)).toBe(2);
    // After two hours the access tokens are gone; the refresh token (30 days) stays and still works.
    world.clock.advance(2 * 3600 * 1000);
    await tidyOAuth(world.deps);
    expect(await tokensOf(live.grantId)).toBe(1);
    const next = await refreshGrant(world.deps, { refreshToken: live.refreshToken, clientId });
    expect(await authenticateAccessToken(world.deps, next.accessToken)).not.toBeNull();
    // 31 days on, the revoked grant and the unused grant's expired tokens are deleted, then the grant itself.
    world.clock.advance(31 * 24 * 3600 * 1000);
    await tidyOAuth(world.deps);
    const grants = (await world.store.db.select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.accountId, a.accountId)).all()).map((g) => g.id);
    expect(grants).not.toContain(revoked.grantId);
    expect(grants).not.toContain(live.grantId);
  });
});
