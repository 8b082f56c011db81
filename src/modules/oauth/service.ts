/**
 * Grants and their tokens (decisions.md §9). A grant is what one member consented to for one client in one account;
 * it holds one live refresh token at a time and the access tokens issued with each (1 hour each). Refresh tokens
 * rotate at every use and live 30 days from their issue, so a connector used at least monthly stays connected.
 * Presenting a rotated refresh token again revokes the whole grant (OAuth 2.1 §4.3.1, reuse detection).
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { accounts, members, oauthClients, oauthGrants, oauthTokens, users } from "../../db/tables";
import type { StoreDb } from "../../db/store";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { type Scope, effectiveScopes, parseStoredScopes } from "../../auth/scopes";
import { OAuthError } from "./errors";
import { statements } from "./statements";
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, hashSecret, isSecret, newSecret } from "./token-format";

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

type ServiceDeps = Pick<Deps, "store" | "clock" | "instanceSecret" | "config">;

/** The canonical resource every token is bound to: the MCP endpoint. */
export function mcpResource(deps: Pick<Deps, "config">): string {
  return `${deps.config.baseUrl}/mcp`;
}

/** What the token endpoint answers (RFC 6749 §5.1), before serialisation. */
export interface TokenPair {
  grantId: string;
  accessToken: string;
  refreshToken: string;
  /** Seconds: always ACCESS_TOKEN_TTL_SECONDS. */
  expiresIn: number;
  /** The grant's effective groups when the pair was issued. */
  scopes: Scope[];
}

/** The token endpoint's JSON body for a pair (decisions.md §9). */
export function tokenResponseBody(pair: TokenPair): Record<string, unknown> {
  return {
    access_token: pair.accessToken,
    token_type: "Bearer",
    expires_in: pair.expiresIn,
    refresh_token: pair.refreshToken,
    scope: pair.scopes.join(" "),
  };
}

/** Inserts a fresh access + refresh pair for a grant (with `tx`, the caller's write transaction). */
async function insertPair(deps: ServiceDeps, tx: StoreDb, grantId: string, scopes: Scope[]): Promise<TokenPair> {
  const now = deps.clock.now();
  const accessToken = newSecret(ACCESS_TOKEN_PREFIX);
  const refreshToken = newSecret(REFRESH_TOKEN_PREFIX);
  const insert = statements(tx).insertToken;
  await insert.run({ id: newId(), grantId, kind: "access", tokenHash: hashSecret(deps, accessToken), expiresAt: now + ACCESS_TOKEN_TTL_SECONDS * 1000, createdAt: now });
  await insert.run({ id: newId(), grantId, kind: "refresh", tokenHash: hashSecret(deps, refreshToken), expiresAt: now + REFRESH_TOKEN_TTL_MS, createdAt: now });
  return { grantId, accessToken, refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, scopes };
}

/**
 * Creates a grant for a member and issues its first token pair. The groups are capped by the member's role now (and
 * again at every request); at least one must remain. This is what the token endpoint calls when it exchanges an
 * authorization code, and what tests call to connect a member without a browser.
 */
export async function createGrant(deps: ServiceDeps, input: GrantInput): Promise<TokenPair> {
  return deps.store.write(() => insertGrant(deps, input));
}

/** What a grant is made of. */
export interface GrantInput {
  clientId: string;
  accountId: string;
  userId: string;
  scopes: readonly string[];
  /** Default: mcpResource(deps). */
  resource?: string;
}

