/**
 * Storage in a folder on the local disk (DATA_DIR/media): the appliance's default. Writes are atomic (temp file,
 * fsync, rename), so a crash never leaves a half-written file behind a database row.
 * A crash can still leave a whole file no row names, or a temp file: `list()` lets a sweep find both.
 */
import { type Dirent, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join, normalize, sep } from "node:path";
import { type Storage, type StorageListing, assertStorageKey, isStorageKey } from "./storage";

/** Marks the temp file of a write in progress (`<key>.tmp-<uuid>`), renamed onto the key when complete. */
const TEMP_MARKER = ".tmp-";

/** Storage in a directory on the local disk. */
export function createLocalStorage(root: string): Storage {
  mkdirSync(root, { recursive: true });
  const pathOf = (key: string): string => {
    assertStorageKey(key);
    const full = normalize(join(root, key));
    if (!full.startsWith(normalize(root) + sep)) throw new Error(`invalid storage key: ${key}`);
    return full;
  };
  return {
    kind: "local",
    async put(key, bytes) {
      await writeAtomically(pathOf(key), (fd) => writeAll(fd, bytes));
    },
    async putStream(key, body, size) {
      await writeAtomically(pathOf(key), async (fd) => {
        let written = 0;
        for await (const chunk of body) {
          writeAll(fd, chunk);
          written += chunk.length;
        }
        if (written !== size) throw new Error(`write of ${key} got ${written} bytes, expected ${size}`);
      });
    },
    async read(key) {
      return Bun.file(pathOf(key)).bytes();
    },
    body(key, range) {
      const file = Bun.file(pathOf(key));
      return range ? file.slice(range.start, range.end + 1) : file;
    },
    async exists(key) {
      return Bun.file(pathOf(key)).exists();
    },
    async delete(key) {
      rmSync(pathOf(key), { force: true });
    },
    async check() {
      // The folder was made above; a store on a full or read-only disk fails at its first write, with its path.
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
          if (!isStorageKey(key)) continue;
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
      if (startKey === "" || isStorageKey(startKey)) walk(startKey);
      return listing;
    },
  };
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

/**
 * Writes `path` all or nothing: `fill` writes a temp file beside it, which is synced and renamed onto `path` (then the
 * directory is synced, so the rename survives a crash). If `fill` throws, the temp file is removed.
 */
async function writeAtomically(path: string, fill: (fd: number) => void | Promise<void>): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}${TEMP_MARKER}${crypto.randomUUID()}`;
  const fd = openSync(tmp, "wx", 0o644);
  try {
    await fill(fd);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(tmp, path);
  const dirFd = openSync(dirname(path), "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
