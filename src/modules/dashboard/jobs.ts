/**
 * The dashboard's housekeeping job: expired sessions and login-throttle counts whose window has passed are deleted
 * (requests check expiry themselves).
 */
import type { JobDefinition } from "../../jobs/registry";
import { tidyLoginThrottle } from "./login-limit";
import { tidySessions } from "../../web/session";

export const SESSIONS_TIDY_JOB_ID = "__sessions_tidy__";

/** Jobs the dashboard adds to `seedcast serve`. */
export const dashboardJobs: readonly JobDefinition[] = [
  {
    id: SESSIONS_TIDY_JOB_ID,
    schedule: "0 23 * * * *",
    run: async (deps) => {
      const removed = await tidySessions(deps);
      if (removed > 0) deps.log.info("tidied sessions", { removed });
      const counts = await tidyLoginThrottle(deps);
      if (counts > 0) deps.log.info("tidied login throttle counts", { removed: counts });
    },
  },
];
