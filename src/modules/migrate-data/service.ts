/**
 * `seedcast migrate-data --to postgres` (decisions.md §11): an appliance's DATA_DIR (SQLite and media on disk) copied
 * into PostgreSQL (DATABASE_URL) and an S3 bucket (MEDIA_STORE=s3), then verified.
 *
 * 1. Refusals, all before anything is written: INSTANCE_SECRET must be the appliance's secret; the snapshot must be
 *    sound and every image row have its file; the target database must hold no Seedcast rows and the bucket no media.
 * 2. Copy: PostgreSQL's migrations (migratePostgres), then every table in foreign key order, in batches, in ONE
 *    transaction together with the media upload (a failed upload rolls the rows back and deletes what it put).
 *    Identity sequences (seeds.seq) are moved past the largest value copied.
 * 3. Verify, after the commit: per table the row count and a checksum computed the same way on both sides (rows.ts),
 *    per media object the size and SHA-256 of the bytes on disk and of the bytes read back from the bucket.
 *
 * `verifyOnly` runs step 3 alone (it writes nothing), against a target an earlier run filled.
 */
import type { SQL } from "bun";
import { join } from "node:path";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import { MEDIA_DIR } from "../../bootstrap";
import type { Config, PostgresDatabaseConfig, S3MediaConfig } from "../../config";
import { openPostgres } from "../../db/pg/client";
import { migratePostgres } from "../../db/pg/migrate";
import type { Storage } from "../../lib/storage";
import { createS3Storage } from "../../lib/storage-s3";
import { MigrateDataError } from "./errors";
import { type LocalMedia, type MediaComparison, checkAssetsHaveFiles, compareMedia, copyMedia, deleteMedia, listLocalMedia } from "./media";
import { type TablePlan, buildPlan } from "./plan";
import { BATCH_ROWS, type TableComparison, compareTable, sqliteRows } from "./rows";
import { type SecretCheck, checkSecretFile, checkSecretOpensCredentials } from "./secret";
import { type Snapshot, takeSnapshot } from "./source";
import { MIGRATE_DATA_LOCK_KEY, type SequenceMove, checkTargetServer, dropCatalogGenerated, moveIdentities, notEmpty, tablesWithRows } from "./target";

/** The settings migrate-data needs (the CLI checks they are there). */
export interface MigrateDataSettings {
  dataDir: string;
  database: PostgresDatabaseConfig;
  media: S3MediaConfig;
  instanceSecret: Uint8Array;
}

export interface MigrateDataReport {
  ok: boolean;
  mode: "copy" | "verify";
  source: { dataDir: string; snapshot: "VACUUM INTO"; sqliteMigrationsApplied: string[] };
  target: { database: string; bucket: string; migrationsApplied: string[] };
  instanceSecret: SecretCheck;
  tables: TableComparison[];
  /** Columns the target generates itself: not copied, not compared. */
  generatedColumns: string[];
  sequences: SequenceMove[];
  media: MediaComparison;
}

/** The settings from a loaded config, or null with what is missing. */
export function settingsFrom(config: Readonly<Config>): MigrateDataSettings | string {
  if (config.database.kind !== "postgres") return "DATABASE_URL (the PostgreSQL database to copy into)";
  if (config.media.kind !== "s3") return "MEDIA_STORE=s3 with S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY (the bucket the media go to)";
  if (!config.instanceSecret) return "INSTANCE_SECRET (the appliance's instance secret)";
  return { dataDir: config.dataDir, database: config.database, media: config.media, instanceSecret: config.instanceSecret.bytes };
}

/** Refuses a bucket that cannot be listed or already holds media objects (copy mode). */
async function checkBucket(bucket: Storage, settings: MigrateDataSettings, mustBeEmpty: boolean): Promise<void> {
  try {
    await bucket.check();
  } catch (error) {
    throw new MigrateDataError("bucket_unavailable", `${(error as Error).message}; nothing was copied.`);
  }
  if (!mustBeEmpty) return;
  const existing = (await bucket.list()).entries.length;
  if (existing > 0) {
    throw new MigrateDataError(
      "bucket_not_empty",
      `the bucket ${settings.media.bucket} already holds ${existing} media object(s) under media/, and migrate-data only copies into an empty one (another instance may be using it). Use an empty bucket, or empty its media/ folder if it is left over from an earlier attempt. Nothing was copied.`,
    );
  }
}

/** Inserts every row of `plan` from the snapshot, `BATCH_ROWS` per statement, through drizzle's PostgreSQL table. */
async function copyTable(db: BunSQLDatabase, snapshot: Snapshot, plan: TablePlan): Promise<number> {
  let batch: Record<string, unknown>[] = [];
  let copied = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const insert = db.insert(plan.pg as never);
    await (plan.identityAlways ? insert.overridingSystemValue() : insert).values(batch as never);
    copied += batch.length;
    batch = [];
  };
  for (const row of sqliteRows(snapshot.sqlite, plan)) {
    const values: Record<string, unknown> = {};
    plan.columns.forEach((c, i) => {
      values[c.pgKey] = row[i];
    });
    batch.push(values);
    if (batch.length >= BATCH_ROWS) await flush();
  }
  await flush();
  return copied;
}

