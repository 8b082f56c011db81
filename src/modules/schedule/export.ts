/**
 * The bulk export (decisions.md §14): GET /api/v1/schedule/posts.csv writes the account's posts (newest first, the
 * filters of GET /schedule/posts) in the import's columns plus `id, status, published_urls`, so an export of pending
 * posts imported again makes the same posts:
 *  - image_urls are the library URLs of the post's images (`{base_url}/media/<id>.<ext>`), which the import reuses
 *    rather than fetching; alt_texts are positional (an image without one leaves its place empty);
 *  - a queued post that has not gone out is written `queue: true` with an empty scheduled_time (an import queues it
 *    again); every other post `queue: false` with its time;
 *  - targets are the accountIds of the post's targets (a target whose connection was removed: its platform);
 *    withdrawn targets are left out.
 * Only the post's own caption, images and first comment are written: a thread and per-network versions have no
 * column.
 */
import type { Deps } from "../../deps";
import { isoAt } from "../../lib/clock";
import { assetUrl } from "../assets/service";
import { assetsById } from "../creations/service";
import { type ExportColumn, EXPORT_ONLY_COLUMNS, IMPORT_COLUMNS, LIST_SEPARATOR, writeCsv } from "./csv";
import { LIST_LIMIT_MAX } from "./model";
import { listPosts, type ListPostsQuery, type PostApi } from "./service";

/** Every column of an export, in order. */
export const EXPORT_COLUMNS: readonly ExportColumn[] = [...IMPORT_COLUMNS, ...EXPORT_ONLY_COLUMNS];

/** Every post of the account matching `query` (from/to/status), newest first, read a page at a time. */
async function allPosts(deps: Pick<Deps, "store">, accountId: string, query: Omit<ListPostsQuery, "limit" | "cursor">): Promise<PostApi[]> {
  const posts: PostApi[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPosts(deps, accountId, { ...query, limit: LIST_LIMIT_MAX, ...(cursor ? { cursor } : {}) });
    posts.push(...page.posts);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return posts;
}

/** GET /schedule/posts.csv: the account's posts as CSV text. */
export async function exportCsv(deps: Pick<Deps, "store" | "config">, accountId: string, query: Omit<ListPostsQuery, "limit" | "cursor">): Promise<string> {
  const posts = await allPosts(deps, accountId, query);
  const assets = await assetsById(deps, accountId, [...new Set(posts.flatMap((p) => p.content.images.map((i) => i.assetId)))]);
  const rows = posts.map((post): Record<ExportColumn, string> => {
    const images = post.content.images;
    const pendingInQueue = post.queued && post.status === "scheduled";
    const targets = post.targets.filter((t) => !t.withdrawn);
    return {
      caption: post.content.caption,
      image_urls: images.map((i) => (assets.has(i.assetId) ? assetUrl(deps, assets.get(i.assetId)!) : i.assetId)).join(LIST_SEPARATOR),
      alt_texts: images.some((i) => i.altText !== "") ? images.map((i) => i.altText).join(LIST_SEPARATOR) : "",
      scheduled_time: pendingInQueue ? "" : post.scheduledTime,
      queue: pendingInQueue ? "true" : "false",
      targets: targets.map((t) => t.accountId || t.platform).join(LIST_SEPARATOR),
      first_comment: post.content.firstComment ?? "",
      id: post.id,
      status: post.status,
      published_urls: targets.flatMap((t) => (t.publishedUrl ? [t.publishedUrl] : [])).join(LIST_SEPARATOR),
    };
  });
  return writeCsv(EXPORT_COLUMNS, rows);
}

/** The file name an export is offered under: `seedcast-posts-<date>.csv`. */
export function exportFileName(now: number): string {
  return `seedcast-posts-${isoAt(now).slice(0, 10)}.csv`;
}
