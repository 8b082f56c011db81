/**
 * Opens the store the configuration names, migrated and checked against the instance secret: SQLite in DATA_DIR (the
 * default) or PostgreSQL at DATABASE_URL. The order is fixed: open → migrate (SQLite on the connection that then becomes
 * the query_only reader; PostgreSQL under its advisory lock, so replicas started at once migrate once) → point the
 * tables at the dialect → the secret's fingerprint. A refusal closes what it opened.
 */
import { join } from "node:path";
import type { Config } from "../config";
import type { InstanceSecretSource } from "../lib/instance-secret";
import { DB_FILE_NAME, openDatabase } from "./client";
import { checkInstanceIdentity } from "./instance-identity";
import { migrateDatabase } from "./migrate";
import { migratePostgres } from "./pg/migrate";
import { openPgStore } from "./pg/store";
import { type Store, openSqliteStore } from "./store";
import { useDialect } from "./tables";

export interface OpenedStore {
  store: Store;
  /** The migration tags this start applied. */
  applied: string[];
}

export async function openStore(
  config: Readonly<Config>,
  identity: { fingerprint: string; source: InstanceSecretSource; now: number },
): Promise<OpenedStore> {
  let store: Store;
  let applied: string[];
  let name: string;
  if (config.database.kind === "postgres") {
    useDialect("postgres");
    const pg = openPgStore(config.database.url);
    store = pg;
    name = config.database.redacted;
    try {
      applied = await migratePostgres(pg.client.sql);
    } catch (error) {
      await store.close();
      throw error;
    }
  } else {
    useDialect("sqlite");
    name = join(config.dataDir, DB_FILE_NAME);
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
