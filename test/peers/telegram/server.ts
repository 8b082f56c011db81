/**
 * A Telegram Bot API stand-in, written from the Bot API page (https://core.telegram.org/bots/api) and held to its
 * description (test/peers/platform-specs/telegram-bot-api.json, through ./spec.ts), never from Seedcast's client:
 *  - #making-requests: `POST /bot<token>/<method>`, JSON or multipart/form-data; answers `{ok: true, result}` or
 *    `{ok: false, error_code, description, parameters?}`; 401 Unauthorized for a token it does not know
 *  - #getme, #getchat (ChatFullInfo), #getchatmember (ChatMember: owner, administrator with can_post_messages, member…)
 *  - #sendmessage (text 1–4096 characters), #sendphoto (caption 0–1024, photo at most 10 MB), #sendmediagroup (2–10
 *    items, each `attach://<name>` naming a multipart file, the caption on the first), #deletemessages
 *  - #sending-files: a file is uploaded as multipart/form-data; other parameters are sent as text, JSON-serialized
 *    where they are objects or arrays
 *  - a bot posts in a channel only as an administrator with can_post_messages ("Forbidden: bot is not a member of the
 *    channel chat", "Bad Request: need administrator rights in the channel chat")
 * Every request's parameters are validated with Ajv against the method's fields in the description; a request that
 * does not conform is answered 400 and recorded in `violations`. Every result is validated against the method's
 * return type before it is sent.
 */
import { UPLOADED_FILE, parameterTypes, requestProblem, resultProblem } from "./spec";
import { cutOffAnswer } from "../stand-in-kit";

/** #sendmessage, #sendphoto, #sendmediagroup: the documented limits the description states only in words. */
const TEXT_MAX = 4096;
const CAPTION_MAX = 1024;
const PHOTO_MAX_BYTES = 10 * 1000 * 1000;

export interface StandInBot {
  id: number;
  token: string;
  username: string;
}

export interface StandInChat {
  id: number;
  type: "channel" | "supergroup" | "group";
  title: string;
  username?: string;
  /** bot id → ChatMember status and rights. */
  members: Map<number, { status: "creator" | "administrator" | "member" | "left"; canPost?: boolean }>;
}

export interface SentMessage {
  chatId: number;
  messageId: number;
  text: string | null;
  caption: string | null;
  photos: { name: string; size: number; type: string }[];
  mediaGroupId: string | null;
  deleted: boolean;
  /** When the stand-in stored it (ms since the epoch). */
  at: number;
}

export interface TelegramMode {
  /** Store the message(s), then never answer. */
  storeThenHang: number;
  /** Store the message(s), then cut the answer off midway (the client cannot know they were stored). */
  storeThenCut: number;
  /** Before storeThenCut takes effect: this many stores are answered normally first. */
  cutAfter: number;
  /** Latency of every send: half before the message is stored, half after (a kill lands on either side). */
  latencyMs: number;
  /** Answer 429 Too Many Requests this many times. */
  rateLimited: number;
}

export interface TelegramStandIn {
  origin: string;
  bots: StandInBot[];
  chats: StandInChat[];
  messages: SentMessage[];
  violations: string[];
  mode: TelegramMode;
  /** Requests seen, as "METHOD" names (tokens never recorded). */
  calls: string[];
  addBot(username?: string): StandInBot;
  /** A channel where `bot` is an administrator allowed to post, unless `rights` says otherwise. */
  addChannel(username: string | null, bot: StandInBot | null, rights?: { status: "administrator" | "member" | "left"; canPost?: boolean }): StandInChat;
  stop(): Promise<void>;
}

type Params = Record<string, unknown>;

