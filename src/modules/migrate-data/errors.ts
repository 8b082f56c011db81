/**
 * Refusals of `seedcast migrate-data`, each with a stable code the CLI prints (`{"error": code, ...}` with --json).
 * Every one is raised before anything is written to PostgreSQL or the bucket.
 */
export const MIGRATE_DATA_ERROR_CODES = [
  /** DATA_DIR has no Seedcast database. */
  "source_missing",
  /** The appliance's database was migrated by a newer Seedcast. */
  "source_too_new",
  /** The snapshot fails SQLite's integrity or foreign key check. */
  "source_damaged",
  /** Asset rows whose media files are not in DATA_DIR/media. */
  "media_missing",
  /** INSTANCE_SECRET is not the appliance's secret. */
  "secret_mismatch",
  /** The target database already holds Seedcast rows (copy), or has no copy to verify (--verify-only). */
  "target_not_empty",
  "target_not_migrated",
  /** The target database cannot be reached or refuses the connection. */
  "target_unavailable",
  /** The target database cannot take the copy (version, encoding, a newer Seedcast's migrations). */
  "target_unsuitable",
  /** The bucket already holds media objects. */
  "bucket_not_empty",
  /** The bucket cannot be used (listed, written). */
  "bucket_unavailable",
] as const;

export type MigrateDataErrorCode = (typeof MIGRATE_DATA_ERROR_CODES)[number];

export class MigrateDataError extends Error {
  constructor(
    readonly code: MigrateDataErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "MigrateDataError";
  }
}
