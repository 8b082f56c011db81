/** Every system job, in one place. */
import { idempotencyJobs } from "../http/idempotency";
import { tidyKeys } from "../modules/auth/keys-service";
import { MEDIA_SWEEP_JOB_ID, sweepOrphanMedia } from "../modules/assets/sweep";
import { tidyUploadLinks } from "../modules/uploads/service";
import { publishingJobs } from "../publishing/jobs";
import { dashboardJobs } from "../modules/dashboard/jobs";
import { oauthJobs } from "../modules/oauth/tidy";
import { tidyWebhookEvents } from "../modules/webhooks/service";
import type { JobDefinition } from "./registry";

export const JOB_IDS = {
  keysTidy: "__keys_tidy__",
  uploadLinksTidy: "__upload_links_tidy__",
  webhookEventsTidy: "__webhook_events_tidy__",
} as const;

/** The jobs `seedcast serve` starts. */
export const systemJobs: readonly JobDefinition[] = [
  {
    id: JOB_IDS.keysTidy,
    schedule: "0 17 * * * *",
    run: (deps) => {
      const removed = tidyKeys(deps);
      if (removed > 0) deps.log.info("tidied keys", { removed });
    },
  },
  {
    id: JOB_IDS.uploadLinksTidy,
    schedule: "0 */10 * * * *",
    run: (deps) => {
      const removed = tidyUploadLinks(deps);
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
    run: (deps) => {
      const removed = tidyWebhookEvents(deps);
      if (removed > 0) deps.log.info("tidied webhook events", { removed });
    },
  },
  ...publishingJobs,
  ...idempotencyJobs,
  ...dashboardJobs,
  ...oauthJobs,
];
