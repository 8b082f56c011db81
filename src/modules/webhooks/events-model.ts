/**
 * What Seedcast POSTs to receivers, for the OpenAPI document's `webhooks` section (decisions.md §10): each event
 * webhook payload (`{id, type, createdAt, data}`, data as src/store/events.ts callers build it) and the two payloads
 * of a webhook publishing target (decisions.md §7; src/publishing/webhook.ts), as named component schemas, with the
 * headers every delivery carries.
 */
import { t, type TSchema } from "elysia";
import { type EventType, EVENT_TYPES } from "../../db/schema/event-webhooks";
import { integer, orNull, timestamp, uuid } from "../../lib/schema";
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../../db/schema/post-content";
import { WEBHOOK_EVENTS } from "../../publishing/webhook";
import { LOW_CREDITS_THRESHOLD } from "../../store/events";
import { creationSchema } from "../creations/model";
import { postSchema } from "../schedule/model";

/** One kind of delivery: its key in the `webhooks` section, what it is, and its body. */
export interface DeliveryDoc {
  name: string;
  summary: string;
  description: string;
  /** Who receives it: an event webhook or a webhook publishing target (they differ in the secret's key). */
  receiver: "event-webhook" | "publishing-target";
  body: TSchema;
}

/** `{id, type, createdAt, data}` of event `type`. */
function eventEnvelope<D extends TSchema>(type: EventType, title: string, data: D) {
  return t.Object(
    {
      id: uuid({ description: "The event id: also `webhook-id` and `Idempotency-Key`; a repeat delivery carries the same id." }),
      type: t.Literal(type),
      createdAt: timestamp(),
      data,
    },
    { title },
  );
}

const postData = t.Object({ post: postSchema });

const EVENT_BODIES: Record<EventType, { title: string; summary: string; data: TSchema }> = {
  "post.published": { title: "PostPublishedEvent", summary: "Every target of a post published", data: postData },
  "post.failed": { title: "PostFailedEvent", summary: "Every target of a post failed", data: postData },
  "post.partially_failed": { title: "PostPartiallyFailedEvent", summary: "Some targets of a post published, others failed", data: postData },
  "post.unconfirmed": {
    title: "PostUnconfirmedEvent",
    summary:
      "A network's answer to a post was lost and nothing can tell whether it went out (Telegram, a Discord webhook): the post is unconfirmed, sent no more on its own, until a person answers \"It was posted\" or \"Send again\" (POST /api/v1/schedule/{id}/targets/{accountId}/resolve)",
    data: postData,
  },
  "post.cancelled": {
    title: "PostCancelledEvent",
    summary: "A post was cancelled (DELETE /api/v1/schedule/{id})",
    data: t.Object({ post: postSchema, providerPostWithdrawn: t.Boolean({ description: "A network held the post and it was withdrawn there." }) }),
  },
  "post.needs_approval": {
    title: "PostNeedsApprovalEvent",
    summary: "An editor's post waits for an owner's approval (the account requires approval; the post is pending_approval)",
    data: postData,
  },
  "post.approved": { title: "PostApprovedEvent", summary: "An owner approved a waiting post; it is scheduled and goes out at its time", data: postData },
  "post.rejected": {
    title: "PostRejectedEvent",
    summary: 'An owner rejected a waiting post; it is failed with errorMessage "Rejected: <note>"',
    data: t.Object({ post: postSchema, note: t.String({ description: "The owner's note (\"no note given.\" when none)." }) }),
  },
  "creation.generated": {
    title: "CreationGeneratedEvent",
    summary: "A creation was generated or regenerated",
    data: t.Object({
      creation: creationSchema,
      creditsCharged: integer({ minimum: 0 }),
      operation: t.UnionEnum(["generate", "regenerate"]),
    }),
  },
  "connection.needs_attention": {
    title: "ConnectionNeedsAttentionEvent",
    summary: "A connection stopped being ready to post (its network refused the credentials, or the sign-in is gone)",
    data: t.Object({
      accountId: t.String({ description: "The connection's id (a target's accountId)." }),
      platform: t.String(),
      label: t.String(),
      blockedReason: t.Union([t.String(), t.Null()], { description: "What to fix, in plain words." }),
    }),
  },
  "credits.low": {
    title: "CreditsLowEvent",
    summary: `A charge took the balance under ${LOW_CREDITS_THRESHOLD}`,
    data: t.Object({
      balance: integer({ description: "The balance after the charge." }),
      reserved: integer({ minimum: 0, description: "Credits held by work in progress." }),
      threshold: integer({ description: "The threshold crossed." }),
    }),
  },
};

