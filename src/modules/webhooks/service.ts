/**
 * Event webhooks of API clients (decisions.md §10): register (the signing secret is shown once and stored sealed, since
 * it must be used to sign), list, delete. What happens is recorded by src/store/events.ts inside the transaction of
 * each state change; src/publishing/event-delivery.ts delivers it.
 *
 * API for other modules: `createWebhook`, `listWebhooks`, `deleteWebhook` (all `(deps, accountId, ...)`), and
 * `tidyWebhookEvents(deps)` for the hourly job.
 */
import { randomBytes } from "node:crypto";
import { and, count, desc, eq, lt, notExists } from "drizzle-orm";
import { type EventType, EVENT_TYPES } from "../../db/schema/event-webhooks";
import { accounts, eventWebhooks, webhookDeliveries, webhookEvents } from "../../db/tables";
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { AppError, notFound } from "../../lib/errors";
import { isUuid, newId } from "../../lib/ids";
import { STANDARD_WEBHOOK_SECRET_PREFIX } from "../../lib/standard-webhooks";
import { SafeFetchError, checkDestination } from "../../lib/safe-fetch";
import { parseEventTypes, sealWebhookSecret } from "../../store/events";
import { type CreateWebhookBody, MAX_WEBHOOKS_PER_ACCOUNT, type WebhookApi } from "./model";


type WebhookRow = typeof eventWebhooks.$inferSelect;

function toApi(row: WebhookRow): WebhookApi {
  return { id: row.id, url: row.url, events: parseEventTypes(row.events), createdAt: isoAt(row.createdAt) };
}

/**
 * The 400 of a URL the outbound rule refuses (decisions.md §4, as for every address a user supplies): invalid_url,
 * https_required, port_not_allowed, host_not_public, host_unresolvable. Checked again at every delivery.
 */
async function assertDeliverable(deps: Pick<Deps, "config">, url: string): Promise<void> {
  try {
    await checkDestination(url, { requireHttps: false, allowPrivateHosts: deps.config.allowPrivateHosts });
  } catch (error) {
    if (!(error instanceof SafeFetchError)) throw error;
    const code = error.reason === "https_required" || error.reason === "port_not_allowed" || error.reason === "host_not_public" || error.reason === "host_unresolvable" ? error.reason : "invalid_url";
    throw new AppError(code, `url: ${error.message}`, { details: [{ field: "url", problem: error.message }] });
  }
}

/** POST /webhooks: registers `url` for `events`; answers the webhook and its signing secret (shown this once). */
export async function createWebhook(deps: Deps, accountId: string, body: CreateWebhookBody): Promise<{ webhook: WebhookApi; secret: string }> {
  const url = body.url.trim();
  const wanted = new Set<EventType>(body.events);
  const events = EVENT_TYPES.filter((e) => wanted.has(e));
  await assertDeliverable(deps, url);
  const id = newId();
  // Standard base64 (not base64url): Standard Webhooks libraries take `whsec_<base64>` as it is (decisions.md §10).
  const secret = STANDARD_WEBHOOK_SECRET_PREFIX + randomBytes(32).toString("base64");
  const row: WebhookRow = {
    id,
    accountId,
    url,
    events: JSON.stringify(events),
    secretSealed: sealWebhookSecret(deps.instanceSecret, id, secret),
    createdAt: deps.clock.now(),
  };
  await deps.store.write(async (tx) => {
    // PostgreSQL: the count decides the insert, so concurrent registrations of one account queue on its row (SQLite's
    // writes are serialised already).
    if (deps.store.dialect === "postgres") {
      const lock = tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId));
      await (lock as unknown as { for(strength: "update"): typeof lock }).for("update").all();
    }
    const existing = await tx.select({ n: count() }).from(eventWebhooks).where(eq(eventWebhooks.accountId, accountId)).get();
    if ((existing?.n ?? 0) >= MAX_WEBHOOKS_PER_ACCOUNT) {
      throw new AppError("too_many_webhooks", `An account can register at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks; delete one first.`, {
        limit: MAX_WEBHOOKS_PER_ACCOUNT,
      });
    }
    await tx.insert(eventWebhooks).values(row).run();
  });
  return { webhook: toApi(row), secret };
}

/** GET /webhooks: the account's webhooks, newest first (never their secrets). */
export async function listWebhooks(deps: Pick<Deps, "store">, accountId: string): Promise<{ webhooks: WebhookApi[] }> {
  const rows = await deps.store.db.select().from(eventWebhooks).where(eq(eventWebhooks.accountId, accountId)).orderBy(desc(eventWebhooks.id)).all();
  return { webhooks: rows.map(toApi) };
}

/**
 * DELETE /webhooks/{id}: removes the webhook and every delivery still owed to it (cascade), so nothing is sent to it
 * afterwards. 404 for a missing or another account's id.
 */
export async function deleteWebhook(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw notFound("webhook");
  const removed = await deps.store.write((tx) =>
    tx
      .delete(eventWebhooks)
      .where(and(eq(eventWebhooks.id, id), eq(eventWebhooks.accountId, accountId)))
      .returning({ id: eventWebhooks.id })
      .all(),
  );
  if (removed.length === 0) throw notFound("webhook");
  return { id, deleted: true };
}

/** How long delivered and failed events are kept (for support and debugging) before the tidy job deletes them. */
export const EVENT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Deletes events older than EVENT_RETENTION_MS with no delivery still pending (their deliveries go with them, by
 * cascade); answers how many. An event still owed to a webhook is never deleted.
 */
export async function tidyWebhookEvents(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const removed = await deps.store.write((tx) =>
    tx
      .delete(webhookEvents)
      .where(
        and(
          lt(webhookEvents.createdAt, deps.clock.now() - EVENT_RETENTION_MS),
          notExists(
            tx
              .select({ id: webhookDeliveries.id })
              .from(webhookDeliveries)
              .where(and(eq(webhookDeliveries.eventId, webhookEvents.id), eq(webhookDeliveries.status, "pending"))),
          ),
        ),
      )
      .returning({ id: webhookEvents.id })
      .all(),
  );
  return removed.length;
}
