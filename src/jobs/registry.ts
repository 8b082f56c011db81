/**
 * System cron jobs under reserved ids, started only with the server. Each job is a plain function of deps, so tests
 * trigger it directly after moving the clock; croner only decides when it runs in production.
 */
import { Cron } from "croner";
import type { Deps } from "../deps";

export interface JobDefinition {
  /** Reserved id, e.g. `__keys_tidy__`. */
  id: string;
  /** Cron pattern with seconds (croner syntax). */
  schedule: string;
  run(deps: Deps): void | Promise<void>;
}

export interface RunningJobs {
  /** Stops scheduling and waits for runs in progress. */
  stop(): Promise<void>;
}

/** Starts every job; a failing run is logged and the job keeps its schedule. Overlapping runs are skipped, and
 * in a cluster a tick runs on one replica only (deps.store.exclusive: an advisory lock on PostgreSQL). */
export function startJobs(deps: Deps, jobs: readonly JobDefinition[]): RunningJobs {
  const running = new Set<Promise<void>>();
  const crons = jobs.map(
    (job) =>
      new Cron(job.schedule, { name: job.id, protect: true, catch: false }, async () => {
        const run = (async () => {
          try {
            // Once cluster-wide: a replica that finds another running this job now skips this tick (db/store.ts).
            const ran = await deps.store.exclusive(job.id, async () => {
              await job.run(deps);
            });
            if (!ran) deps.log.debug("job skipped: another replica is running it", { job: job.id });
          } catch (error) {
            deps.log.error("job failed", { job: job.id, error: error instanceof Error ? error.message : String(error) });
          }
        })();
        running.add(run);
        await run;
        running.delete(run);
      }),
  );
  return {
    async stop() {
      for (const cron of crons) cron.stop();
      await Promise.all(running);
    },
  };
}
