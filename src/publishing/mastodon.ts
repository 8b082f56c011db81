/**
 * Mastodon connections. Mastodon holds the post itself: at scheduling the media is uploaded with its description and
 * a scheduled status is created (`scheduled_at`) with the target id as `Idempotency-Key`; the scheduled status id is
 * the target's providerPostId; cancel deletes it; after the due time `confirm` sees it gone from the scheduled list
 * and looks up the public URL. Limits (characters, image size) come from /api/v2/instance at each credential check.
 * When the time is too close for Mastodon's own 5-minute minimum, the service holds the post and publishes it
 * directly at its time instead (same Idempotency-Key).
 *
 * Several images go up one by one, each with its description (at most the server's `max_media_attachments`). A post
 * with a thread or a first comment is always held by the service (a reply needs its parent's status id): at its time
 * the parts go out in order, each thread part `in_reply_to_id` the part before it, the first comment in reply to the
 * post, each under its own Idempotency-Key (`<targetId>:<index>`; the post itself keeps the target id), and each is
 * recorded as out before the next leaves. A retry resumes at the first part not out; resending a part whose answer was
 * lost is absorbed by its key.
 */
import type { Deps } from "../deps";
import { fitImageUnderBytes } from "../lib/image-fit";
import { isoAt } from "../lib/clock";
import type { CheckResult, ConfirmResult, Connector, DeliveryContent, DeliveryContext, DeliveryImage, DeliveryResult } from "./connector";
import type { OpenConnection } from "../store/connections";
import { DeliveryError, LIBRARY_IMAGE_TYPES, hasSeveralParts, partsOf } from "./connector";
import { MAX_THREAD_PARTS } from "../db/schema/post-content";
import { type MultipartPart, failureKindOf, outboundProblem, providerFetch, providerMessage } from "./outbound";
import { IDEMPOTENCY_HEADER } from "./webhook";
import { NOT_MASTODON, detectServer, serverMeta } from "./networks/mastodon/server";
import { SIGNED_IN } from "./networks/mastodon/sign-in";
import { deadGrantReason } from "./sign-in/network";

/** Mastodon refuses scheduled_at closer than 5 minutes; keep a margin for clock skew and the upload time. */
const MIN_NATIVE_LEAD_MS = 5 * 60 * 1000 + 60 * 1000;
export const MASTODON_DEFAULT_MAX_CHARACTERS = 500;
/** Mastodon's default `configuration.statuses.max_media_attachments`. */
export const MASTODON_DEFAULT_MAX_MEDIA = 4;
export const MASTODON_URL_LENGTH = 23;
const DEFAULT_IMAGE_SIZE_LIMIT = 8 * 1024 * 1024;
/** What a server that states no limit is taken to allow (Mastodon's own defaults). */
const SERVER_DEFAULTS = {
  maxCharacters: MASTODON_DEFAULT_MAX_CHARACTERS,
  maxMediaAttachments: MASTODON_DEFAULT_MAX_MEDIA,
  charactersReservedPerUrl: MASTODON_URL_LENGTH,
  imageSizeLimit: DEFAULT_IMAGE_SIZE_LIMIT,
};
const MEDIA_POLL_DELAYS_MS = [200, 400, 800, 1500, 3000, 5000];
/** How far around the scheduled time a published status is looked for. */
const CONFIRM_WINDOW_BEFORE_MS = 2 * 60 * 1000;
const STATUS_LOOKUP_LIMIT = "40";
const TOKEN_HINT =
  "Create a new access token in Mastodon under Preferences → Development → New application (scopes read, write:statuses, write:media) and update this connection.";

interface ScheduledStatusBody {
  id: string;
  scheduled_at?: string;
  params?: { idempotency?: string | null };
}

function api(connection: OpenConnection, path: string): string {
  return `${connection.endpoint.replace(/\/+$/, "")}${path}`;
}

function authHeaders(connection: OpenConnection): Record<string, string> {
  return { authorization: `Bearer ${connection.credentials.token ?? ""}` };
}

