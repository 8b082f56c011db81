/**
 * The media sweep: deletes files under DATA_DIR/media that no asset row names (a crash between writing a file and
 * inserting its row, or between deleting a row and its file) and temp files of interrupted writes. Only files older
 * than `olderThanMs` are touched, so a write in progress (file first, row a moment later) is never disturbed.
 */
import { assets } from "../../db/tables";
import type { Deps } from "../../deps";

/** The hourly job's id. */
export const MEDIA_SWEEP_JOB_ID = "__media_sweep__";
/** Default age below which a file is left alone. */
export const MEDIA_SWEEP_MIN_AGE_MS = 60 * 60 * 1000;

export interface MediaSweepResult {
  /** Whole files no asset names, deleted. */
  orphans: number;
  /** Leftover temp files, deleted. */
  temps: number;
}

/**
 * Deletes orphan media files and stale temp files older than `olderThanMs` (by the injected clock). The set of
 * named keys is read after the listing: a row inserted meanwhile names a file that is too fresh to be a candidate.
 */
export async function sweepOrphanMedia(
  deps: Pick<Deps, "store" | "storage" | "clock" | "log">,
  { olderThanMs = MEDIA_SWEEP_MIN_AGE_MS }: { olderThanMs?: number } = {},
): Promise<MediaSweepResult> {
  const cutoff = deps.clock.now() - olderThanMs;
  const listing = await deps.storage.list();
  const named = new Set((await deps.store.db.select({ key: assets.storageKey }).from(assets).all()).map((r) => r.key));
  const result: MediaSweepResult = { orphans: 0, temps: 0 };
  for (const entry of listing.entries) {
    if (entry.mtimeMs >= cutoff || named.has(entry.key)) continue;
    await deps.storage.delete(entry.key);
    result.orphans++;
  }
  for (const temp of listing.temps) {
    if (temp.mtimeMs >= cutoff) continue;
    await deps.storage.delete(temp.key);
    result.temps++;
  }
  if (result.orphans + result.temps > 0) deps.log.info("swept media", { ...result });
  return result;
}
