/**
 * Housekeeping of the OAuth tables, run by a croner job. Only tidies: every request checks expiry and revocation
 * itself, so correctness never waits for it. Spent codes and refresh tokens are kept until they would have expired
 * anyway (plus a day for codes), so a replay is still recognised as a replay and revokes what it must.
 */
import { and, eq, isNotNull, lt, notExists, or } from "drizzle-orm";
import { oauthClients, oauthCodes, oauthGrants, oauthTokens } from "../../db/tables";
import type { Deps } from "../../deps";
import type { JobDefinition } from "../../jobs/registry";
import { METADATA_CACHE_MS } from "./client-metadata";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Revoked grants disappear this long after their revocation. */
export const REVOKED_GRANT_KEPT_MS = 30 * DAY_MS;
/** Registered clients nobody ever connected are deleted this long after registration. */
export const UNUSED_CLIENT_KEPT_MS = 30 * DAY_MS;

export const OAUTH_TIDY_JOB_ID = "__oauth_tidy__";

export interface TidyCounts {
  codes: number;
  tokens: number;
  grants: number;
  clients: number;
}

/** Deletes what can never work again. */
export async function tidyOAuth(deps: Pick<Deps, "store" | "clock">): Promise<TidyCounts> {
  const now = deps.clock.now();
  return deps.store.write(
    async (tx) => {
      const codes = (await tx.delete(oauthCodes).where(lt(oauthCodes.expiresAt, now - DAY_MS)).returning({ id: oauthCodes.id }).all()).length;
      const tokens = (await tx.delete(oauthTokens).where(lt(oauthTokens.expiresAt, now)).returning({ id: oauthTokens.id }).all()).length;
      const grants = (
        await tx
          .delete(oauthGrants)
          .where(
            or(
              and(isNotNull(oauthGrants.revokedAt), lt(oauthGrants.revokedAt, now - REVOKED_GRANT_KEPT_MS)),
              // Every token expired and tidied: the grant can never be used again.
              and(
                lt(oauthGrants.createdAt, now - DAY_MS),
                notExists(tx.select({ id: oauthTokens.id }).from(oauthTokens).where(eq(oauthTokens.grantId, oauthGrants.id))),
              ),
            ),
          )
          .returning({ id: oauthGrants.id })
          .all()
      ).length;
      const unused = and(
        notExists(tx.select({ id: oauthGrants.id }).from(oauthGrants).where(eq(oauthGrants.clientId, oauthClients.id))),
        notExists(tx.select({ id: oauthCodes.id }).from(oauthCodes).where(eq(oauthCodes.clientId, oauthClients.id))),
      );
      const clients = (
        await tx
          .delete(oauthClients)
          .where(
            and(
              unused,
              or(
                and(eq(oauthClients.kind, "registered"), lt(oauthClients.createdAt, now - UNUSED_CLIENT_KEPT_MS)),
                and(eq(oauthClients.kind, "metadata_document"), lt(oauthClients.fetchedAt, now - METADATA_CACHE_MS)),
              ),
            ),
          )
          .returning({ id: oauthClients.id })
          .all()
      ).length;
      return { codes, tokens, grants, clients };
    },
  );
}

/** The job `seedcast serve` runs every ten minutes. */
export const oauthJobs: readonly JobDefinition[] = [
  {
    id: OAUTH_TIDY_JOB_ID,
    schedule: "0 */10 * * * *",
    run: async (deps) => {
      const removed = await tidyOAuth(deps);
      if (removed.codes + removed.tokens + removed.grants + removed.clients > 0) deps.log.info("tidied oauth", { ...removed });
    },
  },
];
