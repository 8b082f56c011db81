/**
 * `seedcast serve`: bootstrap, then the HTTP server, then the jobs. SIGTERM/SIGINT drain gracefully: readiness goes
 * false, the listener stops accepting, in-flight requests and job runs finish, the database closes, the process exits.
 */
import { MAX_CSV_BYTES } from "../http/csv-body";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../app";
import { bootstrapWithMigrations } from "../bootstrap";
import { isSqliteStore } from "../db/store";
import { startCheckpointer } from "../db/checkpointer";
import type { Config } from "../config";
import { systemJobs } from "../system-jobs";
import { startJobs } from "../jobs/registry";
import { metricsAccess } from "../modules/metrics";
import { backupJobs } from "../modules/backup/job";
import { SERVE_PID_FILE } from "../modules/backup/service";
import { startDispatcher } from "../publishing/dispatcher";
import { startMailer } from "../modules/notices/mailer";
import { VERSION } from "../version";

/** Extra room over the image cap for multipart framing on the upload page. */
const MULTIPART_OVERHEAD = 1024 * 1024;

/** Runs the server until a termination signal. */
export async function serveCommand(config: Readonly<Config>): Promise<void> {
  const started = performance.now();
  const { deps, applied } = await bootstrapWithMigrations(config);
  // A bucket that is missing or refuses the credentials stops the start here, not at the first upload.
  await deps.storage.check();
  // SQLite: WAL checkpoints run on a thread of their own, never inside a request (db/checkpointer.ts): the writer's
  // automatic checkpoint is turned off (a pragma: a connection setting, which holds whatever transaction is open), and
  // the bound's checkpoint runs on the reader.
  const store = deps.store;
  const checkpointer = isSqliteStore(store)
    ? startCheckpointer(store.sqlite, deps.log, { committer: await store.withWriter((writer) => writer) })
    : null;
  // The pid file tells `seedcast restore` that this data dir is in use.
  const pidFile = join(config.dataDir, SERVE_PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`);
  if (config.allowPrivateHosts.size > 0) {
    deps.log.warn("ALLOW_PRIVATE_HOSTS exempts these hosts from the public-address and port rules", {
      hosts: [...config.allowPrivateHosts],
    });
  }
  if (config.platformOriginOverrides.size > 0) {
    // Loud on purpose: every call to these networks goes somewhere else (tests, private mirrors).
    deps.log.warn("PLATFORM_ORIGIN_OVERRIDES sends these networks' calls elsewhere, exempt from the public-address and https rules", {
      overrides: Object.fromEntries(config.platformOriginOverrides),
    });
  }
  if (metricsAccess(config) === "closed") {
    deps.log.warn("GET /metrics is closed: HOST is not loopback-only and METRICS_TOKEN is not set", { host: config.host });
  }
  let accepting = true;
  const app = createApp(deps, { isReady: () => accepting });
  const server = Bun.serve({
    port: config.port,
    hostname: config.host,
    // The largest bodies a route claims: the library upload's image, the CSV import's file (http/csv-body.ts).
    maxRequestBodySize: Math.max(config.maxImageBytes, MAX_CSV_BYTES) + MULTIPART_OVERHEAD,
    // Bun's router finds each route; whatever it does not match goes through `handle` (served-routes.ts).
    routes: app.servedRoutes(),
    fetch: (request, server) => app.handle(request, server),
    error: () => new Response('{"error":"internal_error","message":"Something went wrong on our side."}', { status: 500 }),
  });
  const jobs = startJobs(deps, [...systemJobs, ...backupJobs(config)]);
  // Delivery runs continuously (not as a cron tick) so posts leave within a second of their time.
  const dispatcher = startDispatcher(deps, deps.config.dispatch);
  // Notice emails (SMTP_URL): sent in the background, never inside a request (modules/notices/mailer.ts).
  const mailer = startMailer(deps);
  deps.log.info("ready", {
    version: VERSION,
    url: `http://${server.hostname}:${server.port}`,
    baseUrl: config.baseUrl,
    dataDir: config.dataDir,
    database: config.database.kind,
    migrationsApplied: applied.length,
    email: config.smtp ? "on" : "off (SMTP_URL not set)",
    startupMs: Math.round(performance.now() - started),
  });

  await new Promise<void>((resolve) => {
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      accepting = false;
      deps.log.info("shutting down", { signal });
      await server.stop(false);
      await jobs.stop();
      await dispatcher.stop(); // finishes and records every delivery in flight
      await mailer.stop();
      await checkpointer?.stop();
      await deps.store.close();
      rmSync(pidFile, { force: true });
      deps.log.info("stopped");
      resolve();
    };
    process.on("SIGTERM", () => void shutdown("SIGTERM"));
    process.on("SIGINT", () => void shutdown("SIGINT"));
  });
}
