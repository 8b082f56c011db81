/**
 * The PostgreSQL side of `Store` (../store.ts). Services are typed against drizzle's SQLite database in async mode and
 * import their tables from db/tables; on PostgreSQL they are handed the pg-core mirror (same export names, same
 * JavaScript types: test/pg-schema-types.test.ts) and a Bun.sql drizzle database whose builders also answer `.all()`,
 * `.get()` and `.run()` (the shim below), so the same service source runs on both.
 *
 * Writes: `BEGIN … COMMIT` on one pooled connection (drizzle's transaction), no mutex: row locks order conflicting
 * writers, and every money-like write keeps its conditional `UPDATE … WHERE … RETURNING` whose rows are checked.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { eq } from "drizzle-orm";
import { PgDeleteBase, PgInsertBase, PgSelectBase, PgUpdateBase } from "drizzle-orm/pg-core";
import { type OpenWrite, type Store, type StoreDb, joinedWrite } from "../store";
import { openPostgres, type PgClient } from "./client";
import { authGeneration } from "./schema/auth-generation";

let shimmed = false;
let prepared = 0;

interface PgPrepared {
  execute(values?: Record<string, unknown>): Promise<unknown>;
}

const firstRow = (rows: unknown) => (Array.isArray(rows) ? rows[0] : undefined);

/**
 * Gives PostgreSQL's query builders SQLite's three terminal methods, as promises: `.all()` → rows, `.get()` → the
 * first row or undefined, `.run()` → the driver's result (NB: not SQLite's `{changes}`: count with `.returning()`).
 * `.prepare()` gets a generated name (PostgreSQL needs one) and the same three methods. Depends on drizzle's class
 * names, so drizzle stays pinned and test/store-pg.test.ts fails if an upgrade renames them.
 */
export function shimPgBuilders(): void {
  if (shimmed) return;
  shimmed = true;
  for (const builder of [PgSelectBase, PgInsertBase, PgUpdateBase, PgDeleteBase]) {
    const proto = builder.prototype as unknown as Record<string, unknown>;
    proto.all = function (this: { execute(): Promise<unknown[]> }) {
      return this.execute();
    };
    proto.get = function (this: { execute(): Promise<unknown[]> }) {
      return this.execute().then(firstRow);
    };
    proto.run = function (this: { execute(): Promise<unknown> }) {
      return this.execute();
    };
    const prepare = proto.prepare as ((this: unknown, name: string) => PgPrepared) | undefined;
    if (prepare) {
      proto.prepare = function (this: unknown, name?: string) {
        const statement = prepare.call(this, name ?? `seedcast_${++prepared}`);
        return Object.assign(statement, {
          all: (values?: Record<string, unknown>) => statement.execute(values),
          get: (values?: Record<string, unknown>) => statement.execute(values).then(firstRow),
          run: (values?: Record<string, unknown>) => statement.execute(values),
        });
      };
    }
  }
}

/** How long `ping` waits for the server before answering false (readiness: a hung server is as bad as a gone one). */
export const PING_TIMEOUT_MS = 2000;

/** A job name's advisory lock key: the first 8 bytes of its SHA-256, as a signed 64-bit integer. */
export function advisoryKey(name: string): bigint {
  const digest = new Bun.CryptoHasher("sha256").update(`seedcast:job:${name}`).digest();
  return digest.readBigInt64BE(0);
}

export interface PgStore extends Store {
  readonly dialect: "postgres";
  readonly client: PgClient;
}

/** Opens the pool on `url` (nothing connects until the first query); migrate with db/pg/migrate.ts. */
export function openPgStore(url: string, options: { max?: number } = {}): PgStore {
  shimPgBuilders();
  const client = openPostgres(url, options);
  const pool = client.db as unknown as StoreDb;
  const als = new AsyncLocalStorage<OpenWrite>();

  return {
    dialect: "postgres",
    client,
    get db(): StoreDb {
      return joinedWrite(als)?.tx ?? pool;
    },
    inWrite: () => als.getStore()?.done === false,
    writeOne<T>(statement: (db: StoreDb) => Promise<T>): Promise<T> {
      return statement(joinedWrite(als)?.tx ?? pool);
    },
    async write<T>(body: (tx: StoreDb) => Promise<T>): Promise<T> {
      const open = joinedWrite(als);
      if (open) return body(open.tx);
      return client.db.transaction(async (pgTx) => {
        const context: OpenWrite = { tx: pgTx as unknown as StoreDb, done: false };
        try {
          return await als.run(context, () => body(context.tx));
        } finally {
          context.done = true;
        }
      });
    },
    authChanges() {
      // Every look must see every commit made before it was asked (a revocation applies at the NEXT request on every
      // replica), so a look is a read that starts after the question. Looks that arrive while a read is running share
      // the one read that starts after it (bench/auth-watch-pg.ts: one read per round trip instead of one per request).
      let last: number | undefined;
      let current: Promise<boolean> | null = null;
      let next: Promise<boolean> | null = null;
      const readOnce = async () => {
        const row = await client.db.select({ n: authGeneration.n }).from(authGeneration).where(eq(authGeneration.id, 1));
        const n = Number(row[0]?.n ?? -1);
        const changed = n !== last;
        last = n;
        return changed;
      };
      const start = () => {
        const read = readOnce();
        current = read;
        const done = () => {
          if (current === read) current = null;
        };
        read.then(done, done);
        return read;
      };
      return {
        changed() {
          if (!current) return start();
          // The running read may have started before this look was asked: wait for the next one.
          next ??= current.then(
            () => undefined,
            () => undefined,
          ).then(() => {
            next = null;
            return start();
          });
          return next;
        },
      };
    },
    async ping() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
      });
      try {
        const query = client.sql`SELECT 1 AS ok`.then((rows) => Number(rows[0]?.ok) === 1);
        return await Promise.race([query, timeout]);
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    },
    async exclusive(name: string, fn: () => Promise<void>) {
      const key = advisoryKey(name);
      const conn = await client.sql.reserve();
      let locked = false;
      try {
        const [row] = await conn.unsafe(`SELECT pg_try_advisory_lock(${key}) AS locked`);
        locked = row?.locked === true;
        if (!locked) return false;
        await fn();
        return true;
      } finally {
        // A failed unlock closes the connection instead of handing a lock-holding one back to the pool.
        const unlocked = !locked || (await conn.unsafe(`SELECT pg_advisory_unlock(${key})`).then(() => true, () => false));
        if (unlocked) conn.release();
        else await conn.close().catch(() => {});
      }
    },
    close: () => client.close(),
  };
}
