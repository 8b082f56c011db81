/**
 * Rows of one table as both sides read them, and the checksum computed the same way over each.
 *
 * Every value goes through its own side's drizzle column (`mapFromDriverValue`), i.e. it is the JavaScript value a
 * service reads: SQLite's 0/1 booleans and PostgreSQL's booleans are both `true`/`false`, SQLite integers and
 * PostgreSQL bigints (number mode) both numbers, SQLite's JSON text and PostgreSQL's jsonb both the parsed value. A
 * row is then one canonical line: `JSON.stringify` of its values in column order, with object keys sorted (jsonb
 * keeps its own key order) so equal documents give equal lines; null, `"null"`, `1` and `"1"` stay distinct. The
 * checksum is SHA-256 over the lines in primary key order (bytewise: SQLite's BINARY collation, `COLLATE "C"` on
 * PostgreSQL, which agree for UTF-8).
 */
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { type TablePlan, ident } from "./plan";

/** Rows fetched per round trip (PostgreSQL cursor) and inserted per statement (under PostgreSQL's 65,535 parameters). */
export const BATCH_ROWS = 500;

export type Row = unknown[];

/** A value in the canonical form the line is built from. */
function canonical(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === "bigint") return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return `${value}`;
    return value;
  }
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object") {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) sorted[key] = canonical((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/** The canonical line of a row (values in the plan's column order). */
export function rowLine(row: Row): string {
  return JSON.stringify(row.map(canonical));
}

/** The primary key of a row as shown in a report (ids are not secret; no other value is ever shown). */
export function primaryKeyOf(plan: TablePlan, row: Row): Record<string, unknown> {
  const key: Record<string, unknown> = {};
  for (const name of plan.primaryKey) key[name] = row[plan.columns.findIndex((c) => c.name === name)];
  return key;
}

function selectList(plan: TablePlan, pg: boolean): string {
  const columns = plan.columns.map((c) => ident(c.name)).join(", ");
  const order = plan.primaryKey
    .map((name) => {
      const text = plan.columns.find((c) => c.name === name)?.text ?? false;
      return pg && text ? `${ident(name)} COLLATE "C"` : ident(name);
    })
    .join(", ");
  return `SELECT ${columns} FROM ${ident(plan.name)} ORDER BY ${order}`;
}

/** SQLite's rows of `plan`, in primary key order, each value as drizzle's SQLite column maps it. Streamed. */
export function* sqliteRows(sqlite: Database, plan: TablePlan): Generator<Row> {
  const statement = sqlite.prepare<unknown[], []>(selectList(plan, false));
  try {
    for (const raw of statement.iterate() as IterableIterator<Record<string, unknown>>) {
      yield plan.columns.map((c) => {
        const value = raw[c.name];
        return value === null || value === undefined ? null : c.sqlite.mapFromDriverValue(value);
      });
    }
  } finally {
    statement.finalize();
  }
}

/**
 * PostgreSQL's rows of `plan` through a cursor of `tx` (a transaction: cursors live in one), in the same order,
 * each value as drizzle's PostgreSQL column maps it.
 */
export async function* pgRows(tx: SQL, plan: TablePlan): AsyncGenerator<Row> {
  const cursor = `migrate_data_${plan.name}`;
  await tx.unsafe(`DECLARE ${ident(cursor)} NO SCROLL CURSOR FOR ${selectList(plan, true)}`);
  try {
    for (;;) {
      const batch = (await tx.unsafe(`FETCH ${BATCH_ROWS} FROM ${ident(cursor)}`).values()) as unknown[][];
      for (const raw of batch) {
        yield plan.columns.map((c, i) => {
          const value = raw[i];
          return value === null || value === undefined ? null : c.pg.mapFromDriverValue(value);
        });
      }
      if (batch.length < BATCH_ROWS) break;
    }
  } finally {
    await tx.unsafe(`CLOSE ${ident(cursor)}`);
  }
}

/** One side's count and checksum of a table. */
export interface TableDigest {
  rows: number;
  sha256: string;
}

/** How a table compares: each side's digest, and the first row (by primary key) whose line differs, if any. */
export interface TableComparison {
  table: string;
  source: TableDigest;
  target: TableDigest;
  ok: boolean;
  /** The first primary key present on one side only or with different values (only keys are shown, never values). */
  firstDifference?: { primaryKey: Record<string, unknown>; problem: "missing on PostgreSQL" | "only on PostgreSQL" | "values differ" };
}

/** Orders two primary keys the way both sides sort them (numbers numerically, text by UTF-8 bytes). */
function compareKeys(a: Record<string, unknown>, b: Record<string, unknown>): number {
  for (const name of Object.keys(a)) {
    const x = a[name];
    const y = b[name];
    if (typeof x === "number" && typeof y === "number") {
      if (x !== y) return x < y ? -1 : 1;
      continue;
    }
    const c = Buffer.compare(Buffer.from(String(x)), Buffer.from(String(y)));
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * Reads both sides of `plan` once, in step: each side's count and checksum is computed from its own lines alone (the
 * same function on both), and the walk notes where they first part.
 */
export async function compareTable(sqlite: Database, tx: SQL, plan: TablePlan): Promise<TableComparison> {
  const hashes = { source: new Bun.CryptoHasher("sha256"), target: new Bun.CryptoHasher("sha256") };
  const counts = { source: 0, target: 0 };
  let firstDifference: TableComparison["firstDifference"];
  const source = sqliteRows(sqlite, plan);
  const target = pgRows(tx, plan);
  let s = source.next();
  let t = await target.next();
  while (!s.done || !t.done) {
    const sLine = s.done ? null : rowLine(s.value);
    const tLine = t.done ? null : rowLine(t.value);
    const sKey = s.done ? null : primaryKeyOf(plan, s.value);
    const tKey = t.done ? null : primaryKeyOf(plan, t.value);
    const order = sKey && tKey ? compareKeys(sKey, tKey) : sKey ? -1 : 1;
    if (order <= 0 && sLine !== null) {
      hashes.source.update(`${sLine}\n`);
      counts.source += 1;
    }
    if (order >= 0 && tLine !== null) {
      hashes.target.update(`${tLine}\n`);
      counts.target += 1;
    }
    if (!firstDifference) {
      if (order < 0) firstDifference = { primaryKey: sKey!, problem: "missing on PostgreSQL" };
      else if (order > 0) firstDifference = { primaryKey: tKey!, problem: "only on PostgreSQL" };
      else if (sLine !== tLine) firstDifference = { primaryKey: sKey!, problem: "values differ" };
    }
    if (order <= 0) s = source.next();
    if (order >= 0) t = await target.next();
  }
  const digest = (side: "source" | "target"): TableDigest => ({ rows: counts[side], sha256: hashes[side].digest("hex") });
  const result: TableComparison = { table: plan.name, source: digest("source"), target: digest("target"), ok: false };
  result.ok = result.source.rows === result.target.rows && result.source.sha256 === result.target.sha256;
  if (!result.ok && firstDifference) result.firstDifference = firstDifference;
  return result;
}
