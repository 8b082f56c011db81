/**
 * Discord channels through a webhook URL (decisions.md §12). A post is one message (caption and up to 10 images, alt
 * text as each attachment's description); thread parts are the following messages, each saved as a part the moment
 * Discord answers it, so a retry resumes after what is out. `?wait=true` makes a success a stored message with an id.
 * A webhook that answered nothing (a timeout after sending, a crash mid-send) cannot be asked what it stored: the
 * target becomes `unconfirmed` (recovery), never resent on its own. Withdraw deletes the message.
 */
import type { Deps } from "../../../deps";
import { MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import { fitImageUnderBytes } from "../../../lib/image-fit";
import type { OpenConnection } from "../../../store/connections";
import {
  type CheckResult,
  type Connector,
  type DeliveryContext,
  type DeliveryImage,
  type DeliveryResult,
  DeliveryError,
  LIBRARY_IMAGE_TYPES,
} from "../../connector";
import { failureKindOf } from "../../outbound";
import {
  DISCORD_WEBHOOKS,
  type DiscordFailure,
  type DiscordFile,
  type DiscordWebhook,
  INVALID_WEBHOOK_TOKEN,
  UNKNOWN_WEBHOOK,
  deleteWebhookMessage,
  executeWebhook,
  getWebhook,
  isFailure,
} from "./client";

/** Discord's message length (IncomingWebhookRequestPartial.content maxLength). */
export const DISCORD_MAX_CHARACTERS = 2000;
/** Attachments per message (IncomingWebhookRequestPartial.attachments maxItems). */
export const DISCORD_MAX_IMAGES = 10;
/** Discord's upload limit for a server without boosts: 10 MiB per message, all files together. */
const DISCORD_UPLOAD_BYTES = 10 * 1024 * 1024;
const NAME = "Discord";
const FIX_URL =
  "In Discord, open the channel's settings → Integrations → Webhooks, copy the webhook's URL again (or create a new webhook) and update this connection.";

/** The webhook of a stored connection: its id from the endpoint, its token from the sealed credentials. */
export function webhookOf(connection: Pick<OpenConnection, "endpoint" | "credentials">): DiscordWebhook {
  return { id: connection.endpoint.slice(DISCORD_WEBHOOKS.length + 1), token: connection.credentials.token ?? "" };
}

/** The endpoint stored for a webhook: no token in it. */
export function webhookEndpoint(webhook: DiscordWebhook): string {
  return `${DISCORD_WEBHOOKS}/${webhook.id}`;
}

/** True when Discord's refusal means the webhook itself is gone or its token wrong. */
function webhookGone(failure: DiscordFailure): boolean {
  return failure.code === UNKNOWN_WEBHOOK || failure.code === INVALID_WEBHOOK_TOKEN || failure.status === 401 || failure.status === 404;
}

/** A refusal as the dispatcher's error: a gone webhook is the connection's trouble (auth), 429/5xx transient. */
function deliveryError(failure: DiscordFailure, what: string): DeliveryError {
  if (webhookGone(failure)) return new DeliveryError("auth", `Discord no longer accepts this webhook (${failure.message}). ${FIX_URL}`);
  const kind = failureKindOf(failure.status);
  const wait = failure.retryAfter === null ? "" : ` (retry after ${Math.ceil(failure.retryAfter)} s)`;
  return new DeliveryError(kind === "auth" ? "permanent" : kind, `Discord refused the ${what}: ${failure.message}${wait}`);
}

/** The files of one message, each under its share of the upload limit, named and described. */
async function filesOf(images: readonly DeliveryImage[]): Promise<DiscordFile[]> {
  const share = Math.floor(DISCORD_UPLOAD_BYTES / Math.max(1, images.length)) - 4096;
  return Promise.all(
    images.map(async (image, n) => {
      const fitted = await fitImageUnderBytes(image.bytes, image.mimeType, share).catch((error: Error) => {
        throw new DeliveryError("permanent", `An image could not be prepared for Discord: ${error.message}`);
      });
      const ext = fitted.mimeType.split("/")[1] ?? "bin";
      return { bytes: fitted.bytes, mimeType: fitted.mimeType, fileName: `image-${n + 1}.${ext}`, description: image.altText };
    }),
  );
}

/** https://discord.com/channels/<server>/<channel>/<message>, when the check learnt the server. */
function messageUrl(connection: OpenConnection, channelId: string, messageId: string): string | null {
  const guild = connection.meta.discordGuildId;
  return guild ? `https://discord.com/channels/${guild}/${channelId}/${messageId}` : null;
}

/** The Discord connector. */
export const discordConnector: Connector = {
  platform: "discord",
  captionLimit: () => ({ maxGraphemes: DISCORD_MAX_CHARACTERS, platformName: NAME }),
  capabilities: () => ({
    name: NAME,
    maxImages: DISCORD_MAX_IMAGES,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: false,
    requiresImage: false,
    imageTypes: LIBRARY_IMAGE_TYPES,
  }),
  holdsNatively: () => false,
  reconcileProvesAbsence: false,
  recovery: "unconfirmed",

  async check(deps: Deps, connection: OpenConnection): Promise<CheckResult> {
    try {
      const answer = await getWebhook(deps, webhookOf(connection));
      if (isFailure(answer)) {
        if (webhookGone(answer)) {
          // Discord does not know it: nothing to connect (refused, not stored half-working).
          return { ready: false, fix: "credentials", notThisNetwork: true, blockedReason: `Discord does not know this webhook (${answer.message}). ${FIX_URL}` };
        }
        return { ready: false, fix: "credentials", blockedReason: `Discord could not confirm the webhook: ${answer.message}` };
      }
      if (!answer.channel_id) {
        return { ready: false, fix: "credentials", notThisNetwork: true, blockedReason: `This webhook does not post to a channel. ${FIX_URL}` };
      }
      const meta = { ...connection.meta, discordChannelId: answer.channel_id, ...(answer.guild_id ? { discordGuildId: answer.guild_id } : {}) };
      return { ready: true, blockedReason: null, label: answer.name, meta };
    } catch (error) {
      return { ready: false, fix: "credentials", blockedReason: `Discord could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const webhook = webhookOf(connection);
    const parts = [{ caption: content.caption, images: content.images }, ...content.thread];
    let first: { id: string; url: string | null } | null = null;
    for (let index = 0; index < parts.length; index++) {
      const done = ctx.partsOut[index];
      if (done !== undefined) {
        if (index === 0) first = { id: done, url: messageUrl(connection, connection.meta.discordChannelId ?? "", done) };
        continue;
      }
      const part = parts[index]!;
      const answer = await executeWebhook(deps, webhook, part.caption, await filesOf(part.images));
      if (isFailure(answer)) {
        const error = deliveryError(answer, index === 0 ? "message" : `message ${index + 1} of ${parts.length}`);
        throw index === 0 ? error : new DeliveryError(error.kind, `${index} of ${parts.length} messages went out: ${error.message}`);
      }
      await ctx.savePartOut(index, answer.id);
      if (index === 0) first = { id: answer.id, url: messageUrl(connection, answer.channel_id, answer.id) };
    }
    if (!first) throw new DeliveryError("permanent", "Nothing to send.");
    return { kind: "published", providerPostId: first.id, publishedUrl: first.url };
  },

  // Never asked: recovery "unconfirmed" (a webhook cannot list what it sent). Null proves nothing (cancel waits).
  reconcile: async () => null,

  async withdraw(deps, connection, providerPostId): Promise<boolean> {
    const answer = await deleteWebhookMessage(deps, webhookOf(connection), providerPostId);
    if (typeof answer === "boolean") return answer;
    const error = deliveryError(answer, "deletion");
    throw new DeliveryError(error.kind === "permanent" ? "transient" : error.kind, error.message);
  },
};
