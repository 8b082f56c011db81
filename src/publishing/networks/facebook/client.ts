/**
 * A small client for the Graph API calls Seedcast makes for a Facebook Page (host graph.facebook.com; version pinned
 * here), after https://developers.facebook.com/docs/pages-api/posts and
 * https://developers.facebook.com/docs/graph-api/reference/page/photos: unpublished photo uploads
 * (`POST /<page>/photos` multipart `source`, `published=false`, `temporary=true` for a post Facebook will hold,
 * `alt_text_custom`), the feed post (`POST /<page>/feed` with `message`, `attached_media[i]={"media_fbid":…}`, and
 * `published=false` + `scheduled_publish_time` for a post Facebook holds), comments, a post's state
 * (`is_published`, `permalink_url`), deleting a post, and the Page's published and scheduled posts (the lookup after
 * an unknown outcome). Every call goes through providerFetch (PLATFORM_ORIGIN_OVERRIDES). No library: Meta's
 * official Node SDK is for the Marketing API and takes no base-URL override.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { type MultipartPart, providerFetch } from "../../outbound";
import { graphCall, graphError, graphFailure, graphJson, isTokenError } from "../meta/graph";

/** Facebook's Graph API host. */
export const FACEBOOK_GRAPH = "https://graph.facebook.com";
/** The Graph API version Seedcast speaks (one place). */
export const FACEBOOK_API_VERSION = "v23.0";
const API = `${FACEBOOK_GRAPH}/${FACEBOOK_API_VERSION}`;

/** A post of the Page as a lookup answers it. */
export interface PagePost {
  id: string;
  message: string;
}

async function call(deps: Pick<Deps, "config">, method: "GET" | "POST", path: string, params: Record<string, string>, token: string, what: string) {
  const answer = await graphCall(deps, method, `${API}${path}`, params, token);
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Facebook", what, graphError(answer.status, answer.body));
  return answer.body ?? {};
}

/** Uploads one photo unpublished (to be attached to a post); answers its id. */
export async function uploadPhoto(
  deps: Pick<Deps, "config">,
  token: string,
  pageId: string,
  image: { bytes: Uint8Array; mimeType: string; altText: string | null },
  held: boolean,
): Promise<string> {
  const parts: MultipartPart[] = [
    { name: "access_token", value: token },
    { name: "published", value: "false" },
    { name: "source", fileName: `image.${image.mimeType.split("/")[1] ?? "jpg"}`, type: image.mimeType, bytes: image.bytes },
  ];
  // A photo attached to a post Facebook holds must be temporary (it is published with the post).
  if (held) parts.push({ name: "temporary", value: "true" });
  if (image.altText) parts.push({ name: "alt_text_custom", value: image.altText });
  const res = await providerFetch(deps, `${API}/${encodeURIComponent(pageId)}/photos`, { method: "POST", body: parts });
  const body = await graphJson(res);
  if (!res.ok) throw graphFailure("Facebook", "photo", graphError(res.status, body));
  const id = body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("transient", "Facebook answered the photo upload without an id.");
  return id;
}

/**
 * Creates the feed post (held by Facebook until `scheduledAt` when given, in Unix seconds). Throws `unknown` when the
 * request left without a whole answer: the Page's posts are looked up before anything is sent again.
 */
export async function createFeedPost(
  deps: Pick<Deps, "config">,
  token: string,
  pageId: string,
  message: string,
  photoIds: readonly string[],
  scheduledAt: number | null,
): Promise<string> {
  const params: Record<string, string> = { message };
  photoIds.forEach((id, i) => {
    params[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id });
  });
  if (scheduledAt !== null) {
    params.published = "false";
    params.scheduled_publish_time = String(scheduledAt);
  }
  let answer: Awaited<ReturnType<typeof graphCall>>;
  try {
    answer = await graphCall(deps, "POST", `${API}/${encodeURIComponent(pageId)}/feed`, params, token);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `Facebook did not answer the post (${(error as Error).message}); the Page's posts are looked up before anything is sent again.`);
  }
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Facebook", "post", graphError(answer.status, answer.body));
  const id = answer.body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("unknown", "Facebook's answer to the post was cut off; the Page's posts are looked up before anything is sent again.");
  return id;
}

