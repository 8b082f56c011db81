/** Request and response schemas of the event webhook routes (decisions.md §10): validation and OpenAPI in one place. */
import { t } from "elysia";
import { orNull, pathId, timestamp, uuid } from "../../lib/schema";
import { EVENT_TYPES } from "../../db/schema/event-webhooks";

export const MAX_WEBHOOK_URL_LENGTH = 2000;
/** Webhooks one account may register. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 25;

export const createWebhookBody = t.Object({
  url: t.String({
    minLength: 1,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    error: `must be an https URL of at most ${MAX_WEBHOOK_URL_LENGTH} characters`,
    description: "https, port 443, resolving to public addresses only (hosts in ALLOW_PRIVATE_HOSTS excepted).",
  }),
  events: t.Array(t.UnionEnum(EVENT_TYPES), {
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    error: `must be a list of one or more of ${EVENT_TYPES.join(", ")}`,
    description: "The event types to receive.",
  }),
});

export const webhookSchema = t.Object(
  {
    id: uuid(),
    url: t.String(),
    events: t.Array(t.UnionEnum(EVENT_TYPES)),
    createdAt: timestamp(),
  },
  { title: "Webhook" },
);

export const createWebhookResponse = t.Object({
  webhook: webhookSchema,
  secret: orNull(t.String(), {
    description:
      "The signing secret (`whsec_<base64>`), shown once: X-Seedcast-Signature is sha256=<hex HMAC-SHA256 of the raw body under it>; " +
      "webhook-signature is v1,<base64 HMAC-SHA256 of \"id.timestamp.body\" under its base64-decoded bytes> (Standard Webhooks). " +
      "null in an Idempotency-Key replay (a secret is never stored for replays).",
  }),
}, { title: "CreatedWebhook" });

export const webhookListResponse = t.Object({ webhooks: t.Array(webhookSchema) }, { title: "WebhookList" });

export const webhookIdParams = t.Object({ id: pathId() });

export const webhookDeletedResponse = t.Object({ id: uuid(), deleted: t.Literal(true) }, { title: "Deleted" });

export type CreateWebhookBody = typeof createWebhookBody.static;
export type WebhookApi = typeof webhookSchema.static;
