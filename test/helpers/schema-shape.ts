/**
 * The shape of a real database, read from its catalog, in terms both dialects share: per table its columns and their
 * nullability and default, its primary key, its indexes (unique or not, partial or not, over which columns or expression), its
 * foreign keys (columns, target, on delete/update) and its CHECK constraints. test/pg-schema-parity.test.ts compares
 * SQLite's (after migrateDatabase) with PostgreSQL's (after migratePostgres).
 *
 * Search is the one thing each dialect does its own way, so it is left out of both shapes: SQLite's FTS5 virtual
 * tables and their shadow tables (seeds_fts, seeds_fts_data, ...), and PostgreSQL's tsvector columns with the
 * indexes over them. Both are listed in `searchOnly`, so a test can say what was left out.
 */
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

export interface TableShape {
  /** Column name → "not null" or "null", then " default <expression>" when it has one. A primary key's columns
   * count as not null (PostgreSQL enforces it; SQLite's drizzle-kit keys say NOT NULL, and an INTEGER PRIMARY KEY is
   * the rowid). */
  columns: Record<string, string>;
  primaryKey: string[];
  /** Index name (or `unique(cols)` for a UNIQUE constraint's own index) → "unique partial (cols)". */
  indexes: Record<string, string>;
  /** "(from) -> table(to) on delete x on update y", sorted. */
  foreignKeys: string[];
  /** Constraint names, sorted; an unnamed SQLite CHECK is "(unnamed)". */
  checks: string[];
}

export interface DatabaseShape {
  tables: Record<string, TableShape>;
  /** What was left out as search (see above). */
  searchOnly: string[];
}

