/**
 * Every system job, in one place (beside app.ts, which mounts every module): it names jobs of http/ and of the modules,
 * so it sits above them; jobs/ itself is only the runner they all define their jobs for.
 */
import { idempotencyJobs } from "./http/idempotency";
import { tidyRateLimits } from "./http/rate-limit-db";
import { tidyKeys } from "./modules/auth/keys-service";
import { MEDIA_SWEEP_JOB_ID, sweepOrphanMedia } from "./modules/assets/sweep";
import { tidyUploadLinks } from "./modules/uploads/service";
import { publishingJobs } from "./modules/schedule/jobs";
import { dashboardJobs } from "./modules/dashboard/jobs";
import { tidySecretReveals } from "./modules/dashboard/reveal";
import { oauthJobs } from "./modules/oauth/tidy";
import { tidyWebhookEvents } from "./modules/webhooks/service";
import type { JobDefinition } from "./jobs/registry";

export const JOB_IDS = {
  keysTidy: "__keys_tidy__",
  uploadLinksTidy: "__upload_links_tidy__",
  webhookEventsTidy: "__webhook_events_tidy__",
  rateLimitsTidy: "__rate_limits_tidy__",
  secretRevealsTidy: "__secret_reveals_tidy__",
} as const;

/** The jobs `seedcast serve` starts. */
export const systemJobs: readonly JobDefinition[] = [
  {
    id: JOB_IDS.keysTidy,
    schedule: "0 17 * * * *",
    run: async (deps) => {
      const removed = await tidyKeys(deps);
      if (removed > 0) deps.log.info("tidied keys", { removed });
    },
  },
  {
    id: JOB_IDS.uploadLinksTidy,
    schedule: "0 */10 * * * *",
    run: async (deps) => {
      const removed = await tidyUploadLinks(deps);
      if (removed > 0) deps.log.info("tidied upload links", { removed });
    },
  },
  {
    id: MEDIA_SWEEP_JOB_ID,
    schedule: "0 41 * * * *",
    run: async (deps) => {
      await sweepOrphanMedia(deps);
    },
  },
  {
    id: JOB_IDS.webhookEventsTidy,
    schedule: "0 53 * * * *",
    run: async (deps) => {
      const removed = await tidyWebhookEvents(deps);
      if (removed > 0) deps.log.info("tidied webhook events", { removed });
    },
  },
  {
    // The shared rate-limit buckets (PostgreSQL mode: http/rate-limit-db.ts) of keys idle for a minute are full again:
    // dropped. On SQLite the limiters live in memory and the table stays empty.
    id: JOB_IDS.rateLimitsTidy,
    schedule: "30 */5 * * * *",
    run: async (deps) => {
      const removed = await tidyRateLimits(deps);
      if (removed > 0) deps.log.debug("tidied rate-limit buckets", { removed });
    },
  },
  {
    // Pending one-time reveals (src/modules/dashboard/reveal.ts) whose ten minutes have passed: their GET never came.
    id: JOB_IDS.secretRevealsTidy,
    schedule: "15 */10 * * * *",
    run: async (deps) => {
      const removed = await tidySecretReveals(deps);
      if (removed > 0) deps.log.debug("tidied secret reveals", { removed });
    },
  },
  ...publishingJobs,
  ...idempotencyJobs,
  ...dashboardJobs,
  ...oauthJobs,
];
