/**
 * "Has any transaction committed since I last looked?", from any process, for a 48-byte memory read instead of a query.
 *
 * In WAL mode every commit, by any connection of any process, rewrites the WAL-index header at the start of the
 * `<db>-shm` file, which every connection maps shared (https://sqlite.org/walformat.html, "The WAL-Index Format": the
 * first 48 bytes hold the change counter `iChange`, `mxFrame`, the salts and checksums). Rewriting that header is
 * the moment a commit becomes visible to readers. So if those 48 bytes are unchanged, no commit is visible that was
 * not visible before, and a value read by a query then is still current. Callers snapshot the header FIRST and query
 * after, so a commit landing in between shows up on the next look.
 *
 * NB: the `-shm` file is opened once and its descriptor NEVER closed. SQLite's locks are POSIX record locks, which
 * belong to the process: closing ANY descriptor of the `-shm` file (as Bun.mmap does after mapping) silently drops
 * every lock this process holds on it, and another process may then reinitialise the index under the live server.
 * So the header is mapped read-only with libc's own mmap (bun:ffi) on that descriptor, and read as plain memory: no
 * system call per look. One descriptor and one page per watched database, for the life of the process (the server has
 * one). The mapping stays valid while this process holds the database open: SQLite truncates `-shm` only when the
 * first connection of all processes opens it.
 * When the header cannot be mapped or does not look like a WAL index (an in-memory database, another journal mode,
 * a libc without mmap), every look answers "changed", which is always correct, only slower.
 */
import type { Database } from "bun:sqlite";
import { dlopen, FFIType, type Pointer, toArrayBuffer } from "bun:ffi";
import { openSync } from "node:fs";

/** `iVersion` of a WAL-index header (WALINDEX_MAX_VERSION). */
const WALINDEX_VERSION = 3007000;
const HEADER_BYTES = 48;
const HEADER_WORDS = HEADER_BYTES / 4;
/** Offset of `isInit`, 1 once a header has been written. */
const IS_INIT_OFFSET = 12;

export interface CommitWatch {
  /** True when a commit may have become visible since the last call (and on the first call). */
  changed(): boolean;
  /** Whether the shared header is watched; false means every call answers true. */
  readonly live: boolean;
}

const ALWAYS_CHANGED: CommitWatch = { changed: () => true, live: false };

const PROT_READ = 1;
const MAP_SHARED = 1;
const PAGE_BYTES = 4096;

type MapPage = (fd: number) => Pointer | null;
let loadedMmap: MapPage | null | undefined;

/** libc's mmap of one read-only shared page, or null where it cannot be loaded. Loaded once, kept for the process. */
function libcMmap(): MapPage | null {
  if (loadedMmap !== undefined) return loadedMmap;
  try {
    const { symbols } = dlopen("libc.so.6", {
      mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr },
    });
    loadedMmap = (fd) => {
      const raw = symbols.mmap(null, PAGE_BYTES, PROT_READ, MAP_SHARED, fd, 0) as unknown as number | bigint | null;
      // bun:ffi answers a pointer as a number, or as a bigint when it does not fit one: MAP_FAILED ((void*)-1) does not.
      const address = typeof raw === "bigint" ? raw : BigInt(raw ?? 0);
      return address > 0n && address <= BigInt(Number.MAX_SAFE_INTEGER) ? (Number(address) as Pointer) : null;
    };
  } catch {
    loadedMmap = null;
  }
  return loadedMmap;
}

/** The first header copy as live shared memory, or null when there is no WAL index to watch. */
function mapHeader(sqlite: Database): Uint32Array | null {
  const file = sqlite.filename;
  if (!file || file === ":memory:") return null;
  // A read makes sure the WAL index exists and is initialised before it is mapped.
  const mode = sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode;
  if (mode?.toLowerCase() !== "wal") return null;
  const mmap = libcMmap();
  if (!mmap) return null;
  let fd: number;
  try {
    fd = openSync(`${file}-shm`, "r"); // never closed: see the NB above
  } catch {
    return null;
  }
  const address = mmap(fd);
  if (!address) return null;
  const header = new Uint32Array(toArrayBuffer(address, 0, HEADER_BYTES));
  const isInit = new Uint8Array(header.buffer)[IS_INIT_OFFSET];
  return header[0] === WALINDEX_VERSION && isInit === 1 ? header : null;
}

/** Watches `sqlite`'s WAL-index header. Call after the database is open and migrated. */
export function watchCommits(sqlite: Database): CommitWatch {
  const header = mapHeader(sqlite);
  if (!header) return ALWAYS_CHANGED;
  const seen = new Uint32Array(HEADER_WORDS);
  let first = true;
  return {
    live: true,
    changed(): boolean {
      let changed = first;
      first = false;
      for (let i = 0; i < HEADER_WORDS; i++) {
        const word = header[i] as number;
        if (word !== seen[i]) {
          seen[i] = word;
          changed = true;
        }
      }
      return changed;
    },
  };
}
