/** What the composer and the post pages show of library images: one read for every image of a post. */
import { and, eq, inArray } from "drizzle-orm";
import { assets } from "../../../db/tables";
import type { Deps } from "../../../deps";
import { mediaPath } from "../pages/library";
import type { ImageInfo } from "./preview";

/** The account's images among `ids`, by id: same-origin address, type and file name. Ids of other accounts are not there. */
export async function imageInfo(deps: Pick<Deps, "store">, accountId: string, ids: readonly string[]): Promise<Map<string, ImageInfo>> {
  const out = new Map<string, ImageInfo>();
  if (ids.length === 0) return out;
  const rows = await deps.store.db
    .select()
    .from(assets)
    .where(and(eq(assets.accountId, accountId), inArray(assets.id, [...ids])))
    .all();
  for (const a of rows) out.set(a.id, { src: mediaPath(a), mimeType: a.mimeType, fileName: a.fileName });
  return out;
}
