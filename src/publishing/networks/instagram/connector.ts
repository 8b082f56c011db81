/**
 * Instagram (decisions.md §12, §13), the Instagram API with Instagram Login. Seedcast holds every post (the API has no
 * scheduling) and at its time runs the container flow
 * (https://developers.facebook.com/docs/instagram-platform/content-publishing):
 * - one image: an image container (`image_url`, `alt_text`, `caption`); 2–10 images: a container per image
 *   (`is_carousel_item`), then a CAROUSEL container over them with the caption;
 * - the container's `status_code` is polled until FINISHED; ERROR ends the delivery with Instagram's words (permanent:
 *   the same images would fail again); a status still IN_PROGRESS after the polling limit gives up for now (transient:
 *   nothing was published, so a retry starts over safely); EXPIRED starts over likewise;
 * - the container id is recorded on the target before `media_publish`; the media id is then recorded as part 0, and
 *   the first comment goes out as a comment under it (part 1).
 * Instagram fetches each image from this server: `{base_url}/media/<id>.instagram.jpg`, the asset re-encoded as
 * JPEG within 4:5 to 1.91:1 by padding. So a connection is ready only while BASE_URL is a public https address (or a
 * host in ALLOW_PRIVATE_HOSTS). Captions: 2,200 characters and 30 hashtags. A post needs an image.
 *
 * Recovery after an unknown outcome: the container proves absence. No container recorded → `media_publish` never
 * left; a recorded container whose status is not PUBLISHED was not published (a container publishes once). A
 * PUBLISHED one is found among the account's recent media by its caption and recorded; a first comment is looked up
 * under the media before it is sent again.
 */
import type { Deps } from "../../../deps";
import type { OpenConnection } from "../../../store/connections";
import { type CheckResult, type Connector, type DeliveryContext, type DeliveryImage, type DeliveryResult, DeliveryError, partsOf } from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { baseUrlFetchable } from "../meta/graph";
import { type LookedStatus, awaitContainer, pollingBudget } from "../meta/polling";
import {
  containerStatus,
  createCarouselContainer,
  createImageContainer,
  instagramMe,
  mediaComments,
  permalinkOf,
  postComment,
  publishContainer,
  recentMedia,
} from "./client";

/** Instagram's caption limit. */
export const INSTAGRAM_MAX_CAPTION = 2200;
/** Hashtags per caption. */
export const INSTAGRAM_MAX_HASHTAGS = 30;
/** Images per post (a carousel takes 2–10). */
export const INSTAGRAM_MAX_IMAGES = 10;
/** What a connection says while Instagram could not fetch the images. */
export const INSTAGRAM_BASE_URL_REASON = "Instagram fetches images from this server: set BASE_URL to a public https address";
/** The prefix under which a container id is recorded on the target before it is published. */
const CONTAINER_PREFIX = "container:";

