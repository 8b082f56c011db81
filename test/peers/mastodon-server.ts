/**
 * A small, faithful fake of Mastodon's documented REST API (docs.joinmastodon.org), for contract tests of the
 * Mastodon connector. No real Mastodon server can be installed on this machine (testing.md), so this fake
 * reproduces the behaviour the connector depends on, including the awkward parts:
 * - media upload answers 202 with `url: null`; GET /api/v1/media/:id answers 206 until processed, then 200;
 * - attaching unprocessed media to a status is a 422 (as the real server does);
 * - `scheduled_at` more than 5 minutes ahead answers a ScheduledStatus; within 5 minutes a 422; in the past the
 *   real server ignores it and posts at once, and so does this fake;
 * - text length counted in grapheme clusters with every URL counting 23 characters;
 * - `Idempotency-Key`: the same key answers the same entity again and creates nothing new;
 * - GET /api/v1/accounts/:id/statuses lists the account's statuses newest first (`limit` 20 by default, at most 40);
 * - `in_reply_to_id` (docs.joinmastodon.org/methods/statuses/#create): a reply names its parent, answered back as the
 *   Status entity's `in_reply_to_id` / `in_reply_to_account_id`; an unknown parent is a 404 `Record not found`, as the
 *   real StatusesController's `Status.find` answers; several `media_ids` (up to max_media_attachments) keep their order;
 * - 401 `{"error":"The access token is invalid"}` for a wrong or missing Bearer token.
 * Time comes from `opts.now` so tests can move a clock instead of sleeping.
 * Sign-in (apps, OAuth with PKCE, NodeInfo) lives in ./mastodon-sign-in.ts. Two servers as they really behave:
 * `software: {name: "gotosocial", version: "0.19.1"}` accepts `scheduled_at` and posts at once (GoToSocial before
 * 0.20 has no scheduled statuses), and `repeatedIdempotencyKey500` answers a repeated Idempotency-Key with 500
 * instead of the first answer.
 */

import type { Server } from "bun";
import { type SignInState, mastodonSignIn } from "./mastodon-sign-in";

/** Mastodon refuses scheduled_at closer than this (PostStatusService::MIN_SCHEDULE_OFFSET). */
export const MIN_SCHEDULE_OFFSET_MS = 5 * 60 * 1000;
/** Every URL counts as this many characters (StatusLengthValidator::URL_PLACEHOLDER_CHARS). */
export const URL_PLACEHOLDER_CHARS = 23;
export const DEFAULT_MAX_CHARACTERS = 500;
export const DEFAULT_MAX_MEDIA_ATTACHMENTS = 4;
/** Mastodon 4.x default image size limit (16 MB). */
export const DEFAULT_IMAGE_SIZE_LIMIT = 16 * 1024 * 1024;
export const DEFAULT_TOKEN = "mastodon-test-token";
/** ScheduledStatus::DAILY_LIMIT and TOTAL_LIMIT on the real server. */
export const SCHEDULED_DAILY_LIMIT = 25;
export const SCHEDULED_TOTAL_LIMIT = 300;
const DAY_MS = 24 * 60 * 60 * 1000;
/** GET /api/v1/accounts/:id/statuses: `limit` default and maximum (docs.joinmastodon.org/methods/accounts). */
export const ACCOUNT_STATUSES_DEFAULT_LIMIT = 20;
export const ACCOUNT_STATUSES_MAX_LIMIT = 40;

