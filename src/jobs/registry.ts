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

/** Starts every job; a failing run is logged and the job keeps its schedule. Overlapping runs are skipped. */
export function startJobs(deps: Deps, jobs: readonly JobDefinition[]): RunningJobs {
  const running = new Set<Promise<void>>();
  const crons = jobs.map(
    (job) =>
      new Cron(job.schedule, { name: job.id, protect: true, catch: false }, async () => {
        const run = (async () => {
          try {
            await job.run(deps);
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
