/**
 * Blob storage behind one small interface: local disk under DATA_DIR now, S3 later.
 * Writes are atomic (temp file, fsync, rename), so a crash never leaves a half-written file behind a database row.
 * A crash can still leave a whole file no row names, or a temp file: `list()` lets a sweep find both.
 */
import { type Dirent, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";

/** A stored file and when it was last written (ms since the epoch). */
export interface StoredEntry {
  key: string;
  mtimeMs: number;
}

/** What `list()` finds: stored keys, and leftover temp files of interrupted writes (deletable by their key). */
export interface StorageListing {
  entries: StoredEntry[];
  temps: StoredEntry[];
}

export interface Storage {
  /** Stores `bytes` under `key` atomically, replacing any previous value. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** A Blob for `key` (lazy; check `exists()` first), suitable for streaming with Range. */
  blob(key: string): Blob;
  /** True when `key` is stored. */
  exists(key: string): Promise<boolean>;
  /** Removes `key`; missing keys are fine. */
  delete(key: string): Promise<void>;
  /** Every stored key starting with `prefix` (all when omitted), and temp files of unfinished writes, separately. */
  list(prefix?: string): Promise<StorageListing>;
}

/** Marks the temp file of a write in progress (`<key>.tmp-<uuid>`), renamed onto the key when complete. */
const TEMP_MARKER = ".tmp-";

const KEY_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/** Storage in a directory on the local disk. */
export function createLocalStorage(root: string): Storage {
  mkdirSync(root, { recursive: true });
  const pathOf = (key: string): string => {
    if (!KEY_RE.test(key) || key.includes("..")) throw new Error(`invalid storage key: ${key}`);
    const full = normalize(join(root, key));
    if (!full.startsWith(normalize(root) + sep)) throw new Error(`invalid storage key: ${key}`);
    return full;
  };
  return {
    async put(key, bytes) {
      const path = pathOf(key);
      mkdirSync(dirname(path), { recursive: true });
      const tmp = `${path}${TEMP_MARKER}${crypto.randomUUID()}`;
      const fd = openSync(tmp, "wx", 0o644);
      try {
        let offset = 0;
        while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, path);
      const dirFd = openSync(dirname(path), "r");
      try {
        fsyncSync(dirFd);
      } finally {
        closeSync(dirFd);
      }
    },
    blob(key) {
      return Bun.file(pathOf(key));
    },
    async exists(key) {
      return Bun.file(pathOf(key)).exists();
    },
    async delete(key) {
      rmSync(pathOf(key), { force: true });
    },
    async list(prefix = "") {
      const listing: StorageListing = { entries: [], temps: [] };
      // Walk only the directory the prefix names (keys are `<dir>/<name>`), then filter by the full prefix.
      const slash = prefix.lastIndexOf("/");
      const startKey = slash < 0 ? "" : prefix.slice(0, slash);
      const walk = (dirKey: string): void => {
        let names: Dirent[];
        try {
          names = readdirSync(dirKey === "" ? root : pathOf(dirKey), { withFileTypes: true });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
          throw error;
        }
        for (const dirent of names) {
          const key = dirKey === "" ? dirent.name : `${dirKey}/${dirent.name}`;
          // Names that are not keys (dot files, odd names) were not written by put(): never listed, never swept.
          if (!KEY_RE.test(key)) continue;
          if (dirent.isDirectory()) {
            walk(key);
            continue;
          }
          if (!dirent.isFile() || !key.startsWith(prefix)) continue;
          let mtimeMs: number;
          try {
            mtimeMs = statSync(pathOf(key)).mtimeMs;
          } catch {
            continue; // removed while we walked
          }
          (key.includes(TEMP_MARKER) ? listing.temps : listing.entries).push({ key, mtimeMs });
        }
      };
      if (startKey === "" || KEY_RE.test(startKey)) walk(startKey);
      return listing;
    },
  };
}
