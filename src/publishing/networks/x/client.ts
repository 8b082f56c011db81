/**
 * A small typed client for the X API v2 calls Seedcast makes (types.ts, from X's OpenAPI description): upload an image
 * (`POST /2/media/upload`, the v2 one-shot upload, base64 in JSON), its alt text (`POST /2/media/metadata`), create a
 * post (`POST /2/tweets`), who signed in (`GET /2/users/me`), and an account's recent posts (`GET /2/users/{id}/tweets`).
 * Every call goes through providerFetch (time limit, PLATFORM_ORIGIN_OVERRIDES). No library was used: the maintained
 * SDKs either predate the v2 media endpoints or cannot take a base-URL override.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { failureKindOf, providerFetch } from "../../outbound";
import type {
  CreateMediaMetadataRequest,
  CreatePostsRequest,
  CreatePostsResponse,
  GetUsersMeResponse,
  GetUsersPostsResponse,
  MediaUploadRequest,
  MediaUploadResponse,
  Post,
  Problem,
} from "./types";

/** X's API origin (the README lists it; tests point it at the stand-in with PLATFORM_ORIGIN_OVERRIDES). */
export const X_API = "https://api.x.com";

/** X's words from an error answer: the problem's `detail` (or `title`), the first `errors[].message`, else the status. */
export async function xMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as Problem;
    const words = [body.detail ?? body.title ?? body.message, body.errors?.[0]?.message].filter((w): w is string => typeof w === "string" && w !== "");
    if (words.length > 0) return [...new Set(words)].join(": ");
  } catch {
    // not JSON
  }
  return text.trim() !== "" ? `HTTP ${res.status}: ${text.trim().slice(0, 300)}` : `HTTP ${res.status}`;
}

/** An X refusal classified: 401 → auth (the token), 402 → the app has no API credits left, 429/5xx → transient. */
export async function xFailure(res: Response, what: string): Promise<DeliveryError> {
  const words = await xMessage(res);
  if (res.status === 401) return new DeliveryError("auth", `X refused Seedcast's sign-in (${words}): reconnect X.`);
  if (res.status === 402) return new DeliveryError("permanent", `X refused the ${what}: the instance's X app has no API credits left (${words}). The instance admin buys credits in X's developer console.`);
  const kind = failureKindOf(res.status);
  // 403 at X is a refusal of this request (duplicate text, a reply to a deleted post), not of the token.
  return new DeliveryError(kind === "auth" ? "permanent" : kind, `X refused the ${what}: ${words}`);
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

async function postJson(deps: Pick<Deps, "config">, token: string, path: string, body: unknown): Promise<Response> {
  return providerFetch(deps, `${X_API}${path}`, { method: "POST", headers: { ...bearer(token), "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** Uploads one image; answers its media id. */
export async function uploadImage(deps: Pick<Deps, "config">, token: string, bytes: Uint8Array, mimeType: string): Promise<string> {
  const body: MediaUploadRequest = { media: Buffer.from(bytes).toString("base64"), media_category: mimeType === "image/gif" ? "tweet_gif" : "tweet_image" };
  const res = await postJson(deps, token, "/2/media/upload", body);
  if (!res.ok) throw await xFailure(res, "image upload");
  const answer = (await res.json().catch(() => null)) as MediaUploadResponse | null;
  const id = answer?.data?.id;
  if (typeof id !== "string") throw new DeliveryError("transient", "X answered the image upload without a media id.");
  return id;
}

/** Sets an uploaded image's alt text (X keeps at most 1,000 characters). */
export async function setAltText(deps: Pick<Deps, "config">, token: string, mediaId: string, altText: string): Promise<void> {
  const body: CreateMediaMetadataRequest = { id: mediaId, metadata: { alt_text: { text: altText.slice(0, 1000) } } };
  const res = await postJson(deps, token, "/2/media/metadata", body);
  if (!res.ok) throw await xFailure(res, "image description");
  await res.body?.cancel();
}

/**
 * Creates a post. Throws DeliveryError `unknown` when the request left but no whole answer came back (the post may
 * exist: the caller looks it up before any resend).
 */
export async function createPost(deps: Pick<Deps, "config">, token: string, body: CreatePostsRequest): Promise<{ id: string }> {
  let res: Response;
  try {
    res = await postJson(deps, token, "/2/tweets", body);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `X did not answer the post (${(error as Error).message}); it is looked up before anything is sent again.`);
  }
  if (!res.ok) throw await xFailure(res, "post");
  let answer: CreatePostsResponse | null;
  try {
    answer = (await res.json()) as CreatePostsResponse;
  } catch {
    throw new DeliveryError("unknown", "X's answer to the post was cut off; it is looked up before anything is sent again.");
  }
  const id = answer?.data?.id;
  if (typeof id !== "string") throw new DeliveryError("unknown", "X answered the post without its id; it is looked up before anything is sent again.");
  return { id };
}

/** Who the token belongs to. */
export async function me(deps: Pick<Deps, "config">, token: string): Promise<{ ok: true; id: string; username: string } | { ok: false; status: number; words: string }> {
  const res = await providerFetch(deps, `${X_API}/2/users/me`, { headers: bearer(token) });
  if (!res.ok) return { ok: false, status: res.status, words: await xMessage(res) };
  const body = (await res.json().catch(() => null)) as GetUsersMeResponse | null;
  if (typeof body?.data?.id !== "string" || typeof body.data.username !== "string") return { ok: false, status: 502, words: "X did not say which account this is" };
  return { ok: true, id: body.data.id, username: body.data.username };
}

/** The account's posts created from `since` on, newest first (one page of 100, X's maximum). */
export async function recentPosts(deps: Pick<Deps, "config">, token: string, userId: string, since: number): Promise<Post[]> {
  const query = new URLSearchParams({ max_results: "100", start_time: new Date(since).toISOString().replace(/\.\d{3}Z$/, "Z"), "post.fields": "created_at,conversation_id" });
  const res = await providerFetch(deps, `${X_API}/2/users/${encodeURIComponent(userId)}/tweets?${query}`, { headers: bearer(token) });
  if (!res.ok) {
    const error = await xFailure(res, "lookup of recent posts");
    throw new DeliveryError(error.kind === "auth" ? "auth" : "transient", error.message);
  }
  const body = (await res.json().catch(() => null)) as GetUsersPostsResponse | null;
  return Array.isArray(body?.data) ? body.data.filter((p) => typeof p?.id === "string" && typeof p.text === "string") : [];
}
