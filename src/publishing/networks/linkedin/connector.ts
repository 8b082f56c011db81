/**
 * LinkedIn, the signed-in member's profile (decisions.md §12, §13). The service holds every post (the Posts API
 * publishes at once): each image goes through the Images API (initializeUpload → PUT → urn:li:image) and carries its
 * alt text (`altText`); one image is a `media` post, 2 or more a `multiImage` post; then the first comment goes out
 * through the socialActions comments API. Each part is recorded as out before the next leaves. No threads.
 *
 * The commentary is LinkedIn's "little text" format: its reserved characters are escaped so they show as written
 * (`#` is left alone so hashtags stay hashtags).
 *
 * Recovery after an unknown outcome: the author's recent posts (`GET /rest/posts?q=author`) and the post's comments
 * are looked up for each part not recorded as out, matched by their text, before anything is sent again.
 */
import type { Deps } from "../../../deps";
import { loadSharp } from "../../../lib/sharp";
import type { OpenConnection } from "../../../store/connections";
import {
  type CheckResult,
  type Connector,
  type DeliveryContext,
  type DeliveryImage,
  type DeliveryResult,
  DeliveryError,
  LIBRARY_IMAGE_TYPES,
  partsOf,
} from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { type PostImage, commentsBy, createComment, createPost, recentPosts, uploadImage, userinfo } from "./client";

/** LinkedIn's commentary limit. */
export const LINKEDIN_MAX_CHARACTERS = 3000;
/** Images per post: §13 allows 10; LinkedIn's multiImage takes 2 to 20. */
export const LINKEDIN_MAX_IMAGES = 10;
/** Image types the Images API takes; WebP is re-encoded as JPEG. */
const LINKEDIN_TAKES = new Set(["image/jpeg", "image/png", "image/gif"]);
/** A post found by the look-up must have been made at most this long before the post's time. */
const LOOKUP_WINDOW_BEFORE_MS = 2 * 60 * 1000;
/** Little text's reserved characters (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/little-text-format), `#` aside. */
const RESERVED = /[\\|{}@[\]()<>*_~]/g;

/** The commentary as LinkedIn must receive `text` so it shows as written. */
export function littleText(text: string): string {
  return text.replace(RESERVED, (c) => `\\${c}`);
}

function accessToken(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

/** The member's urn (the userinfo `sub` kept at sign-in). */
function authorOf(connection: OpenConnection): string {
  const sub = connection.meta.providerAccountId;
  if (!sub) throw new DeliveryError("auth", "The LinkedIn member is not known: reconnect LinkedIn.");
  return `urn:li:person:${sub}`;
}

/** The public address of a post. */
export function linkedinPostUrl(urn: string): string {
  return `https://www.linkedin.com/feed/update/${urn}/`;
}

async function takenBytes(image: DeliveryImage): Promise<{ bytes: Uint8Array; mimeType: string }> {
  if (LINKEDIN_TAKES.has(image.mimeType)) return { bytes: image.bytes, mimeType: image.mimeType };
  try {
    const jpeg = await loadSharp()(image.bytes).rotate().jpeg({ quality: 88 }).toBuffer();
    return { bytes: new Uint8Array(jpeg), mimeType: "image/jpeg" };
  } catch (error) {
    throw new DeliveryError("permanent", `An image could not be prepared for LinkedIn: ${(error as Error).message}`);
  }
}

async function uploadAll(deps: Deps, connection: OpenConnection, images: readonly DeliveryImage[]): Promise<PostImage[]> {
  if (images.length > LINKEDIN_MAX_IMAGES) throw new DeliveryError("permanent", `LinkedIn posts take at most ${LINKEDIN_MAX_IMAGES} images here; this one has ${images.length}.`);
  const out: PostImage[] = [];
  for (const image of images) {
    const { bytes, mimeType } = await takenBytes(image);
    const id = await uploadImage(deps, accessToken(connection), authorOf(connection), bytes, mimeType);
    out.push(image.altText ? { id, altText: image.altText } : { id });
  }
  return out;
}

const same = (a: string, b: string) => a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();

/** The LinkedIn connector. */
export const linkedinConnector: Connector = {
  platform: "linkedin",
  captionLimit: () => ({ maxGraphemes: LINKEDIN_MAX_CHARACTERS, platformName: "LinkedIn" }),
  capabilities: () => ({
    name: "LinkedIn",
    maxImages: LINKEDIN_MAX_IMAGES,
    maxThreadParts: 0,
    firstComment: true,
    requiresImage: false,
    imageTypes: LIBRARY_IMAGE_TYPES,
  }),
  // The Posts API has no scheduled posts: Seedcast holds every one.
  holdsNatively: () => false,
  reconcileProvesAbsence: false,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const who = await userinfo(deps, accessToken(connection));
      if (who.ok) return { ready: true, blockedReason: null, label: who.name, meta: { ...connection.meta, providerAccountId: who.sub } };
      if (who.status === 401) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "LinkedIn" })} (${who.words}).` };
      return { ready: false, blockedReason: `LinkedIn could not confirm the member: ${who.words}` };
    } catch (error) {
      return { ready: false, blockedReason: `LinkedIn could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    if (content.thread.length > 0) throw new DeliveryError("permanent", "LinkedIn has no threads: remove the thread parts for LinkedIn.");
    const author = authorOf(connection);
    for (const part of partsOf(content)) {
      if (part.index < ctx.partsOut.length) continue; // out already: never sent twice
      let id: string;
      if (part.kind === "post") {
        const images = await uploadAll(deps, connection, part.images);
        id = await createPost(deps, accessToken(connection), author, littleText(part.caption), images);
      } else {
        id = await createComment(deps, accessToken(connection), author, ctx.partsOut[0] ?? "", part.caption);
      }
      await ctx.savePartOut(part.index, id);
    }
    const postId = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: postId, publishedUrl: linkedinPostUrl(postId) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    const parts = partsOf(content);
    const author = authorOf(connection);
    for (const part of parts.slice(ctx.partsOut.length)) {
      if (part.kind === "post") {
        const posts = await recentPosts(deps, accessToken(connection), author);
        const found = posts.find((p) => same(p.commentary, littleText(part.caption)) && p.createdAt >= content.scheduledTime - LOOKUP_WINDOW_BEFORE_MS);
        if (!found) return null;
        await ctx.savePartOut(part.index, found.id);
      } else {
        const comments = await commentsBy(deps, accessToken(connection), ctx.partsOut[0] ?? "", author);
        const found = comments.find((c) => same(c.text, part.caption));
        if (!found) return null;
        await ctx.savePartOut(part.index, found.id);
      }
    }
    const postId = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: postId, publishedUrl: linkedinPostUrl(postId) };
  },

  async withdraw(): Promise<boolean> {
    // Nothing is ever held at LinkedIn.
    return false;
  },
};
