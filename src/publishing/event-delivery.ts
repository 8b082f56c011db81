/**
 * Delivery of event webhooks (decisions.md §10), by the dispatcher's machinery: the same fenced leases as post targets
 * (claim in one write transaction, every later write conditional on the lease token), the same signing as webhook
 * targets (postSigned: X-Seedcast-Timestamp, X-Seedcast-Signature, and the Standard Webhooks headers keyed by the
 * `whsec_` secret's decoded bytes), the same outbound door (providerFetch: the SSRF
 * rules and ALLOW_PRIVATE_HOSTS), the same backoff and attempt count (backoffAfter, MAX_ATTEMPTS).
 *
 * At least once: a delivery whose worker died keeps its lease until it expires, then is claimed and sent again with
 * the same `Idempotency-Key` (the event id), which the receiver uses to absorb the repeat. Every non-2xx answer and
 * every network failure is retried; only an address the outbound rule refuses fails at once (no retry can help).
 * A deleted webhook's deliveries are deleted with it (cascade): a claim that finds its row gone sends nothing.
 */
import { and, asc, eq, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { forUpdateSkipLocked, greaterOf, minOf } from "../db/portable-sql";
import { eventWebhooks, webhookDeliveries, webhookEvents } from "../db/tables";
import type { Deps } from "../deps";
import { newId } from "../lib/ids";
import { keyOfEventSecret } from "../lib/standard-webhooks";
import { openWebhookSecret } from "../store/events";
import { DeliveryError } from "./connector";
import { DEFAULT_LEASE_MS, MAX_ATTEMPTS, backoffAfter } from "./dispatcher";
import { providerMessage } from "./outbound";
import { postSigned } from "./webhook";

export interface EventClaim {
  deliveryId: string;
  leaseToken: string;
}

function claimable(now: number) {
  return and(
    eq(webhookDeliveries.status, "pending"),
    isNotNull(webhookDeliveries.nextAttemptAt),
    lte(webhookDeliveries.nextAttemptAt, now),
    or(isNull(webhookDeliveries.leaseExpiresAt), lte(webhookDeliveries.leaseExpiresAt, now)),
  );
}

function fenced(claim: EventClaim) {
  return and(eq(webhookDeliveries.id, claim.deliveryId), eq(webhookDeliveries.leaseToken, claim.leaseToken));
}

/** Claims up to `limit` due deliveries, oldest due first, with fresh leases, in one write transaction. */
export async function claimDueEvents(deps: Pick<Deps, "store" | "clock">, limit: number, leaseMs: number): Promise<EventClaim[]> {
  if (limit <= 0) return [];
  const now = deps.clock.now();
  // A plain read first: most of the dispatcher's loops find no event due, and then take no write lock for it.
  const any = await deps.store.db.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(claimable(now)).limit(1).get();
  if (!any) return [];
  return deps.store.write(async (tx) => {
    // Read again once the writer is ours: the leases run from the moment they are stamped.
    const at = deps.clock.now();
    // PostgreSQL: the rows are locked (skipping rows another claimer holds); the conditional update stays the fence.
    const due = await forUpdateSkipLocked(
      deps.store.dialect,
      tx.select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(claimable(at)).orderBy(asc(webhookDeliveries.nextAttemptAt)).limit(limit),
    ).all();
    const claims: EventClaim[] = [];
    for (const row of due) {
      const leaseToken = newId();
      const updated = await tx
        .update(webhookDeliveries)
        .set({ leaseToken, leaseExpiresAt: at + leaseMs, updatedAt: at })
        .where(and(eq(webhookDeliveries.id, row.id), claimable(at)))
        .returning({ id: webhookDeliveries.id })
        .all();
      if (updated.length === 1) claims.push({ deliveryId: row.id, leaseToken });
    }
    return claims;
  });
}

/** Records the outcome of a claimed delivery (fenced); false when the lease was lost or the webhook deleted. */
async function record(deps: Pick<Deps, "store" | "clock">, claim: EventClaim, values: Partial<typeof webhookDeliveries.$inferInsert>): Promise<boolean> {
  const now = deps.clock.now();
  const rows = await deps.store.write((tx) =>
    tx
      .update(webhookDeliveries)
      .set({ ...values, leaseToken: null, leaseExpiresAt: null, updatedAt: now })
      .where(fenced(claim))
      .returning({ id: webhookDeliveries.id })
      .all(),
  );
  return rows.length === 1;
}

/** Delivers one claimed event to its webhook and records the outcome. Never throws. */
export async function deliverEvent(deps: Deps, claim: EventClaim): Promise<void> {
  const row = await deps.store.db
    .select({ delivery: webhookDeliveries, webhook: eventWebhooks, event: webhookEvents })
    .from(webhookDeliveries)
    .innerJoin(eventWebhooks, eq(eventWebhooks.id, webhookDeliveries.webhookId))
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(fenced(claim))
    .get();
  if (!row) return; // lease lost, or the webhook was deleted meanwhile
  const { delivery, webhook, event } = row;
  const now = () => deps.clock.now();
  try {
    const secret = openWebhookSecret(deps.instanceSecret, webhook.id, webhook.secretSealed);
    const res = await postSigned(deps, webhook.url, { secret, standardKey: keyOfEventSecret(secret) }, event.body, event.id);
    if (res.ok) {
      await res.body?.cancel();
      await record(deps, claim, { status: "delivered", deliveredAt: now(), nextAttemptAt: null, lastError: null });
      return;
    }
    throw new DeliveryError("transient", `The receiver answered ${await providerMessage(res)}`);
  } catch (error) {
    const failure = error instanceof DeliveryError ? error : new DeliveryError("unknown", error instanceof Error ? error.message : String(error));
    const attempts = delivery.attempts + 1;
    // An address the outbound rule refuses stays refused: no retry can help.
    const final = failure.kind === "permanent" || attempts >= MAX_ATTEMPTS;
    const lastError = failure.kind !== "permanent" && final ? `Gave up after ${attempts} attempts: ${failure.message}` : failure.message;
    deps.log.warn("event webhook delivery failed", { deliveryId: delivery.id, webhookId: webhook.id, attempts, final, message: failure.message });
    await record(deps, claim, final ? { status: "failed", attempts, nextAttemptAt: null, lastError } : { attempts, nextAttemptAt: now() + backoffAfter(attempts), lastError });
  }
}

/** Claims and delivers every due event delivery (in batches of `concurrency`), awaiting all. For tests and benches. */
export async function runDueEventsOnce(deps: Deps, opts: { concurrency?: number; leaseMs?: number } = {}): Promise<number> {
  let delivered = 0;
  for (;;) {
    const claims = await claimDueEvents(deps, opts.concurrency ?? 32, opts.leaseMs ?? DEFAULT_LEASE_MS);
    if (claims.length === 0) return delivered;
    await Promise.all(claims.map((c) => deliverEvent(deps, c)));
    delivered += claims.length;
  }
}

/** When the next event delivery becomes claimable, or null when none is pending. */
export async function nextEventWakeAt(deps: Pick<Deps, "store">): Promise<number | null> {
  const row = await deps.store.db
    .select({ at: minOf(greaterOf(webhookDeliveries.nextAttemptAt, sql`coalesce(${webhookDeliveries.leaseExpiresAt}, 0)`)) })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, "pending"), isNotNull(webhookDeliveries.nextAttemptAt)))
    .get();
  return row?.at ?? null;
}
