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
import { feedJobs } from "./modules/feeds/jobs";
import { tidySecretReveals } from "./modules/dashboard/reveal";
import { oauthJobs } from "./modules/oauth/tidy";
import { tidyWebhookEvents } from "./modules/webhooks/service";
import { tidyInvitations } from "./modules/accounts/invitations";
import { tidyPasswordResets } from "./modules/accounts/password-resets";
import { tidyNotices } from "./modules/notices/service";
import type { Deps } from "./deps";
import type { JobDefinition } from "./jobs/registry";

export const JOB_IDS = {
  keysTidy: "__keys_tidy__",
  uploadLinksTidy: "__upload_links_tidy__",
  webhookEventsTidy: "__webhook_events_tidy__",
  rateLimitsTidy: "__rate_limits_tidy__",
  secretRevealsTidy: "__secret_reveals_tidy__",
  noticesTidy: "__notices_tidy__",
  invitationsTidy: "__invitations_tidy__",
  passwordResetsTidy: "__password_resets_tidy__",
} as const;

/** A job that deletes what has run out and logs how many rows went, when any did. */
function tidyJob(id: string, schedule: string, what: string, tidy: (deps: Deps) => Promise<number>, level: "info" | "debug" = "info"): JobDefinition {
  return {
    id,
    schedule,
    run: async (deps) => {
      const removed = await tidy(deps);
      if (removed > 0) deps.log[level](`tidied ${what}`, { removed });
    },
  };
}

/** The jobs `seedcast serve` starts. */
export const systemJobs: readonly JobDefinition[] = [
  tidyJob(JOB_IDS.keysTidy, "0 17 * * * *", "keys", tidyKeys),
  tidyJob(JOB_IDS.uploadLinksTidy, "0 */10 * * * *", "upload links", tidyUploadLinks),
  {
    id: MEDIA_SWEEP_JOB_ID,
    schedule: "0 41 * * * *",
    run: async (deps) => {
      await sweepOrphanMedia(deps);
    },
  },
  tidyJob(JOB_IDS.webhookEventsTidy, "0 53 * * * *", "webhook events", tidyWebhookEvents),
  // The shared rate-limit buckets (PostgreSQL mode: http/rate-limit-db.ts) of keys idle for a minute are full again:
  // dropped. On SQLite the limiters live in memory and the table stays empty.
  tidyJob(JOB_IDS.rateLimitsTidy, "30 */5 * * * *", "rate-limit buckets", tidyRateLimits, "debug"),
  // Pending one-time reveals (src/modules/dashboard/reveal.ts) whose ten minutes have passed: their GET never came.
  tidyJob(JOB_IDS.secretRevealsTidy, "15 */10 * * * *", "secret reveals", tidySecretReveals, "debug"),
  // Notices 90 days old whose email is settled; invitation and reset links 30 days after they died.
  tidyJob(JOB_IDS.noticesTidy, "0 23 3 * * *", "notices", tidyNotices),
  tidyJob(JOB_IDS.invitationsTidy, "0 27 3 * * *", "invitations", tidyInvitations),
  tidyJob(JOB_IDS.passwordResetsTidy, "0 29 3 * * *", "password reset links", tidyPasswordResets),
  ...publishingJobs,
  ...idempotencyJobs,
  ...dashboardJobs,
  ...oauthJobs,
  ...feedJobs,
];
