/**
 * What `seedcast migrate-data` copies, read from the two drizzle schemas (never a hand-kept list of tables or
 * columns): every SQLite table paired with its PostgreSQL mirror by table name, every column paired by column name,
 * the primary key that orders rows for the checksums, and the order the foreign keys impose. A column added to both
 * schemas later is copied and verified without a change here.
 *
 * Columns PostgreSQL generates (`GENERATED ALWAYS AS (...) STORED`, such as search's tsvector) are never written and
 * never compared: known from drizzle's column config and, in `withCatalog`, from the target's own catalog.
 */
import { type Column, getTableName, is } from "drizzle-orm";
import { PgTable, getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import { SQLiteTable, getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import * as pgSchema from "../../db/pg/schema";
import * as sqliteSchema from "../../db/schema";

/** One column copied: its SQL name and the drizzle column of each side (each maps its own driver's values). */
export interface ColumnPair {
  name: string;
  sqlite: Column;
  pg: Column;
  /** The PostgreSQL property key drizzle's insert takes. */
  pgKey: string;
  /** Text columns sort by bytes on both sides (`COLLATE "C"` on PostgreSQL, BINARY on SQLite). */
  text: boolean;
}

export interface TablePlan {
  name: string;
  sqlite: SQLiteTable;
  pg: PgTable;
  /** Copied columns, in the PostgreSQL table's order. */
  columns: ColumnPair[];
  /** The columns rows are read and hashed in the order of: the primary key (or a unique key; see rowKeyOf). */
  primaryKey: string[];
  /** Columns PostgreSQL computes itself: not written, not compared. */
  generated: string[];
  /** An identity column declared GENERATED ALWAYS needs OVERRIDING SYSTEM VALUE to keep the source's values. */
  identityAlways: boolean;
  /** Tables this one references (copied before it). */
  references: string[];
}

/** A schema pairing that cannot be copied faithfully (a bug of this build: the parity tests keep the two in step). */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanError";
  }
}

function tablesOf<T>(schema: Record<string, unknown>, kind: abstract new (...args: never[]) => T): Map<string, T> {
  const tables = new Map<string, T>();
  for (const value of Object.values(schema)) {
    if (is(value, kind as never)) tables.set(getTableName(value as never), value as T);
  }
  return tables;
}

interface KeySource {
  columns: Column[];
  primaryKeys: { columns: Column[] }[];
  indexes: { config: { columns: unknown[]; unique: boolean; where?: unknown } }[];
}

/**
 * The columns that order a table's rows: its primary key (`.primaryKey()` or a composite `primaryKey(...)`), else a
 * unique index over plain NOT NULL columns without a WHERE (members has only `(account_id, user_id)`), else every
 * column (identical rows then give identical lines, so the order between them does not matter).
 */
function rowKeyOf(table: KeySource): string[] {
  if (table.primaryKeys.length > 0) return table.primaryKeys[0]!.columns.map((c) => c.name);
  const primary = table.columns.filter((c) => c.primary).map((c) => c.name);
  if (primary.length > 0) return primary;
  for (const index of table.indexes) {
    const { columns, unique, where } = index.config;
    if (!unique || where) continue;
    // pg-core lists IndexedColumn wrappers, sqlite-core the columns: both carry the column's name (an expression none).
    const named = columns.map((c) => table.columns.find((col) => col.name === (c as { name?: unknown }).name));
    if (named.every((c): c is Column => c !== undefined && c.notNull)) return named.map((c) => c!.name);
  }
  return table.columns.map((c) => c.name);
}

/**
 * Every table to copy, parents before children, from this build's two schemas (tests pass others). Throws PlanError
 * when the schemas do not pair up.
 */
export function buildPlan(schemas: { sqlite: Record<string, unknown>; pg: Record<string, unknown> } = { sqlite: sqliteSchema, pg: pgSchema }): TablePlan[] {
  const sqliteTables = tablesOf(schemas.sqlite, SQLiteTable);
  const pgTables = tablesOf(schemas.pg, PgTable);
  const plans = new Map<string, TablePlan>();
  for (const [name, sqliteTable] of sqliteTables) {
    const pgTable = pgTables.get(name);
    if (!pgTable) throw new PlanError(`table ${name} has no PostgreSQL mirror in src/db/pg/schema`);
    const sConfig = sqliteTableConfig(sqliteTable);
    const pConfig = pgTableConfig(pgTable);
    const sColumns = new Map(sConfig.columns.map((c) => [c.name, c as Column]));
    const pgKeys = new Map(Object.entries(pgTable as unknown as Record<string, unknown>).filter(([, v]) => pConfig.columns.includes(v as never)).map(([k, v]) => [(v as Column).name, k]));
    const columns: ColumnPair[] = [];
    const generated: string[] = [];
    let identityAlways = false;
    for (const pgColumn of pConfig.columns as Column[]) {
      if (pgColumn.generated !== undefined) {
        generated.push(pgColumn.name);
        continue;
      }
      if (pgColumn.generatedIdentity?.type === "always") identityAlways = true;
      const sColumn = sColumns.get(pgColumn.name);
      if (!sColumn) throw new PlanError(`column ${name}.${pgColumn.name} exists on PostgreSQL only`);
      if (sColumn.generated !== undefined) {
        generated.push(pgColumn.name);
        continue;
      }
      const pgKey = pgKeys.get(pgColumn.name);
      if (!pgKey) throw new PlanError(`column ${name}.${pgColumn.name} has no property on the PostgreSQL table`);
      columns.push({ name: pgColumn.name, sqlite: sColumn, pg: pgColumn, pgKey, text: pgColumn.dataType === "string" });
    }
    for (const sName of sColumns.keys()) {
      if (!pConfig.columns.some((c) => c.name === sName)) throw new PlanError(`column ${name}.${sName} exists on SQLite only`);
    }
    const primaryKey = rowKeyOf(pConfig as unknown as KeySource).filter((n) => columns.some((c) => c.name === n));
    const sPrimaryKey = rowKeyOf(sConfig as unknown as KeySource).filter((n) => columns.some((c) => c.name === n));
    if (primaryKey.length === 0 || primaryKey.join() !== sPrimaryKey.join()) {
      throw new PlanError(`table ${name} needs the same key on both sides to order its rows (SQLite: ${sPrimaryKey.join(", ") || "none"}; PostgreSQL: ${primaryKey.join(", ") || "none"})`);
    }
    const references = [...new Set(pConfig.foreignKeys.map((fk) => getTableName(fk.reference().foreignTable)))].filter((t) => t !== name);
    plans.set(name, { name, sqlite: sqliteTable, pg: pgTable, columns, primaryKey, generated, identityAlways, references });
  }
  return dependencyOrder(plans);
}

/** Parents before children (a stable topological sort by name); a cycle between tables is refused. */
function dependencyOrder(plans: Map<string, TablePlan>): TablePlan[] {
  const ordered: TablePlan[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string, path: string[]): void => {
    const seen = state.get(name);
    if (seen === "done") return;
    if (seen === "visiting") throw new PlanError(`foreign keys form a cycle: ${[...path, name].join(" → ")}`);
    const plan = plans.get(name);
    if (!plan) throw new PlanError(`a foreign key names ${name}, which is not a SQLite table of this build`);
    state.set(name, "visiting");
    for (const parent of [...plan.references].sort()) visit(parent, [...path, name]);
    state.set(name, "done");
    ordered.push(plan);
  };
  for (const name of [...plans.keys()].sort()) visit(name, []);
  return ordered;
}

/** A name as an SQL identifier (both dialects quote with double quotes). */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
