/**
 * A scheduled post as the API shows it (decisions.md §7): GET /schedule/posts answers it, and the post.* events of
 * event webhooks carry it. Built from the stored rows, so the schedule module and the dispatcher render it alike.
 */
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
  content: { caption: string; altText: string | null };
  targets: PostTargetApi[];
  /** Took a posting slot (decisions.md §14). */
  queued: boolean;
  /** The repeat series it is an occurrence of, or null. */
  seriesId: string | null;
  createdAt: string;
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
    content: { caption: post.caption, altText: post.imageAssetId ? (post.altText ?? "") : null },
    targets: targets.map(targetToApi),
    queued: post.queued,
    seriesId: post.seriesId,
    createdAt: isoAt(post.createdAt),
  };
  if ((post.status === "failed" || post.status === "partially_failed") && post.errorMessage) api.errorMessage = post.errorMessage;
  return api;
}
