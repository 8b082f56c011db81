/**
 * Facebook Pages (decisions.md §12, §13). A post goes out as the Page's feed post with its photos attached: each
 * photo uploaded unpublished first (with its alt text, `alt_text_custom`), then `POST /<page>/feed` with
 * `attached_media`; the first comment is a comment under it. A post due more than 10 minutes ahead is held by
 * Facebook itself (`published=false`, `scheduled_publish_time`), unless it has a first comment (which needs the post
 * live): cancel deletes it there, and `confirm` reads whether it went out. Facebook has no threads. Captions up to
 * 63,206 characters.
 *
 * Recovery after an unknown outcome (the answer to the feed post or the comment lost): the Page's published and
 * scheduled posts are looked up for the caption (and the post's comments for the first comment) before anything is
 * sent again. Unpublished photos left from an attempt that failed are invisible and harmless.
 */
import type { Deps } from "../../../deps";
import { fitImageUnderBytes } from "../../../lib/image-fit";
import { loadSharp } from "../../../lib/sharp";
import type { OpenConnection } from "../../../store/connections";
import {
  type CheckResult,
  type ConfirmResult,
  type Connector,
  type DeliveryContext,
  type DeliveryImage,
  type DeliveryResult,
  DeliveryError,
  hasSeveralParts,
  partsOf,
} from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { commentOn, createFeedPost, deletePost, pageInfo, pagePosts, postComments, postState, uploadPhoto } from "./client";

/** Facebook's caption limit. */
export const FACEBOOK_MAX_CAPTION = 63_206;
/** Photos per post Seedcast sends. */
export const FACEBOOK_MAX_IMAGES = 10;
/** Facebook holds a post when it is due more than this ahead (its minimum is 10 minutes). */
export const FACEBOOK_HOLD_AHEAD_MS = 10 * 60 * 1000;
/** Facebook's photo size limit (4 MB for PNG; JPEG is smaller anyway). */
const PHOTO_BYTES = 4 * 1024 * 1024;
/** How long before the post's time a post found in the lookup may have been made. */
const LOOKUP_WINDOW_BEFORE_MS = 2 * 60 * 1000;

function token(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

function pageIdOf(connection: OpenConnection): string {
  const id = connection.meta.providerAccountId;
  if (!id) throw new DeliveryError("permanent", "The Facebook Page's id is not known: reconnect Facebook.");
  return id;
}

function postUrl(postId: string): string {
  return `https://www.facebook.com/${postId}`;
}

/** An image as Facebook takes it: WebP becomes JPEG; anything over 4 MB is shrunk. */
async function prepared(image: DeliveryImage): Promise<{ bytes: Uint8Array; mimeType: string; altText: string | null }> {
  try {
    let bytes = image.bytes;
    let mimeType = image.mimeType;
    if (mimeType === "image/webp") {
      bytes = new Uint8Array(await loadSharp()(bytes).rotate().jpeg({ quality: 88 }).toBuffer());
      mimeType = "image/jpeg";
    }
    const fitted = await fitImageUnderBytes(bytes, mimeType, PHOTO_BYTES);
    return { bytes: fitted.bytes, mimeType: fitted.mimeType, altText: image.altText };
  } catch (error) {
    throw new DeliveryError("permanent", `An image could not be prepared for Facebook: ${(error as Error).message}`);
  }
}

function holds(scheduledTime: number, now: number, content: { thread: readonly unknown[]; firstComment: string | null }): boolean {
  return scheduledTime - now > FACEBOOK_HOLD_AHEAD_MS && !hasSeveralParts(content);
}

/** The Facebook Pages connector. */
export const facebookConnector: Connector = {
  platform: "facebook",
  captionLimit: () => ({ maxGraphemes: FACEBOOK_MAX_CAPTION, platformName: "Facebook" }),
  capabilities: () => ({
    name: "Facebook",
    maxImages: FACEBOOK_MAX_IMAGES,
    maxThreadParts: 0,
    firstComment: true,
    requiresImage: false,
    imageTypes: ["image/png", "image/jpeg", "image/gif", "image/webp"],
  }),
  holdsNatively: holds,
  reconcileProvesAbsence: false,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const page = await pageInfo(deps, token(connection), pageIdOf(connection));
      if (page.ok) return { ready: true, blockedReason: null, label: page.name };
      if (page.tokenGone) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "Facebook" })} (${page.words}).` };
      return { ready: false, blockedReason: `Facebook could not confirm the Page: ${page.words}` };
    } catch (error) {
      return { ready: false, blockedReason: `Facebook could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const accessToken = token(connection);
    const pageId = pageIdOf(connection);
    const held = holds(content.scheduledTime, deps.clock.now(), content);
    if (ctx.partsOut.length === 0) {
      if (content.images.length > FACEBOOK_MAX_IMAGES) throw new DeliveryError("permanent", `Facebook posts from Seedcast take at most ${FACEBOOK_MAX_IMAGES} photos; this one has ${content.images.length}.`);
      const photoIds: string[] = [];
      for (const image of content.images) photoIds.push(await uploadPhoto(deps, accessToken, pageId, await prepared(image), held));
      const postId = await createFeedPost(deps, accessToken, pageId, content.caption, photoIds, held ? Math.floor(content.scheduledTime / 1000) : null);
      await ctx.savePartOut(0, postId);
      if (held) return { kind: "handed_over", providerPostId: postId };
    }
    const postId = ctx.partsOut[0] ?? "";
    for (const part of partsOf(content)) {
      if (part.index < ctx.partsOut.length) continue;
      await ctx.savePartOut(part.index, await commentOn(deps, accessToken, postId, part.caption));
    }
    const state = await postState(deps, accessToken, postId).catch(() => null);
    return { kind: "published", providerPostId: postId, publishedUrl: state?.state === "published" && state.url ? state.url : postUrl(postId) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    const accessToken = token(connection);
    const parts = partsOf(content);
    if (ctx.partsOut.length === 0) {
      const posts = await pagePosts(deps, accessToken, pageIdOf(connection), Math.min(content.scheduledTime, deps.clock.now()) - LOOKUP_WINDOW_BEFORE_MS - 24 * 60 * 60 * 1000);
      const found = posts.find((p) => p.message.trim() === content.caption.trim());
      if (!found) return null;
      await ctx.savePartOut(0, found.id);
    }
    const postId = ctx.partsOut[0] ?? "";
    for (const part of parts.slice(ctx.partsOut.length)) {
      const comments = await postComments(deps, accessToken, postId);
      const found = comments.find((c) => c.message.trim() === part.caption.trim() && !ctx.partsOut.includes(c.id));
      if (!found) return null;
      await ctx.savePartOut(part.index, found.id);
    }
    const state = await postState(deps, accessToken, postId);
    if (state.state === "held") return { kind: "handed_over", providerPostId: postId };
    return { kind: "published", providerPostId: postId, publishedUrl: state.state === "published" && state.url ? state.url : postUrl(postId) };
  },

  async withdraw(deps: Deps, connection: OpenConnection, providerPostId: string): Promise<boolean> {
    return deletePost(deps, token(connection), providerPostId);
  },

  async confirm(deps: Deps, connection: OpenConnection, providerPostId: string): Promise<ConfirmResult> {
    const state = await postState(deps, token(connection), providerPostId);
    if (state.state === "held") return { state: "pending" };
    if (state.state === "gone") return { state: "gone" };
    return { state: "published", publishedUrl: state.url ?? postUrl(providerPostId), providerPostId };
  },
};
