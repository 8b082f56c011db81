/**
 * The few Telegram Bot API types the client uses, hand-typed from test/peers/platform-specs/telegram-bot-api.json
 * (Bot API 10.1, a faithful scrape of https://core.telegram.org/bots/api, PaulSonOfLars/telegram-bot-api-spec): each
 * interface names the type it follows and keeps only the fields Seedcast reads or sends, with the page's names and
 * optionality ("Integer" → number, "Boolean" → boolean). The description is not OpenAPI, so no generator applies;
 * test/peers/telegram/ validates every request against it.
 */

/** https://core.telegram.org/bots/api#making-requests: every answer. */
export type TelegramAnswer<T> = { ok: true; result: T; description?: string } | TelegramError;

/** An unsuccessful answer: `ok` false, `error_code`, `description`, and ResponseParameters when given. */
export interface TelegramError {
  ok: false;
  error_code: number;
  description: string;
  parameters?: ResponseParameters;
}

/** #responseparameters */
export interface ResponseParameters {
  migrate_to_chat_id?: number;
  retry_after?: number;
}

/** #user */
export interface User {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

/** #chatpermissions (the field a member's right to send depends on in groups). */
export interface ChatPermissions {
  can_send_messages?: boolean;
  can_send_photos?: boolean;
}

/** #chatfullinfo (getChat's answer). */
export interface ChatFullInfo {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  username?: string;
  permissions?: ChatPermissions;
}

/** #chatmember: one of ChatMemberOwner, …Administrator, …Member, …Restricted, …Left, …Banned, by `status`. */
export type ChatMember =
  | { status: "creator"; user: User }
  | { status: "administrator"; user: User; can_post_messages?: boolean }
  | { status: "member"; user: User }
  | { status: "restricted"; user: User; is_member: boolean; can_send_messages: boolean; can_send_photos: boolean }
  | { status: "left"; user: User }
  | { status: "kicked"; user: User };

/** #message (the fields Seedcast reads). */
export interface Message {
  message_id: number;
  date: number;
  chat: { id: number; type: string; username?: string };
}

/** #inputmediaphoto: one photo of a media group; `media` is `attach://<field name>` for an upload. */
export interface InputMediaPhoto {
  type: "photo";
  media: string;
  caption?: string;
}