const INVALID_TOKEN_BODY = { error: "The access token is invalid" };
const NOT_FOUND_BODY = { error: "Record not found" };
const TOO_SOON_MESSAGE = "Validation failed: Scheduled at The scheduled date must be in the future";
const NOT_READY_MESSAGE = "Cannot attach files that have not finished processing. Try again in a moment!";
const URL_PATTERN = /https?:\/\/[^\s<>"]+/g;

export type MastodonMode = "ok" | "unreachable" | "error500" | "reject422";

export interface MastodonServerOptions {
  /** The one valid access token (default `mastodon-test-token`). */
  token?: string;
  /** configuration.statuses.max_characters (default 500). */
  maxCharacters?: number;
  maxMediaAttachments?: number;
  imageSizeLimit?: number;
  /** How many GET /api/v1/media/:id answer 206 before the media counts as processed (default 1). */
  mediaProcessingPolls?: number;
  /** Scheduled statuses allowed per (UTC) day and in total; defaults 25 and 300 as on the real server. */
  scheduledDailyLimit?: number;
  scheduledTotalLimit?: number;
  /** Milliseconds since the epoch; defaults to the wall clock. Pass a ManualClock's `now`. */
  now?: () => number;
  username?: string;
  /** What NodeInfo names (default Mastodon 4.3.0). GoToSocial before 0.20 ignores `scheduled_at` and posts at once. */
  software?: { name: string; version: string };
  /** Answer a repeated Idempotency-Key with 500 (some servers do) instead of the entity it created. */
  repeatedIdempotencyKey500?: boolean;
}

export interface MediaAttachment {
  id: string;
  type: "image" | "video" | "gifv" | "audio" | "unknown";
  url: string | null;
  preview_url: string | null;
  remote_url: null;
  description: string | null;
  blurhash: null;
  meta: Record<string, unknown>;
}

export interface StoredMedia {
  attachment: MediaAttachment;
  bytes: Uint8Array;
  mimeType: string;
  fileName: string;
  /** GET polls still to answer 206 before the media is processed. */
  pollsLeft: number;
  processed: boolean;
  /** Status or scheduled status the media belongs to, once attached (attached media cannot be reused). */
  attachedTo: string | null;
}

export interface StatusParams {
  text: string;
  media_ids: string[] | null;
  sensitive: boolean | null;
  spoiler_text: string | null;
  visibility: string | null;
  language: string | null;
  scheduled_at: null;
  poll: null;
  idempotency: string | null;
  in_reply_to_id: string | null;
  application_id: number;
  with_rate_limit: boolean;
}

export interface Status {
  id: string;
  uri: string;
  url: string;
  created_at: string;
  content: string;
  /** The plain text as sent (Mastodon answers it only on DELETE; kept here for assertions). */
  text: string;
  visibility: string;
  sensitive: boolean;
  spoiler_text: string;
  language: string | null;
  /** The parent status when this one is a reply, else null. */
  in_reply_to_id: string | null;
  in_reply_to_account_id: string | null;
  media_attachments: MediaAttachment[];
  account: Account;
}

export interface ScheduledStatus {
  id: string;
  scheduled_at: string;
  params: StatusParams;
  media_attachments: MediaAttachment[];
}

export interface Account {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  url: string;
  created_at: string;
  statuses_count: number;
}

/** One request as the fake saw it, for assertions about what the connector sent. */
export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | null;
  idempotencyKey: string | null;
  contentType: string | null;
  status: number;
}

/** Everything the fake stores; tests read it and may call publishDue. */
export interface MastodonState {
  /** The valid token; assign another value to simulate a revoked token. */
  token: string;
  maxCharacters: number;
  account: Account;
  media: Map<string, StoredMedia>;
  statuses: Map<string, Status>;
  scheduled: Map<string, ScheduledStatus>;
  /** Scheduled status id → the status it became when published. */
  publishedFromScheduled: Map<string, string>;
  /** Scheduled status ids deleted through the API. */
  deletedScheduled: string[];
  /** Idempotency-Key → the entity it created. */
  idempotency: Map<string, { kind: "status" | "scheduled"; id: string }>;
  requests: RecordedRequest[];
  /**
   * A test's hook on POST /api/v1/statuses (after the Idempotency-Key check): a Response answers instead (a refusal,
   * a 503), null lets the status be created.
   */
  statusHook: ((input: { status: string; inReplyToId: string | null }) => Response | null) | null;
  /** Registered apps, issued tokens, token requests (./mastodon-sign-in.ts). */
  signIn: SignInState;
  /** Publishes every scheduled status due at `now` (default: the fake's clock), as the real server's worker does. */
  publishDue(now?: number): Status[];
  /** Marks every uploaded media as processed without further polls. */
  finishProcessing(): void;
}

