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

/** `min(expr)` over the rows, as a number (null when there are none). */
export function minOf(expr: SQLWrapper | AnyColumn): SQL<number | null> {
  return sql<number | null>`min(${expr})`.mapWith(Number);
}
