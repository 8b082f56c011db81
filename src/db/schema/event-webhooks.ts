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
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const EVENT_TYPES = [
  "post.published",
  "post.failed",
  "post.partially_failed",
  "post.unconfirmed",
  "post.cancelled",
  "post.needs_approval",
  "post.approved",
  "post.rejected",
  "creation.generated",
  "credits.low",
  "connection.needs_attention",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;
export type EventDeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const eventWebhooks = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("event_webhooks_account_idx").on(t.accountId)],
);

export const webhookEvents = sqliteTable(
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
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("webhook_events_account_idx").on(t.accountId, t.createdAt)],
);

export const webhookDeliveries = sqliteTable(
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
    attempts: integer("attempts").notNull().default(0),
    /** When the dispatcher should next try; null once delivered or failed. */
    nextAttemptAt: integer("next_attempt_at"),
    leaseToken: text("lease_token"),
    leaseExpiresAt: integer("lease_expires_at"),
    lastError: text("last_error"),
    deliveredAt: integer("delivered_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt),
    index("webhook_deliveries_webhook_idx").on(t.webhookId),
    index("webhook_deliveries_event_idx").on(t.eventId),
    check("webhook_deliveries_status_valid", sql`${t.status} IN ('pending','delivered','failed')`),
  ],
);
