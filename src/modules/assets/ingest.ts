/**
 * How an image enters the library, whatever the door (URL ingest, upload page, generator):
 * checks on the bytes (empty, byte cap, type by magic bytes, pixel dimensions from the header) → atomic write to
 * storage → the row, in one write transaction that may also consume an upload link. A refusal stores nothing.
 */
import { and, asc, eq } from "drizzle-orm";
import type { Deps } from "../../deps";
import { assets } from "../../db/tables";
import type { AssetSource } from "../../db/schema/assets";
import { AppError } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { type ImageProbe, ProbeError, probeImage } from "../../lib/image-probe";
import { type Resolver, type SafeFetchOptions, safeFetchOk, toAppError } from "../../lib/safe-fetch";
import { assetFileName, lastPathSegment } from "./file-name";

/** A stored asset row. */
export type AssetRecord = typeof assets.$inferSelect;

/** decisions.md §4: over 40 megapixels is image_dimensions_too_large. */
export const MAX_PIXELS = 40_000_000;
const ACCEPT_IMAGES = "image/png, image/jpeg, image/gif, image/webp;q=0.9, */*;q=0.1";

/** Bytes that passed every image check, ready to store. */
export interface CheckedImage {
  bytes: Uint8Array;
  mimeType: string;
  ext: string;
  width: number;
  height: number;
  sha256: string;
}

/** Where the new asset came from, kept for the record. */
export interface AssetOrigin {
  source: AssetSource;
  sourceUrl?: string | null;
}

/** Refusals of an image (bad bytes, bad source) are 400s; anything else (storage, a used link) is not counted. */
const REFUSAL_STATUS = 400;

/**
 * Counts a refused image in `seedcast_ingest_refusals_total{reason}` when `error` is such a refusal. Each door an
 * image comes in by (URL ingest, bytes ingest, the upload page) calls this once at its edge, so nothing counts twice.
 */
export function recordIngestRefusal(deps: Pick<Deps, "metrics">, error: unknown): void {
  if (error instanceof AppError && error.status === REFUSAL_STATUS) deps.metrics.ingestRefusals.inc({ reason: error.code });
}

/** Outbound overrides for one deps: tests pass a throwaway CA and a scripted resolver. Production sets none. */
export interface IngestFetchOverrides {
  resolver?: Resolver;
  /** NB: replaces the root store for the call (see safe-fetch.ts); production trusts NODE_EXTRA_CA_CERTS instead. */
  extraCa?: string;
  timeoutMs?: number;
}

const fetchOverrides = new WeakMap<Deps, IngestFetchOverrides>();

/**
 * Sets the outbound overrides used by `ingestFromUrl` for this deps (and so for the app built on it).
 * For tests against local HTTPS servers; the server never calls it.
 */
export function configureIngestFetch(deps: Deps, overrides: IngestFetchOverrides): void {
  fetchOverrides.set(deps, overrides);
}

/**
 * Runs every check on `bytes` without storing anything. Throws AppError: empty_body, image_too_large,
 * unsupported_type, image_dimensions_too_large.
 */
export async function checkImageBytes(deps: Pick<Deps, "config">, bytes: Uint8Array): Promise<CheckedImage> {
  if (bytes.byteLength === 0) throw new AppError("empty_body", "The image is empty (0 bytes).");
  if (bytes.byteLength > deps.config.maxImageBytes) {
    throw new AppError("image_too_large", `The image is larger than ${deps.config.maxImageBytes} bytes.`, {
      maxBytes: deps.config.maxImageBytes,
    });
  }
  let probe: ImageProbe;
  try {
    probe = await probeImage(bytes, MAX_PIXELS);
  } catch (error) {
    if (error instanceof ProbeError) throw new AppError(error.reason, error.message);
    throw error;
  }
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  return { bytes, mimeType: probe.mimeType, ext: probe.ext, width: probe.width, height: probe.height, sha256 };
}

/**
 * Writes checked bytes to storage, then inserts the row in one write transaction. `beforeInsert` runs first
 * inside that transaction (the upload page consumes its link there; a creation save writes its row and capture) and
 * may throw to abort: then the row is not written and the file is removed again. It awaits only the database. A crash between the file and the row leaves an unreferenced file, never a
 * row without its file.
 */
