/**
 * A small typed client for LinkedIn's versioned REST API (LinkedIn publishes no OpenAPI description and no
 * maintained JavaScript library takes a base-URL override), written from LinkedIn's documentation:
 * - Posts API: https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api
 * - MultiImage: https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/multiimage-post-api
 * - Images API: https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api
 * - Comments: https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/comments-api
 * - Versioning (426 for a sunset version): https://learn.microsoft.com/en-us/linkedin/marketing/versioning
 * - userinfo: https://learn.microsoft.com/en-us/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { failureKindOf, providerFetch, providerMessage } from "../../outbound";

/** LinkedIn's API origin. */
export const LINKEDIN_API = "https://api.linkedin.com";

/**
 * THE LinkedIn API version Seedcast speaks (`LinkedIn-Version: YYYYMM`), pinned here and nowhere else. LinkedIn
 * retires each monthly version about one year after its release and then answers 426 to it: this value must move to
 * a newer version (and the Posts/Images/Comments calls be re-read against its changelog) before October 2027.
 */
export const LINKEDIN_VERSION = "202610";

/** The sentence for a 426: the pinned version is retired. */
export const VERSION_SUNSET =
  `LinkedIn no longer accepts API version ${LINKEDIN_VERSION}, which this Seedcast release speaks: LinkedIn retires each version after about a year. Upgrade Seedcast to a release that speaks a newer version; nothing was posted.`;

function headers(token: string, json = true): Record<string, string> {
  const h: Record<string, string> = {
    authorization: `Bearer ${token}`,
    "linkedin-version": LINKEDIN_VERSION,
    "x-restli-protocol-version": "2.0.0",
  };
  if (json) h["content-type"] = "application/json";
  return h;
}

/** A refusal as a DeliveryError: 426 → the version sentence (permanent), else by status, with LinkedIn's words. */
async function refusal(res: Response, what: string): Promise<DeliveryError> {
  if (res.status === 426) {
    await res.body?.cancel();
    return new DeliveryError("permanent", VERSION_SUNSET);
  }
  return new DeliveryError(failureKindOf(res.status), `LinkedIn refused ${what}: ${await providerMessage(res)}`);
}

/** Who the token belongs to (OpenID Connect userinfo): `sub` is the member id of urn:li:person. */
export async function userinfo(deps: Pick<Deps, "config">, token: string): Promise<{ ok: true; sub: string; name: string } | { ok: false; status: number; words: string }> {
  const res = await providerFetch(deps, `${LINKEDIN_API}/v2/userinfo`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) return { ok: false, status: res.status, words: await providerMessage(res) };
  const body = (await res.json().catch(() => null)) as { sub?: unknown; name?: unknown; given_name?: unknown; family_name?: unknown } | null;
  if (typeof body?.sub !== "string" || body.sub === "") return { ok: false, status: 502, words: "userinfo answered without `sub`" };
  const name = typeof body.name === "string" && body.name !== "" ? body.name : [body.given_name, body.family_name].filter((p) => typeof p === "string").join(" ");
  return { ok: true, sub: body.sub, name: name || body.sub };
}

/** Uploads one image (initializeUpload → PUT the bytes); answers its urn:li:image. */
export async function uploadImage(deps: Pick<Deps, "config">, token: string, owner: string, bytes: Uint8Array, mimeType: string): Promise<string> {
  const init = await providerFetch(deps, `${LINKEDIN_API}/rest/images?action=initializeUpload`, {
    method: "POST",
    headers: headers(token),
    body: JSON.stringify({ initializeUploadRequest: { owner } }),
  });
  if (!init.ok) throw await refusal(init, "the image upload");
  const answer = (await init.json().catch(() => null)) as { value?: { uploadUrl?: unknown; image?: unknown } } | null;
  const uploadUrl = answer?.value?.uploadUrl;
  const image = answer?.value?.image;
  if (typeof uploadUrl !== "string" || typeof image !== "string") throw new DeliveryError("transient", "LinkedIn answered the image upload without an upload URL.");
  const put = await providerFetch(deps, uploadUrl, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": mimeType },
    body: bytes,
    timeoutMs: 60_000,
  });
  if (!put.ok) throw await refusal(put, "the image bytes");
  await put.body?.cancel();
  return image;
}

