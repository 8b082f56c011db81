/**
 * The fixed bootstrap order: data dir → instance secret → database → migrations → the secret's fingerprint against the
 * database → storage → generator → metrics. The secret comes before the database so that a refusal (INSTANCE_SECRET
 * against another instance.secret, a database whose secret is missing) stops the start before anything is written.
 * The fingerprint check needs the migrated database (its table), so it comes right after the migrations: a database
 * made under another secret is refused with nothing written but the migrations this build brings (none, when the
 * database was already current). The server and cron jobs start after this (cli/serve).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "./config";
import { DB_FILE_NAME, openDatabase } from "./db/client";
import { checkInstanceIdentity } from "./db/instance-identity";
import { migrateDatabase } from "./db/migrate";
import type { Deps } from "./deps";
import { createGenerator } from "./generation";
import { type Clock, systemClock } from "./lib/clock";
import { type Logger, createLogger } from "./lib/log";
import { instanceSecretFingerprint, loadInstanceSecret } from "./lib/instance-secret";
import type { Storage } from "./lib/storage";
import { createLocalStorage } from "./lib/storage-local";
import { createS3Storage } from "./lib/storage-s3";
import { createMetrics } from "./metrics/registry";

/** The media folder inside DATA_DIR. */
export const MEDIA_DIR = "media";

/** The media store MEDIA_STORE names: DATA_DIR/media, or the S3 bucket. */
export function createStorage(config: Readonly<Config>): Storage {
  return config.media.kind === "s3" ? createS3Storage(config.media) : createLocalStorage(join(config.dataDir, MEDIA_DIR));
}

/** Opens everything a command needs. Overrides let tests inject a clock, a logger or a generator. */
export function bootstrap(config: Readonly<Config>, overrides: Partial<Pick<Deps, "clock" | "log" | "generator">> = {}): Deps {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const instanceSecret = loadInstanceSecret(config.dataDir, config.instanceSecret?.bytes ?? null, DB_FILE_NAME);
  const dbPath = join(config.dataDir, DB_FILE_NAME);
  const { sqlite, db } = openDatabase(dbPath);
  const clock: Clock = overrides.clock ?? systemClock;
  try {
    migrateDatabase(sqlite);
    checkInstanceIdentity(db, instanceSecretFingerprint(instanceSecret), config.instanceSecret ? "environment" : "file", dbPath, clock.now());
  } catch (error) {
    sqlite.close();
    throw error;
  }
  const log: Logger = overrides.log ?? createLogger(config.logLevel);
  return {
    config,
    db,
    sqlite,
    clock,
    log,
    instanceSecret,
    storage: createStorage(config),
    generator: overrides.generator ?? createGenerator(config),
    metrics: createMetrics(sqlite, clock),
  };
}
