/**
 * The statements every token request runs, prepared once per query surface (the store's reader, its writer
 * transaction: each `StoreDb` object) through drizzle (so they stay portable to the PostgreSQL dialect, whose builder
 * shim names them) instead of being rebuilt per call: building a joined select cost ~100 µs a request.
 */
import { and, eq, isNull, sql } from "drizzle-orm";
import type { StoreDb } from "../../db/store";
import { accounts, members, oauthClients, oauthGrants, oauthTokens } from "../../db/tables";

function build(db: StoreDb) {
  const tokenLookup = (kind: "access" | "refresh") =>
    db
      .select({
        tokenId: oauthTokens.id,
        expiresAt: oauthTokens.expiresAt,
        usedAt: oauthTokens.usedAt,
        tokenRevokedAt: oauthTokens.revokedAt,
        grantId: oauthGrants.id,
        clientId: oauthGrants.clientId,
        accountId: oauthGrants.accountId,
        userId: oauthGrants.userId,
        scopes: oauthGrants.scopes,
        resource: oauthGrants.resource,
        grantRevokedAt: oauthGrants.revokedAt,
        lastUsedAt: oauthGrants.lastUsedAt,
        role: members.role,
        disabledAt: accounts.disabledAt,
      })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(accounts, eq(accounts.id, oauthGrants.accountId))
      .leftJoin(members, and(eq(members.accountId, oauthGrants.accountId), eq(members.userId, oauthGrants.userId)))
      .where(and(eq(oauthTokens.tokenHash, sql.placeholder("hash")), eq(oauthTokens.kind, kind)))
      .prepare();
  return {
    clientById: db.select().from(oauthClients).where(eq(oauthClients.id, sql.placeholder("id"))).prepare(),
    accessLookup: tokenLookup("access"),
    refreshLookup: tokenLookup("refresh"),
    insertToken: db
      .insert(oauthTokens)
      .values({
        id: sql.placeholder("id"),
        grantId: sql.placeholder("grantId"),
        kind: sql.placeholder("kind"),
        tokenHash: sql.placeholder("tokenHash"),
        expiresAt: sql.placeholder("expiresAt"),
        createdAt: sql.placeholder("createdAt"),
      })
      .prepare(),
    /** Spends a token once: no row back when it was already spent (a concurrent refresh on PostgreSQL). */
    markUsed: db
      .update(oauthTokens)
      .set({ usedAt: sql`${sql.placeholder("now")}` })
      .where(and(eq(oauthTokens.id, sql.placeholder("id")), isNull(oauthTokens.usedAt)))
      .returning({ id: oauthTokens.id })
      .prepare(),
    touchGrant: db.update(oauthGrants).set({ lastUsedAt: sql`${sql.placeholder("now")}` }).where(eq(oauthGrants.id, sql.placeholder("id"))).prepare(),
  };
}

export type Statements = ReturnType<typeof build>;
export type TokenLookupRow = NonNullable<Awaited<ReturnType<Statements["accessLookup"]["get"]>>>;

const cache = new WeakMap<StoreDb, Statements>();

/** The prepared statements of `db` (`deps.store.db` for reads, the write's `tx` inside a write body). */
export function statements(db: StoreDb): Statements {
  let found = cache.get(db);
  if (!found) {
    found = build(db);
    cache.set(db, found);
  }
  return found;
}
