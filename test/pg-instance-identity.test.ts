/**
 * The instance secret's fingerprint on PostgreSQL (src/db/pg/instance-identity.ts), against a real PostgreSQL 15 with
 * the real schema: the first start records it, the same secret passes, another is refused without a write, and
 * replicas starting at once (each its own pool, so the statements really interleave on the server) agree on one
 * fingerprint: under one secret all pass and exactly one wrote; under two secrets only the winner's side passes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openPostgres, type PgClient } from "../src/db/pg/client";
import { checkInstanceIdentityPg } from "../src/db/pg/instance-identity";
import { migratePostgres } from "../src/db/pg/migrate";
import { InstanceSecretError, instanceSecretFingerprint, newInstanceSecret, decodeBase64Secret } from "../src/lib/instance-secret";
import { startPostgres, type Postgres } from "./helpers/postgres";

let pg: Postgres;
const clients: PgClient[] = [];

beforeAll(async () => {
  pg = await startPostgres();
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await pg?.stop();
});

const fingerprint = () => instanceSecretFingerprint(decodeBase64Secret(newInstanceSecret())!);

async function migrated(): Promise<string> {
  const url = await pg.createDatabase();
  const c = openPostgres(url, { max: 1 });
  await migratePostgres(c.sql);
  await c.close();
  return url;
}

function client(url: string): PgClient {
  const c = openPostgres(url, { max: 1 });
  clients.push(c);
  return c;
}

async function rows(c: PgClient): Promise<{ secret_fingerprint: string; created_at: string }[]> {
  return await c.sql`SELECT secret_fingerprint, created_at::text FROM instance_identity`;
}

describe("checkInstanceIdentityPg", () => {
  test("records the first fingerprint, passes it again, refuses another naming INSTANCE_SECRET and writing nothing", async () => {
    const c = client(await migrated());
    const a = fingerprint();
    const b = fingerprint();
    expect(await checkInstanceIdentityPg(c.db, a, "environment", "the database at DATABASE_URL", 1000)).toBe(true);
    expect(await rows(c)).toEqual([{ secret_fingerprint: a, created_at: "1000" }]);
    expect(await checkInstanceIdentityPg(c.db, a, "environment", "the database at DATABASE_URL", 2000)).toBe(false);

    const refused = await checkInstanceIdentityPg(c.db, b, "environment", "the database at DATABASE_URL", 3000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InstanceSecretError);
    const message = (refused as Error).message;
    expect(message).toContain("INSTANCE_SECRET is not the instance secret the database at DATABASE_URL was made under");
    expect(message).toContain("Set INSTANCE_SECRET back to the value this database first ran with");
    expect(message).not.toContain(a);
    expect(message).not.toContain(b);
    expect(await rows(c)).toEqual([{ secret_fingerprint: a, created_at: "1000" }]);
  });

  test("the table holds one row: a second id is refused by its check", async () => {
    const c = client(await migrated());
    await checkInstanceIdentityPg(c.db, fingerprint(), "environment", "db", 1);
    const failed = await c.sql`INSERT INTO instance_identity (id, secret_fingerprint, created_at) VALUES (2, 'x', 1)`.catch((e: unknown) => e);
    expect(String(failed)).toContain("instance_identity_single_row");
  });

  test("eight replicas starting at once under one secret all pass, and exactly one of them wrote the row", async () => {
    const url = await migrated();
    const a = fingerprint();
    const replicas = Array.from({ length: 8 }, () => client(url));
    const wrote = await Promise.all(replicas.map((r, i) => checkInstanceIdentityPg(r.db, a, "environment", "db", 100 + i)));
    expect(wrote.filter(Boolean)).toHaveLength(1);
    expect((await rows(replicas[0]!)).map((r) => r.secret_fingerprint)).toEqual([a]);
  });

  test("replicas starting at once under two secrets: the recorded one's side passes, every other replica is refused", async () => {
    const url = await migrated();
    const a = fingerprint();
    const b = fingerprint();
    const replicas = Array.from({ length: 8 }, (_, i) => ({ c: client(url), f: i % 2 === 0 ? a : b }));
    const results = await Promise.all(
      replicas.map((r) => checkInstanceIdentityPg(r.c.db, r.f, "environment", "db", 1).then(() => "ok" as const, (e: unknown) => (e instanceof InstanceSecretError ? ("refused" as const) : e))),
    );
    const recorded = (await rows(replicas[0]!.c)).map((r) => r.secret_fingerprint);
    expect(recorded).toHaveLength(1);
    expect(results).toEqual(replicas.map((r) => (r.f === recorded[0] ? "ok" : "refused")));
  });
});
