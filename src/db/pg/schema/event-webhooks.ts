// PostgreSQL mirror of src/db/schema/event-webhooks.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Event webhooks of API clients (decisions.md §10): not publishing targets, but subscriptions to what happens in an
 * account. Three tables:
 *  - `event_webhooks`: a subscription (URL, event types, signing secret sealed like connection credentials).
 *  - `webhook_events`: the outbox. An event is written in the same transaction as the state change it reports, with
 *    one `webhook_deliveries` row per subscribed webhook, so nothing is lost across a crash.
 *  - `webhook_deliveries`: one event to one webhook, delivered by the dispatcher with a fenced lease like post
 *    targets (lease_token + lease_expires_at), retried with backoff, at least once. Deleting a webhook deletes its
 *    deliveries (cascade): nothing is delivered after it.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { DELIVERY_STATUSES } from "../../schema/event-webhooks";

export const eventWebhooks = pgTable(
  "event_webhooks",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** JSON array of EventType. */
    events: text("events").notNull(),
    /** Sealed JSON `{secret}` (AES-256-GCM under a key derived from the instance secret, the webhook id as AAD). */
    secretSealed: text("secret_sealed").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("event_webhooks_account_idx").on(t.accountId)],
);

export const webhookEvents = pgTable(
  "webhook_events",
  {
    /** The event id: the body's `id` and every delivery's Idempotency-Key. */
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    type: text("type").notNull(),
    /** The exact JSON body every delivery of this event sends: {id, type, createdAt, data}. */
    body: text("body").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("webhook_events_account_idx").on(t.accountId, t.createdAt)],
);

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => eventWebhooks.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    /** Failed attempts so far. */
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    /** When the dispatcher should next try; null once delivered or failed. */
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }),
    leaseToken: text("lease_token"),
    leaseExpiresAt: bigint("lease_expires_at", { mode: "number" }),
    lastError: text("last_error"),
    deliveredAt: bigint("delivered_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt),
    index("webhook_deliveries_webhook_idx").on(t.webhookId),
    index("webhook_deliveries_event_idx").on(t.eventId),
    check("webhook_deliveries_status_valid", sql`${t.status} IN ('pending','delivered','failed')`),
  ],
);
