/**
 * The image library: list, read, delete, and the two ways in (ingest from a URL, ingest of bytes) that other modules
 * call too. No Elysia here; every function takes `deps` first.
 *
 * API for other modules:
 *  - `ingestFromUrl(deps, accountId, {url, label})` → AssetRecord (throws AppError with the ingest reason)
 *  - `ingestImageBytes(deps, accountId, {bytes, fileName})` → AssetRecord (generated images, uploads)
 *  - `getAsset(deps, accountId, id)` → AssetRecord (404 for missing or other-account ids)
 *  - `findAsset(deps, accountId, id)` → AssetRecord | null
 *  - `lockAsset(deps, accountId, id)` → AssetRecord | null, inside a write: locked against a concurrent delete
 *  - `assetToApi(deps, record)` → the Asset object of interface.md
 *  - `assetUrl(deps, record)` → `{base_url}/media/<id>.<ext>`
 *  - `registerAssetReferenceCheck(table, fn)` / `assetReferenceCount(deps, id)` (see references.ts)
 */
import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Deps } from "../../deps";
import { forUpdate } from "../../db/portable-sql";
import { assets } from "../../db/tables";
import { isoAt } from "../../lib/clock";
import { AppError, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { decodeCursor, encodeCursor } from "./cursor";
import { LIST_LIMIT_DEFAULT } from "./model";
import { assetReferenceCount } from "./references";

export { ingestFromUrl, ingestImageBytes, ingestUploadOnce, storeImage, type AssetRecord } from "./ingest";
export { assetReferenceCount, registerAssetReferenceCheck, type AssetReferenceCheck } from "./references";
export { MEDIA_PATH, assetUrl } from "../../store/media-url";

import type { AssetRecord } from "./ingest";
import { assetUrl } from "../../store/media-url";

/** The Asset object of interface.md. */
export interface AssetApi {
  id: string;
  fileName: string;
  mimeType: string;
  sizeBytes: number;
  url: string;
  createdAt: string;
}

/** Renders a stored asset as the API answers it. */
export function assetToApi(deps: Pick<Deps, "config">, record: AssetRecord): AssetApi {
  return {
    id: record.id,
    fileName: record.fileName,
    mimeType: record.mimeType,
    sizeBytes: record.sizeBytes,
    url: assetUrl(deps, record),
    createdAt: isoAt(record.createdAt),
  };
}

/** The account's asset with that id, or null (also for ids that are not UUIDs). */
export async function findAsset(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<AssetRecord | null> {
  if (!isUuid(id)) return null;
  return (await deps.store.db.select().from(assets).where(and(eq(assets.id, id), eq(assets.accountId, accountId))).get()) ?? null;
}

/** The account's asset with that id; 404 not_found otherwise (identical for another account's id). */
export async function getAsset(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<AssetRecord> {
  const record = await findAsset(deps, accountId, id);
  if (!record) throw notFound("asset");
  return record;
}

/** Any account's asset by id: only for the public /media route, which is addressed by the unguessable id. */
export async function findAssetForMedia(deps: Pick<Deps, "store">, id: string): Promise<AssetRecord | null> {
  if (!isUuid(id)) return null;
  return (await deps.store.db.select().from(assets).where(eq(assets.id, id)).get()) ?? null;
}

/** One page of the account's assets, newest first. */
export async function listAssets(
  deps: Pick<Deps, "store">,
  accountId: string,
  opts: { limit?: number; cursor?: string },
): Promise<{ assets: AssetRecord[]; nextCursor: string | null }> {
  const limit = opts.limit ?? LIST_LIMIT_DEFAULT;
  const after = opts.cursor ? decodeCursor(opts.cursor) : null;
  const where = after
    ? and(
        eq(assets.accountId, accountId),
        or(lt(assets.createdAt, after.createdAt), and(eq(assets.createdAt, after.createdAt), lt(assets.id, after.id))),
      )
    : eq(assets.accountId, accountId);
  const rows = await deps.store.db
    .select()
    .from(assets)
    .where(where)
    .orderBy(desc(assets.createdAt), desc(assets.id))
    .limit(limit + 1)
    .all();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
  return { assets: page, nextCursor };
}

/**
 * Inside a write: the account's asset with its row locked until the write ends (PostgreSQL `FOR UPDATE`; SQLite's
 * write holds the only writer), or null when it is not there (or was deleted by a write that held the lock first).
 * Both sides of "is this asset in use?" take it: a delete (deleteAsset, creations' discard) before counting the
 * references, and a write that starts referring to an asset before it saves the reference. So on PostgreSQL either the
 * delete counts the committed reference (409) or the referring write finds the asset gone; never both committed.
 */
export async function lockAsset(deps: Pick<Deps, "store">, accountId: string, id: string): Promise<AssetRecord | null> {
  if (!deps.store.inWrite()) throw new Error("lockAsset() outside a write: the lock would end with its own statement");
  if (!isUuid(id)) return null;
  const tx = deps.store.db;
  return (await forUpdate(deps.store.dialect, tx.select().from(assets).where(and(eq(assets.id, id), eq(assets.accountId, accountId)))).get()) ?? null;
}

/**
 * Deletes the account's asset: 404 when it is not there, 409 asset_in_use while anything refers to it. The check and
 * the delete share one write transaction, with the asset's row locked (lockAsset), so a seed or creation saved
 * concurrently cannot slip between them. The file goes after the row: a crash in between leaves an unreferenced
 * file, never a row without its file.
 */
export async function deleteAsset(deps: Deps, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  const removed = await deps.store.write(async (tx) => {
    const record = await lockAsset(deps, accountId, id);
    if (!record) throw notFound("asset");
    const references = await assetReferenceCount(deps, record.id);
    if (references > 0) {
      throw new AppError("asset_in_use", "A seed, creation or scheduled post still uses this asset; remove that first.", {
        references,
      });
    }
    const deleted = await tx
      .delete(assets)
      .where(and(eq(assets.id, record.id), eq(assets.accountId, accountId)))
      .returning({ id: assets.id })
      .all();
    if (deleted.length === 0) throw notFound("asset");
    return record;
  });
  await deps.storage.delete(removed.storageKey);
  return { id: removed.id, deleted: true };
}
