/**
 * The PostgreSQL side of `seedcast migrate-data`: what the target must be before a copy (PostgreSQL 15 or later,
 * UTF-8, no migrations of a newer Seedcast, and no Seedcast rows at all), and what the catalog says about columns the
 * server generates and identities to move past the copied values.
 */
import type { SQL } from "bun";
import { knownPgMigrations } from "../../db/pg/migrate";
import { MigrateDataError } from "./errors";
import { type TablePlan, ident } from "./plan";

/** Advisory lock a copy holds for its transaction, so two runs against one database cannot both find it empty. */
export const MIGRATE_DATA_LOCK_KEY = 0x73656564636d64n;

/** Refuses a server or database the copy cannot be trusted to (older than 15, not UTF-8, a newer Seedcast's). */
export async function checkTargetServer(sql: SQL, redactedUrl: string): Promise<void> {
  let info: { version: number; encoding: string; migrated: boolean } | undefined;
  try {
    [info] = (await sql.unsafe(
      "SELECT current_setting('server_version_num')::int AS version, current_setting('server_encoding') AS encoding, to_regclass('__seedcast_migrations') IS NOT NULL AS migrated",
    )) as (typeof info & object)[];
  } catch (error) {
    // Bun.sql's messages name no URL; the redacted form (password as ***) says which database was meant.
    const e = error as { code?: unknown; message?: unknown };
    const why = [typeof e.code === "string" ? e.code : "", typeof e.message === "string" ? e.message : ""].filter(Boolean).join(": ");
    throw new MigrateDataError("target_unavailable", `cannot use the database at ${redactedUrl} (${why || "connection failed"}); nothing was copied.`);
  }
  if (!info || info.version < 150000) {
    throw new MigrateDataError("target_unsuitable", `Seedcast needs PostgreSQL 15 or later; the server at DATABASE_URL is version ${info ? Math.floor(info.version / 10000) : "unknown"}.`);
  }
  if (info.encoding !== "UTF8") {
    throw new MigrateDataError("target_unsuitable", `the database at DATABASE_URL uses the ${info.encoding} encoding; Seedcast's text needs UTF8 (CREATE DATABASE ... ENCODING 'UTF8').`);
  }
  if (info.migrated) {
    const known = new Set(knownPgMigrations());
    const rows = (await sql.unsafe("SELECT tag FROM __seedcast_migrations")) as { tag: string }[];
    const unknown = rows.map((r) => r.tag).filter((t) => !known.has(t));
    if (unknown.length > 0) {
      throw new MigrateDataError("target_unsuitable", `the database at DATABASE_URL was migrated by a newer Seedcast (migrations ${unknown.join(", ")} are unknown to this version).`);
    }
  }
}

/** The tables of `plans` that exist in the target and hold at least one row. */
export async function tablesWithRows(sql: SQL, plans: readonly TablePlan[]): Promise<string[]> {
  const existing = new Set(
    ((await sql.unsafe("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")) as { table_name: string }[]).map((r) => r.table_name),
  );
  const filled: string[] = [];
  for (const plan of plans) {
    if (!existing.has(plan.name)) continue;
    const [row] = (await sql.unsafe(`SELECT EXISTS (SELECT 1 FROM ${ident(plan.name)}) AS filled`)) as { filled: boolean }[];
    if (row?.filled) filled.push(plan.name);
  }
  return filled;
}

/** The refusal of a target that already holds Seedcast rows (nothing is changed: no flag overwrites). */
export function notEmpty(filled: readonly string[]): MigrateDataError {
  return new MigrateDataError(
    "target_not_empty",
    `the database at DATABASE_URL already holds Seedcast data (${filled.join(", ")}), and migrate-data only copies into an empty one. If it is the result of an earlier run, check it with --verify-only; to start over, drop and recreate that database (and empty the bucket's media/ folder). Nothing was changed.`,
  );
}

/**
 * Moves out of `plans` every column the target's catalog says the server generates (`GENERATED ALWAYS AS ...
 * STORED`), whatever drizzle's config says: such a column cannot be written, and is not compared.
 */
export async function dropCatalogGenerated(sql: SQL, plans: TablePlan[]): Promise<void> {
  const rows = (await sql.unsafe(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_generated = 'ALWAYS'",
  )) as { table_name: string; column_name: string }[];
  for (const { table_name, column_name } of rows) {
    const plan = plans.find((p) => p.name === table_name);
    if (!plan || !plan.columns.some((c) => c.name === column_name)) continue;
    plan.columns = plan.columns.filter((c) => c.name !== column_name);
    plan.generated.push(column_name);
  }
}

export interface SequenceMove {
  table: string;
  column: string;
  /** The value the identity hands out next. */
  next: number;
}

/**
 * Moves every identity sequence of a copied table past the largest value copied (the copy kept the appliance's
 * values, e.g. seeds.seq), so the next insert gets a higher one. Runs inside the copy's transaction.
 */
export async function moveIdentities(tx: SQL, plans: readonly TablePlan[]): Promise<SequenceMove[]> {
  const rows = (await tx.unsafe(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name, column_name",
  )) as { table_name: string; column_name: string }[];
  const moved: SequenceMove[] = [];
  for (const { table_name, column_name } of rows) {
    if (!plans.some((p) => p.name === table_name)) continue;
    const [row] = (await tx.unsafe(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE(max(${ident(column_name)}), 0), 1), max(${ident(column_name)}) IS NOT NULL)::text AS last FROM ${ident(table_name)}`,
      [ident(table_name), column_name],
    )) as { last: string }[];
    const [max] = (await tx.unsafe(`SELECT COALESCE(max(${ident(column_name)}), 0)::text AS max FROM ${ident(table_name)}`)) as { max: string }[];
    moved.push({ table: table_name, column: column_name, next: Number(max?.max ?? row?.last ?? 0) + 1 });
  }
  return moved;
}
