/**
 * A small client for the Instagram API with Instagram Login (host graph.instagram.com; version pinned here), after
 * https://developers.facebook.com/docs/instagram-platform/content-publishing and
 * https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-container:
 * image containers (`POST /<ig-user>/media` with `image_url`, `alt_text`, `is_carousel_item`), a CAROUSEL container
 * (`media_type=CAROUSEL`, `children`), the container's `status_code` (IN_PROGRESS, FINISHED, ERROR, EXPIRED,
 * PUBLISHED), `POST /<ig-user>/media_publish` with `creation_id`, comments (`POST /<media>/comments`), the account
 * (`GET /me`), recent media and a media's comments (lookups after an unknown outcome). No library: Meta's official
 * SDKs do not cover Instagram Login's host, and every call must go through providerFetch (PLATFORM_ORIGIN_OVERRIDES).
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { graphCall, graphError, graphFailure } from "../meta/graph";

/** The Graph API host of Instagram Login. */
export const INSTAGRAM_GRAPH = "https://graph.instagram.com";
/** The API version Seedcast speaks (one place). */
export const INSTAGRAM_API_VERSION = "v23.0";
const API = `${INSTAGRAM_GRAPH}/${INSTAGRAM_API_VERSION}`;

/** A container's publishing status. */
export interface ContainerStatus {
  statusCode: "IN_PROGRESS" | "FINISHED" | "ERROR" | "EXPIRED" | "PUBLISHED" | string;
  /** Instagram's words when the status is ERROR. */
  status: string | null;
}

async function call(deps: Pick<Deps, "config">, method: "GET" | "POST", path: string, params: Record<string, string>, token: string, what: string) {
  const answer = await graphCall(deps, method, `${API}${path}`, params, token);
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Instagram", what, graphError(answer.status, answer.body));
  return answer.body ?? {};
}

function idOf(body: Record<string, unknown>, what: string): string {
  const id = body.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("transient", `Instagram answered the ${what} without an id.`);
  return id;
}

/** Creates an image container (a carousel item when `carouselItem`); answers its id. */
export async function createImageContainer(
  deps: Pick<Deps, "config">,
  token: string,
  userId: string,
  image: { url: string; altText: string | null },
  caption: string | null,
  carouselItem: boolean,
): Promise<string> {
  const params: Record<string, string> = { image_url: image.url };
  if (image.altText) params.alt_text = image.altText;
  if (carouselItem) params.is_carousel_item = "true";
  if (caption !== null) params.caption = caption;
  return idOf(await call(deps, "POST", `/${encodeURIComponent(userId)}/media`, params, token, "image"), "image");
}

/** Creates the CAROUSEL container over `children`; answers its id. */
export async function createCarouselContainer(deps: Pick<Deps, "config">, token: string, userId: string, children: readonly string[], caption: string): Promise<string> {
  const params = { media_type: "CAROUSEL", children: children.join(","), caption };
  return idOf(await call(deps, "POST", `/${encodeURIComponent(userId)}/media`, params, token, "carousel"), "carousel");
}

/** A container's status. */
export async function containerStatus(deps: Pick<Deps, "config">, token: string, containerId: string): Promise<ContainerStatus> {
  const body = await call(deps, "GET", `/${encodeURIComponent(containerId)}`, { fields: "status_code,status" }, token, "status check");
  return { statusCode: typeof body.status_code === "string" ? body.status_code : "IN_PROGRESS", status: typeof body.status === "string" ? body.status : null };
}

/**
 * Publishes a FINISHED container; answers the media id. A request that left without a whole answer throws `unknown`
 * (the container's status then tells whether it was published).
 */
export async function publishContainer(deps: Pick<Deps, "config">, token: string, userId: string, containerId: string): Promise<string> {
  let answer: Awaited<ReturnType<typeof graphCall>>;
  try {
    answer = await graphCall(deps, "POST", `${API}/${encodeURIComponent(userId)}/media_publish`, { creation_id: containerId }, token);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `Instagram did not answer the publish (${(error as Error).message}); its container is checked before anything is sent again.`);
  }
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Instagram", "post", graphError(answer.status, answer.body));
  const id = answer.body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("unknown", "Instagram's answer to the publish was cut off; its container is checked before anything is sent again.");
  return id;
}

/** Posts a comment under `mediaId`; answers its id (`unknown` when no whole answer came back). */
export async function postComment(deps: Pick<Deps, "config">, token: string, mediaId: string, message: string): Promise<string> {
  let answer: Awaited<ReturnType<typeof graphCall>>;
  try {
    answer = await graphCall(deps, "POST", `${API}/${encodeURIComponent(mediaId)}/comments`, { message }, token);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `Instagram did not answer the comment (${(error as Error).message}); it is looked up before anything is sent again.`);
  }
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Instagram", "first comment", graphError(answer.status, answer.body));
  const id = answer.body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("unknown", "Instagram's answer to the comment was cut off; it is looked up before anything is sent again.");
  return id;
}

/** The comments under a media (text and id), for the lookup after an unknown outcome. */
export async function mediaComments(deps: Pick<Deps, "config">, token: string, mediaId: string): Promise<{ id: string; text: string }[]> {
  const body = await call(deps, "GET", `/${encodeURIComponent(mediaId)}/comments`, { fields: "id,text" }, token, "comment lookup");
  const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
  return data.flatMap((c) => (typeof c.id === "string" && typeof c.text === "string" ? [{ id: c.id, text: c.text }] : []));
}

/** The account's recent media (id, caption, permalink), newest first. */
export async function recentMedia(deps: Pick<Deps, "config">, token: string, userId: string): Promise<{ id: string; caption: string; permalink: string | null }[]> {
  const body = await call(deps, "GET", `/${encodeURIComponent(userId)}/media`, { fields: "id,caption,permalink,timestamp", limit: "25" }, token, "media lookup");
  const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
  return data.flatMap((m) =>
    typeof m.id === "string" ? [{ id: m.id, caption: typeof m.caption === "string" ? m.caption : "", permalink: typeof m.permalink === "string" ? m.permalink : null }] : [],
  );
}

/** A media's public address. */
export async function permalinkOf(deps: Pick<Deps, "config">, token: string, mediaId: string): Promise<string | null> {
  try {
    const body = await call(deps, "GET", `/${encodeURIComponent(mediaId)}`, { fields: "permalink" }, token, "media");
    return typeof body.permalink === "string" ? body.permalink : null;
  } catch {
    return null;
  }
}

/** Who the token belongs to: the professional account's id (`user_id`, the one publishing uses) and username. */
export async function instagramMe(
  deps: Pick<Deps, "config">,
  token: string,
): Promise<{ ok: true; userId: string; username: string } | { ok: false; tokenGone: boolean; words: string }> {
  const answer = await graphCall(deps, "GET", `${API}/me`, { fields: "user_id,username" }, token);
  if (answer.status < 200 || answer.status >= 300) {
    const e = graphError(answer.status, answer.body);
    return { ok: false, tokenGone: graphFailure("Instagram", "check", e).kind === "auth", words: e.message };
  }
  const userId = answer.body?.user_id ?? answer.body?.id;
  const username = answer.body?.username;
  if ((typeof userId !== "string" && typeof userId !== "number") || typeof username !== "string") return { ok: false, tokenGone: false, words: "Instagram did not say which account this is" };
  return { ok: true, userId: String(userId), username };
}
