/**
 * A scheduled post as the API shows it (decisions.md §7): GET /schedule/posts answers it, and the post.* events of
 * event webhooks carry it. Built from the stored rows, so the schedule module and the dispatcher render it alike.
 */
import type { StoredImage, StoredPart, StoredVariants } from "../db/schema/post-content";
import type { PostStatus, scheduledPosts, scheduledPostTargets, TargetStatus } from "../db/schema/scheduled-posts";
import { isoAt } from "../lib/clock";

type PostRow = typeof scheduledPosts.$inferSelect;
type TargetRow = typeof scheduledPostTargets.$inferSelect;

export interface PostTargetApi {
  accountId: string;
  platform: string;
  label: string;
  status: Exclude<TargetStatus, "withdrawn">;
  providerPostId: string | null;
  publishedUrl: string | null;
  errorMessage: string | null;
  withdrawn: boolean;
}

export interface PostApi {
  id: string;
  creationId: string;
  scheduledTime: string;
  status: PostStatus;
  errorMessage?: string;
  /** What the post sends (its snapshot): a PATCH with `content` changes it, the creation stays as it is. */
  content: PostContentApi;
  targets: PostTargetApi[];
  /** Took a posting slot (decisions.md §14). */
  queued: boolean;
  /** The repeat series it is an occurrence of, or null. */
  seriesId: string | null;
  createdAt: string;
}

/** One image of a post's snapshot: the library asset and its own alt text ("" when none). */
export interface PostImageApi {
  assetId: string;
  altText: string;
}

/** A network's own version in a post's snapshot (decisions.md §13). */
export interface PostVariantApi {
  caption?: string;
  images?: PostImageApi[];
  thread?: { caption: string; images: PostImageApi[] }[];
  firstComment?: string;
}

/** A post's snapshot as the API shows it: `caption`/`altText` (the first image's) plus every image, the thread, the first comment and the versions. */
export interface PostContentApi {
  caption: string;
  altText: string | null;
  images: PostImageApi[];
  thread: { caption: string; images: PostImageApi[] }[];
  firstComment: string | null;
  variants: Record<string, PostVariantApi>;
}

const imagesToApi = (images: readonly StoredImage[]): PostImageApi[] => images.map((i) => ({ assetId: i.assetId, altText: i.altText ?? "" }));
const threadToApi = (parts: readonly StoredPart[]) => parts.map((p) => ({ caption: p.caption, images: imagesToApi(p.images) }));

function variantsToApi(variants: StoredVariants): Record<string, PostVariantApi> {
  const out: Record<string, PostVariantApi> = {};
  for (const [platform, v] of Object.entries(variants)) {
    out[platform] = {
      ...(v.caption !== undefined ? { caption: v.caption } : {}),
      ...(v.images !== undefined ? { images: imagesToApi(v.images) } : {}),
      ...(v.thread !== undefined ? { thread: threadToApi(v.thread) } : {}),
      ...(v.firstComment !== undefined ? { firstComment: v.firstComment } : {}),
    };
  }
  return out;
}

/** The snapshot of `post` as the API shows it. */
export function postContentToApi(post: PostRow): PostContentApi {
  return {
    caption: post.caption,
    altText: post.imageAssetId ? (post.altText ?? "") : null,
    images: imagesToApi(post.images),
    thread: threadToApi(post.thread),
    firstComment: post.firstComment,
    variants: variantsToApi(post.variants),
  };
}

export function targetToApi(row: TargetRow): PostTargetApi {
  const withdrawn = row.status === "withdrawn";
  return {
    accountId: row.connectionId ?? row.id,
    platform: row.platform,
    label: row.label,
    // A withdrawn target only exists while a cancel could not finish; it shows its last public state.
    status: row.status === "withdrawn" ? "scheduled" : row.status,
    providerPostId: row.providerPostId,
    publishedUrl: row.publishedUrl,
    errorMessage: row.errorMessage,
    withdrawn,
  };
}

export function postToApi(post: PostRow, targets: TargetRow[]): PostApi {
  const api: PostApi = {
    id: post.id,
    creationId: post.creationId,
    scheduledTime: isoAt(post.scheduledTime),
    status: post.status,
    content: postContentToApi(post),
    targets: targets.map(targetToApi),
    queued: post.queued,
    seriesId: post.seriesId,
    createdAt: isoAt(post.createdAt),
  };
  if ((post.status === "failed" || post.status === "partially_failed" || post.status === "unconfirmed") && post.errorMessage) api.errorMessage = post.errorMessage;
  return api;
}
