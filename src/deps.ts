/**
 * Everything a service may touch, injected. Nothing reaches for a global database, clock or logger, so every test
 * builds its own world.
 */
import type { Database } from "bun:sqlite";
import type { Config } from "./config";
import type { Db } from "./db/client";
import type { Generator } from "./generation/generator";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/log";
import type { Storage } from "./lib/storage";
import type { Metrics } from "./metrics/registry";

export interface Deps {
  config: Readonly<Config>;
  db: Db;
  sqlite: Database;
  clock: Clock;
  log: Logger;
  /** 32 bytes from DATA_DIR; HMAC key for API key hashes and root of derived encryption keys. */
  instanceSecret: Uint8Array;
  storage: Storage;
  generator: Generator;
  /** Prometheus instruments; modules record their events here. */
  metrics: Metrics;
}
