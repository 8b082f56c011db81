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
import { DB_FILE_NAME } from "./db/client";
import { type StoreTarget, openStore } from "./db/open-store";
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
export async function bootstrap(config: Readonly<Config>, overrides: Partial<Pick<Deps, "clock" | "log" | "generator">> = {}): Promise<Deps> {
  return (await bootstrapWithMigrations(config, overrides)).deps;
}

/** bootstrap, also answering the migration tags this start applied (`seedcast migrate`). */
export async function bootstrapWithMigrations(
  config: Readonly<Config>,
  overrides: Partial<Pick<Deps, "clock" | "log" | "generator">> = {},
): Promise<{ deps: Deps; applied: string[] }> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const instanceSecret = loadInstanceSecret(config.dataDir, config.instanceSecret?.bytes ?? null, DB_FILE_NAME);
  const clock: Clock = overrides.clock ?? systemClock;
  const target: StoreTarget =
    config.database.kind === "postgres"
      ? { kind: "postgres", url: config.database.url, name: config.database.redacted }
      : { kind: "sqlite", path: join(config.dataDir, DB_FILE_NAME) };
  const { store, applied } = await openStore(target, {
    fingerprint: instanceSecretFingerprint(instanceSecret),
    source: config.instanceSecret ? "environment" : "file",
    now: clock.now(),
  });
  const log: Logger = overrides.log ?? createLogger(config.logLevel);
  const deps: Deps = {
    config,
    store,
    clock,
    log,
    instanceSecret,
    storage: createStorage(config),
    generator: overrides.generator ?? createGenerator(config),
    metrics: createMetrics(store, clock),
  };
  return { deps, applied };
}