/** Lower case, no quotes, no table qualifier, no spaces: `lower("users"."email")` and `lower(email)` agree. */
function normaliseExpression(text: string, table: string): string {
  return text
    .toLowerCase()
    .replace(/["`]/g, "")
    .replaceAll(`public.${table}.`, "")
    .replaceAll(`${table}.`, "")
    .replace(/\s+/g, "");
}

function describeIndex(unique: boolean, partial: boolean, columns: string): string {
  return `${unique ? "unique" : "plain"} ${partial ? "partial" : "whole"} (${columns})`;
}

/** "not null default 0"; a default's type cast (PostgreSQL's `''::text`) is not part of it. */
function describeColumn(notNull: boolean, defaultValue: string | null): string {
  const nullability = notNull ? "not null" : "null";
  return defaultValue === null ? nullability : `${nullability} default ${defaultValue.replace(/::[a-z ]+$/i, "")}`;
}

const SQLITE_ACTIONS = (action: string) => action.toLowerCase();

export function sqliteShape(db: Database): DatabaseShape {
  const all = db
    .query<{ name: string; sql: string }, []>("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all();
  const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name);
  const isSearch = (name: string) => virtual.some((v) => name === v || name.startsWith(`${v}_`));
  const tables: Record<string, TableShape> = {};
  for (const { name, sql } of all) {
    if (isSearch(name)) continue;
    const info = db
      .query<{ name: string; notnull: number; pk: number; dflt_value: string | null }, [string]>(
        'SELECT name, "notnull", pk, dflt_value FROM pragma_table_info(?)',
      )
      .all(name);
    const columns = Object.fromEntries(info.map((c) => [c.name, describeColumn(Boolean(c.notnull || c.pk), c.dflt_value)] as const));
    const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);

    const indexes: Record<string, string> = {};
    const list = db
      .query<{ name: string; unique: number; origin: string; partial: number }, [string]>(
        'SELECT name, "unique", origin, partial FROM pragma_index_list(?)',
      )
      .all(name);
    for (const index of list) {
      if (index.origin === "pk") continue;
      const cols = db
        .query<{ cid: number; name: string | null }, [string]>("SELECT cid, name FROM pragma_index_info(?) ORDER BY seqno")
        .all(index.name);
      let columnText = cols.map((c) => c.name).join(",");
      if (cols.some((c) => c.cid === -2)) {
        // An expression index: its column list as written, from the CREATE INDEX statement.
        const created = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?").get(index.name)!.sql;
        const list = created.slice(created.indexOf("(", created.search(/\bON\b/i)) + 1);
        columnText = normaliseExpression(list.slice(0, list.search(/\)\s*(WHERE|$)/i)), name);
      }
      const key = index.origin === "u" ? `unique(${columnText})` : index.name;
      indexes[key] = describeIndex(index.unique === 1, index.partial === 1, columnText);
    }

    const fkRows = db
      .query<{ id: number; seq: number; table: string; from: string; to: string; on_update: string; on_delete: string }, [string]>(
        'SELECT id, seq, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq',
      )
      .all(name);
    const byId = new Map<number, typeof fkRows>();
    for (const row of fkRows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
    const foreignKeys = [...byId.values()]
      .map((rows) => {
        const first = rows[0]!;
        return `(${rows.map((r) => r.from).join(",")}) -> ${first.table}(${rows.map((r) => r.to).join(",")}) on delete ${SQLITE_ACTIONS(first.on_delete)} on update ${SQLITE_ACTIONS(first.on_update)}`;
      })
      .sort();

    const named = [...sql.matchAll(/CONSTRAINT\s+["`]?(\w+)["`]?\s+CHECK/gi)].map((m) => m[1]!);
    const total = [...sql.matchAll(/\bCHECK\s*\(/gi)].length;
    const checks = [...named, ...Array<string>(total - named.length).fill("(unnamed)")].sort();

    tables[name] = { columns, primaryKey, indexes, foreignKeys, checks };
  }
  return { tables, searchOnly: all.map((t) => t.name).filter(isSearch) };
}

const PG_ACTIONS: Record<string, string> = { a: "no action", r: "restrict", c: "cascade", n: "set null", d: "set default" };

export async function pgShape(sql: SQL): Promise<DatabaseShape> {
  const tableRows: { name: string }[] = await sql`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`;
  const columnRows: { table: string; name: string; nullable: string; type: string; default: string | null }[] = await sql`
    SELECT table_name AS table, column_name AS name, is_nullable AS nullable, data_type AS type, column_default AS default
    FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`;
  const constraintRows: { table: string; name: string; type: string; cols: string; ref: string | null; refcols: string | null; ondelete: string; onupdate: string }[] =
    await sql`
    SELECT t.relname AS table, c.conname AS name, c.contype AS type,
      (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY k(n, ord)
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n) AS cols,
      r.relname AS ref,
      (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(c.confkey) WITH ORDINALITY k(n, ord)
         JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n) AS refcols,
      c.confdeltype AS ondelete, c.confupdtype AS onupdate
    FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace
    LEFT JOIN pg_class r ON r.oid = c.confrelid
    WHERE n.nspname = 'public' AND c.contype IN ('p', 'u', 'f', 'c')`;
  const indexRows: { table: string; name: string; unique: boolean; primary: boolean; partial: boolean; expression: boolean; def: string; cols: string | null; constraint: boolean }[] =
    await sql`
    SELECT t.relname AS table, i.relname AS name, x.indisunique AS unique, x.indisprimary AS primary,
      x.indpred IS NOT NULL AS partial, x.indexprs IS NOT NULL AS expression, pg_get_indexdef(x.indexrelid) AS def,
      (SELECT string_agg(a.attname, ',' ORDER BY k.ord) FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, ord)
         JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n) AS cols,
      EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid AND c.contype = 'u') AS constraint
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
    JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public'`;

  const searchColumns = new Set(columnRows.filter((c) => c.type === "tsvector").map((c) => `${c.table}.${c.name}`));
  const searchOnly = [...searchColumns];
  const tables: Record<string, TableShape> = {};
  for (const { name } of tableRows) {
    const columns: Record<string, string> = {};
    for (const c of columnRows) {
      if (c.table !== name || searchColumns.has(`${name}.${c.name}`)) continue;
      columns[c.name] = describeColumn(c.nullable === "NO", c.default);
    }
    const own = constraintRows.filter((c) => c.table === name);
    const primaryKey = own.find((c) => c.type === "p")?.cols?.split(",") ?? [];
    const indexes: Record<string, string> = {};
    for (const index of indexRows.filter((i) => i.table === name && !i.primary)) {
      const indexed = index.cols?.split(",") ?? [];
      if (indexed.length && indexed.every((c) => searchColumns.has(`${name}.${c}`))) {
        searchOnly.push(index.name);
        continue;
      }
      let columnText = index.cols ?? "";
      if (index.expression) {
        const list = index.def.slice(index.def.indexOf("(", index.def.search(/\bUSING\b/)) + 1);
        columnText = normaliseExpression(list.slice(0, list.search(/\)\s*(WHERE|$)/)), name);
      }
      const key = index.constraint ? `unique(${columnText})` : index.name;
      indexes[key] = describeIndex(index.unique, index.partial, columnText);
    }
    const foreignKeys = own
      .filter((c) => c.type === "f")
      .map((c) => `(${c.cols}) -> ${c.ref}(${c.refcols}) on delete ${PG_ACTIONS[c.ondelete]} on update ${PG_ACTIONS[c.onupdate]}`)
      .sort();
    const checks = own.filter((c) => c.type === "c").map((c) => c.name).sort();
    tables[name] = { columns, primaryKey, indexes, foreignKeys, checks };
  }
  return { tables, searchOnly: searchOnly.sort() };
}

/** Every way `pg` differs from `sqlite`, in words; empty when they agree. */
export function shapeDifferences(sqlite: DatabaseShape, pg: DatabaseShape): string[] {
  const out: string[] = [];
  for (const name of Object.keys(pg.tables)) if (!sqlite.tables[name]) out.push(`table ${name} only in PostgreSQL`);
  for (const [name, a] of Object.entries(sqlite.tables)) {
    const b = pg.tables[name];
    if (!b) {
      out.push(`table ${name} missing in PostgreSQL`);
      continue;
    }
    for (const [col, nullability] of Object.entries(a.columns)) {
      if (!(col in b.columns)) out.push(`${name}.${col} only in SQLite`);
      else if (b.columns[col] !== nullability) out.push(`${name}.${col} is ${nullability} in SQLite, ${b.columns[col]} in PostgreSQL`);
    }
    for (const col of Object.keys(b.columns)) if (!(col in a.columns)) out.push(`${name}.${col} only in PostgreSQL`);
    if (a.primaryKey.join(",") !== b.primaryKey.join(",")) out.push(`${name} primary key (${a.primaryKey}) in SQLite, (${b.primaryKey}) in PostgreSQL`);
    for (const [index, what] of Object.entries(a.indexes)) {
      if (!(index in b.indexes)) out.push(`${name} index ${index} only in SQLite`);
      else if (b.indexes[index] !== what) out.push(`${name} index ${index} is ${what} in SQLite, ${b.indexes[index]} in PostgreSQL`);
    }
    for (const index of Object.keys(b.indexes)) if (!(index in a.indexes)) out.push(`${name} index ${index} only in PostgreSQL`);
    for (const fk of a.foreignKeys) if (!b.foreignKeys.includes(fk)) out.push(`${name} foreign key ${fk} only in SQLite`);
    for (const fk of b.foreignKeys) if (!a.foreignKeys.includes(fk)) out.push(`${name} foreign key ${fk} only in PostgreSQL`);
    // Named checks by name; SQLite's unnamed ones (hand-written DDL) by count.
    const named = a.checks.filter((c) => c !== "(unnamed)");
    for (const c of named) if (!b.checks.includes(c)) out.push(`${name} check ${c} only in SQLite`);
    if (a.checks.length !== b.checks.length) out.push(`${name} CHECK constraints: ${a.checks.length} in SQLite, ${b.checks.length} in PostgreSQL`);
  }
  return out;
}
