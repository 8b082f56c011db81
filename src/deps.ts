/**
 * Everything a service may touch, injected. Nothing reaches for a global database, clock or logger, so every test
 * builds its own world.
 */
import type { Config } from "./config";
import type { Store } from "./db/store";
import type { Generator } from "./generation/generator";
import type { Clock } from "./lib/clock";
import type { Logger } from "./lib/log";
import type { Storage } from "./lib/storage";
import type { Metrics } from "./metrics/registry";

export interface Deps {
  config: Readonly<Config>;
  /** The database, SQLite or PostgreSQL (db/store.ts): reads on `store.db`, every write in `store.write()`. */
  store: Store;
  clock: Clock;
  log: Logger;
  /** 32 bytes from DATA_DIR; HMAC key for API key hashes and root of derived encryption keys. */
  instanceSecret: Uint8Array;
  storage: Storage;
  generator: Generator;
  /** Prometheus instruments; modules record their events here. */
  metrics: Metrics;
}
