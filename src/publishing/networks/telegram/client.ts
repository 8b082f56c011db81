/**
 * Telegram's Bot API (https://core.telegram.org/bots/api): every method is `POST https://api.telegram.org/bot<token>/
 * <method>`, JSON or multipart/form-data, answering `{ok, result}` or `{ok: false, error_code, description}`. Photos
 * are uploaded as multipart files ("Sending files", #sending-files), so no public URL is needed; several become a
 * media group whose `media` items point at `attach://<name>` fields (#sendmediagroup). The token sits in the URL
 * path: it is never put into an error or a log line (the outbound layer names the host only). Every call goes
 * through the outbound layer, so PLATFORM_ORIGIN_OVERRIDES applies.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { type MultipartPart, providerFetch } from "../../outbound";
import type { ChatFullInfo, ChatMember, InputMediaPhoto, Message, TelegramAnswer, TelegramError, User } from "./types";

/** The Bot API's address; a stored connection's endpoint. */
export const TELEGRAM_API = "https://api.telegram.org";

/** A bot token as @BotFather hands it out: `<bot id>:<secret>`. */
const BOT_TOKEN = /^[0-9]{5,16}:[A-Za-z0-9_-]{30,64}$/;
/** A chat: `@channelname` (5–32 of letters, digits, underscores) or a numeric id (channels: -100…). */
const CHAT = /^(?:@[A-Za-z][A-Za-z0-9_]{3,31}|-?[0-9]{1,20})$/;

/** Why a pasted bot token cannot be one, or null. */
export function botTokenProblem(raw: string): string | null {
  if (raw.trim() === "") return "Paste the bot token @BotFather gave you.";
  return BOT_TOKEN.test(raw.trim())
    ? null
    : "This is not a bot token. In Telegram, open @BotFather, send /mybots, choose your bot, then \"API Token\"; it looks like 123456789:AAE….";
}

/** The chat as Telegram takes it (`@name` or a numeric id; a t.me link or a bare name is accepted), or why not. */
export function normalizeChat(raw: string): string | { problem: string } {
  let chat = raw.trim().replace(/^https?:\/\/(?:www\.)?(?:t|telegram)\.me\//i, "").replace(/\/+$/, "");
  if (chat !== "" && /^[A-Za-z]/.test(chat)) chat = `@${chat}`;
  if (CHAT.test(chat)) return chat;
  return {
    problem:
      chat === ""
        ? "Enter the channel: its @name, or its numeric id for a private channel."
        : "This is not a channel name or id: enter the channel's @name (as in t.me/name), or its numeric id (such as -1001234567890) for a private channel.",
  };
}

/** A failed call: the status and Telegram's own words. */
export interface TelegramFailure {
  status: number;
  description: string;
  retryAfter: number | null;
}

/** True when `value` is a failure rather than Telegram's result. */
export function isFailure(value: unknown): value is TelegramFailure {
  return value !== null && typeof value === "object" && "description" in value && "retryAfter" in value;
}

async function call<T>(deps: Pick<Deps, "config">, token: string, method: string, body: Record<string, unknown> | MultipartPart[]): Promise<T | TelegramFailure> {
  const url = `${TELEGRAM_API}/bot${token}/${method}`;
  const res = await redacted(token, () =>
    Array.isArray(body)
      ? providerFetch(deps, url, { method: "POST", body })
      : providerFetch(deps, url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  );
  const text = await res.text().catch(() => "");
  let answer: TelegramAnswer<T> | null = null;
  try {
    answer = JSON.parse(text) as TelegramAnswer<T>;
  } catch {
    // not JSON (a proxy's page): the status speaks
  }
  if (answer?.ok === true && res.status === 200) return answer.result;
  // A success whose answer could not be read, or a server error: Telegram may have acted on it, and cannot be asked.
  if (res.status === 200 || res.status >= 500) {
    throw new DeliveryError("unknown", `Telegram's answer to ${method} could not be read (HTTP ${res.status}${answer === null ? ", not JSON" : ""}).`);
  }
  const error = answer as TelegramError | null;
  return {
    status: error?.error_code ?? res.status,
    description: typeof error?.description === "string" ? error.description : `HTTP ${res.status}`,
    retryAfter: error?.parameters?.retry_after ?? null,
  };
}

/** Runs `send`; a failure's message never carries the token (it is in the URL's path). */
async function redacted<T>(token: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof DeliveryError && token !== "" && error.message.includes(token)) {
      throw new DeliveryError(error.kind, error.message.replaceAll(token, "<bot token>"));
    }
    throw error;
  }
}

/** #getme: the bot itself. */
export function getMe(deps: Pick<Deps, "config">, token: string): Promise<User | TelegramFailure> {
  return call<User>(deps, token, "getMe", {});
}

/** #getchat */
export function getChat(deps: Pick<Deps, "config">, token: string, chat: string): Promise<ChatFullInfo | TelegramFailure> {
  return call<ChatFullInfo>(deps, token, "getChat", { chat_id: chat });
}

/** #getchatmember */
export function getChatMember(deps: Pick<Deps, "config">, token: string, chat: string, userId: number): Promise<ChatMember | TelegramFailure> {
  return call<ChatMember>(deps, token, "getChatMember", { chat_id: chat, user_id: userId });
}

/** One photo to upload. */
export interface TelegramPhoto {
  bytes: Uint8Array;
  mimeType: string;
  fileName: string;
}

/**
 * Sends one part: text alone (#sendmessage), one photo with its caption (#sendphoto), or 2–10 photos as a media
 * group with the caption on the first (#sendmediagroup). Answers the message ids, in order.
 */
export async function sendPart(
  deps: Pick<Deps, "config">,
  token: string,
  chat: string,
  caption: string,
  photos: readonly TelegramPhoto[],
): Promise<number[] | TelegramFailure> {
  if (photos.length === 0) {
    const sent = await call<Message>(deps, token, "sendMessage", { chat_id: chat, text: caption });
    return isFailure(sent) ? sent : [sent.message_id];
  }
  if (photos.length === 1) {
    const photo = photos[0]!;
    const form: MultipartPart[] = [
      { name: "chat_id", value: chat },
      { name: "photo", fileName: photo.fileName, type: photo.mimeType, bytes: photo.bytes },
    ];
    if (caption !== "") form.push({ name: "caption", value: caption });
    const sent = await call<Message>(deps, token, "sendPhoto", form);
    return isFailure(sent) ? sent : [sent.message_id];
  }
  const media: InputMediaPhoto[] = photos.map((_, n) => ({ type: "photo", media: `attach://photo${n}`, ...(n === 0 && caption !== "" ? { caption } : {}) }));
  const form: MultipartPart[] = [
    { name: "chat_id", value: chat },
    { name: "media", value: JSON.stringify(media) },
    ...photos.map((p, n) => ({ name: `photo${n}`, fileName: p.fileName, type: p.mimeType, bytes: p.bytes })),
  ];
  const sent = await call<Message[]>(deps, token, "sendMediaGroup", form);
  return isFailure(sent) ? sent : sent.map((m) => m.message_id);
}

/** #deletemessages: true when Telegram deleted them. */
export async function deleteMessages(deps: Pick<Deps, "config">, token: string, chat: string, ids: readonly number[]): Promise<boolean | TelegramFailure> {
  return call<boolean>(deps, token, "deleteMessages", { chat_id: chat, message_ids: ids });
}
