/**
 * A small client for the Threads API (host graph.threads.net; version pinned here), after
 * https://developers.facebook.com/docs/threads/posts and https://developers.facebook.com/docs/threads/reply-management:
 * containers (`POST /<user>/threads` with `media_type` TEXT, IMAGE or CAROUSEL, `text`, `image_url`, `alt_text`,
 * `is_carousel_item`, `children`, `reply_to_id`), a container's `status` (IN_PROGRESS, FINISHED, ERROR with
 * `error_message`, EXPIRED, PUBLISHED), `POST /<user>/threads_publish` with `creation_id`, the account (`GET /me`),
 * its recent threads and a thread's replies (lookups after an unknown outcome), a media's permalink. Every call goes
 * through providerFetch (PLATFORM_ORIGIN_OVERRIDES). No library: none maintained covers the Threads API with a
 * base-URL override.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { graphCall, graphError, graphFailure } from "../meta/graph";
import type { LookedStatus } from "../meta/polling";

/** The Threads API host. */
export const THREADS_GRAPH = "https://graph.threads.net";
/** The API version Seedcast speaks (one place). */
export const THREADS_API_VERSION = "v1.0";
const API = `${THREADS_GRAPH}/${THREADS_API_VERSION}`;

async function call(deps: Pick<Deps, "config">, method: "GET" | "POST", path: string, params: Record<string, string>, token: string, what: string) {
  const answer = await graphCall(deps, method, `${API}${path}`, params, token);
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Threads", what, graphError(answer.status, answer.body));
  return answer.body ?? {};
}

/** Creates a container; answers its id. `params` are the Threads parameters (media_type, text, image_url …). */
export async function createContainer(deps: Pick<Deps, "config">, token: string, userId: string, params: Record<string, string>): Promise<string> {
  const body = await call(deps, "POST", `/${encodeURIComponent(userId)}/threads`, params, token, "post");
  if (typeof body.id !== "string" || body.id === "") throw new DeliveryError("transient", "Threads answered without a container id.");
  return body.id;
}

/** A container's status. */
export async function containerStatus(deps: Pick<Deps, "config">, token: string, containerId: string): Promise<LookedStatus> {
  const body = await call(deps, "GET", `/${encodeURIComponent(containerId)}`, { fields: "status,error_message" }, token, "status check");
  return { code: typeof body.status === "string" ? body.status : "IN_PROGRESS", words: typeof body.error_message === "string" ? body.error_message : null };
}

/** Publishes a container; answers the thread's media id (`unknown` when no whole answer came back). */
export async function publishContainer(deps: Pick<Deps, "config">, token: string, userId: string, containerId: string): Promise<string> {
  let answer: Awaited<ReturnType<typeof graphCall>>;
  try {
    answer = await graphCall(deps, "POST", `${API}/${encodeURIComponent(userId)}/threads_publish`, { creation_id: containerId }, token);
  } catch (error) {
    if (error instanceof DeliveryError && error.kind !== "unknown") throw error;
    throw new DeliveryError("unknown", `Threads did not answer the publish (${(error as Error).message}); its container is checked before anything is sent again.`);
  }
  if (answer.status < 200 || answer.status >= 300) throw graphFailure("Threads", "post", graphError(answer.status, answer.body));
  const id = answer.body?.id;
  if (typeof id !== "string" || id === "") throw new DeliveryError("unknown", "Threads' answer to the publish was cut off; its container is checked before anything is sent again.");
  return id;
}

/** The account's recent threads (id and text), newest first. */
export async function recentThreads(deps: Pick<Deps, "config">, token: string, userId: string): Promise<{ id: string; text: string }[]> {
  const body = await call(deps, "GET", `/${encodeURIComponent(userId)}/threads`, { fields: "id,text,timestamp", limit: "25" }, token, "lookup of recent threads");
  return listOf(body);
}

/** The replies under a thread (id and text). */
export async function repliesOf(deps: Pick<Deps, "config">, token: string, mediaId: string): Promise<{ id: string; text: string }[]> {
  return listOf(await call(deps, "GET", `/${encodeURIComponent(mediaId)}/replies`, { fields: "id,text,timestamp" }, token, "lookup of replies"));
}

function listOf(body: Record<string, unknown>): { id: string; text: string }[] {
  const data = Array.isArray(body.data) ? (body.data as Record<string, unknown>[]) : [];
  return data.flatMap((m) => (typeof m.id === "string" ? [{ id: m.id, text: typeof m.text === "string" ? m.text : "" }] : []));
}

/** A thread's public address. */
export async function permalinkOf(deps: Pick<Deps, "config">, token: string, mediaId: string): Promise<string | null> {
  try {
    const body = await call(deps, "GET", `/${encodeURIComponent(mediaId)}`, { fields: "permalink" }, token, "post");
    return typeof body.permalink === "string" ? body.permalink : null;
  } catch {
    return null;
  }
}

/** Who the token belongs to. */
export async function threadsMe(deps: Pick<Deps, "config">, token: string): Promise<{ ok: true; userId: string; username: string } | { ok: false; tokenGone: boolean; words: string }> {
  const answer = await graphCall(deps, "GET", `${API}/me`, { fields: "id,username" }, token);
  if (answer.status < 200 || answer.status >= 300) {
    const e = graphError(answer.status, answer.body);
    return { ok: false, tokenGone: graphFailure("Threads", "check", e).kind === "auth", words: e.message };
  }
  const id = answer.body?.id;
  const username = answer.body?.username;
  if (typeof id !== "string" || typeof username !== "string") return { ok: false, tokenGone: false, words: "Threads did not say which account this is" };
  return { ok: true, userId: id, username };
}
