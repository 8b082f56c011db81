/** The dashboard's housekeeping job: expired sessions are deleted (requests check expiry themselves). */
import type { JobDefinition } from "../../jobs/registry";
import { tidySessions } from "./session";

export const SESSIONS_TIDY_JOB_ID = "__sessions_tidy__";

/** Jobs the dashboard adds to `seedcast serve`. */
export const dashboardJobs: readonly JobDefinition[] = [
  {
    id: SESSIONS_TIDY_JOB_ID,
    schedule: "0 23 * * * *",
    run: (deps) => {
      const removed = tidySessions(deps);
      if (removed > 0) deps.log.info("tidied sessions", { removed });
    },
  },
];
