/**
 * The auth generation counter behaves the same on PostgreSQL (src/db/pg/auth-triggers.ts, plpgsql) as on SQLite
 * (src/db/auth-triggers.ts): the same statements, run on a real SQLite file after migrateDatabase and on a real
 * PostgreSQL 15 database after migratePostgres, bump it by the same amount, and that amount is the one the
 * authenticator's cache relies on (test/auth.test.ts checks the SQLite cache end to end: a revocation, role change or
 * disable by another process applies at the next request). What bumps: a key's revocation, grace, expiry, scopes,
 * owner or secret being assigned (changed or not); any membership change; an account's disabled flag or deletion; and
 * what the cascades of a deletion remove. What does not: new keys and accounts, a key's name or last use, credits.
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { migrateDatabase } from "../src/db/migrate";
import { openPostgres, type PgClient } from "../src/db/pg/client";
import { migratePostgres } from "../src/db/pg/migrate";
import { authGeneration } from "../src/db/pg/schema";
import { startPostgres, type Postgres } from "./helpers/postgres";

/** Rows every statement below starts from: two accounts, three people, memberships and keys. */
const SETUP = [
  "INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'One', 1), ('a2', 'Two', 1)",
  "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'u1@example.com', 'h', 1), ('u2', 'u2@example.com', 'h', 1), ('u3', 'u3@example.com', 'h', 1)",
  "INSERT INTO members (account_id, user_id, role, created_at) VALUES ('a1', 'u1', 'owner', 1), ('a1', 'u2', 'editor', 1), ('a2', 'u3', 'owner', 1), ('a2', 'u1', 'viewer', 1)",
  `INSERT INTO api_keys (id, account_id, user_id, name, scopes, secret_hash, prefix, created_at) VALUES
     ('k1', 'a1', 'u1', 'one', 'read', 'h1', 'p', 1), ('k2', 'a1', 'u2', 'two', 'read', 'h2', 'p', 1),
     ('k3', 'a2', 'u3', 'three', 'read', 'h3', 'p', 1), ('k4', 'a2', 'u1', 'four', 'read', 'h4', 'p', 1)`,
  `INSERT INTO oauth_clients (id, kind, client_name, redirect_uris, token_endpoint_auth_method, grant_types, created_at) VALUES
     ('c1', 'registered', 'Client', '[]', 'none', '["authorization_code"]', 1)`,
  `INSERT INTO oauth_grants (id, client_id, account_id, user_id, scopes, resource, created_at) VALUES
     ('g1', 'c1', 'a1', 'u2', 'read', 'r', 1), ('g2', 'c1', 'a1', 'u2', 'read', 'r', 1)`,
  `INSERT INTO oauth_tokens (id, grant_id, kind, token_hash, expires_at, created_at) VALUES
     ('t1', 'g1', 'access', 'th1', 100, 1), ('t2', 'g1', 'refresh', 'th2', 100, 1), ('t3', 'g2', 'access', 'th3', 100, 1)`,
];

/** Each statement and how much it bumps the counter (written for both dialects). */
const STATEMENTS: [string, number][] = [
  ["INSERT INTO accounts (id, name, created_at) VALUES ('a3', 'Three', 1)", 0],
  ["INSERT INTO users (id, email, password_hash, created_at) VALUES ('u4', 'u4@example.com', 'h', 1)", 0],
  ["INSERT INTO api_keys (id, account_id, user_id, name, scopes, secret_hash, prefix, created_at) VALUES ('k5', 'a3', 'u4', 'five', 'read', 'h5', 'p', 1)", 0],
  ["INSERT INTO members (account_id, user_id, role, created_at) VALUES ('a3', 'u4', 'owner', 1)", 1],
  ["UPDATE api_keys SET last_used_at = 5 WHERE id = 'k1'", 0],
  ["UPDATE api_keys SET name = 'renamed', prefix = 'q' WHERE id = 'k1'", 0],
  ["UPDATE api_keys SET revoked_at = 10 WHERE id = 'k1'", 1],
  // Assigned, not changed: the trigger fires all the same (UPDATE OF means "in the SET list" on both).
  ["UPDATE api_keys SET revoked_at = revoked_at WHERE id = 'k1'", 1],
  ["UPDATE api_keys SET scopes = 'read,create' WHERE account_id = 'a1'", 2],
  ["UPDATE api_keys SET grace_until = 20 WHERE id = 'missing'", 0],
  ["UPDATE api_keys SET grace_until = 20, expires_at = 30 WHERE id = 'k2'", 1],
  ["UPDATE api_keys SET secret_hash = 'h2b' WHERE id = 'k2'", 1],
  ["UPDATE api_keys SET user_id = 'u1' WHERE id = 'k2'", 1],
  ["UPDATE api_keys SET account_id = 'a1' WHERE id = 'k4'", 1],
  ["UPDATE members SET role = 'viewer' WHERE user_id = 'u2'", 1],
  ["UPDATE members SET created_at = 2 WHERE account_id = 'a1'", 2],
  ["UPDATE accounts SET name = 'Renamed', credits_balance = 5, credits_reserved = 1", 0],
  ["UPDATE accounts SET disabled_at = 40 WHERE id = 'a1'", 1],
  ["UPDATE accounts SET disabled_at = NULL WHERE id = 'a1'", 1],
  ["DELETE FROM members WHERE account_id = 'a1' AND user_id = 'u2'", 1],
  ["DELETE FROM api_keys WHERE id = 'k3'", 1],
  // Cascades: the account (1) and what goes with it: its remaining membership (a2/u3, a2/u1: 2), no keys left (k3
  // deleted, k4 moved to a1).
  ["DELETE FROM accounts WHERE id = 'a2'", 3],
  // A person: their memberships (a1/u1: 1) and keys (k1, k2, k4: 3).
  ["DELETE FROM users WHERE id = 'u1'", 4],
  // The connector (v2): revocations and deletions bump; last use does not.
  ["UPDATE oauth_grants SET last_used_at = 7 WHERE id = 'g1'", 0],
  ["UPDATE oauth_tokens SET used_at = 7 WHERE id = 't2'", 0],
  ["INSERT INTO oauth_tokens (id, grant_id, kind, token_hash, expires_at, created_at) VALUES ('t4', 'g1', 'access', 'th4', 100, 1)", 0],
  ["UPDATE oauth_tokens SET revoked_at = 8 WHERE id = 't1'", 1],
  ["UPDATE oauth_grants SET revoked_at = 9 WHERE id = 'g1'", 1],
  ["DELETE FROM oauth_tokens WHERE id = 't4'", 1],
  // A grant's deletion takes its tokens with it (t3): 2.
  ["DELETE FROM oauth_grants WHERE id = 'g2'", 2],
  // u2 has no membership or key left, but their grant g1 goes (1) with its tokens t1, t2 (2).
  ["DELETE FROM users WHERE id = 'u2'", 3],
];

