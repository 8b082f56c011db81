/**
 * Preloaded by `bun test` (bunfig.toml): after the last test file, stop the PostgreSQL cluster and the radosgw the
 * run's worlds shared (test/helpers/test-database.ts). `bun test` fires no process "exit" event, so without this
 * every PostgreSQL run would leave both running.
 */
import { afterAll } from "bun:test";
import { stopTestServices } from "./test-database";

afterAll(stopTestServices);
