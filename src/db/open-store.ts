/**
 * Opens the store the configuration names, migrated and checked against the instance secret: SQLite in DATA_DIR (the
 * default) or PostgreSQL at DATABASE_URL. The order is fixed: open → migrate (SQLite on the connection that then becomes
 * the query_only reader; PostgreSQL under its advisory lock, so replicas started at once migrate once) → point the
 * tables at the dialect → the secret's fingerprint. A refusal closes what it opened.
 */
import type { InstanceSecretSource } from "../lib/instance-secret";
import { openDatabase } from "./client";
import { checkInstanceIdentity } from "./instance-identity";
import { migrateDatabase } from "./migrate";
import { type Store, openSqliteStore } from "./store";
import { useDialect } from "./tables";

/** Where the tables live: a SQLite file, or a PostgreSQL URL (`name`: the same without its password, for messages). */
export type StoreTarget = { kind: "sqlite"; path: string } | { kind: "postgres"; url: string; name: string };

/** The database could not be reached or migrated at start (it names the database, never its password). */
export class DatabaseUnavailableError extends Error {}

export interface OpenedStore {
  store: Store;
  /** The migration tags this start applied. */
  applied: string[];
}

export async function openStore(target: StoreTarget, identity: { fingerprint: string; source: InstanceSecretSource; now: number }): Promise<OpenedStore> {
  let store: Store;
  let applied: string[];
  let name: string;
  if (target.kind === "postgres") {
    // Loaded only in PostgreSQL mode: the appliance never loads the driver's schema, store or migrations.
    await useDialect("postgres");
    const { openPgStore } = await import("./pg/store");
    const { migratePostgres } = await import("./pg/migrate");
    const pg = openPgStore(target.url);
    store = pg;
    name = target.name;
    try {
      applied = await migratePostgres(pg.client.sql);
    } catch (error) {
      await store.close();
      const reason = error instanceof Error ? error.message : String(error);
      throw new DatabaseUnavailableError(`PostgreSQL at ${name} could not be opened and migrated: ${reason.replaceAll(target.url, name)}`);
    }
  } else {
    await useDialect("sqlite");
    name = target.path;
    const opened = openDatabase(name);
    try {
      applied = migrateDatabase(opened.sqlite);
    } catch (error) {
      opened.sqlite.close();
      throw error;
    }
    store = openSqliteStore(name, opened);
  }
  try {
    await checkInstanceIdentity(store, identity.fingerprint, identity.source, name, identity.now);
  } catch (error) {
    await store.close();
    throw error;
  }
  return { store, applied };
}