/** The hashtags of `text` (Instagram counts `#word` tokens). */
export function hashtagCount(text: string): number {
  return (text.match(/(^|[^\p{L}\p{N}_&])#[\p{L}\p{N}_]+/gu) ?? []).length;
}

function hashtagRule(text: string): string | null {
  const n = hashtagCount(text);
  return n > INSTAGRAM_MAX_HASHTAGS ? `${n} hashtags; Instagram allows ${INSTAGRAM_MAX_HASHTAGS}` : null;
}

function token(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

function userIdOf(connection: OpenConnection): string {
  const id = connection.meta.providerAccountId;
  if (!id) throw new DeliveryError("transient", "The Instagram account's id is not known yet: its check runs again before the post goes out.");
  return id;
}

/** The URL Instagram fetches an image from: the asset's Instagram variant (JPEG, 4:5 to 1.91:1). */
export function instagramImageUrl(image: Pick<DeliveryImage, "url" | "assetId">): string {
  return image.url.replace(/\/[^/]+$/, `/${image.assetId}.instagram.jpg`);
}

async function looked(deps: Pick<Deps, "config">, accessToken: string, containerId: string): Promise<LookedStatus> {
  const status = await containerStatus(deps, accessToken, containerId);
  return { code: status.statusCode, words: status.status };
}

async function publishUrl(deps: Pick<Deps, "config">, connection: OpenConnection, mediaId: string): Promise<string | null> {
  return permalinkOf(deps, token(connection), mediaId);
}

/** The Instagram connector. */
export const instagramConnector: Connector = {
  platform: "instagram",
  captionLimit: () => ({ maxGraphemes: INSTAGRAM_MAX_CAPTION, platformName: "Instagram", rule: hashtagRule }),
  capabilities: () => ({
    name: "Instagram",
    maxImages: INSTAGRAM_MAX_IMAGES,
    maxThreadParts: 0,
    firstComment: true,
    requiresImage: true,
    // Every library type: each is re-encoded as JPEG for Instagram.
    imageTypes: ["image/png", "image/jpeg", "image/gif", "image/webp"],
  }),
  holdsNatively: () => false,
  reconcileProvesAbsence: true,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const who = await instagramMe(deps, token(connection));
      if (!who.ok) {
        if (who.tokenGone) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "Instagram" })} (${who.words}).` };
        return { ready: false, blockedReason: `Instagram could not confirm the account: ${who.words}` };
      }
      const meta = { ...connection.meta, providerAccountId: who.userId };
      if (!baseUrlFetchable(deps)) return { ready: false, blockedReason: INSTAGRAM_BASE_URL_REASON, label: `@${who.username}`, meta };
      return { ready: true, blockedReason: null, label: `@${who.username}`, meta };
    } catch (error) {
      return { ready: false, blockedReason: `Instagram could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const parts = partsOf(content);
    const accessToken = token(connection);
    if (ctx.partsOut.length === 0) {
      if (content.images.length === 0) throw new DeliveryError("permanent", "Instagram needs at least one image; this post has none.");
      if (content.images.length > INSTAGRAM_MAX_IMAGES) throw new DeliveryError("permanent", `Instagram takes at most ${INSTAGRAM_MAX_IMAGES} images; this post has ${content.images.length}.`);
      if (!baseUrlFetchable(deps)) throw new DeliveryError("permanent", `${INSTAGRAM_BASE_URL_REASON}.`);
      const userId = userIdOf(connection);
      const budget = pollingBudget(deps);
      let containerId: string;
      if (content.images.length === 1) {
        const image = content.images[0] as DeliveryImage;
        containerId = await createImageContainer(deps, accessToken, userId, { url: instagramImageUrl(image), altText: image.altText }, content.caption, false);
      } else {
        const children: string[] = [];
        for (const image of content.images) {
          children.push(await createImageContainer(deps, accessToken, userId, { url: instagramImageUrl(image), altText: image.altText }, null, true));
        }
        for (const child of children) await awaitContainer("Instagram", () => looked(deps, accessToken, child), budget);
        containerId = await createCarouselContainer(deps, accessToken, userId, children, content.caption);
      }
      await awaitContainer("Instagram", () => looked(deps, accessToken, containerId), budget);
      // Recorded before publishing: a recovery asks this container whether it was published.
      await ctx.saveProviderPostId(`${CONTAINER_PREFIX}${containerId}`);
      const mediaId = await publishContainer(deps, accessToken, userId, containerId);
      await ctx.savePartOut(0, mediaId);
    }
    const mediaId = ctx.partsOut[0] ?? "";
    for (const part of parts) {
      if (part.index < ctx.partsOut.length) continue;
      // The only later part on Instagram: the first comment.
      const commentId = await postComment(deps, accessToken, mediaId, part.caption);
      await ctx.savePartOut(part.index, commentId);
    }
    return { kind: "published", providerPostId: mediaId, publishedUrl: await publishUrl(deps, connection, mediaId) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    const accessToken = token(connection);
    const parts = partsOf(content);
    if (ctx.partsOut.length === 0) {
      const recorded = ctx.recordedProviderId ?? null;
      // No container recorded: media_publish never left.
      if (recorded === null || !recorded.startsWith(CONTAINER_PREFIX)) return null;
      const status = await containerStatus(deps, accessToken, recorded.slice(CONTAINER_PREFIX.length));
      // A container publishes once: one not PUBLISHED proves the post is not out.
      if (status.statusCode !== "PUBLISHED") return null;
      const media = await recentMedia(deps, accessToken, userIdOf(connection));
      const found = media.find((m) => m.caption.trim() === content.caption.trim());
      if (!found) throw new DeliveryError("transient", "Instagram says the post was published, but it is not among the account's recent posts yet; looked up again later.");
      await ctx.savePartOut(0, found.id);
    }
    const mediaId = ctx.partsOut[0] ?? "";
    for (const part of parts.slice(ctx.partsOut.length)) {
      const comments = await mediaComments(deps, accessToken, mediaId);
      const found = comments.find((c) => c.text.trim() === part.caption.trim() && !ctx.partsOut.includes(c.id));
      if (!found) return null;
      await ctx.savePartOut(part.index, found.id);
    }
    return { kind: "published", providerPostId: mediaId, publishedUrl: await publishUrl(deps, connection, mediaId) };
  },

  async withdraw(): Promise<boolean> {
    // Nothing is ever held at Instagram.
    return false;
  },
};

