/**
 * Media for `seedcast migrate-data`: every object of the appliance's local store (DATA_DIR/media) put into the bucket
 * under the same key, streamed from disk (never a whole file in memory), then read back and compared by size and
 * SHA-256. Objects get no Content-Type, exactly as the server's own uploads to S3 (storage-s3.ts: Bun leaves an
 * unsigned Content-Type out of the signature); the local store keeps none either, and /media serves the type recorded
 * in the asset's row.
 */
import type { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Storage } from "../../lib/storage";
import { createLocalStorage } from "../../lib/storage-local";
import { MigrateDataError } from "./errors";

/** Objects copied at once. */
const PARALLEL = 4;

export interface LocalMedia {
  root: string;
  /** Every stored key (leftover temp files of interrupted writes are not media and are left out). */
  keys: string[];
}

/** The keys of the local store at `root`; an absent folder is an empty store (and is not created). */
export async function listLocalMedia(root: string): Promise<LocalMedia> {
  if (!existsSync(root)) return { root, keys: [] };
  const listing = await createLocalStorage(root).list();
  return { root, keys: listing.entries.map((e) => e.key).sort() };
}

/** Refuses when an asset row of the snapshot names a file the local store does not hold. */
export function checkAssetsHaveFiles(sqlite: Database, media: LocalMedia): void {
  const present = new Set(media.keys);
  const missing = sqlite
    .query<{ storage_key: string }, []>("SELECT storage_key FROM assets ORDER BY id")
    .all()
    .filter((r) => !present.has(r.storage_key));
  if (missing.length > 0) {
    throw new MigrateDataError(
      "media_missing",
      `${missing.length} image(s) of the database have no file in ${media.root} (first: ${missing[0]!.storage_key}). If the server was deleting images while this ran, stop it and run again; otherwise restore the files first. Nothing was copied.`,
    );
  }
}

/** SHA-256 and byte count of a stream, read through once. */
async function digest(stream: ReadableStream<Uint8Array>): Promise<{ size: number; sha256: string }> {
  const hash = new Bun.CryptoHasher("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { size, sha256: hash.digest("hex") };
}

/** Runs `work` over `items`, `PARALLEL` at a time; the first failure is thrown once all in flight have settled. */
async function eachLimited<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  if (failure !== null) throw failure;
}

/**
 * Puts every local object into `bucket`. On a failure the objects already put are deleted again (the bucket was
 * empty before), and the error is thrown. Returns the bytes copied.
 */
export async function copyMedia(media: LocalMedia, bucket: Storage): Promise<{ objects: number; bytes: number }> {
  const put: string[] = [];
  let bytes = 0;
  try {
    await eachLimited(media.keys, async (key) => {
      const path = join(media.root, key);
      const size = statSync(path).size;
      await bucket.putStream(key, Bun.file(path).stream(), size);
      put.push(key);
      bytes += size;
    });
  } catch (error) {
    await eachLimited(put, (key) => bucket.delete(key)).catch(() => undefined);
    throw error;
  }
  return { objects: media.keys.length, bytes };
}

/** Deletes the local store's keys from `bucket` again (missing ones are fine): undoes `copyMedia` after a rollback. */
export async function deleteMedia(media: LocalMedia, bucket: Storage): Promise<void> {
  await eachLimited(media.keys, (key) => bucket.delete(key)).catch(() => undefined);
}

export interface MediaMismatch {
  key: string;
  problem: string;
}

export interface MediaComparison {
  /** Objects in the local store. */
  objects: number;
  bytes: number;
  /** Objects in the bucket under media/. */
  bucketObjects: number;
  ok: boolean;
  mismatches: MediaMismatch[];
}

/** Each local object against the bucket's (size and SHA-256 of both, each read through), plus bucket-only objects. */
export async function compareMedia(media: LocalMedia, bucket: Storage): Promise<MediaComparison> {
  const mismatches: MediaMismatch[] = [];
  let bytes = 0;
  await eachLimited(media.keys, async (key) => {
    const local = await digest(Bun.file(join(media.root, key)).stream());
    bytes += local.size;
    if (!(await bucket.exists(key))) {
      mismatches.push({ key, problem: "missing in the bucket" });
      return;
    }
    const body = bucket.body(key);
    const remote = await digest(body instanceof Blob ? body.stream() : body);
    if (remote.size !== local.size) mismatches.push({ key, problem: `size differs (${local.size} bytes on disk, ${remote.size} in the bucket)` });
    else if (remote.sha256 !== local.sha256) mismatches.push({ key, problem: "SHA-256 differs" });
  });
  const localKeys = new Set(media.keys);
  const inBucket = (await bucket.list()).entries.map((e) => e.key);
  for (const key of inBucket) if (!localKeys.has(key)) mismatches.push({ key, problem: "only in the bucket" });
  mismatches.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { objects: media.keys.length, bytes, bucketObjects: inBucket.length, ok: mismatches.length === 0, mismatches };
}