const EVENT_SIGNING =
  "Signed with the secret POST /api/v1/webhooks showed once: `X-Seedcast-Signature: sha256=<hex HMAC-SHA256 of the raw body under the secret>` " +
  "and the Standard Webhooks headers, keyed by the `whsec_` secret's base64-decoded bytes (a Standard Webhooks library takes the secret as shown). " +
  "Answer 2xx; anything else is retried with backoff, 5 attempts in all.";

const TARGET_SIGNING =
  "Signed with the connection's signing secret: `X-Seedcast-Signature: sha256=<hex HMAC-SHA256 of the raw body under the secret>` " +
  "and the Standard Webhooks headers, keyed by the secret's UTF-8 bytes (a Standard Webhooks library's raw-secret option). Answer 2xx.";

const targetImage = t.Object({
  assetId: uuid({ description: "The library asset." }),
  url: t.String({ description: "The image's public URL (/media/…)." }),
  mimeType: t.String(),
  altText: orNull(t.String()),
});

const targetPost = t.Object(
  {
    event: t.Literal(WEBHOOK_EVENTS.publish),
    post: t.Object({
      id: uuid({ description: "The scheduled post's id." }),
      targetId: uuid({ description: "This target's id: also `webhook-id` and `Idempotency-Key`; a repeat delivery carries the same id." }),
      scheduledTime: timestamp(),
      caption: t.String(),
      altText: orNull(t.String()),
      imageUrl: orNull(t.String({ description: "The image's public URL (/media/…), or null for a text-only post." })),
      imageMimeType: orNull(t.String()),
      images: t.Array(targetImage, { maxItems: MAX_IMAGES, description: "Every image in order (the first is also imageUrl/altText/imageMimeType)." }),
      thread: t.Array(t.Object({ caption: t.String(), images: t.Array(targetImage, { maxItems: MAX_IMAGES }) }), {
        maxItems: MAX_THREAD_PARTS,
        description: "The thread's follow-up parts, in order; [] when none.",
      }),
      firstComment: orNull(t.String({ description: "The text to post as the first comment, or null." })),
    }),
    sentAt: timestamp(),
  },
  { title: "TargetPostDelivery" },
);

const targetPing = t.Object({ event: t.Literal(WEBHOOK_EVENTS.ping), sentAt: timestamp() }, { title: "TargetPing" });

/** Every delivery Seedcast makes to a receiver, in the order the document lists them. */
export const DELIVERY_DOCS: readonly DeliveryDoc[] = [
  ...EVENT_TYPES.map((type) => {
    const e = EVENT_BODIES[type];
    return { name: type, summary: e.summary, description: EVENT_SIGNING, receiver: "event-webhook" as const, body: eventEnvelope(type, e.title, e.data) };
  }),
  {
    name: "target.post.publish",
    summary: "A webhook publishing target receives a post at its scheduled time",
    description: TARGET_SIGNING,
    receiver: "publishing-target",
    body: targetPost,
  },
  {
    name: "target.ping",
    summary: "A webhook publishing target's credential check (at connect and every 30 minutes)",
    description: TARGET_SIGNING,
    receiver: "publishing-target",
    body: targetPing,
  },
];
