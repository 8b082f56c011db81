/**
 * The storage layer every service talks to, one interface over both backends (docs/storage-layer-plan.md, issue 15).
 *
 * - `store.db` reads. SQLite: a connection opened with `PRAGMA query_only = ON` (WAL: every statement sees only
 *   committed data, and a write on it fails loudly with SQLITE_READONLY). PostgreSQL: the pool (pg/store.ts).
 *   Inside a `write()` body (same async context) `store.db` is that write's transaction, so a helper that reads or
 *   writes through `deps.store.db` joins its caller's transaction.
 * - `store.write(async (tx) => …)` is the only way to write. SQLite: a second, dedicated writer connection, one
 *   `BEGIN IMMEDIATE … COMMIT` at a time behind an in-process FIFO mutex; another process holding the write lock (the
 *   CLI next to the server) is waited for with an async backoff, never a synchronous busy wait that would stop the event
 *   loop. A `write()` inside a `write()` joins the outer one (AsyncLocalStorage), without a savepoint.
 * - Both are typed as drizzle's SQLite database in *async* mode (`StoreDb`): `.get()`, `.all()`, `.run()` return
 *   promises, so the compiler finds a call site that lacks an `await`. At run time SQLite's builders are synchronous
 *   (awaiting a value is harmless) and PostgreSQL's builders get the same three methods (pg/store.ts).
 *
 * Rules for a `write()` body: await only the database (no fetch, no media put, no generator call: on SQLite the body
 * holds the process's only writer); never `Promise.all` queries in it; never leave a promise running past it (a query
 * from a finished write's context throws).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Database } from "bun:sqlite";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import { type Db, openDatabase } from "./client";
import { watchCommits } from "./commit-watch";
import type * as schema from "./schema";

/** The query surface services use on both backends (SQLite's types, async results). */
export type StoreDb = BaseSQLiteDatabase<"async", unknown, typeof schema>;

/** "Has anything that a cache depends on committed since I last looked?" */
export interface ChangeWatch {
  changed(): boolean | Promise<boolean>;
}

export interface Store {
  readonly dialect: "sqlite" | "postgres";
  /** Reads; inside a `write()` body, that write's transaction. */
  readonly db: StoreDb;
  /** Runs `body` in one write transaction (joins the enclosing one when called inside a `write()` body). */
  write<T>(body: (tx: StoreDb) => Promise<T>): Promise<T>;
  /**
   * One write statement that is atomic by itself (an upsert): inside a `write()` it joins it; otherwise on PostgreSQL it
   * runs on the pool in autocommit (one round trip, no BEGIN/COMMIT: its row lock is held for the statement only),
   * and on SQLite it is a `write()`.
   */
  writeOne<T>(statement: (db: StoreDb) => Promise<T>): Promise<T>;
  /** True while the calling async context is inside a `write()` body. */
  inWrite(): boolean;
  /**
   * A new watch for one of the per-process auth caches (keys, access tokens): it answers whether anything the cache
   * depends on may have committed since ITS last look, so each cache asks for its own, once. SQLite reads the
   * WAL-index header (any commit); PostgreSQL reads the auth generation counter its triggers bump.
   */
  authChanges(): ChangeWatch;
  /** One trivial query: false while the database cannot be reached. */
  ping(): Promise<boolean>;
  /**
   * Runs `fn` unless another process of the cluster is running the job `name` right now (PostgreSQL: a session advisory
   * lock taken with pg_try_advisory_lock, held while `fn` runs; SQLite: one process owns the database, so always runs).
   * Answers whether it ran. Periodic jobs run through it so that each runs once cluster-wide.
   */
  exclusive(name: string, fn: () => Promise<void>): Promise<boolean>;
  close(): Promise<void>;
}

export interface SqliteStore extends Store {
  readonly dialect: "sqlite";
  /** The reader connection (query_only): raw read-only SQL (search), commit-watch. */
  readonly sqlite: Database;
  /** Runs `fn` on the writer connection holding the writer, outside any transaction (VACUUM INTO). */
  withWriter<T>(fn: (sqlite: Database) => T): Promise<T>;
  /** Runs connection-local DDL on the reader (TEMP tables): query_only off, `fn`, on again, synchronously. */
  readerDdl<T>(fn: (sqlite: Database) => T): T;
}

export function isSqliteStore(store: Store): store is SqliteStore {
  return store.dialect === "sqlite";
}

interface OpenWrite {
  tx: StoreDb;
  /** Set once the transaction is over: a straggling promise (fire-and-forget) inherited the context and must fail. */
  done: boolean;
}

/** How long a write waits for the process's writer before it is an error (a nested write that lost its context). */
export const WRITER_WAIT_LIMIT_MS = 30_000;