/** createGrant's body, for callers already inside a write (the code exchange: it joins it). Throws AppError. */
export async function insertGrant(deps: ServiceDeps, input: GrantInput): Promise<TokenPair> {
  return deps.store.write(async (tx) => {
    const client = await tx.select({ id: oauthClients.id }).from(oauthClients).where(eq(oauthClients.id, input.clientId)).get();
    if (!client) throw notFound("OAuth client");
    const member = await tx
      .select({ role: members.role, disabledAt: accounts.disabledAt })
      .from(members)
      .innerJoin(accounts, eq(accounts.id, members.accountId))
      .where(and(eq(members.accountId, input.accountId), eq(members.userId, input.userId)))
      .get();
    if (!member) throw notFound("member");
    if (member.disabledAt !== null) throw new AppError("forbidden", "This account is disabled.");
    const scopes = effectiveScopes(input.scopes, member.role);
    if (scopes.length === 0) throw new AppError("invalid_request", "Choose at least one group this member's role allows.");
    const grantId = newId();
    await tx
      .insert(oauthGrants)
      .values({
        id: grantId,
        clientId: input.clientId,
        accountId: input.accountId,
        userId: input.userId,
        scopes: scopes.join(","),
        resource: input.resource ?? mcpResource(deps),
        createdAt: deps.clock.now(),
      })
      .run();
    return insertPair(deps, tx, grantId, scopes);
  });
}

/**
 * Rotates a refresh token (RFC 6749 §6, OAuth 2.1 §4.3): the presented token is spent and a new pair issued. A token
 * presented a second time revokes its grant; so does any refresh for a member no longer in the account. `scope`, when
 * sent, may only narrow (RFC 6749 §6); `resource`, when sent, must be the grant's.
 */
export async function refreshGrant(
  deps: ServiceDeps,
  input: { refreshToken: string; clientId: string; scope?: string | null; resource?: string | null },
): Promise<TokenPair> {
  if (!isSecret(REFRESH_TOKEN_PREFIX, input.refreshToken)) throw new OAuthError("invalid_grant", "The refresh token is not valid.");
  const hash = hashSecret(deps, input.refreshToken);
  // NB: the reuse revocation must persist although the answer is an error, so the transaction returns the outcome
  // instead of throwing out of it (a throw would roll the revocation back).
  const outcome = await deps.store.write(
    async (tx): Promise<TokenPair | OAuthError> => {
      const now = deps.clock.now();
      const run = statements(tx);
      const row = await run.refreshLookup.get({ hash });
      const refused = new OAuthError("invalid_grant", "The refresh token is not valid.");
      if (!row || row.clientId !== input.clientId) return refused;
      if (row.grantRevokedAt !== null || row.tokenRevokedAt !== null) return refused;
      if (row.usedAt !== null) {
        await revokeGrantNow(tx, row.grantId, now);
        return new OAuthError("invalid_grant", "This refresh token was already used; the connection was revoked for safety.");
      }
      if (now >= row.expiresAt) return refused;
      if (row.role === null || row.disabledAt !== null) {
        await revokeGrantNow(tx, row.grantId, now);
        return refused;
      }
      if (input.resource && input.resource !== row.resource) {
        return new OAuthError("invalid_target", "The resource does not match the one this connection was granted for.");
      }
      let scopes = effectiveScopes(parseStoredScopes(row.scopes), row.role);
      if (input.scope) {
        const asked = input.scope.split(" ").filter(Boolean);
        if (asked.some((s) => !scopes.includes(s as Scope))) {
          return new OAuthError("invalid_scope", "A refresh may only ask for groups the connection already holds.");
        }
        scopes = scopes.filter((s) => asked.includes(s));
      }
      // Conditional, so two refreshes racing with one token (PostgreSQL: no writer lock) spend it once; the loser is a reuse.
      if (!(await run.markUsed.get({ now, id: row.tokenId }))) {
        await revokeGrantNow(tx, row.grantId, now);
        return new OAuthError("invalid_grant", "This refresh token was already used; the connection was revoked for safety.");
      }
      return insertPair(deps, tx, row.grantId, scopes);
    },
  );
  if (outcome instanceof OAuthError) throw outcome;
  return outcome;
}

/** Marks a grant revoked, with `tx`, a write transaction. Its tokens stop working at the next request. */
async function revokeGrantNow(tx: StoreDb, grantId: string, now: number): Promise<void> {
  await tx
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt)))
    .run();
}

