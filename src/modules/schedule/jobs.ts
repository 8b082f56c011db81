/**
 * The publishing system jobs (croner, started by `seedcast serve`): credential checks every 30 minutes, the
 * confirmation of provider-held posts (Mastodon scheduled statuses) every minute, the expiry of posts not approved
 * before their time (approval.ts) every minute, the daily sign-in token refresh and the tidying of sign-ins never
 * finished. Delivery itself is not a cron job:
 * the continuous dispatcher (startDispatcher, started by serve) keeps p99 lateness under a second or two, which a
 * cron tick every few seconds could not.
 */
import type { JobDefinition } from "../../jobs/registry";
import { checkAllConnections } from "../connections/service";
import { expireUnapproved } from "./approval";
import { confirmProviderHeldPosts } from "./service";
import { refreshExpiringTokens } from "../../publishing/sign-in/refresh";
import { tidySignInStates } from "../../publishing/sign-in/state";

export const PUBLISHING_JOB_IDS = {
  connectionChecks: "__connection_checks__",
  confirmPublished: "__confirm_published__",
  tokenRefresh: "__token_refresh__",
  signInStatesTidy: "__sign_in_states_tidy__",
  approvalExpiry: "__approval_expiry__",
} as const;

/** The jobs of the publishing side. */
export const publishingJobs: readonly JobDefinition[] = [
  {
    // Daily: every sign-in token expiring within 7 days is refreshed (decisions.md §12 "Tokens").
    id: PUBLISHING_JOB_IDS.tokenRefresh,
    schedule: "0 7 4 * * *",
    run: async (deps) => {
      const { refreshed, failed } = await refreshExpiringTokens(deps);
      if (refreshed + failed > 0) deps.log.info("refreshed sign-in tokens", { refreshed, failed });
    },
  },
  {
    // Sign-ins started and never finished: their state dies after 10 minutes.
    id: PUBLISHING_JOB_IDS.signInStatesTidy,
    schedule: "45 */10 * * * *",
    run: async (deps) => {
      const removed = await tidySignInStates(deps);
      if (removed > 0) deps.log.debug("tidied sign-in states", { removed });
    },
  },
  {
    id: PUBLISHING_JOB_IDS.connectionChecks,
    schedule: "0 */30 * * * *",
    run: async (deps) => {
      const { checked, ready } = await checkAllConnections(deps);
      if (checked > 0) deps.log.info("checked connections", { checked, ready });
    },
  },
  {
    id: PUBLISHING_JOB_IDS.confirmPublished,
    schedule: "30 * * * * *",
    run: async (deps) => {
      const { confirmed } = await confirmProviderHeldPosts(deps);
      if (confirmed > 0) deps.log.info("confirmed provider-held posts", { confirmed });
    },
  },
  {
    // Posts still waiting for an owner's approval when their time came fail ("Not approved before its time.").
    id: PUBLISHING_JOB_IDS.approvalExpiry,
    schedule: "15 * * * * *",
    run: async (deps) => {
      const failed = await expireUnapproved(deps);
      if (failed > 0) deps.log.info("failed posts not approved before their time", { failed });
    },
  },
];
