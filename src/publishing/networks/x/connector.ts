/**
 * X (decisions.md §12, §13). The service holds every post (X's API has no scheduling) and publishes at its time:
 * each image is uploaded (`POST /2/media/upload`) and described (`POST /2/media/metadata`), up to 4 per post; the
 * post goes out (`POST /2/tweets`), then each thread part as a reply to the part before it, then the first comment as
 * a reply to the post (`reply.in_reply_to_tweet_id`); each part is recorded as out before the next leaves.
 *
 * Captions are counted X's way: the official `twitter-text` library's weighted length (URLs 23, CJK and emoji 2),
 * at most 280.
 *
 * X takes no idempotency key: after an unknown outcome (an answer lost), `reconcile` looks at the account's posts
 * since the post's time (GET /2/users/{id}/tweets) for each part not recorded as out, matching its text (links and
 * X's own t.co links set aside, X's HTML escapes undone) and its conversation, before anything is sent again.
 */
import twitter from "twitter-text";
import type { Deps } from "../../../deps";
import { MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import { fitImageUnderBytes } from "../../../lib/image-fit";
import type { OpenConnection } from "../../../store/connections";
import {
  type CheckResult,
  type Connector,
  type DeliveryContext,
  type DeliveryImage,
  type DeliveryResult,
  DeliveryError,
  partsOf,
} from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { createPost, recentPosts, setAltText, uploadImage, me } from "./client";
import type { CreatePostsRequest, Post } from "./types";

/** X's limit: 280, weighted (twitter-text). */
export const X_MAX_WEIGHTED = 280;
/** Images per post. */
export const X_MAX_IMAGES = 4;
/** X's image limit (5 MB). */
const X_IMAGE_BYTES = 5 * 1024 * 1024;
/** Image types X takes. */
export const X_IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
/** How long before the post's time a post found in the lookup may have been made. */
const LOOKUP_WINDOW_BEFORE_MS = 2 * 60 * 1000;

/** X's weighted length of `text` (the official twitter-text rules). */
export function xWeightedLength(text: string): number {
  return twitter.parseTweet(text).weightedLength;
}

function accessToken(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

/** The public address of a post. */
function postUrl(connection: OpenConnection, id: string): string {
  const handle = connection.label.replace(/^@/, "");
  return `https://x.com/${encodeURIComponent(handle || "i")}/status/${id}`;
}

async function uploadAll(deps: Deps, connection: OpenConnection, images: readonly DeliveryImage[]): Promise<string[]> {
  if (images.length > X_MAX_IMAGES) throw new DeliveryError("permanent", `X takes at most ${X_MAX_IMAGES} images per post; this one has ${images.length}.`);
  const ids: string[] = [];
  for (const image of images) {
    const fitted = await fitImageUnderBytes(image.bytes, image.mimeType, X_IMAGE_BYTES).catch((error: Error) => {
      throw new DeliveryError("permanent", `An image could not be prepared for X: ${error.message}`);
    });
    const id = await uploadImage(deps, accessToken(connection), fitted.bytes, fitted.mimeType);
    if (image.altText) await setAltText(deps, accessToken(connection), id, image.altText);
    ids.push(id);
  }
  return ids;
}

/** Text as compared after a lookup: links (ours, and the t.co links X puts in) set aside, X's escapes undone, spaces collapsed. */
export function comparableText(text: string): string {
  const unescaped = text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  const urls = twitter.extractUrlsWithIndices(unescaped);
  let out = "";
  let at = 0;
  for (const u of urls) {
    out += unescaped.slice(at, u.indices[0]);
    at = u.indices[1];
  }
  out += unescaped.slice(at);
  return out.replace(/\s+/g, " ").trim();
}

/** The parent a part replies to: the part before it for a thread part, the post for the first comment. */
function parentOf(partsOut: readonly string[], kind: "post" | "thread" | "first_comment", index: number): string | null {
  if (index === 0) return null;
  return (kind === "first_comment" ? partsOut[0] : partsOut[index - 1]) ?? null;
}

/** The X connector. */
export const xConnector: Connector = {
  platform: "x",
  captionLimit: () => ({ maxGraphemes: X_MAX_WEIGHTED, count: xWeightedLength, platformName: "X" }),
  capabilities: () => ({
    name: "X",
    maxImages: X_MAX_IMAGES,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: true,
    requiresImage: false,
    imageTypes: X_IMAGE_TYPES,
  }),
  // X's API has no scheduled posts: Seedcast holds every one.
  holdsNatively: () => false,
  reconcileProvesAbsence: false,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const who = await me(deps, accessToken(connection));
      if (who.ok) return { ready: true, blockedReason: null, label: `@${who.username}`, meta: { ...connection.meta, providerAccountId: who.id } };
      if (who.status === 401) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "X" })} (${who.words}).` };
      return { ready: false, blockedReason: `X could not confirm the account: ${who.words}` };
    } catch (error) {
      return { ready: false, blockedReason: `X could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const parts = partsOf(content);
    for (const part of parts) {
      if (part.index < ctx.partsOut.length) continue; // out already: never sent twice
      const mediaIds = await uploadAll(deps, connection, part.images);
      const body: CreatePostsRequest = { text: part.caption };
      if (mediaIds.length > 0) body.media = { media_ids: mediaIds };
      const parent = parentOf(ctx.partsOut, part.kind, part.index);
      if (parent !== null) body.reply = { in_reply_to_tweet_id: parent };
      const answer = await createPost(deps, accessToken(connection), body);
      // Recorded before the next part leaves: a retry resumes after it.
      await ctx.savePartOut(part.index, answer.id);
    }
    const postId = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: postId, publishedUrl: postUrl(connection, postId) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    const parts = partsOf(content);
    if (ctx.partsOut.length < parts.length) {
      const userId = connection.meta.providerAccountId;
      if (!userId) throw new DeliveryError("transient", "The X account's id is not known yet: its check runs again before the post is looked up.");
      const posts: Post[] = await recentPosts(deps, accessToken(connection), userId, content.scheduledTime - LOOKUP_WINDOW_BEFORE_MS);
      for (const part of parts.slice(ctx.partsOut.length)) {
        const parent = parentOf(ctx.partsOut, part.kind, part.index);
        const expected = comparableText(part.caption);
        const found = posts.find(
          (p) =>
            comparableText(p.text) === expected &&
            (parent === null ? p.conversation_id === undefined || p.conversation_id === p.id : p.conversation_id === ctx.partsOut[0]) &&
            !ctx.partsOut.includes(p.id),
        );
        if (!found) return null;
        await ctx.savePartOut(part.index, found.id);
      }
    }
    const postId = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: postId, publishedUrl: postUrl(connection, postId) };
  },

  async withdraw(): Promise<boolean> {
    // Nothing is ever held at X.
    return false;
  },
};
