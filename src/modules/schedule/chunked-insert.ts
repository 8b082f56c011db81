/**
 * Many rows into one table inside one write (the CSV import), `chunk` rows per multi-row INSERT. Every full chunk
 * runs through ONE prepared statement with a placeholder per cell, built on the first full chunk and run again for
 * each: the SQL is built once, not 200 times, and SQLite keeps one statement instead of a new one per chunk (each
 * holds native memory until the collector finds it; docs/benchmarks/import.md). A row whose columns differ from the
 * statement's (another set of keys, or an undefined value, which a plain insert writes as the column's default), and
 * the last partial chunk, go in as plain multi-row inserts.
 */
import { type Placeholder, sql } from "drizzle-orm";
import type { SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { StoreDb } from "../../db/store";

type Row = Record<string, unknown>;

/** The keys of `row` whose values are defined, in order. */
function definedKeys(row: Row): string[] {
  return Object.keys(row).filter((key) => row[key] !== undefined);
}

function sameKeys(row: Row, keys: readonly string[]): boolean {
  const own = definedKeys(row);
  return own.length === keys.length && own.every((key, i) => key === keys[i]);
}

/** Buffers rows and writes them `chunk` at a time; `finish()` writes the rest. Use inside one `store.write`. */
export class ChunkedInsert<TTable extends SQLiteTable> {
  private pending: SQLiteInsertValue<TTable>[] = [];
  private statement: { keys: string[]; run(values: Record<string, unknown>): Promise<unknown> } | null = null;

  constructor(
    private readonly tx: StoreDb,
    private readonly table: TTable,
    private readonly chunk: number,
  ) {}

  /** Adds rows; every full chunk is written at once. */
  async add(rows: readonly SQLiteInsertValue<TTable>[]): Promise<void> {
    for (const row of rows) {
      this.pending.push(row);
      if (this.pending.length === this.chunk) await this.flush(this.pending.splice(0, this.chunk));
    }
  }

  /** Writes what is left. */
  async finish(): Promise<void> {
    if (this.pending.length > 0) await this.plain(this.pending.splice(0));
  }

  private async flush(rows: SQLiteInsertValue<TTable>[]): Promise<void> {
    const first = rows[0] as Row;
    this.statement ??= this.prepare(definedKeys(first));
    const keys = this.statement.keys;
    if (!rows.every((row) => sameKeys(row as Row, keys))) return this.plain(rows);
    const values: Record<string, unknown> = {};
    rows.forEach((row, i) => {
      for (const key of keys) values[`${key}_${i}`] = (row as Row)[key];
    });
    await this.statement.run(values);
  }

  private prepare(keys: string[]): { keys: string[]; run(values: Record<string, unknown>): Promise<unknown> } {
    const placeholders = Array.from({ length: this.chunk }, (_, i) => {
      const row: Record<string, Placeholder> = {};
      for (const key of keys) row[key] = sql.placeholder(`${key}_${i}`);
      return row as unknown as SQLiteInsertValue<TTable>;
    });
    const prepared = this.tx.insert(this.table).values(placeholders).prepare();
    return { keys, run: (values) => Promise.resolve(prepared.run(values)) };
  }

  private async plain(rows: SQLiteInsertValue<TTable>[]): Promise<void> {
    await this.tx.insert(this.table).values(rows).run();
  }
}
