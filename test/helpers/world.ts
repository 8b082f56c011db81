/**
 * A fresh, isolated Seedcast for one test file: temp data dir, a real database (a SQLite file, or with
 * SEEDCAST_TEST_DATABASE=postgres a fresh database on a real PostgreSQL: test/helpers/test-database.ts), migrated, a
 * manual clock, and the app called in-process through `app.handle` (no port, no sleep).
 *
 * Tests that look into the database use `world.sql` (portable SQL, `?` parameters: runs on both backends) or
 * `world.store` (drizzle, tables from src/db/tables). A test of SQLite-only machinery (checkpointer, commit-watch,
 * crash-safety, backup, FTS internals) skips itself with `describe.skipIf(TEST_DIALECT !== "sqlite")`.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { bootstrap } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import { DB_FILE_NAME } from "../../src/db/client";
import type { Store } from "../../src/db/store";
import type { Deps } from "../../src/deps";
import type { Generator } from "../../src/generation/generator";
import { ManualClock } from "../../src/lib/clock";
import { type Logger, silentLogger } from "../../src/lib/log";
import { createAccount, addMember } from "../../src/modules/accounts/service";
import { mintKey } from "../../src/modules/auth/keys-service";
import type { Scope } from "../../src/auth/scopes";
import { SCOPES } from "../../src/auth/scopes";
import { TEST_DIALECT, closeTestSql, testDatabaseEnv, testSql } from "./test-database";

export { TEST_DIALECT };

export const BASE = "http://localhost";

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is (a string is not JSON-encoded again). */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint: tests read arbitrary JSON shapes.
  json: any;
}

export interface TestAccount {
  accountId: string;
  userId: string;
  /** A key holding all four groups, minted by the owner. */
  key: string;
  keyId: string;
  /** Mints another key for this account's owner (or `userId`). */
  mint(groups: readonly Scope[], opts?: { userId?: string; expiresDays?: number | null; name?: string }): Promise<{ id: string; key: string }>;
  addMember(role: "owner" | "editor" | "viewer"): Promise<string>;
}

export interface World {
  deps: Deps;
  /** deps.store */
  store: Store;
  /** "sqlite" or "postgres": what this run's worlds are on. */
  dialect: "sqlite" | "postgres";
  /**
   * Runs one SQL statement on the world's database outside the app (a raw read or a test's setup write) and answers
   * its rows. Write it portably; `?` are the parameters (translated to $1… on PostgreSQL).
   */
  // biome-ignore lint: tests read arbitrary row shapes.
  sql<T = any>(text: string, ...params: unknown[]): Promise<T[]>;
  /** The environment a child process (CLI, server) needs to reach the same database: DATA_DIR and, on PostgreSQL, DATABASE_URL and INSTANCE_SECRET. */
  env(): Record<string, string>;
  app: ReturnType<typeof createApp>;
  clock: ManualClock;
  dataDir: string;
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  createAccount(opts?: { credits?: number; name?: string }): Promise<TestAccount>;
  close(): Promise<void>;
}

let counter = 0;

/** Builds a world. `env` overrides configuration (DATA_DIR is always a fresh temp dir). */
export async function createWorld(
  opts: { env?: Record<string, string>; generator?: Generator; clock?: ManualClock; log?: Logger } = {},
): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), "seedcast-test-"));
  const databaseEnv = await testDatabaseEnv();
  // HOST: a test world listens nowhere, like a server bound to loopback (which leaves /metrics open without a token).
  const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ...databaseEnv, ...opts.env, DATA_DIR: dataDir });
  const clock = opts.clock ?? new ManualClock();
  const deps = await bootstrap(config, { clock, log: opts.log ?? silentLogger, ...(opts.generator ? { generator: opts.generator } : {}) });
  let raw: Database | undefined;
  const sql: World["sql"] = async (text, ...params) => {
    // `$1` with an array of values binds the array itself on PostgreSQL (a count that is always 0, or 08P01 for $2),
    // while SQLite reads it as the list: a test written that way passes on one database and means nothing on the other.
    if (/\$\d/.test(text)) throw new Error(`world.sql takes ? parameters, one argument each: ${text}`);
    if (config.database.kind === "postgres") return testSql(config.database.url, text, params);
    // A read-write connection of its own (the store's reader is query_only). It never busy-waits synchronously: a
    // store write may be open (a fire-and-forget touch), and it can only commit if the event loop runs, so a busy
    // statement is retried after an async pause, as the store's own writer does.
    if (!raw) {
      raw = new Database(join(dataDir, DB_FILE_NAME), { strict: false });
      raw.exec("PRAGMA busy_timeout = 0");
      raw.exec("PRAGMA foreign_keys = ON");
    }
    const connection = raw;
    const started = performance.now();
    for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
      try {
        // biome-ignore lint: positional parameters of any type.
        return connection.query(text).all(...(params as any[])) as never[];
      } catch (error) {
        if (!/SQLITE_BUSY|database is locked/i.test(String((error as { code?: string }).code ?? error)) || performance.now() - started > 5000) throw error;
      }
      await Bun.sleep(pause);
    }
  };
  const app = createApp(deps);

  const call = async (method: string, path: string, o: CallOptions = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: BodyInit | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await app.handle(new Request(`${BASE}${path}`, { method, headers, body }));
    const text = await response.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  const world: World = {
    deps,
    store: deps.store,
    dialect: config.database.kind,
    sql,
    env: () => ({ DATA_DIR: dataDir, ...databaseEnv }),
    app,
    clock,
    dataDir,
    call,
    async createAccount(o = {}) {
      counter += 1;
      const created = await createAccount(deps, {
        name: o.name ?? `Account ${counter}`,
        email: `owner${counter}-${crypto.randomUUID().slice(0, 8)}@example.test`,
        password: "correct horse battery",
        credits: o.credits ?? 100,
      });
      const mint: TestAccount["mint"] = async (groups, m = {}) =>
        mintKey(deps, {
          accountId: created.accountId,
          userId: m.userId ?? created.userId,
          name: m.name ?? "test key",
          groups,
          expiresDays: m.expiresDays === undefined ? 90 : m.expiresDays,
        });
      const full = await mint(SCOPES);
      return {
        ...created,
        key: full.key,
        keyId: full.id,
        mint,
        addMember: async (role) =>
          (
            await addMember(deps, {
              accountId: created.accountId,
              email: `member${counter}-${crypto.randomUUID().slice(0, 8)}@example.test`,
              password: "correct horse battery",
              role,
            })
          ).userId,
      };
    },
    async close() {
      raw?.close();
      if (config.database.kind === "postgres") await closeTestSql(config.database.url);
      await deps.store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}