/** A FIFO async mutex: `acquire()` resolves to the release function. Uncontended, one resolved promise. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async acquire(limitMs = WRITER_WAIT_LIMIT_MS): Promise<() => void> {
    let release!: () => void;
    const before = this.tail;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`store: write() waited ${limitMs / 1000} s for the writer`)), limitMs);
    });
    try {
      await Promise.race([before, timeout]);
    } catch (error) {
      // Our turn still comes; pass it on at once so the queue behind us is not stuck.
      void before.then(release);
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return release;
  }
}

/** Reads the open write of the calling context; throws when it is over (see OpenWrite.done). */
export function joinedWrite(als: AsyncLocalStorage<OpenWrite>): OpenWrite | undefined {
  const open = als.getStore();
  if (open?.done) throw new Error("store: a query ran in a write() context whose transaction is already over (a promise left running?)");
  return open;
}

export { type OpenWrite };

/** How long write() keeps retrying BEGIN IMMEDIATE while another process holds the write lock (as busy_timeout did). */
export const WRITER_BUSY_LIMIT_MS = 5000;

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || /database is locked|SQLITE_BUSY/i.test(String(error));
}

/** BEGIN IMMEDIATE, retried with an async backoff (1, 2, 4 … 50 ms) for up to WRITER_BUSY_LIMIT_MS. */
async function beginImmediate(sqlite: Database): Promise<void> {
  const started = performance.now();
  for (let pause = 1; ; pause = Math.min(pause * 2, 50)) {
    try {
      sqlite.exec("BEGIN IMMEDIATE");
      return;
    } catch (error) {
      if (!isBusy(error) || performance.now() - started > WRITER_BUSY_LIMIT_MS) throw error;
    }
    await Bun.sleep(pause);
  }
}

/**
 * Opens the store on the SQLite file at `path`. `migrated` is the connection bootstrap migrated (it becomes the reader,
 * now query_only); without it a new connection is opened (the database must be migrated already).
 */
export function openSqliteStore(path: string, migrated?: { sqlite: Database; db: Db }): SqliteStore {
  const reader = migrated ?? openDatabase(path);
  reader.sqlite.exec("PRAGMA query_only = ON");
  const writer = openDatabase(path);
  // The writer never busy-waits synchronously (that would stop the event loop, and every request with it, while another
  // process writes): BEGIN IMMEDIATE fails at once and write() retries after an async pause.
  writer.sqlite.exec("PRAGMA busy_timeout = 0");
  const readerDb = reader.db as unknown as StoreDb;
  const writerDb = writer.db as unknown as StoreDb;
  const als = new AsyncLocalStorage<OpenWrite>();
  const mutex = new Mutex();

  const store: SqliteStore = {
    dialect: "sqlite",
    sqlite: reader.sqlite,
    get db(): StoreDb {
      return joinedWrite(als)?.tx ?? readerDb;
    },
    inWrite: () => als.getStore()?.done === false,
    writeOne<T>(statement: (db: StoreDb) => Promise<T>): Promise<T> {
      return store.write(statement);
    },
    async write<T>(body: (tx: StoreDb) => Promise<T>): Promise<T> {
      const open = joinedWrite(als);
      if (open) return body(open.tx);
      const release = await mutex.acquire();
      const context: OpenWrite = { tx: writerDb, done: false };
      try {
        await beginImmediate(writer.sqlite);
        try {
          const result = await als.run(context, () => body(writerDb));
          writer.sqlite.exec("COMMIT");
          return result;
        } catch (error) {
          if (writer.sqlite.inTransaction) writer.sqlite.exec("ROLLBACK");
          throw error;
        }
      } finally {
        context.done = true;
        release();
      }
    },
    authChanges() {
      // One watch per consumer: a watch answers "since MY last look", so two caches must not share one.
      return watchCommits(reader.sqlite);
    },
    async ping() {
      try {
        return reader.sqlite.query<{ ok: number }, []>("SELECT 1 AS ok").get()?.ok === 1;
      } catch {
        return false;
      }
    },
    async exclusive(_name: string, fn: () => Promise<void>) {
      await fn();
      return true;
    },
    async withWriter<T>(fn: (sqlite: Database) => T): Promise<T> {
      if (joinedWrite(als)) throw new Error("store: withWriter() inside a write()");
      const release = await mutex.acquire();
      try {
        writer.sqlite.exec("PRAGMA busy_timeout = 5000");
        try {
          return fn(writer.sqlite);
        } finally {
          writer.sqlite.exec("PRAGMA busy_timeout = 0");
        }
      } finally {
        release();
      }
    },
    readerDdl<T>(fn: (sqlite: Database) => T): T {
      reader.sqlite.exec("PRAGMA query_only = OFF");
      try {
        return fn(reader.sqlite);
      } finally {
        reader.sqlite.exec("PRAGMA query_only = ON");
      }
    },
    async close() {
      const release = await mutex.acquire();
      try {
        writer.sqlite.close();
        reader.sqlite.close();
      } finally {
        release();
      }
    },
  };
  return store;
}