/** Starts the stand-in on 127.0.0.1. */
export function startTelegramStandIn(port = 0): TelegramStandIn {
  const bots: StandInBot[] = [];
  const chats: StandInChat[] = [];
  const messages: SentMessage[] = [];
  const violations: string[] = [];
  const calls: string[] = [];
  const mode: TelegramMode = { storeThenHang: 0, storeThenCut: 0, cutAfter: 0, latencyMs: 0, rateLimited: 0 };
  const hanging = new Set<() => void>();
  let nextMessageId = 100;
  let nextGroup = 1;

  const ok = (method: string, result: unknown): Response => {
    const problem = resultProblem(method, result);
    if (problem) violations.push(`stand-in result of ${method} outside the description: ${problem}`);
    return Response.json({ ok: true, result });
  };
  const fail = (status: number, description: string, parameters?: Params): Response =>
    Response.json({ ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) }, { status });
  const invalid = (method: string, problem: string): Response => {
    violations.push(`${method}: ${problem}`);
    return fail(400, `Bad Request: ${problem}`);
  };

  /** Reads the parameters as Telegram does: JSON, or multipart text fields typed by the method's fields, and files. */
  async function readParams(method: string, request: Request): Promise<{ params: Params; files: Map<string, File> } | string> {
    const type = request.headers.get("content-type") ?? "";
    const files = new Map<string, File>();
    if (type.startsWith("application/json")) {
      try {
        return { params: (await request.json()) as Params, files };
      } catch {
        return "the body is not JSON";
      }
    }
    if (!type.startsWith("multipart/form-data")) return `content type ${type || "(none)"} is not one the Bot API takes here`;
    const params: Params = {};
    for (const [name, value] of (await request.formData()).entries()) {
      if (typeof value !== "string") {
        files.set(name, value as File);
        // A file named by its own parameter (sendPhoto's `photo`) is an InputFile; others are attach:// targets.
        if (parameterTypes(method, name)) params[name] = UPLOADED_FILE;
        continue;
      }
      const types = parameterTypes(method, name) ?? ["String"];
      if (types.every((t) => t === "String")) params[name] = value;
      else if (types.includes("Integer") && /^-?\d+$/.test(value)) params[name] = Number(value);
      else if (types.includes("Boolean") && (value === "true" || value === "false")) params[name] = value === "true";
      else if (types.some((t) => t.startsWith("Array of") || !["String", "Integer", "Boolean", "Float", "True"].includes(t))) {
        try {
          params[name] = JSON.parse(value);
        } catch {
          return `${name} must be JSON-serialized`;
        }
      } else params[name] = value;
    }
    return { params, files };
  }

  const chatOf = (chatId: unknown): StandInChat | undefined =>
    chats.find((c) => (typeof chatId === "number" ? c.id === chatId : typeof chatId === "string" && (String(c.id) === chatId || (c.username && `@${c.username}`.toLowerCase() === chatId.toLowerCase()))));

  const chatJson = (c: StandInChat) => ({ id: c.id, type: c.type, title: c.title, ...(c.username ? { username: c.username } : {}) });

  const messageJson = (m: SentMessage, c: StandInChat) => ({
    message_id: m.messageId,
    date: Math.floor(Date.now() / 1000),
    chat: chatJson(c),
    ...(c.type === "channel" ? { sender_chat: chatJson(c) } : {}),
    ...(m.text !== null ? { text: m.text } : {}),
    ...(m.caption !== null ? { caption: m.caption } : {}),
    ...(m.mediaGroupId !== null ? { media_group_id: m.mediaGroupId } : {}),
    ...(m.photos.length > 0
      ? { photo: [{ file_id: `photo-${m.messageId}`, file_unique_id: `u${m.messageId}`, width: 1280, height: 720, file_size: m.photos[0]!.size }] }
      : {}),
  });

  /** The bot may post in the chat (channels: administrator with can_post_messages), or Telegram's refusal. */
  function mayPost(bot: StandInBot, c: StandInChat): Response | null {
    const member = c.members.get(bot.id);
    if (!member || member.status === "left") return fail(403, `Forbidden: bot is not a member of the ${c.type === "channel" ? "channel" : "group"} chat`);
    if (c.type === "channel" && member.status !== "creator" && !(member.status === "administrator" && member.canPost)) {
      return fail(400, "Bad Request: need administrator rights in the channel chat");
    }
    return null;
  }

  async function send(method: string, bot: StandInBot, params: Params, files: Map<string, File>): Promise<Response> {
    const c = chatOf(params.chat_id);
    if (!c) return fail(400, "Bad Request: chat not found");
    const refused = mayPost(bot, c);
    if (refused) return refused;
    if (mode.rateLimited > 0) {
      mode.rateLimited -= 1;
      return fail(429, "Too Many Requests: retry after 1", { retry_after: 1 });
    }
    if (mode.latencyMs > 0) await Bun.sleep(mode.latencyMs / 2);
    const photoOf = async (file: File) => ({ name: file.name, size: (await file.arrayBuffer()).byteLength, type: file.type });
    const stored: SentMessage[] = [];
    if (method === "sendMessage") {
      const text = String(params.text ?? "");
      if (text.trim() === "") return fail(400, "Bad Request: message text is empty");
      if (text.length > TEXT_MAX) return fail(400, "Bad Request: message is too long");
      stored.push({ chatId: c.id, messageId: nextMessageId++, text, caption: null, photos: [], mediaGroupId: null, deleted: false, at: Date.now() });
    } else if (method === "sendPhoto") {
      const file = files.get("photo");
      if (!file) return invalid(method, "photo must be uploaded as a file here");
      const caption = typeof params.caption === "string" ? params.caption : null;
      if (caption !== null && caption.length > CAPTION_MAX) return fail(400, "Bad Request: message caption is too long");
      if (file.size > PHOTO_MAX_BYTES) return fail(400, "Bad Request: PHOTO_INVALID_DIMENSIONS");
      stored.push({ chatId: c.id, messageId: nextMessageId++, text: null, caption, photos: [await photoOf(file)], mediaGroupId: null, deleted: false, at: Date.now() });
    } else {
      const media = params.media as { type: string; media: string; caption?: string }[];
      if (media.length < 2 || media.length > 10) return invalid(method, "media must include 2-10 items");
      const group = String(nextGroup++);
      for (const item of media) {
        const attach = /^attach:\/\/(.+)$/.exec(item.media);
        const file = attach ? files.get(attach[1]!) : undefined;
        if (!file) return invalid(method, `${item.media} names no uploaded file`);
        if (item.caption !== undefined && item.caption.length > CAPTION_MAX) return fail(400, "Bad Request: message caption is too long");
        stored.push({ chatId: c.id, messageId: nextMessageId++, text: null, caption: item.caption ?? null, photos: [await photoOf(file)], mediaGroupId: group, deleted: false, at: Date.now() });
      }
      const named = new Set(media.map((m) => m.media.replace(/^attach:\/\//, "")));
      for (const name of files.keys()) if (!named.has(name)) return invalid(method, `uploaded file ${name} is not in media`);
    }
    messages.push(...stored);
    if (mode.latencyMs > 0) await Bun.sleep(mode.latencyMs / 2);
    if (mode.storeThenCut > 0 && mode.cutAfter > 0) {
      mode.cutAfter -= 1;
    } else if (mode.storeThenCut > 0) {
      mode.storeThenCut -= 1;
      return cutOffAnswer(200);
    }
    if (mode.storeThenHang > 0) {
      mode.storeThenHang -= 1;
      return new Promise<Response>((resolve) => hanging.add(() => resolve(fail(500, "Internal Server Error"))));
    }
    return method === "sendMediaGroup" ? ok(method, stored.map((m) => messageJson(m, c))) : ok(method, messageJson(stored[0]!, c));
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    async fetch(request) {
      const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(request.url).pathname);
      if (!match) return fail(404, "Not Found");
      const [, token, method] = match as unknown as [string, string, string];
      calls.push(method);
      const bot = bots.find((b) => b.token === token);
      if (!bot) return fail(401, "Unauthorized");
      const read = await readParams(method, request);
      if (typeof read === "string") return invalid(method, read);
      const problem = requestProblem(method, read.params);
      if (problem) return invalid(method, problem);
      const { params, files } = read;
      switch (method) {
        case "getMe":
          return ok(method, { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
        case "getChat": {
          const c = chatOf(params.chat_id);
          if (!c) return fail(400, "Bad Request: chat not found");
          return ok(method, {
            ...chatJson(c),
            accent_color_id: 0,
            max_reaction_count: 11,
            accepted_gift_types: { unlimited_gifts: false, limited_gifts: false, unique_gifts: false, premium_subscription: false, gifts_from_channels: false },
          });
        }
        case "getChatMember": {
          const c = chatOf(params.chat_id);
          if (!c) return fail(400, "Bad Request: chat not found");
          const member = c.members.get(Number(params.user_id));
          if (!member) return fail(400, "Bad Request: member not found");
          const user = { id: bot.id, is_bot: true, first_name: bot.username, username: bot.username };
          if (member.status === "administrator") {
            return ok(method, {
              status: "administrator",
              user,
              can_be_edited: false,
              is_anonymous: false,
              can_manage_chat: true,
              can_delete_messages: true,
              can_manage_video_chats: false,
              can_restrict_members: false,
              can_promote_members: false,
              can_change_info: false,
              can_invite_users: false,
              can_post_stories: false,
              can_edit_stories: false,
              can_delete_stories: false,
              ...(c.type === "channel" ? { can_post_messages: member.canPost === true, can_edit_messages: false } : {}),
            });
          }
          if (member.status === "creator") return ok(method, { status: "creator", user, is_anonymous: false });
          return ok(method, { status: member.status, user });
        }
        case "sendMessage":
        case "sendPhoto":
        case "sendMediaGroup":
          return send(method, bot, params, files);
        case "deleteMessages": {
          const c = chatOf(params.chat_id);
          if (!c) return fail(400, "Bad Request: chat not found");
          const ids = params.message_ids as number[];
          const found = messages.filter((m) => m.chatId === c.id && ids.includes(m.messageId) && !m.deleted);
          if (found.length === 0) return fail(400, "Bad Request: message to delete not found");
          for (const m of found) m.deleted = true;
          return ok(method, true);
        }
        default:
          return invalid(method, "the stand-in does not implement this method");
      }
    },
  });

  let nextId = 7_000_000_000;
  return {
    origin: `http://127.0.0.1:${server.port}`,
    bots,
    chats,
    messages,
    violations,
    mode,
    calls,
    addBot(username = "seedcast_test_bot") {
      const id = nextId++;
      const bot = { id, token: `${id}:AAE${crypto.randomUUID().replaceAll("-", "")}`, username };
      bots.push(bot);
      return bot;
    },
    addChannel(username, bot, rights = { status: "administrator", canPost: true }) {
      const chat: StandInChat = { id: -1001000000000 - chats.length, type: "channel", title: username ? `The ${username} channel` : "A private channel", members: new Map() };
      if (username) chat.username = username;
      if (bot) chat.members.set(bot.id, rights);
      chats.push(chat);
      return chat;
    },
    async stop() {
      for (const release of hanging) release();
      await server.stop(true);
    },
  };
}
