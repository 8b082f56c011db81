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
      let last: number | undefined;
      return {
        async changed() {
          const row = await client.db.select({ n: authGeneration.n }).from(authGeneration).where(eq(authGeneration.id, 1));
          const n = Number(row[0]?.n ?? -1);
          const changed = n !== last;
          last = n;
          return changed;
        },
      };
    },
    async ping() {
      try {
        const rows = await client.sql`SELECT 1 AS ok`;
        return Number(rows[0]?.ok) === 1;
      } catch {
        return false;
      }
    },
    close: () => client.close(),
  };
}