export interface MastodonServer {
  /** Base URL of the instance, e.g. http://127.0.0.1:40123 (no trailing slash). */
  url: string;
  port: number;
  state: MastodonState;
  /** "unreachable" closes the listening socket (connections refused); any other mode reopens it on the same port. */
  setMode(mode: MastodonMode): Promise<void>;
  stop(): Promise<void>;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Mastodon's StatusLengthValidator: grapheme clusters, each URL counted as 23. */
export function mastodonLength(text: string): number {
  const countable = text.replace(URL_PATTERN, "x".repeat(URL_PLACEHOLDER_CHARS));
  return [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(countable)].length;
}

/** Parsed POST /api/v1/statuses parameters, whichever encoding the client chose. */
interface StatusInput {
  status: string;
  mediaIds: string[];
  scheduledAt: string | null;
  visibility: string | null;
  sensitive: boolean | null;
  spoilerText: string | null;
  language: string | null;
  inReplyToId: string | null;
}

async function readStatusInput(req: Request): Promise<StatusInput> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    const body = (await req.json()) as Record<string, unknown>;
    const ids = body.media_ids ?? body["media_ids[]"];
    return {
      status: typeof body.status === "string" ? body.status : "",
      mediaIds: Array.isArray(ids) ? ids.map(String) : [],
      scheduledAt: typeof body.scheduled_at === "string" ? body.scheduled_at : null,
      visibility: typeof body.visibility === "string" ? body.visibility : null,
      sensitive: typeof body.sensitive === "boolean" ? body.sensitive : null,
      spoilerText: typeof body.spoiler_text === "string" ? body.spoiler_text : null,
      language: typeof body.language === "string" ? body.language : null,
      inReplyToId: typeof body.in_reply_to_id === "string" && body.in_reply_to_id !== "" ? body.in_reply_to_id : null,
    };
  }
  const form = await req.formData();
  const str = (k: string): string | null => {
    const v = form.get(k);
    return typeof v === "string" ? v : null;
  };
  const sensitive = str("sensitive");
  return {
    status: str("status") ?? "",
    mediaIds: [...form.getAll("media_ids[]"), ...form.getAll("media_ids")].map(String),
    scheduledAt: str("scheduled_at"),
    visibility: str("visibility"),
    sensitive: sensitive === null ? null : sensitive === "true",
    spoilerText: str("spoiler_text"),
    language: str("language"),
    inReplyToId: str("in_reply_to_id") || null,
  };
}

