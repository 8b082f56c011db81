/**
 * The PostgreSQL schema gives services the same JavaScript types as SQLite's: for every table of src/db/schema, the
 * table of the same export name in src/db/pg/schema has the same select and insert types. Checked by the compiler
 * (`npm run typecheck`: a table missing on the PostgreSQL side, or a column whose type differs, makes `parity` below
 * fail to compile), and at run time by column names and the kind of value each column holds. Columns PostgreSQL
 * generates itself (search's tsvector, `generatedAlwaysAs`) are the one thing PostgreSQL may have in addition.
 */
import { expect, test } from "bun:test";
import { getTableColumns, getTableName, type InferInsertModel, type InferSelectModel, is } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pg from "../src/db/pg/schema";
import * as sqlite from "../src/db/schema";

type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Sqlite = typeof sqlite;
type Pg = typeof pg;
type TableName = { [K in keyof Sqlite]: Sqlite[K] extends SQLiteTable ? K : never }[keyof Sqlite];
/** Columns PostgreSQL computes itself (`generatedAlwaysAs`: search's tsvector): never written, not read by services. */
type Generated<T extends PgTable> = {
  [C in keyof T["_"]["columns"]]: T["_"]["columns"][C]["_"] extends { generated: { type: "always" } } ? C : never;
}[keyof T["_"]["columns"]];
type Parity = {
  [K in TableName]: K extends keyof Pg
    ? Pg[K] extends PgTable
      ? [
          Same<InferSelectModel<Sqlite[K]>, Omit<InferSelectModel<Pg[K]>, Generated<Pg[K]>>>,
          Same<InferInsertModel<Sqlite[K]>, InferInsertModel<Pg[K]>>,
        ]
      : [false, false]
    : [false, false];
};
const parity: { [K in TableName]: Parity[K] extends [true, true] ? true : false } extends Record<TableName, true> ? true : false = true;

/** What a value of the column is in JavaScript, as drizzle maps it. */
function kind(column: { dataType: string; columnType: string }): string {
  if (column.columnType === "PgCustomColumn" || column.dataType === "json") return "json";
  return column.dataType;
}

test("every SQLite table has a PostgreSQL table of the same export and SQL name, with the same columns holding the same kinds of value", () => {
  expect(parity).toBe(true);
  const sqliteTables = Object.entries(sqlite).filter(([, v]) => is(v, SQLiteTable)) as [string, SQLiteTable][];
  expect(sqliteTables.length).toBeGreaterThan(20);
  for (const [name, table] of sqliteTables) {
    const other = (pg as Record<string, unknown>)[name];
    expect(is(other, PgTable), `${name} is missing from src/db/pg/schema`).toBe(true);
    const a = getTableColumns(table);
    const b = getTableColumns(other as PgTable);
    expect(getTableName(other as PgTable)).toBe(getTableName(table));
    const describe = (cols: Record<string, { name: string; dataType: string; columnType: string; notNull: boolean; generated?: { type?: string } }>) =>
      Object.fromEntries(
        Object.entries(cols)
          .filter(([, c]) => c.generated?.type !== "always")
          .map(([key, c]) => [key, `${c.name} ${kind(c)} ${c.notNull ? "not null" : "null"}`]),
      );
    expect(describe(b), name).toEqual(describe(a));
  }
});
