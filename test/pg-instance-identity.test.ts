/**
 * The instance secret's fingerprint against the database (src/db/instance-identity.ts, one function over the store),
 * on a real PostgreSQL 15 with the real schema and on SQLite: the first start records it, the same secret passes,
 * another is refused without a write, and replicas starting at once (each its own store: its own pool on PostgreSQL,
 * its own writer connection on SQLite, so the statements really interleave) agree on one fingerprint: under one secret
 * all pass and exactly one wrote; under two secrets only the winner's side passes.
 *
 * The table bindings (src/db/tables.ts) are process-wide: each describe points them at its dialect and back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { checkInstanceIdentity } from "../src/db/instance-identity";
import { migrateDatabase } from "../src/db/migrate";
import { migratePostgres } from "../src/db/pg/migrate";
import { type PgStore, openPgStore } from "../src/db/pg/store";
import { type SqliteStore, type Store, openSqliteStore } from "../src/db/store";
import { instanceIdentity, tablesDialect, useDialect } from "../src/db/tables";
import { InstanceSecretError, decodeBase64Secret, instanceSecretFingerprint, newInstanceSecret } from "../src/lib/instance-secret";
import { type Postgres, startPostgres } from "./helpers/postgres";

const fingerprint = () => instanceSecretFingerprint(decodeBase64Secret(newInstanceSecret())!);

interface Backend {
  /** A migrated, empty database; answers how to open another store (a replica) on it. */
  migrated(): Promise<() => Store>;
  /** The recorded rows, read outside the function under test. */
  rows(store: Store): Promise<{ secret_fingerprint: string; created_at: string }[]>;
}

/** Tries to insert a second row (the table's check must refuse it); answers the error's text. */
function insertSecondRow(store: Store): Promise<unknown> {
  return store
    .write((tx) => tx.insert(instanceIdentity).values({ id: 2, secretFingerprint: "x", createdAt: 1 }).run())
    .then(
      () => null,
      // drizzle wraps the driver's error (PostgreSQL): the constraint is named in its cause.
      (e: unknown) => `${e} ${(e as { cause?: unknown }).cause ?? ""}`,
    );
}

/** The cases, run on each backend. */
function cases(name: string, backend: () => Backend) {
  test(`${name}: records the first fingerprint, passes it again, refuses another naming INSTANCE_SECRET and writing nothing`, async () => {
    const store = (await backend().migrated())();
    const rows = () => backend().rows(store);
    const a = fingerprint();
    const b = fingerprint();
    expect(await checkInstanceIdentity(store, a, "environment", "the database at DATABASE_URL", 1000)).toBe(true);
    expect(await rows()).toEqual([{ secret_fingerprint: a, created_at: "1000" }]);
    expect(await checkInstanceIdentity(store, a, "environment", "the database at DATABASE_URL", 2000)).toBe(false);

    const refused = await checkInstanceIdentity(store, b, "environment", "the database at DATABASE_URL", 3000).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InstanceSecretError);
    const message = (refused as Error).message;
    expect(message).toContain("INSTANCE_SECRET is not the instance secret the database at DATABASE_URL was made under");
    expect(message).toContain("Set INSTANCE_SECRET back to the value this database first ran with");
    expect(message).not.toContain(a);
    expect(message).not.toContain(b);
    expect(await rows()).toEqual([{ secret_fingerprint: a, created_at: "1000" }]);
  });

  test(`${name}: the table holds one row: a second id is refused by its check`, async () => {
    const store = (await backend().migrated())();
    await checkInstanceIdentity(store, fingerprint(), "environment", "db", 1);
    const failed = await insertSecondRow(store);
    expect(String(failed)).toContain("instance_identity_single_row");
  });

  test(`${name}: eight replicas starting at once under one secret all pass, and exactly one of them wrote the row`, async () => {
    const open = await backend().migrated();
    const a = fingerprint();
    const replicas = Array.from({ length: 8 }, () => open());
    const wrote = await Promise.all(replicas.map((r, i) => checkInstanceIdentity(r, a, "environment", "db", 100 + i)));
    expect(wrote.filter(Boolean)).toHaveLength(1);
    expect((await backend().rows(replicas[0]!)).map((r) => r.secret_fingerprint)).toEqual([a]);
  });

  test(`${name}: replicas starting at once under two secrets: the recorded one's side passes, every other replica is refused`, async () => {
    const open = await backend().migrated();
    const a = fingerprint();
    const b = fingerprint();
    const replicas = Array.from({ length: 8 }, (_, i) => ({ store: open(), f: i % 2 === 0 ? a : b }));
    const results = await Promise.all(
      replicas.map((r) =>
        checkInstanceIdentity(r.store, r.f, "environment", "db", 1).then(
          () => "ok" as const,
          (e: unknown) => (e instanceof InstanceSecretError ? ("refused" as const) : e),
        ),
      ),
    );
    const recorded = (await backend().rows(replicas[0]!.store)).map((r) => r.secret_fingerprint);
    expect(recorded).toHaveLength(1);
    expect(results).toEqual(replicas.map((r) => (r.f === recorded[0] ? "ok" : "refused")));
  });
}

describe("checkInstanceIdentity on PostgreSQL", () => {
  let pg: Postgres;
  let before: "sqlite" | "postgres";
  const stores: Store[] = [];
  beforeAll(async () => {
    before = tablesDialect();
    await useDialect("postgres");
    pg = await startPostgres();
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    await pg?.stop();
    await useDialect(before);
  });
  const backend: Backend = {
    async migrated() {
      const url = await pg.createDatabase();
      const first = openPgStore(url, { max: 1 });
      await migratePostgres(first.client.sql);
      await first.close();
      return () => {
        const store = openPgStore(url, { max: 1 });
        stores.push(store);
        return store;
      };
    },
    async rows(store) {
      return await (store as PgStore).client.sql`SELECT secret_fingerprint, created_at::text FROM instance_identity`;
    },
  };
  cases("PostgreSQL", () => backend);
});

describe("checkInstanceIdentity on SQLite", () => {
  let dir: string;
  let before: "sqlite" | "postgres";
  const stores: Store[] = [];
  beforeAll(async () => {
    before = tablesDialect();
    await useDialect("sqlite");
    dir = mkdtempSync(join(tmpdir(), "seedcast-identity-"));
  });
  afterAll(async () => {
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
    await useDialect(before);
  });
  let n = 0;
  const backend: Backend = {
    async migrated() {
      const path = join(dir, `db${++n}.sqlite`);
      const opened = openDatabase(path);
      migrateDatabase(opened.sqlite);
      opened.sqlite.close();
      return () => {
        const store = openSqliteStore(path);
        stores.push(store);
        return store;
      };
    },
    async rows(store) {
      return (store as SqliteStore).sqlite
        .query<{ secret_fingerprint: string; created_at: string }, []>("SELECT secret_fingerprint, CAST(created_at AS TEXT) AS created_at FROM instance_identity")
        .all();
    },
  };
  cases("SQLite", () => backend);
});
