/** The feeds' system job: every minute, read the active feeds whose 30 minutes have passed (service.pollDueFeeds). */
import type { JobDefinition } from "../../jobs/registry";
import { pollDueFeeds } from "./service";

export const FEEDS_POLL_JOB_ID = "__feeds_poll__";

/** The jobs of the feeds module. NB: the runner takes a cluster-wide lock per tick; each feed is also claimed. */
export const feedJobs: readonly JobDefinition[] = [
  {
    id: FEEDS_POLL_JOB_ID,
    schedule: "20 * * * * *",
    run: async (deps) => {
      const { polled, failed } = await pollDueFeeds(deps);
      if (polled > 0) deps.log.debug("feeds read", { polled, failed });
    },
  },
];