export async function storeImage(
  deps: Deps,
  accountId: string,
  image: CheckedImage,
  meta: AssetOrigin & { fileName: string },
  beforeInsert?: (asset: AssetRecord) => void | Promise<void>,
): Promise<AssetRecord> {
  const id = newId();
  const storageKey = `${accountId}/${id}.${image.ext}`;
  const record: AssetRecord = {
    id,
    accountId,
    fileName: meta.fileName,
    mimeType: image.mimeType,
    ext: image.ext,
    sizeBytes: image.bytes.byteLength,
    width: image.width,
    height: image.height,
    sha256: image.sha256,
    storageKey,
    source: meta.source,
    sourceUrl: meta.sourceUrl ?? null,
    createdAt: deps.clock.now(),
  };
  await deps.storage.put(storageKey, image.bytes);
  try {
    await deps.store.write(async (tx) => {
      await beforeInsert?.(record);
      await tx.insert(assets).values(record).run();
    });
  } catch (error) {
    await deps.storage.delete(storageKey);
    throw error;
  }
  return record;
}

/** checkImageBytes, with a refusal counted (recordIngestRefusal) before it is thrown. */
async function checkCounted(deps: Deps, bytes: Uint8Array): Promise<CheckedImage> {
  try {
    return await checkImageBytes(deps, bytes);
  } catch (error) {
    recordIngestRefusal(deps, error);
    throw error;
  }
}

/**
 * Adds an image the caller already holds (a generated picture, an uploaded file) to the account's library.
 * `fileName` follows the label rule of decisions.md §4 (the detected extension is appended when it has none).
 * Throws AppError with the ingest reason on a refused image; nothing is stored then.
 */
export async function ingestImageBytes(
  deps: Deps,
  accountId: string,
  input: { bytes: Uint8Array; fileName?: string | null; source?: AssetSource },
): Promise<AssetRecord> {
  const image = await checkCounted(deps, input.bytes);
  return storeImage(deps, accountId, image, {
    fileName: assetFileName(image.ext, input.fileName),
    source: input.source ?? "generated",
  });
}

/**
 * For a file a person attaches while writing a post: when the account's library already holds these exact bytes (the
 * same SHA-256), that image is answered with `reused: true` and nothing is stored, so attaching one photo to several
 * posts leaves one copy in the library. Otherwise as `ingestImageBytes` (source "upload"). Two uploads of the same
 * file at the same moment may still both be stored: harmless, and no uniqueness is promised.
 */
export async function ingestUploadOnce(
  deps: Deps,
  accountId: string,
  input: { bytes: Uint8Array; fileName?: string | null },
): Promise<{ asset: AssetRecord; reused: boolean }> {
  const image = await checkCounted(deps, input.bytes);
  const same = await deps.store.db
    .select()
    .from(assets)
    .where(and(eq(assets.accountId, accountId), eq(assets.sha256, image.sha256), eq(assets.sizeBytes, image.bytes.byteLength)))
    .orderBy(asc(assets.createdAt), asc(assets.id))
    .get();
  if (same) return { asset: same, reused: true };
  const asset = await storeImage(deps, accountId, image, { fileName: assetFileName(image.ext, input.fileName), source: "upload" });
  return { asset, reused: false };
}

/**
 * Fetches `url` once under every outbound rule (safe-fetch.ts), checks the bytes and stores them as a new asset.
 * Throws AppError with the stable 400 reason of decisions.md §4; nothing is stored on a refusal.
 */
export async function ingestFromUrl(
  deps: Deps,
  accountId: string,
  input: { url: string; label?: string | null },
): Promise<AssetRecord> {
  const overrides = fetchOverrides.get(deps) ?? {};
  const options: SafeFetchOptions = {
    headers: { accept: ACCEPT_IMAGES, "user-agent": "Seedcast image ingest" },
    maxBytes: deps.config.maxImageBytes,
    allowPrivateHosts: deps.config.allowPrivateHosts,
    ...overrides,
  };
  let image: CheckedImage;
  try {
    let body: Uint8Array;
    try {
      body = (await safeFetchOk(input.url, options)).body;
    } catch (error) {
      throw toAppError(error, "image_too_large");
    }
    image = await checkImageBytes(deps, body);
  } catch (error) {
    recordIngestRefusal(deps, error);
    throw error;
  }
  return storeImage(deps, accountId, image, {
    fileName: assetFileName(image.ext, input.label, lastPathSegment(input.url)),
    source: "url",
    sourceUrl: input.url,
  });
}