/** One image of a post: its urn and alt text. */
export interface PostImage {
  id: string;
  altText?: string;
}

/** Creates a post (`POST /rest/posts`); answers its urn (the `x-restli-id` header). */
export async function createPost(deps: Pick<Deps, "config">, token: string, author: string, commentary: string, images: readonly PostImage[]): Promise<string> {
  const body: Record<string, unknown> = {
    author,
    commentary,
    visibility: "PUBLIC",
    distribution: { feedDistribution: "MAIN_FEED", targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: "PUBLISHED",
    isReshareDisabledByAuthor: false,
  };
  if (images.length === 1) body.content = { media: images[0] };
  else if (images.length > 1) body.content = { multiImage: { images } };
  const res = await providerFetch(deps, `${LINKEDIN_API}/rest/posts`, { method: "POST", headers: headers(token), body: JSON.stringify(body) });
  if (!res.ok) throw await refusal(res, "the post");
  await res.body?.cancel();
  const id = res.headers.get("x-restli-id");
  if (!id) throw new DeliveryError("unknown", "LinkedIn took the post without saying its id.");
  return id;
}

/** Comments on `postUrn` as `actor` (socialActions comments); answers the comment's urn. */
export async function createComment(deps: Pick<Deps, "config">, token: string, actor: string, postUrn: string, text: string): Promise<string> {
  const res = await providerFetch(deps, `${LINKEDIN_API}/rest/socialActions/${encodeURIComponent(postUrn)}/comments`, {
    method: "POST",
    headers: headers(token),
    body: JSON.stringify({ actor, object: postUrn, message: { text } }),
  });
  if (!res.ok) throw await refusal(res, "the first comment");
  const answer = (await res.json().catch(() => null)) as { commentUrn?: unknown; $URN?: unknown } | null;
  const id = res.headers.get("x-restli-id") ?? (typeof answer?.commentUrn === "string" ? answer.commentUrn : typeof answer?.$URN === "string" ? answer.$URN : null);
  if (!id) throw new DeliveryError("unknown", "LinkedIn took the comment without saying its id.");
  return id;
}

/** One post as the author lookup answers it. */
export interface FoundPost {
  id: string;
  commentary: string;
  createdAt: number;
}

/** The author's recent posts, newest first (`GET /rest/posts?q=author`). */
export async function recentPosts(deps: Pick<Deps, "config">, token: string, author: string): Promise<FoundPost[]> {
  const res = await providerFetch(deps, `${LINKEDIN_API}/rest/posts?q=author&author=${encodeURIComponent(author)}&count=50&sortBy=CREATED`, {
    headers: headers(token, false),
  });
  if (!res.ok) throw await refusal(res, "the look-up of recent posts");
  const body = (await res.json().catch(() => null)) as { elements?: { id?: unknown; commentary?: unknown; createdAt?: unknown }[] } | null;
  return (body?.elements ?? []).flatMap((e) =>
    typeof e.id === "string" ? [{ id: e.id, commentary: typeof e.commentary === "string" ? e.commentary : "", createdAt: typeof e.createdAt === "number" ? e.createdAt : 0 }] : [],
  );
}

/** The comments on a post by `actor`: their urns and texts. */
export async function commentsBy(deps: Pick<Deps, "config">, token: string, postUrn: string, actor: string): Promise<{ id: string; text: string }[]> {
  const res = await providerFetch(deps, `${LINKEDIN_API}/rest/socialActions/${encodeURIComponent(postUrn)}/comments`, { headers: headers(token, false) });
  if (!res.ok) throw await refusal(res, "the look-up of comments");
  const body = (await res.json().catch(() => null)) as { elements?: { actor?: unknown; commentUrn?: unknown; $URN?: unknown; message?: { text?: unknown } }[] } | null;
  return (body?.elements ?? []).flatMap((e) => {
    const id = typeof e.commentUrn === "string" ? e.commentUrn : typeof e.$URN === "string" ? e.$URN : null;
    return e.actor === actor && id !== null ? [{ id, text: typeof e.message?.text === "string" ? e.message.text : "" }] : [];
  });
}