/** Revokes a grant by id (idempotent; joins the caller's write if there is one). */
export async function revokeGrant(deps: Pick<Deps, "store" | "clock">, grantId: string): Promise<void> {
  await deps.store.write((tx) => revokeGrantNow(tx, grantId, deps.clock.now()));
}

/**
 * Revokes the grant behind an access or refresh token (RFC 7009). Unknown, malformed or other clients' tokens change
 * nothing; the endpoint answers 200 either way. `clientId`, when known, must own the grant (RFC 7009 §2.1).
 */
export async function revokeToken(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, token: string, clientId: string | null): Promise<boolean> {
  if (!isSecret(ACCESS_TOKEN_PREFIX, token) && !isSecret(REFRESH_TOKEN_PREFIX, token)) return false;
  const row = await deps.store.db
    .select({ grantId: oauthGrants.id, clientId: oauthGrants.clientId })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, hashSecret(deps, token)))
    .get();
  if (!row || (clientId !== null && row.clientId !== clientId)) return false;
  await revokeGrant(deps, row.grantId);
  return true;
}

/** One connected app as the dashboard lists it. */
export interface GrantView {
  id: string;
  clientId: string;
  clientName: string;
  /** The host the client's redirect goes to (or its metadata document's host). */
  clientHost: string;
  /** The grant's groups capped by the member's current role. */
  scopes: Scope[];
  userId: string;
  userName: string;
  userEmail: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The account's live grants, newest first (revoked ones are gone from the list at once). */
export async function listGrants(deps: Pick<Deps, "store">, accountId: string): Promise<GrantView[]> {
  const rows = await deps.store.db
    .select({
      id: oauthGrants.id,
      clientId: oauthGrants.clientId,
      clientName: oauthClients.clientName,
      redirectUris: oauthClients.redirectUris,
      scopes: oauthGrants.scopes,
      userId: oauthGrants.userId,
      userName: users.name,
      userEmail: users.email,
      role: members.role,
      createdAt: oauthGrants.createdAt,
      lastUsedAt: oauthGrants.lastUsedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .leftJoin(members, and(eq(members.accountId, oauthGrants.accountId), eq(members.userId, oauthGrants.userId)))
    .where(and(eq(oauthGrants.accountId, accountId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.createdAt), desc(oauthGrants.id))
    .all();
  return rows.map((r) => ({
    id: r.id,
    clientId: r.clientId,
    clientName: r.clientName,
    clientHost: clientHost(r.clientId, r.redirectUris),
    scopes: r.role === null ? [] : effectiveScopes(parseStoredScopes(r.scopes), r.role),
    userId: r.userId,
    userName: r.userName,
    userEmail: r.userEmail,
    createdAt: isoAt(r.createdAt),
    lastUsedAt: r.lastUsedAt === null ? null : isoAt(r.lastUsedAt),
  }));
}

/** Revokes one of the account's grants (dashboard); another account's id is a 404. */
export async function revokeAccountGrant(deps: Pick<Deps, "store" | "clock">, accountId: string, grantId: string): Promise<void> {
  const row = await deps.store.db
    .select({ id: oauthGrants.id })
    .from(oauthGrants)
    .where(and(eq(oauthGrants.id, grantId), eq(oauthGrants.accountId, accountId), isNull(oauthGrants.revokedAt)))
    .get();
  if (!row) throw notFound("connected app");
  await revokeGrant(deps, grantId);
}

/** A client's host for people: its metadata document's host, else its first redirect URI's host or scheme. */
export function clientHost(clientId: string, redirectUrisJson: string): string {
  if (clientId.startsWith("https://")) return new URL(clientId).host;
  try {
    const first = (JSON.parse(redirectUrisJson) as string[])[0] ?? "";
    const url = new URL(first);
    return url.host || `${url.protocol}`;
  } catch {
    return "";
  }
}