/** Compares every table (one REPEATABLE READ snapshot of the target) and every media object. */
async function verify(sql: SQL, snapshot: Snapshot, plans: readonly TablePlan[], media: LocalMedia, bucket: Storage): Promise<{ tables: TableComparison[]; media: MediaComparison }> {
  const tables = await sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const results: TableComparison[] = [];
    for (const plan of plans) results.push(await compareTable(snapshot.sqlite, tx, plan));
    return results;
  });
  return { tables, media: await compareMedia(media, bucket) };
}

/** Runs the copy and its verification (or, with `verifyOnly`, the verification alone). */
export async function migrateData(
  settings: MigrateDataSettings,
  { verifyOnly = false, progress = () => {} }: { verifyOnly?: boolean; progress?: (line: string) => void } = {},
): Promise<MigrateDataReport> {
  const plans = buildPlan();
  const secretFile = checkSecretFile(settings.dataDir, settings.instanceSecret);
  const snapshot = takeSnapshot(settings.dataDir);
  const pg = openPostgres(settings.database.url, { max: 2 });
  try {
    const instanceSecret: SecretCheck = secretFile ? "matches instance.secret" : checkSecretOpensCredentials(snapshot.sqlite, settings.instanceSecret);
    const media = await listLocalMedia(join(settings.dataDir, MEDIA_DIR));
    checkAssetsHaveFiles(snapshot.sqlite, media);
    await checkTargetServer(pg.sql, settings.database.redacted);
    const filled = await tablesWithRows(pg.sql, plans);
    const bucket = createS3Storage(settings.media);
    let migrationsApplied: string[] = [];
    let sequences: SequenceMove[] = [];
    if (verifyOnly) {
      if (filled.length === 0) {
        throw new MigrateDataError("target_not_migrated", "the database at DATABASE_URL holds no Seedcast data to verify: run migrate-data --to postgres without --verify-only first.");
      }
      await checkBucket(bucket, settings, false);
      await dropCatalogGenerated(pg.sql, plans);
    } else {
      if (filled.length > 0) throw notEmpty(filled);
      await checkBucket(bucket, settings, true);
      // From here on the target is written: the schema first (its own transactions, under the migrator's lock).
      migrationsApplied = await migratePostgres(pg.sql);
      progress(`PostgreSQL migrations applied: ${migrationsApplied.length}`);
      await dropCatalogGenerated(pg.sql, plans);
      let uploading = false;
      sequences = await pg.sql.begin(async (conn): Promise<SequenceMove[]> => {
        // drizzle over the transaction's own connection: its inserts map each value as the services' writes do.
        const db = drizzle({ client: conn as SQL });
        await conn.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATE_DATA_LOCK_KEY})`);
        // Another run may have filled it between the check above and the lock.
        const now = await tablesWithRows(conn, plans);
        if (now.length > 0) throw notEmpty(now);
        await checkBucket(bucket, settings, true);
        for (const plan of plans) progress(`copied ${plan.name}: ${await copyTable(db, snapshot, plan)} rows`);
        const moved = await moveIdentities(conn, plans, snapshot.autoincrement);
        uploading = true;
        progress(`copying ${media.keys.length} media objects to the bucket`);
        const put = await copyMedia(media, bucket);
        progress(`copied ${put.objects} media objects (${put.bytes} bytes); committing`);
        return moved;
      }).catch(async (error: unknown) => {
        // Rolled back (or the commit failed after the upload): the objects this run put go too (the bucket was empty
        // under the lock). A refusal before the upload deletes nothing: the objects could be another run's.
        if (uploading) await deleteMedia(media, bucket);
        throw error;
      });
    }
    progress("verifying every table and media object");
    const verified = await verify(pg.sql, snapshot, plans, media, bucket);
    return {
      ok: verified.tables.every((t) => t.ok) && verified.media.ok,
      mode: verifyOnly ? "verify" : "copy",
      source: { dataDir: settings.dataDir, snapshot: "VACUUM INTO", sqliteMigrationsApplied: snapshot.migrationsApplied },
      target: { database: settings.database.redacted, bucket: settings.media.bucket, migrationsApplied },
      instanceSecret,
      tables: verified.tables,
      generatedColumns: plans.flatMap((p) => p.generated.map((c) => `${p.name}.${c}`)),
      sequences,
      media: verified.media,
    };
  } finally {
    await pg.close();
    snapshot.close();
  }
}
