/**
 * Webhook connections: one JSON delivery per target carrying everything (caption, every image, the thread, the first
 * comment; today's first-image fields too), signed with HMAC-SHA256 over the raw body (`X-Seedcast-Signature:
 * sha256=<hex>`, plus `X-Seedcast-Timestamp` in Unix seconds), with the target id as `Idempotency-Key` so a receiver
 * can absorb the repeat a crash may cause. The credential check is a signed `ping` answered 2xx.
 *
 * Every delivery also carries the Standard Webhooks headers (decisions.md §10; lib/standard-webhooks.ts), with the
 * Idempotency-Key as `webhook-id`: a target's typed secret is its UTF-8 bytes there (the libraries' raw-secret option).
 */
import { createHmac } from "node:crypto";
import { isoAt } from "../lib/clock";
import { keyOfRawSecret, standardWebhookHeaders } from "../lib/standard-webhooks";
import type { CheckResult, Connector, DeliveryContext, DeliveryImage, DeliveryResult, NetworkCapabilities } from "./connector";
import type { OpenConnection } from "../store/connections";
import { DeliveryError, LIBRARY_IMAGE_TYPES } from "./connector";
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../db/schema/post-content";
import { failureKindOf, outboundProblem, providerFetch, providerMessage } from "./outbound";

export const WEBHOOK_SIGNATURE_HEADER = "X-Seedcast-Signature";
export const WEBHOOK_TIMESTAMP_HEADER = "X-Seedcast-Timestamp";
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const WEBHOOK_EVENTS = { ping: "ping", publish: "post.publish" } as const;
const USER_AGENT = "Seedcast-Webhook/1";
/** A webhook takes everything: its payload carries the images, the thread and the first comment (decisions.md §13). */
const WEBHOOK_CAPABILITIES: NetworkCapabilities = {
  name: "Webhook",
  maxImages: MAX_IMAGES,
  maxThreadParts: MAX_THREAD_PARTS,
  firstComment: true,
  requiresImage: false,
  imageTypes: LIBRARY_IMAGE_TYPES,
};

/** `sha256=<hex HMAC-SHA256 of rawBody under secret>`. */
export function webhookSignature(rawBody: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}

/** A signing secret as its owner holds it, and the Standard Webhooks HMAC key it stands for. */
export interface SigningSecret {
  /** The secret itself: the X-Seedcast-Signature HMAC key (its UTF-8 bytes). */
  secret: string;
  /** The key of `webhook-signature`. */
  standardKey: Uint8Array;
}

/**
 * POSTs `rawBody` (JSON) to `url` signed under `signing`, with `idempotencyKey` (also the Standard Webhooks
 * `webhook-id`), through the outbound door (providerFetch: SSRF rules, classified failures). Shared by webhook
 * connections and event webhooks (§10), so both are signed exactly alike; one timestamp serves both header sets.
 */
export async function postSigned(
  deps: Pick<DeliveryContext["deps"], "config" | "clock">,
  url: string,
  signing: SigningSecret,
  rawBody: string,
  idempotencyKey: string,
): Promise<Response> {
  const timestamp = Math.floor(deps.clock.now() / 1000);
  return providerFetch(deps, url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": USER_AGENT,
      [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
      [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(rawBody, signing.secret),
      [IDEMPOTENCY_HEADER]: idempotencyKey,
      ...standardWebhookHeaders(signing.standardKey, idempotencyKey, timestamp, rawBody),
    },
    body: rawBody,
  });
}

async function send(ctxDeps: DeliveryContext["deps"], connection: OpenConnection, body: unknown, idempotencyKey: string): Promise<Response> {
  const secret = connection.credentials.secret ?? "";
  return postSigned(ctxDeps, connection.endpoint, { secret, standardKey: keyOfRawSecret(secret) }, JSON.stringify(body), idempotencyKey);
}

/** An image as the delivery payload carries it. */
function imageOf(image: DeliveryImage): { assetId: string; url: string; mimeType: string; altText: string | null } {
  return { assetId: image.assetId, url: image.url, mimeType: image.mimeType, altText: image.altText };
}

/** The webhook connector. */
export const webhookConnector: Connector = {
  platform: "webhook",
  captionLimit: () => null,
  capabilities: () => WEBHOOK_CAPABILITIES,
  reconcileProvesAbsence: false,
  holdsNatively: () => false,

  async check(deps, connection): Promise<CheckResult> {
    const problem = outboundProblem(deps, connection.endpoint);
    if (problem !== null) return { ready: false, fix: "address", blockedReason: `The webhook URL cannot be used: ${problem}` };
    try {
      const res = await send(deps, connection, { event: WEBHOOK_EVENTS.ping, sentAt: isoAt(deps.clock.now()) }, `ping-${crypto.randomUUID()}`);
      if (res.ok) {
        await res.body?.cancel();
        return { ready: true, blockedReason: null };
      }
      const message = await providerMessage(res);
      if (res.status === 401 || res.status === 403) {
        return { ready: false, fix: "credentials", blockedReason: `The webhook receiver refused the signed ping (${message}). Check that it uses the same signing secret.` };
      }
      return { ready: false, fix: "address", blockedReason: `The webhook receiver answered the signed ping with ${message}. It must answer 2xx.` };
    } catch (error) {
      return { ready: false, fix: "address", blockedReason: `The webhook receiver could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { content } = ctx;
    const body = {
      event: WEBHOOK_EVENTS.publish,
      post: {
        id: content.postId,
        targetId: ctx.targetId,
        scheduledTime: isoAt(content.scheduledTime),
        caption: content.caption,
        altText: content.images[0]?.altText ?? null,
        imageUrl: content.images[0]?.url ?? null,
        imageMimeType: content.images[0]?.mimeType ?? null,
        images: content.images.map(imageOf),
        thread: content.thread.map((part) => ({ caption: part.caption, images: part.images.map(imageOf) })),
        firstComment: content.firstComment,
      },
      sentAt: isoAt(ctx.deps.clock.now()),
    };
    const res = await send(ctx.deps, ctx.connection, body, ctx.targetId);
    if (res.ok) {
      await res.body?.cancel();
      return { kind: "published", providerPostId: ctx.targetId, publishedUrl: null };
    }
    const message = await providerMessage(res);
    throw new DeliveryError(failureKindOf(res.status), `The webhook receiver answered ${message}`);
  },

  // A webhook has no read-back: resending with the same Idempotency-Key is the reconciliation (the receiver
  // answers the repeat without a second effect).
  reconcile: async () => null,

  // The service holds webhook posts until their time: nothing to withdraw at the receiver.
  withdraw: async () => false,
};
