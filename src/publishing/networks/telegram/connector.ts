/**
 * Telegram channels and groups through a bot (decisions.md §12). The check confirms the bot may post there (an
 * administrator with "Post messages" in a channel; allowed to send in a group) and otherwise says what to do. A post
 * is one message (text, one photo, or a media group of 2–10 photos with the caption on the first); thread parts are
 * the following messages, each saved as a part the moment Telegram answers it. Captions: 1,024 characters with media,
 * 4,096 without. Telegram cannot be asked whether a send took effect, so an unknown outcome is `unconfirmed`
 * (recovery), never resent on its own.
 */
import type { Deps } from "../../../deps";
import { MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import { fitImageUnderBytes } from "../../../lib/image-fit";
import type { OpenConnection } from "../../../store/connections";
import { type CheckResult, type Connector, type DeliveryContext, type DeliveryImage, type DeliveryResult, DeliveryError } from "../../connector";
import { failureKindOf } from "../../outbound";
import { type TelegramFailure, type TelegramPhoto, deleteMessages, getChat, getChatMember, getMe, isFailure, sendPart } from "./client";
import type { ChatFullInfo, ChatMember } from "./types";

/** #sendmessage: text 1–4096 characters; #sendphoto / #sendmediagroup: caption 0–1024. */
export const TELEGRAM_TEXT_MAX = 4096;
export const TELEGRAM_CAPTION_MAX = 1024;
/** #sendmediagroup: 2–10 items. */
export const TELEGRAM_MAX_IMAGES = 10;
/** #sendphoto: "The photo must be at most 10 MB in size." */
const PHOTO_MAX_BYTES = 10 * 1000 * 1000;
/** Photos: JPEG, PNG or WebP go as photos (a GIF would become an animation, another kind of message). */
const PHOTO_TYPES = ["image/jpeg", "image/png", "image/webp"] as const;
const NAME = "Telegram";

function tokenOf(connection: Pick<OpenConnection, "credentials">): string {
  return connection.credentials.botToken ?? "";
}

function chatOf(connection: Pick<OpenConnection, "credentials" | "meta">): string {
  return connection.meta.telegramChatId ?? connection.credentials.chat ?? "";
}

/** How the bot is named to a person: @name when Telegram told us, else "your bot". */
function botName(username: string | undefined): string {
  return username ? `@${username}` : "your bot";
}

/** Why the bot may not post in `chat` as `member`, in words that say what to do; null when it may. */
export function postingProblem(chat: ChatFullInfo, member: ChatMember, bot: string): string | null {
  const where = chat.username ? `@${chat.username}` : `"${chat.title ?? chat.id}"`;
  if (chat.type === "channel") {
    if (member.status === "creator") return null;
    if (member.status === "administrator") {
      return member.can_post_messages === true
        ? null
        : `${bot} is an administrator of ${where} but may not post: in the channel's settings → Administrators → ${bot}, turn on "Post messages".`;
    }
    return `Add ${bot} to the channel ${where} as an administrator with "Post messages" (channel settings → Administrators → Add Admin).`;
  }
  if (chat.type === "group" || chat.type === "supergroup") {
    if (member.status === "creator" || member.status === "administrator") return null;
    if (member.status === "member" && chat.permissions?.can_send_messages !== false) return null;
    if (member.status === "restricted" && member.is_member && member.can_send_messages) return null;
    return member.status === "left" || member.status === "kicked"
      ? `Add ${bot} to the group ${where}, then check again.`
      : `${bot} may not send messages in ${where}: make it an administrator of the group, or allow members to send messages.`;
  }
  return `${where} is a private chat with a person: enter a channel or a group.`;
}

function failureWords(failure: TelegramFailure): string {
  return failure.description.replace(/^Bad Request: /, "");
}

/** A refusal as the dispatcher's error: 401/403 the connection's trouble, 429/5xx transient, other 4xx permanent. */
function deliveryError(failure: TelegramFailure, what: string): DeliveryError {
  const kind = failureKindOf(failure.status);
  const wait = failure.retryAfter === null ? "" : ` (retry after ${failure.retryAfter} s)`;
  if (kind === "auth") {
    return new DeliveryError("auth", `Telegram refused the bot (${failure.description}): check that the bot token is current and the bot is still an administrator allowed to post.`);
  }
  return new DeliveryError(kind, `Telegram refused the ${what}: ${failureWords(failure)}${wait}`);
}

async function photosOf(images: readonly DeliveryImage[]): Promise<TelegramPhoto[]> {
  return Promise.all(
    images.map(async (image, n) => {
      const fitted = await fitImageUnderBytes(image.bytes, image.mimeType, PHOTO_MAX_BYTES).catch((error: Error) => {
        throw new DeliveryError("permanent", `An image could not be prepared for Telegram: ${error.message}`);
      });
      const ext = fitted.mimeType.split("/")[1] ?? "bin";
      return { bytes: fitted.bytes, mimeType: fitted.mimeType, fileName: `image-${n + 1}.${ext}` };
    }),
  );
}

/** https://t.me/<channel>/<id> for a public chat, https://t.me/c/<internal id>/<id> for a private channel or supergroup. */
function messageUrl(connection: OpenConnection, messageId: string): string | null {
  const username = connection.meta.telegramChatUsername;
  if (username) return `https://t.me/${username}/${messageId}`;
  const id = connection.meta.telegramChatId ?? "";
  return id.startsWith("-100") ? `https://t.me/c/${id.slice(4)}/${messageId}` : null;
}

/** The Telegram connector. */
export const telegramConnector: Connector = {
  platform: "telegram",
  captionLimit: (_connection, content) => ({
    maxGraphemes: content !== undefined && content.images === 0 ? TELEGRAM_TEXT_MAX : TELEGRAM_CAPTION_MAX,
    platformName: NAME,
  }),
  capabilities: () => ({
    name: NAME,
    maxImages: TELEGRAM_MAX_IMAGES,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: false,
    requiresImage: false,
    imageTypes: PHOTO_TYPES,
  }),
  holdsNatively: () => false,
  reconcileProvesAbsence: false,
  recovery: "unconfirmed",

  async check(deps: Deps, connection: OpenConnection): Promise<CheckResult> {
    const token = tokenOf(connection);
    const chat = connection.credentials.chat ?? "";
    try {
      const bot = await getMe(deps, token);
      if (isFailure(bot)) {
        if (bot.status === 401 || bot.status === 404) {
          return {
            ready: false,
            fix: "credentials",
            notThisNetwork: true,
            blockedReason: "Telegram does not accept this bot token. In @BotFather, send /mybots, choose your bot, then \"API Token\", and paste the token again.",
          };
        }
        return { ready: false, fix: "credentials", blockedReason: `Telegram could not confirm the bot: ${failureWords(bot)}` };
      }
      const name = botName(bot.username);
      const info = await getChat(deps, token, chat);
      if (isFailure(info)) {
        const words =
          info.status === 400 || info.status === 403
            ? `Telegram cannot find ${chat} for ${name} (${failureWords(info)}). Check the channel's @name, and add ${name} to the channel as an administrator with "Post messages".`
            : `Telegram could not look up ${chat}: ${failureWords(info)}`;
        return { ready: false, fix: "address", blockedReason: words };
      }
      const member = await getChatMember(deps, token, String(info.id), bot.id);
      if (isFailure(member)) {
        return {
          ready: false,
          fix: "address",
          blockedReason: `Telegram would not say whether ${name} may post in ${chat} (${failureWords(member)}). Add ${name} to the channel as an administrator with "Post messages".`,
        };
      }
      const meta = {
        ...connection.meta,
        telegramChatId: String(info.id),
        telegramChatType: info.type,
        ...(info.username ? { telegramChatUsername: info.username } : {}),
        ...(bot.username ? { telegramBotUsername: bot.username } : {}),
      };
      const label = info.username ? `@${info.username}` : (info.title ?? chat);
      const problem = postingProblem(info, member, name);
      if (problem !== null) return { ready: false, fix: "address", blockedReason: problem, label, meta };
      return { ready: true, blockedReason: null, label, meta };
    } catch (error) {
      return { ready: false, fix: "credentials", blockedReason: `Telegram could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const token = tokenOf(connection);
    const chat = chatOf(connection);
    const parts = [{ caption: content.caption, images: content.images }, ...content.thread];
    let first = ctx.partsOut[0];
    for (let index = ctx.partsOut.length; index < parts.length; index++) {
      const part = parts[index]!;
      const sent = await sendPart(deps, token, chat, part.caption, await photosOf(part.images));
      if (isFailure(sent)) {
        const error = deliveryError(sent, index === 0 ? "message" : `message ${index + 1} of ${parts.length}`);
        throw index === 0 ? error : new DeliveryError(error.kind, `${index} of ${parts.length} messages went out: ${error.message}`);
      }
      // A media group is several messages: the part's id lists them all (withdraw deletes them together).
      await ctx.savePartOut(index, sent.join(","));
      if (index === 0) first = sent.join(",");
    }
    if (first === undefined) throw new DeliveryError("permanent", "Nothing to send.");
    return { kind: "published", providerPostId: first, publishedUrl: messageUrl(connection, first.split(",")[0] ?? first) };
  },

  // Never asked: recovery "unconfirmed" (the Bot API cannot tell whether a send took effect). Null proves nothing.
  reconcile: async () => null,

  async withdraw(deps, connection, providerPostId): Promise<boolean> {
    const ids = providerPostId.split(",").map(Number).filter(Number.isInteger);
    const answer = await deleteMessages(deps, tokenOf(connection), chatOf(connection), ids);
    if (answer === true) return true;
    if (answer === false) return false;
    if (answer.status === 400) return false; // "message to delete not found"
    const error = deliveryError(answer, "deletion");
    throw new DeliveryError(error.kind === "permanent" ? "transient" : error.kind, error.message);
  },
};
