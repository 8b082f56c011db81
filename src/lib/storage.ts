/**
 * Blob storage behind one small interface, two implementations chosen by MEDIA_STORE at bootstrap:
 * `storage-local.ts` (a folder under DATA_DIR, the appliance's default) and `storage-s3.ts` (an S3-compatible bucket).
 * Keys are `<folder>/<name>` made of safe characters only (see `isStorageKey`); what a listing finds outside that
 * shape was not written by `put()`, so it is never listed and never swept.
 */

/** A stored object and when it was last written (ms since the epoch). */
export interface StoredEntry {
  key: string;
  mtimeMs: number;
}

/** What `list()` finds: stored keys, and leftover temp files of interrupted writes (deletable by their key). */
export interface StorageListing {
  entries: StoredEntry[];
  /** Always empty on S3, where a PUT is atomic and leaves nothing behind when interrupted. */
  temps: StoredEntry[];
}

/** An inclusive byte range, as HTTP Range states it. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface Storage {
  /** Where the bytes live, for messages and for refusing what only works on one of them (backups). */
  readonly kind: "local" | "s3";
  /** Stores `bytes` under `key` atomically (a reader sees the old value or the whole new one), replacing any previous value. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * As `put`, with the value read from `body` as it is sent (never whole in memory; `seedcast migrate-data` copies
   * media files this way). `size` is the exact byte count `body` yields; any other count fails the write.
   */
  putStream(key: string, body: ReadableStream<Uint8Array>, size: number): Promise<void>;
  /** The whole stored value of `key` (images are capped by MAX_IMAGE_BYTES, so this is bounded). Throws when missing. */
  read(key: string): Promise<Uint8Array>;
  /**
   * The bytes of `key` (or of `range`) as a Response body, streamed: a lazy file Blob on disk (Bun sends it with
   * sendfile), a ReadableStream of the object on S3. Check `exists()` first: a missing key fails while streaming.
   */
  body(key: string, range?: ByteRange): Blob | ReadableStream<Uint8Array>;
  /** True when `key` is stored. */
  exists(key: string): Promise<boolean>;
  /** Removes `key`; missing keys are fine. */
  delete(key: string): Promise<void>;
  /** Every stored key starting with `prefix` (all when omitted), and temp files of unfinished writes, separately. */
  list(prefix?: string): Promise<StorageListing>;
  /** Throws when the store cannot be used (S3: bucket missing, credentials refused, endpoint unreachable). */
  check(): Promise<void>;
}

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** True for keys `put()` accepts: slash-separated names of letters, digits, `.`, `_` and `-`, never `..`. */
export function isStorageKey(key: string): boolean {
  return KEY_RE.test(key) && !key.includes("..");
}

/** Throws on a key `put()` would not accept (a bug in the caller, never user input: keys are built from ids). */
export function assertStorageKey(key: string): void {
  if (!isStorageKey(key)) throw new Error(`invalid storage key: ${key}`);
}