async function failure(res: Response, what: string): Promise<DeliveryError> {
  const message = await providerMessage(res);
  const kind = failureKindOf(res.status);
  if (kind === "auth") return new DeliveryError("auth", `The Mastodon server refused the access token (${message}). ${TOKEN_HINT}`);
  return new DeliveryError(kind, `The Mastodon server refused the ${what}: ${message}`);
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Uploads one image with its description and waits until the instance has processed it. Answers the media id. */
async function uploadMedia(deps: Deps, connection: OpenConnection, image: DeliveryImage): Promise<string> {
  const limit = connection.meta.imageSizeLimit ?? DEFAULT_IMAGE_SIZE_LIMIT;
  const fitted = await fitImageUnderBytes(image.bytes, image.mimeType, limit).catch((error: Error) => {
    throw new DeliveryError("permanent", `An image could not be prepared for Mastodon: ${error.message}`);
  });
  const ext = fitted.mimeType.split("/")[1] ?? "bin";
  const form: MultipartPart[] = [{ name: "file", fileName: `image.${ext}`, type: fitted.mimeType, bytes: fitted.bytes }];
  if (image.altText) form.push({ name: "description", value: image.altText });
  const res = await providerFetch(deps, api(connection, "/api/v2/media"), { method: "POST", headers: authHeaders(connection), body: form });
  if (res.status !== 200 && res.status !== 202) throw await failure(res, "image upload");
  const media = (await res.json()) as { id: string; url: string | null };
  if (res.status === 200 && media.url) return media.id;
  for (const delay of MEDIA_POLL_DELAYS_MS) {
    await sleep(delay);
    const poll = await providerFetch(deps, api(connection, `/api/v1/media/${media.id}`), { headers: authHeaders(connection) });
    if (poll.status === 200) {
      await poll.body?.cancel();
      return media.id;
    }
    if (poll.status !== 206) throw await failure(poll, "image upload");
    await poll.body?.cancel();
  }
  throw new DeliveryError("transient", "The Mastodon server is still processing the image; will try again.");
}

/**
 * Uploads a post's (or a part's) images in order, each with its description. More than the server takes (its
 * `max_media_attachments`) is a permanent refusal, never a silent drop.
 */
async function uploadAll(deps: Deps, connection: OpenConnection, images: readonly DeliveryImage[]): Promise<string[]> {
  const max = mastodonConnector.capabilities(connection).maxImages;
  if (images.length > max) throw new DeliveryError("permanent", `This Mastodon server takes at most ${max} images per post; this one has ${images.length}.`);
  const ids: string[] = [];
  for (const image of images) ids.push(await uploadMedia(deps, connection, image));
  return ids;
}

/**
 * The Idempotency-Key of part `index` of a target's post: the target id for the post itself (as statuses handed over
 * before threads existed were keyed), `<targetId>:<index>` for each later part.
 */
export function idempotencyKeyForPart(targetId: string, index: number): string {
  return index === 0 ? targetId : `${targetId}:${index}`;
}

/** POSTs one status (a part) under its Idempotency-Key. Answers the server's status or scheduled status. */
async function postStatus(
  ctx: DeliveryContext,
  body: Record<string, unknown>,
  index: number,
  what: string,
): Promise<{ id: string; url?: string | null; params?: unknown }> {
  const { deps, connection } = ctx;
  const res = await providerFetch(deps, api(connection, "/api/v1/statuses"), {
    method: "POST",
    headers: { ...authHeaders(connection), "content-type": "application/json", [IDEMPOTENCY_HEADER]: idempotencyKeyForPart(ctx.targetId, index) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res, what);
  return (await res.json()) as { id: string; url?: string | null; params?: unknown };
}

/** The public URL of a status (for a post whose first part went out in an earlier attempt); null when not answered. */
async function statusUrl(deps: Deps, connection: OpenConnection, id: string): Promise<string | null> {
  const res = await providerFetch(deps, api(connection, `/api/v1/statuses/${encodeURIComponent(id)}`), { headers: authHeaders(connection) });
  if (!res.ok) {
    await res.body?.cancel();
    return null;
  }
  const status = (await res.json().catch(() => null)) as { url?: unknown } | null;
  return typeof status?.url === "string" ? status.url : null;
}

function stripHtml(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>\s*<p>/gi, "\n\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

/** A status as the account's recent statuses list it. */
interface RecentStatus {
  id: string;
  url: string | null;
  created_at: string;
  content: string;
  in_reply_to_id?: string | null;
}

/**
 * The account's recent statuses, newest first (GET /api/v1/accounts/:id/statuses, the documented maximum page); null
 * when the account's id is not known yet. Throws a transient DeliveryError when the server does not answer the list.
 */
async function recentStatuses(deps: Deps, connection: OpenConnection): Promise<RecentStatus[] | null> {
  const accountId = connection.meta.providerAccountId;
  if (!accountId) return null;
  const res = await providerFetch(deps, api(connection, `/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?limit=${STATUS_LOOKUP_LIMIT}`), {
    headers: authHeaders(connection),
  });
  if (!res.ok) {
    const words = await providerMessage(res);
    throw new DeliveryError("transient", `The Mastodon server could not list the account's recent posts: ${words}`);
  }
  const statuses = (await res.json().catch(() => [])) as unknown;
  return Array.isArray(statuses) ? (statuses as RecentStatus[]).filter((s) => typeof s?.id === "string" && typeof s.content === "string") : [];
}

/** The recent status with `text`, created from `since` − 2 minutes on, replying to `parent` when given. */
function findStatus(statuses: readonly RecentStatus[], text: string, since: number, parent?: string | null): RecentStatus | undefined {
  const expected = text.trim();
  return statuses.find(
    (s) =>
      Date.parse(s.created_at) >= since - CONFIRM_WINDOW_BEFORE_MS &&
      stripHtml(s.content) === expected &&
      (parent === undefined || (s.in_reply_to_id ?? null) === parent),
  );
}

/** Finds the status a scheduled status became: the account's recent statuses, by time and text. */
async function findPublishedStatus(deps: Deps, connection: OpenConnection, content: DeliveryContent): Promise<{ id: string; url: string | null } | null> {
  const statuses = await recentStatuses(deps, connection).catch(() => null);
  const match = statuses ? findStatus(statuses, content.caption, content.scheduledTime) : undefined;
  return match ? { id: match.id, url: match.url } : null;
}

/** The account verify_credentials answered, when it has the shape of a Mastodon account (id and username or acct). */
function accountOf(body: unknown): { id: string; acct: string } | null {
  if (body === null || typeof body !== "object") return null;
  const { id, acct, username } = body as Record<string, unknown>;
  const name = typeof acct === "string" && acct !== "" ? acct : typeof username === "string" && username !== "" ? username : null;
  return typeof id === "string" && id !== "" && name !== null ? { id, acct: name } : null;
}

function notMastodon(connection: OpenConnection): CheckResult {
  return {
    ready: false,
    fix: "address",
    notThisNetwork: true,
    blockedReason: `${connection.endpoint} does not answer like a Mastodon server. Enter the address of your Mastodon server, the one you sign in at (such as mastodon.social).`,
  };
}

/** The Mastodon connector. */
export const mastodonConnector: Connector = {
  platform: "mastodon",
  captionLimit: (connection) => ({
    maxGraphemes: connection.meta.maxCharacters ?? MASTODON_DEFAULT_MAX_CHARACTERS,
    urlLength: connection.meta.urlLength ?? MASTODON_URL_LENGTH,
    platformName: "Mastodon",
  }),
  capabilities: (connection) => ({
    name: "Mastodon",
    maxImages: connection.meta.maxMediaAttachments ?? MASTODON_DEFAULT_MAX_MEDIA,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: true,
    requiresImage: false,
    imageTypes: LIBRARY_IMAGE_TYPES,
  }),
  reconcileProvesAbsence: false,
  // A thread or a first comment needs each part's status id for the next one's reply: the service holds those posts.
  holdsNatively: (scheduledTime, now, content) => !hasSeveralParts(content) && scheduledTime - now >= MIN_NATIVE_LEAD_MS,

  async check(deps, connection): Promise<CheckResult> {
    const problem = outboundProblem(deps, connection.endpoint);
    if (problem !== null) return { ready: false, fix: "address", blockedReason: `The Mastodon server address cannot be used: ${problem}` };
    try {
      const facts = await detectServer(deps, connection.endpoint);
      if (facts === NOT_MASTODON) return notMastodon(connection);
      const meta: CheckResult["meta"] = { ...connection.meta, ...serverMeta(facts, SERVER_DEFAULTS) };
      const res = await providerFetch(deps, api(connection, "/api/v1/accounts/verify_credentials"), { headers: authHeaders(connection) });
      if (res.status === 401 || res.status === 403) {
        const words = await providerMessage(res);
        // Signed in through the dashboard: the person revoked Seedcast on their server; the fix is to sign in again.
        if (connection.credentials.via === SIGNED_IN) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "Mastodon" })} (${words}).` };
        return { ready: false, fix: "credentials", blockedReason: `The Mastodon server refused the access token (${words}). ${TOKEN_HINT}` };
      }
      if (res.status === 404) {
        await res.body?.cancel();
        return notMastodon(connection);
      }
      if (!res.ok) return { ready: false, fix: "address", blockedReason: `The Mastodon server could not confirm the account: ${await providerMessage(res)}` };
      const account = accountOf(await res.json().catch(() => null));
      if (!account) return notMastodon(connection);
      meta.providerAccountId = account.id;
      const host = new URL(connection.endpoint).host;
      return { ready: true, blockedReason: null, label: `@${account.acct.includes("@") ? account.acct : `${account.acct}@${host}`}`, meta };
    } catch (error) {
      return { ready: false, fix: "address", blockedReason: `The Mastodon server could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const parts = partsOf(content);
    if (mastodonConnector.holdsNatively(content.scheduledTime, deps.clock.now(), content)) {
      // One part, far enough ahead: Mastodon holds it as a scheduled status.
      const mediaIds = await uploadAll(deps, connection, content.images);
      const body = { status: content.caption, visibility: "public", media_ids: mediaIds, scheduled_at: isoAt(content.scheduledTime) };
      const answer = await postStatus(ctx, body, 0, "post");
      await ctx.saveProviderPostId(answer.id);
      if (answer.params !== undefined) return { kind: "handed_over", providerPostId: answer.id };
      return { kind: "published", providerPostId: answer.id, publishedUrl: answer.url ?? null };
    }
    // Published now, part after part: each thread part replies to the one before it, the first comment to the post.
    let publishedUrl: string | null = null;
    for (const part of parts) {
      if (part.index < ctx.partsOut.length) continue; // out already: never sent twice
      const mediaIds = await uploadAll(deps, connection, part.images);
      const body: Record<string, unknown> = { status: part.caption, visibility: "public", media_ids: mediaIds };
      if (part.index > 0) body.in_reply_to_id = ctx.partsOut[part.kind === "first_comment" ? 0 : part.index - 1];
      const answer = await postStatus(ctx, body, part.index, part.index === 0 ? "post" : `part ${part.index + 1} of ${parts.length}`);
      // Recorded before the next part leaves: a retry resumes after it.
      await ctx.savePartOut(part.index, answer.id);
      if (part.index === 0) publishedUrl = answer.url ?? null;
    }
    const postId = ctx.partsOut[0] ?? "";
    if (publishedUrl === null) publishedUrl = await statusUrl(deps, connection, postId);
    return { kind: "published", providerPostId: postId, publishedUrl };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection } = ctx;
    const res = await providerFetch(deps, api(connection, "/api/v1/scheduled_statuses?limit=40"), { headers: authHeaders(connection) });
    if (!res.ok) throw await failure(res, "lookup of scheduled posts");
    const scheduled = (await res.json()) as ScheduledStatusBody[];
    const mine = scheduled.find((s) => s.params?.idempotency === ctx.targetId);
    if (mine) return { kind: "handed_over", providerPostId: mine.id };
    // Not held: the parts not recorded as out are looked for among the account's recent statuses (each by its text and
    // the status it replies to), in order, before any resend; some servers answer a repeated Idempotency-Key with 500
    // (decisions.md §12). What is not found is sent again under its part's key.
    const parts = partsOf(ctx.content);
    let postUrl: string | null = null;
    if (ctx.partsOut.length < parts.length) {
      const statuses = await recentStatuses(deps, connection);
      for (const part of parts.slice(ctx.partsOut.length)) {
        const parent = part.index === 0 ? null : ctx.partsOut[part.kind === "first_comment" ? 0 : part.index - 1];
        const found = statuses ? findStatus(statuses, part.caption, ctx.content.scheduledTime, parent) : undefined;
        if (!found) return null;
        await ctx.savePartOut(part.index, found.id);
        if (part.index === 0) postUrl = found.url;
      }
    }
    const postId = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: postId, publishedUrl: postUrl ?? (await statusUrl(deps, connection, postId)) };
  },

  async withdraw(deps, connection, providerPostId): Promise<boolean> {
    const res = await providerFetch(deps, api(connection, `/api/v1/scheduled_statuses/${encodeURIComponent(providerPostId)}`), {
      method: "DELETE",
      headers: authHeaders(connection),
    });
    if (res.ok) {
      await res.body?.cancel();
      return true;
    }
    if (res.status === 404) {
      await res.body?.cancel();
      return false;
    }
    const error = await failure(res, "cancellation");
    // Any refusal to withdraw keeps the row: the caller answers 502 distribution_failed.
    throw new DeliveryError(error.kind === "permanent" ? "transient" : error.kind, error.message);
  },

  async confirm(deps, connection, providerPostId, content): Promise<ConfirmResult> {
    const res = await providerFetch(deps, api(connection, `/api/v1/scheduled_statuses/${encodeURIComponent(providerPostId)}`), {
      headers: authHeaders(connection),
    });
    if (res.ok) {
      await res.body?.cancel();
      return { state: "pending" };
    }
    if (res.status !== 404) throw await failure(res, "lookup of the scheduled post");
    await res.body?.cancel();
    const found = await findPublishedStatus(deps, connection, content);
    return found
      ? { state: "published", publishedUrl: found.url, providerPostId: found.id }
      : { state: "published", publishedUrl: null, providerPostId };
  },
};