let pg: Postgres;
let dir: string;
let sqlite: Database;
let client: PgClient;
let url: string;

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "seedcast-auth-triggers-"));
  sqlite = openDatabase(join(dir, "seedcast.db")).sqlite;
  migrateDatabase(sqlite);
  url = await pg.createDatabase();
  client = openPostgres(url, { max: 2 });
  await migratePostgres(client.sql);
  for (const statement of SETUP) {
    sqlite.exec(statement);
    await client.sql.unsafe(statement);
  }
});

afterAll(async () => {
  sqlite?.close();
  await client?.close();
  await pg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sqliteGeneration = () => sqlite.query<{ n: number }, []>("SELECT n FROM auth_generation WHERE id = 1").get()!.n;
const pgGeneration = async () => (await client.db.select({ n: authGeneration.n }).from(authGeneration).where(eq(authGeneration.id, 1)))[0]!.n;

describe("the auth generation counter", () => {
  test("the same statements bump it by the same amount on SQLite and PostgreSQL", async () => {
    const startSqlite = sqliteGeneration();
    const startPg = await pgGeneration();
    // The setup's memberships bumped both by the same amount already.
    expect(startSqlite).toBe(4);
    expect(startPg).toBe(startSqlite);
    const seen: { statement: string; sqlite: number; pg: number; expected: number }[] = [];
    for (const [statement, expected] of STATEMENTS) {
      const beforeSqlite = sqliteGeneration();
      const beforePg = await pgGeneration();
      sqlite.exec(statement);
      await client.sql.unsafe(statement);
      seen.push({ statement, sqlite: sqliteGeneration() - beforeSqlite, pg: (await pgGeneration()) - beforePg, expected });
    }
    // One comparison of the whole table, so a failure shows every statement that differs.
    expect(seen.map((s) => [s.statement, s.sqlite, s.pg])).toEqual(seen.map((s) => [s.statement, s.expected, s.expected]));
    expect(typeof (await pgGeneration())).toBe("number");
  });

  test("a bump made on one PostgreSQL connection is read by another (as a replica would), only once committed", async () => {
    const other = openPostgres(url, { max: 1 });
    try {
      const before = await pgGeneration();
      await client.sql.begin(async (tx) => {
        await tx.unsafe("UPDATE api_keys SET revoked_at = 50 WHERE id = 'k5'");
        // Not yet committed: the other connection still reads the old value.
        const [row] = await other.db.select({ n: authGeneration.n }).from(authGeneration);
        expect(row?.n).toBe(before);
      });
      const [row] = await other.db.select({ n: authGeneration.n }).from(authGeneration);
      expect(row?.n).toBe(before + 1);
    } finally {
      await other.close();
    }
  });

  test("the counter keeps one row on both (the single-row check refuses a second)", async () => {
    expect(() => sqlite.exec("INSERT INTO auth_generation (id, n) VALUES (2, 0)")).toThrow(/CHECK/i);
    await expect(client.sql.unsafe("INSERT INTO auth_generation (id, n) VALUES (2, 0)")).rejects.toThrow(/auth_generation_single_row/);
  });
});
