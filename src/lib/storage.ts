/**
 * Blob storage behind one small interface: local disk under DATA_DIR now, S3 later.
 * Writes are atomic (temp file, fsync, rename), so a crash never leaves a half-written file behind a database row.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";

export interface Storage {
  /** Stores `bytes` under `key` atomically, replacing any previous value. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** A Blob for `key` (lazy; check `exists()` first), suitable for streaming with Range. */
  blob(key: string): Blob;
  /** True when `key` is stored. */
  exists(key: string): Promise<boolean>;
  /** Removes `key`; missing keys are fine. */
  delete(key: string): Promise<void>;
}

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
      const tmp = `${path}.tmp-${crypto.randomUUID()}`;
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
  };
}
