/**
 * The event outbox of event webhooks (decisions.md §10). `recordEvent` is called INSIDE the transaction of the state
 * change it reports (a post's final status, a cancel, a saved creation, a capture that takes the balance under 10):
 * the event and one pending delivery per subscribed webhook commit with it or not at all, so a crash can neither lose
 * an event nor report one that did not happen. The dispatcher (src/publishing/event-delivery.ts) delivers them.
 *
 * It sits in store/, below both, because modules (credits, creations, schedule) and publishing/ (post-status) record
 * events.
 *
 * API for the other layers:
 *  - `recordEvent(tx, now, accountId, type, () => data)` → the event id, or null when no webhook of the account wants it
 *  - `LOW_CREDITS_THRESHOLD`, `sealWebhookSecret` / `openWebhookSecret`
 */
import { eq } from "drizzle-orm";
import type { EventType } from "../db/schema/event-webhooks";
import type { StoreDb } from "../db/store";
import { eventWebhooks, webhookDeliveries, webhookEvents } from "../db/tables";
import { isoAt } from "../lib/clock";
import { newId } from "../lib/ids";
import { openJson, sealJson } from "./sealing";

/** credits.low fires when a capture takes the balance from this or more to under it. */
export const LOW_CREDITS_THRESHOLD = 10;
/** The derived key's purpose label for event webhook signing secrets (not the connections' key). */
export const SECRET_KEY_LABEL = "event-webhooks:secret:v1";

/** The body every delivery of an event sends, byte for byte. */
export interface EventBody {
  id: string;
  type: EventType;
  createdAt: string;
  data: unknown;
}

/** The event types a stored `events` column holds. */
export function parseEventTypes(stored: string): EventType[] {
  try {
    const parsed = JSON.parse(stored) as unknown;
    return Array.isArray(parsed) ? (parsed.filter((e) => typeof e === "string") as EventType[]) : [];
  } catch {
    return [];
  }
}

/**
 * Stores the event `type` of `accountId` with one pending delivery per webhook subscribed to it, due now, inside the
 * caller's transaction. `data` is built only when some webhook wants the event. Answers the event id, or null
 * (nothing stored) when no webhook wants it.
 */
export async function recordEvent(tx: StoreDb, now: number, accountId: string, type: EventType, data: () => unknown): Promise<string | null> {
  const hooks = (
    await tx.select({ id: eventWebhooks.id, events: eventWebhooks.events }).from(eventWebhooks).where(eq(eventWebhooks.accountId, accountId)).all()
  ).filter((h) => parseEventTypes(h.events).includes(type));
  if (hooks.length === 0) return null;
  const id = newId();
  const body: EventBody = { id, type, createdAt: isoAt(now), data: data() };
  await tx.insert(webhookEvents).values({ id, accountId, type, body: JSON.stringify(body), createdAt: now }).run();
  await tx
    .insert(webhookDeliveries)
    .values(hooks.map((h) => ({ id: newId(), eventId: id, webhookId: h.id, status: "pending" as const, nextAttemptAt: now, createdAt: now, updatedAt: now })))
    .run();
  return id;
}

/** Seals a webhook's signing secret for its row (the webhook id is the additional data). */
export function sealWebhookSecret(instanceSecret: Uint8Array, webhookId: string, secret: string): string {
  return sealJson(instanceSecret, webhookId, { secret }, SECRET_KEY_LABEL);
}

/** Opened secrets by webhook id, with the sealed value they came from (a changed row is opened again). */
const opened = new Map<string, { sealed: string; secret: string }>();
const MAX_OPENED = 1000;

/**
 * Opens a webhook's signing secret; throws when the sealed value was tampered with or belongs to another row. Kept
 * in memory per webhook (each delivery would otherwise derive a key and decrypt again).
 */
export function openWebhookSecret(instanceSecret: Uint8Array, webhookId: string, sealed: string): string {
  const hit = opened.get(webhookId);
  if (hit && hit.sealed === sealed) return hit.secret;
  const secret = openJson<{ secret: string }>(instanceSecret, webhookId, sealed, SECRET_KEY_LABEL).secret;
  if (opened.size >= MAX_OPENED) opened.clear();
  opened.set(webhookId, { sealed, secret });
  return secret;
}