/** Starts the fake on 127.0.0.1 with a random free port. */
export async function startMastodonServer(opts: MastodonServerOptions = {}): Promise<MastodonServer> {
  const now = opts.now ?? (() => Date.now());
  const maxMedia = opts.maxMediaAttachments ?? DEFAULT_MAX_MEDIA_ATTACHMENTS;
  const imageSizeLimit = opts.imageSizeLimit ?? DEFAULT_IMAGE_SIZE_LIMIT;
  const pollsBeforeProcessed = opts.mediaProcessingPolls ?? 1;
  const username = opts.username ?? "seedcast";
  const dailyLimit = opts.scheduledDailyLimit ?? SCHEDULED_DAILY_LIMIT;
  const totalLimit = opts.scheduledTotalLimit ?? SCHEDULED_TOTAL_LIMIT;
  let mode: MastodonMode = "ok";
  let nextId = 110_000_000_000_000_000n;
  const newId = (): string => String(++nextId);
  let origin = "";
  const software = opts.software ?? { name: "mastodon", version: "4.3.0" };
  const ignoresScheduledAt = software.name === "gotosocial" && /^0\.(1?\d)\./.test(software.version);
  const signIn = mastodonSignIn({ now, username: () => username, software, oauthMetadata: software.name === "mastodon" });

  const account: Account = {
    id: "109000000000000001",
    username,
    acct: username,
    display_name: "Seedcast Test",
    url: "",
    created_at: new Date(now()).toISOString(),
    statuses_count: 0,
  };

  const state: MastodonState = {
    token: opts.token ?? DEFAULT_TOKEN,
    maxCharacters: opts.maxCharacters ?? DEFAULT_MAX_CHARACTERS,
    account,
    media: new Map(),
    statuses: new Map(),
    scheduled: new Map(),
    publishedFromScheduled: new Map(),
    deletedScheduled: [],
    idempotency: new Map(),
    requests: [],
    statusHook: null,
    signIn: signIn.state,
    publishDue(at = now()) {
      const published: Status[] = [];
      for (const [id, s] of [...state.scheduled]) {
        if (Date.parse(s.scheduled_at) > at) continue;
        const status = createStatus(s.params.text, s.params.media_ids ?? [], s.params, at, s.params.in_reply_to_id);
        state.scheduled.delete(id);
        state.publishedFromScheduled.set(id, status.id);
        published.push(status);
      }
      return published;
    },
    finishProcessing() {
      for (const m of state.media.values()) processMedia(m);
    },
  };

  function processMedia(m: StoredMedia): void {
    if (m.processed) return;
    m.processed = true;
    m.pollsLeft = 0;
    m.attachment.url = `${origin}/system/media_attachments/files/${m.attachment.id}/original/${m.fileName}`;
    m.attachment.preview_url = `${origin}/system/media_attachments/files/${m.attachment.id}/small/${m.fileName}`;
  }

  function createStatus(
    text: string,
    mediaIds: string[],
    params: Pick<StatusParams, "visibility" | "sensitive" | "spoiler_text" | "language">,
    at: number,
    inReplyToId: string | null = null,
  ): Status {
    const id = newId();
    const media = mediaIds.map((m) => state.media.get(m)).filter((m): m is StoredMedia => m !== undefined);
    for (const m of media) m.attachedTo = id;
    const status: Status = {
      id,
      uri: `${origin}/users/${username}/statuses/${id}`,
      url: `${origin}/@${username}/${id}`,
      created_at: new Date(at).toISOString(),
      content: `<p>${escapeHtml(text).replace(/\n/g, "<br />")}</p>`,
      text,
      visibility: params.visibility ?? "public",
      sensitive: params.sensitive ?? false,
      spoiler_text: params.spoiler_text ?? "",
      language: params.language ?? "en",
      in_reply_to_id: inReplyToId,
      in_reply_to_account_id: inReplyToId === null ? null : (state.statuses.get(inReplyToId)?.account.id ?? null),
      media_attachments: media.map((m) => m.attachment),
      account,
    };
    state.statuses.set(id, status);
    account.statuses_count++;
    return status;
  }

  async function postStatus(req: Request): Promise<Response> {
    const key = req.headers.get("idempotency-key");
    if (key !== null) {
      const seen = state.idempotency.get(key);
      if (seen && opts.repeatedIdempotencyKey500) return json({ error: "Internal Server Error" }, 500);
      // Mastodon answers the entity the key created before, and creates nothing new.
      if (seen?.kind === "status" && state.statuses.has(seen.id)) return json(state.statuses.get(seen.id));
      if (seen?.kind === "scheduled") {
        const s = state.scheduled.get(seen.id);
        if (s) return json(s);
        const publishedId = state.publishedFromScheduled.get(seen.id);
        if (publishedId && state.statuses.has(publishedId)) return json(state.statuses.get(publishedId));
      }
    }
    let input: StatusInput;
    try {
      input = await readStatusInput(req);
    } catch {
      return json({ error: "Validation failed: Text can't be blank" }, 422);
    }
    const hooked = state.statusHook?.({ status: input.status, inReplyToId: input.inReplyToId }) ?? null;
    if (hooked !== null) return hooked;
    // StatusesController: `Status.find(in_reply_to_id)` answers 404 for a parent that does not exist.
    if (input.inReplyToId !== null && !state.statuses.has(input.inReplyToId)) return json(NOT_FOUND_BODY, 404);
    // The real server ignores media ids that are unknown or already attached elsewhere.
    const mediaIds = input.mediaIds.filter((id) => {
      const m = state.media.get(id);
      return m !== undefined && m.attachedTo === null;
    });
    if (input.status.trim() === "" && mediaIds.length === 0) {
      return json({ error: "Validation failed: Text can't be blank" }, 422);
    }
    if (mediaIds.length > maxMedia) return json({ error: `Validation failed: Cannot attach more than ${maxMedia} files` }, 422);
    if (mediaIds.some((id) => state.media.get(id)?.processed === false)) return json({ error: NOT_READY_MESSAGE }, 422);
    const length = mastodonLength(input.status);
    if (length > state.maxCharacters) {
      return json({ error: `Validation failed: Text character limit of ${state.maxCharacters} exceeded` }, 422);
    }
    let scheduledAt: number | null = null;
    if (input.scheduledAt !== null && input.scheduledAt !== "") {
      scheduledAt = Date.parse(input.scheduledAt);
      if (Number.isNaN(scheduledAt)) return json({ error: "Validation failed: Scheduled at is invalid" }, 422);
      // GoToSocial before 0.20 takes the field and posts at once.
      if (ignoresScheduledAt) scheduledAt = now();
      // PostStatusService: a time in the past is dropped and the status posts at once.
      if (scheduledAt <= now()) scheduledAt = null;
      else if (scheduledAt <= now() + MIN_SCHEDULE_OFFSET_MS) return json({ error: TOO_SOON_MESSAGE }, 422);
    }
    const params: StatusParams = {
      text: input.status,
      media_ids: mediaIds.length > 0 ? mediaIds : null,
      sensitive: input.sensitive,
      spoiler_text: input.spoilerText,
      visibility: input.visibility,
      language: input.language,
      scheduled_at: null,
      poll: null,
      idempotency: key,
      in_reply_to_id: input.inReplyToId,
      application_id: 1,
      with_rate_limit: false,
    };
    if (scheduledAt !== null) {
      const day = Math.floor(scheduledAt / DAY_MS);
      const sameDay = [...state.scheduled.values()].filter((s) => Math.floor(Date.parse(s.scheduled_at) / DAY_MS) === day).length;
      if (state.scheduled.size >= totalLimit) {
        return json({ error: `Validation failed: Scheduled at You have exceeded the limit of ${totalLimit} scheduled posts` }, 422);
      }
      if (sameDay >= dailyLimit) {
        return json({ error: `Validation failed: Scheduled at You have exceeded the limit of ${dailyLimit} scheduled posts for today` }, 422);
      }
      const id = newId();
      const media = mediaIds.map((m) => state.media.get(m)).filter((m): m is StoredMedia => m !== undefined);
      for (const m of media) m.attachedTo = id;
      const scheduled: ScheduledStatus = {
        id,
        scheduled_at: new Date(scheduledAt).toISOString(),
        params,
        media_attachments: media.map((m) => m.attachment),
      };
      state.scheduled.set(id, scheduled);
      if (key !== null) state.idempotency.set(key, { kind: "scheduled", id });
      return json(scheduled);
    }
    const status = createStatus(input.status, mediaIds, params, now(), input.inReplyToId);
    if (key !== null) state.idempotency.set(key, { kind: "status", id: status.id });
    return json(status);
  }

  async function postMedia(req: Request): Promise<Response> {
    let form: FormData;
    try {
      form = await req.formData();
    } catch {
      return json({ error: "Validation failed: File can't be blank" }, 422);
    }
    const file = form.get("file");
    if (file === null || typeof file === "string") return json({ error: "Validation failed: File can't be blank" }, 422);
    if (file.size > imageSizeLimit) {
      return json({ error: `Validation failed: File file size must be less than ${imageSizeLimit} Bytes` }, 422);
    }
    const mimeType = file.type || "application/octet-stream";
    if (!mimeType.startsWith("image/")) {
      return json({ error: "Validation failed: File content type is invalid, File is invalid" }, 422);
    }
    const description = form.get("description");
    const id = newId();
    const fileName = file.name && file.name !== "blob" ? file.name : `${id}.${mimeType.split("/")[1] ?? "bin"}`;
    const stored: StoredMedia = {
      attachment: {
        id,
        type: "image",
        url: null,
        preview_url: null,
        remote_url: null,
        description: typeof description === "string" && description !== "" ? description : null,
        blurhash: null,
        meta: {},
      },
      bytes: new Uint8Array(await file.arrayBuffer()),
      mimeType,
      fileName,
      pollsLeft: pollsBeforeProcessed,
      processed: false,
      attachedTo: null,
    };
    state.media.set(id, stored);
    if (pollsBeforeProcessed <= 0) {
      processMedia(stored);
      return json(stored.attachment, 200);
    }
    // Large or slow media: the real server answers 202 and processes in the background.
    return json(stored.attachment, 202);
  }

  function getMedia(id: string): Response {
    const m = state.media.get(id);
    if (!m) return json(NOT_FOUND_BODY, 404);
    if (!m.processed) {
      if (m.pollsLeft > 0) {
        m.pollsLeft--;
        return json(m.attachment, 206);
      }
      processMedia(m);
    }
    return json(m.attachment, 200);
  }

  /** PUT /api/v1/media/:id: updates the description (alt text) of media not yet attached to a status. */
  async function updateMedia(req: Request, id: string): Promise<Response> {
    const media = state.media.get(id);
    if (!media) return json(NOT_FOUND_BODY, 404);
    if (media.attachedTo !== null) return json(NOT_FOUND_BODY, 404);
    const type = req.headers.get("content-type") ?? "";
    let description: unknown;
    if (type.includes("application/json")) description = ((await req.json()) as { description?: unknown }).description;
    else description = (await req.formData()).get("description");
    if (typeof description === "string") media.attachment.description = description === "" ? null : description;
    return json(media.attachment, media.processed ? 200 : 206);
  }

  /**
   * GET /api/v1/accounts/:id/statuses: the account's statuses, newest first (ids are time-ordered snowflakes).
   * `limit` defaults to 20 and is capped at 40; `max_id` / `since_id` / `min_id` page by id, as documented.
   */
  function listAccountStatuses(accountId: string, query: URLSearchParams): Response {
    if (accountId !== account.id) return json(NOT_FOUND_BODY, 404);
    const requested = Number.parseInt(query.get("limit") ?? "", 10);
    const limit = Number.isFinite(requested) && requested > 0 ? Math.min(requested, ACCOUNT_STATUSES_MAX_LIMIT) : ACCOUNT_STATUSES_DEFAULT_LIMIT;
    const bound = (name: string): bigint | null => {
      const v = query.get(name);
      return v !== null && /^\d+$/.test(v) ? BigInt(v) : null;
    };
    const maxId = bound("max_id");
    const sinceId = bound("since_id");
    const minId = bound("min_id");
    let list = [...state.statuses.values()].filter((s) => {
      const id = BigInt(s.id);
      return (maxId === null || id < maxId) && (sinceId === null || id > sinceId) && (minId === null || id > minId);
    });
    list.sort((a, b) => (BigInt(b.id) > BigInt(a.id) ? 1 : BigInt(b.id) < BigInt(a.id) ? -1 : 0));
    // min_id answers the page just above it (the oldest statuses newer than min_id), still newest first.
    list = minId !== null ? list.slice(-limit) : list.slice(0, limit);
    // The plain `text` is only answered on DELETE by the real server, never in timelines.
    return json(list.map(({ text: _text, ...entity }) => entity));
  }

  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    const method = req.method;

    const signInAnswer = await signIn.route(req, url);
    if (signInAnswer) return signInAnswer;
    // Public endpoints need no token.
    if (method === "GET" && path === "/api/v2/instance") {
      return json({
        domain: url.host,
        title: "Seedcast fake Mastodon",
        version: software.version,
        source_url: software.name === "mastodon" ? "https://github.com/mastodon/mastodon" : "https://codeberg.org/superseriousbusiness/gotosocial",
        configuration: {
          urls: { streaming: `ws://${url.host}` },
          accounts: { max_featured_tags: 10 },
          statuses: { max_characters: state.maxCharacters, max_media_attachments: maxMedia, characters_reserved_per_url: URL_PLACEHOLDER_CHARS },
          media_attachments: {
            supported_mime_types: ["image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/heif", "image/avif"],
            image_size_limit: imageSizeLimit,
            image_matrix_limit: 33_177_600,
            video_size_limit: 103_809_024,
            video_frame_rate_limit: 120,
            video_matrix_limit: 8_294_400,
          },
          polls: { max_options: 4, max_characters_per_option: 50, min_expiration: 300, max_expiration: 2_629_746 },
        },
        registrations: { enabled: false, approval_required: false, message: null },
      });
    }

    const bearer = req.headers.get("authorization");
    const signedIn = bearer?.startsWith("Bearer ") === true && state.signIn.issuedTokens.has(bearer.slice(7));
    if (bearer !== `Bearer ${state.token}` && !signedIn) return json(INVALID_TOKEN_BODY, 401);

    if (method === "GET" && path === "/api/v1/accounts/verify_credentials") {
      return json({ ...account, url: `${origin}/@${username}`, source: { privacy: "public", sensitive: false, language: "en", note: "" } });
    }
    if (method === "POST" && path === "/api/v2/media") return postMedia(req);
    const accountStatuses = path.match(/^\/api\/v1\/accounts\/([^/]+)\/statuses$/);
    if (accountStatuses && method === "GET") return listAccountStatuses(accountStatuses[1]!, url.searchParams);
    let m = path.match(/^\/api\/v1\/media\/([^/]+)$/);
    if (m && method === "GET") return getMedia(m[1]!);
    if (m && method === "PUT") return updateMedia(req, m[1]!);
    if (method === "POST" && path === "/api/v1/statuses") return postStatus(req);
    m = path.match(/^\/api\/v1\/statuses\/([^/]+)$/);
    if (m) {
      const status = state.statuses.get(m[1]!);
      if (!status) return json(NOT_FOUND_BODY, 404);
      if (method === "GET") return json(status);
      if (method === "DELETE") {
        state.statuses.delete(status.id);
        return json(status);
      }
    }
    if (method === "GET" && path === "/api/v1/scheduled_statuses") return json([...state.scheduled.values()]);
    m = path.match(/^\/api\/v1\/scheduled_statuses\/([^/]+)$/);
    if (m) {
      const scheduled = state.scheduled.get(m[1]!);
      if (!scheduled) return json(NOT_FOUND_BODY, 404);
      if (method === "GET") return json(scheduled);
      if (method === "DELETE") {
        state.scheduled.delete(scheduled.id);
        state.deletedScheduled.push(scheduled.id);
        // Media of a deleted scheduled status become free again, as on the real server.
        for (const a of scheduled.media_attachments) {
          const media = state.media.get(a.id);
          if (media) media.attachedTo = null;
        }
        return json({});
      }
    }
    return json({ error: "Record not found" }, 404);
  }

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    let response: Response;
    if (mode === "error500") response = json({ error: "Internal Server Error" }, 500);
    else if (mode === "reject422" && (req.method === "POST" || req.method === "DELETE") && path !== "/api/v2/instance") {
      response = json({ error: "Validation failed: Rejected by test mode" }, 422);
    } else response = await route(req);
    state.requests.push({
      method: req.method,
      path,
      authorization: req.headers.get("authorization"),
      idempotencyKey: req.headers.get("idempotency-key"),
      contentType: req.headers.get("content-type"),
      status: response.status,
    });
    return response;
  }

  const serve = (port: number): Server<undefined> =>
    Bun.serve({ hostname: "127.0.0.1", port, fetch: handle, idleTimeout: 30 });
  let server: Server<undefined> | null = serve(0);
  const port = server.port as number;
  origin = `http://127.0.0.1:${port}`;
  account.url = `${origin}/@${username}`;

  return {
    url: origin,
    port,
    state,
    async setMode(next) {
      if (next === "unreachable") {
        if (server) await server.stop(true);
        server = null;
      } else if (server === null) {
        server = serve(port);
      }
      mode = next;
    },
    async stop() {
      if (server) await server.stop(true);
      server = null;
    },
  };
}