/** Comments under a post; answers the comment's id (`unknown` without a whole answer). */
export async function commentOn(deps: Pick<Deps, "config">, token: string, postId: string, message: string): Promise<string> {
  let answer: Awaited<ReturnType<typeof graphCall>>;
  try {
    answer = await graphCall(deps, "POST", `${API}/${encodeURIComponent(postId)}/comments`, { message }, token);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `Facebook did not answer the comment (${(error as Error).message}); it is looked up before anything is sent again.`);
  }
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Facebook", "first comment", graphError(answer.status, answer.body));
  const id = answer.body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("unknown", "Facebook's answer to the comment was cut off; it is looked up before anything is sent again.");
  return id;
}

function postsOf(body: Record<string, unknown>): PagePost[] {
  const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
  return data.flatMap((p) => (typeof p.id === "string" ? [{ id: p.id, message: typeof p.message === "string" ? p.message : "" }] : []));
}

/** The Page's published posts since `since` (ms) and the ones Facebook holds for later. */
export async function pagePosts(deps: Pick<Deps, "config">, token: string, pageId: string, since: number): Promise<PagePost[]> {
  const published = await call(deps, "GET", `/${encodeURIComponent(pageId)}/feed`, { fields: "id,message,created_time", since: String(Math.floor(since / 1000)), limit: "100" }, token, "lookup of the Page's posts");
  const held = await call(deps, "GET", `/${encodeURIComponent(pageId)}/scheduled_posts`, { fields: "id,message,scheduled_publish_time", limit: "100" }, token, "lookup of the Page's scheduled posts");
  return [...postsOf(published), ...postsOf(held)];
}

/** The comments under a post. */
export async function postComments(deps: Pick<Deps, "config">, token: string, postId: string): Promise<PagePost[]> {
  return postsOf(await call(deps, "GET", `/${encodeURIComponent(postId)}/comments`, { fields: "id,message" }, token, "lookup of comments"));
}

/** A post's state: published (with its address), still held, or gone. */
export async function postState(deps: Pick<Deps, "config">, token: string, postId: string): Promise<{ state: "published"; url: string | null } | { state: "held" } | { state: "gone" }> {
  const answer = await graphCall(deps, "GET", `${API}/${encodeURIComponent(postId)}`, { fields: "id,is_published,permalink_url" }, token);
  if (answer.status >= 200 && answer.status < 300) {
    if (answer.body?.is_published === false) return { state: "held" };
    return { state: "published", url: typeof answer.body?.permalink_url === "string" ? answer.body.permalink_url : null };
  }
  const e = graphError(answer.status, answer.body);
  if (e.code === 100 && !isTokenError(e) && answer.status < 500) return { state: "gone" };
  throw graphFailure("Facebook", "lookup of the post", e);
}

/** Deletes a post; false when Facebook no longer had it. */
export async function deletePost(deps: Pick<Deps, "config">, token: string, postId: string): Promise<boolean> {
  const answer = await graphCall(deps, "DELETE", `${API}/${encodeURIComponent(postId)}`, {}, token);
  if (answer.status >= 200 && answer.status < 300) return answer.body?.success === true;
  const e = graphError(answer.status, answer.body);
  if (e.code === 100 && answer.status < 500) return false;
  throw graphFailure("Facebook", "withdrawal", e);
}

/** The Page the token belongs to (a Page token answers for its Page). */
export async function pageInfo(deps: Pick<Deps, "config">, token: string, pageId: string): Promise<{ ok: true; name: string } | { ok: false; tokenGone: boolean; words: string }> {
  const answer = await graphCall(deps, "GET", `${API}/${encodeURIComponent(pageId)}`, { fields: "id,name" }, token);
  if (answer.status >= 200 && answer.status < 300 && typeof answer.body?.name === "string") return { ok: true, name: answer.body.name };
  const e = graphError(answer.status, answer.body);
  return { ok: false, tokenGone: isTokenError(e), words: e.message };
}

/** The Pages the person's user token may post to: id, name, Page token. */
export async function managedPages(deps: Pick<Deps, "config">, userToken: string): Promise<{ id: string; name: string; token: string }[]> {
  const body = await call(deps, "GET", "/me/accounts", { fields: "id,name,access_token,tasks", limit: "100" }, userToken, "list of Pages");
  const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
  return data.flatMap((p) => {
    const tasks = Array.isArray(p.tasks) ? (p.tasks as unknown[]) : null;
    // Only Pages where the person may create content (tasks absent: older answers; kept).
    if (tasks !== null && !tasks.includes("CREATE_CONTENT")) return [];
    return typeof p.id === "string" && typeof p.name === "string" && typeof p.access_token === "string" ? [{ id: p.id, name: p.name, token: p.access_token }] : [];
  });
}
