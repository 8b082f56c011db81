/**
 * SQL pieces that mean the same on SQLite and PostgreSQL, for the few places drizzle has no builder. SQLite's scalar
 * `max(a, b)` does not exist on PostgreSQL (whose `greatest` SQLite lacks), and aggregates of bigint columns come back
 * from PostgreSQL drivers as strings: these say it once, in a form both accept, typed as services read it.
 */
import { type AnyColumn, type SQL, type SQLWrapper, sql } from "drizzle-orm";

/** The larger of two non-null values (`CASE`, as both dialects have no common two-argument max). */
export function greaterOf(a: SQLWrapper | AnyColumn, b: SQLWrapper | AnyColumn): SQL<number> {
  return sql<number>`(CASE WHEN ${a} > ${b} THEN ${a} ELSE ${b} END)`;
}

/** The smaller of two non-null values (`CASE`, as both dialects have no common two-argument min). */
export function lesserOf(a: SQLWrapper | AnyColumn, b: SQLWrapper | AnyColumn): SQL<number> {
  return sql<number>`(CASE WHEN ${a} < ${b} THEN ${a} ELSE ${b} END)`;
}

/**
 * True when the JSON document in `column` holds the string `value` (a whole JSON string, quotes included): the JSON
 * columns of a post's content name their assets so. Read as text on both dialects (SQLite stores the text, PostgreSQL
 * renders its jsonb); a caption quoting the id is escaped (`\"`) and does not match. `value` must hold no `%`, `_`
 * or `"` (an id).
 */
export function jsonHoldsString(column: AnyColumn, value: string): SQL<boolean> {
  return sql<boolean>`(CAST(${column} AS TEXT) LIKE ${`%"${value}"%`})`;
}

/** `min(expr)` over the rows, as a number (null when there are none). */
export function minOf(expr: SQLWrapper | AnyColumn): SQL<number | null> {
  return sql<number | null>`min(${expr})`.mapWith(Number);
}

/**
 * A claim's select (inside a `store.write`) with its rows locked, skipping rows another transaction holds: PostgreSQL's
 * `FOR UPDATE SKIP LOCKED`, so replicas claiming at once take different rows instead of queueing on the same ones.
 * On SQLite the select is returned unchanged: the write already holds the database's only write lock.
 */
export function forUpdateSkipLocked<Q>(dialect: "sqlite" | "postgres", query: Q): Q {
  if (dialect !== "postgres") return query;
  return (query as unknown as { for(strength: "update", config: { skipLocked: true }): Q }).for("update", { skipLocked: true });
}

/**
 * A select (inside a `store.write`) that locks the rows it reads until the write ends: PostgreSQL's `FOR UPDATE`, so
 * a read-then-write decision (the last owner, the first user, an asset's references) is taken by one transaction at a
 * time; a second one waits at this select and then reads what the first committed. On SQLite the select is returned
 * unchanged: the write already holds the database's only write lock.
 */
export function forUpdate<Q>(dialect: "sqlite" | "postgres", query: Q): Q {
  if (dialect !== "postgres") return query;
  return (query as unknown as { for(strength: "update"): Q }).for("update");
}
