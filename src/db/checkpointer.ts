/**
 * WAL checkpoints off the request path, for the server's process.
 *
 * SQLite's automatic checkpoint (every 1000 WAL pages) runs inside whichever commit crosses the threshold: that
 * request copies 1000 pages into the database file and syncs it before it can answer, and on the one event loop every
 * request queued behind it waits too. The server turns it off on its own connection (`PRAGMA wal_autocheckpoint = 0`)
 * and a Bun Worker, a thread with a connection of its own to the same file, does the copying instead:
 * - every INTERVAL_MS, PASSIVE checkpoints (they never wait for nor block readers or writers), a few passes in a row
 *   so frames committed during one pass are copied by the next;
 * - bound: SQLite starts the WAL over from its first frame only at a write that finds every frame already copied,
 *   which a steady write load never leaves time for. So once the WAL holds BOUND_FRAMES or more, the thread asks the
 *   server's connection for one PASSIVE checkpoint of its own, between two requests: it copies only what the thread
 *   has not copied yet (a fraction of a tick's writes) and the next write starts the WAL over. That keeps the WAL
 *   under about BOUND_FRAMES pages plus one tick's writes.
 * The thread starts when the WAL file first reaches START_AFTER_PAGES (a look at its size every 250 ms): a server that
 * is idle or only reads keeps SQLite's automatic checkpoint, which then has nothing costly to do, and does not carry
 * the thread's ~5 MB. When the thread cannot start or fails, the connection gets SQLite's automatic checkpoint back.
 *
 * With the store (db/store.ts) the server has two connections: the writer, whose commits would run the automatic
 * checkpoint (the `committer`: its automatic checkpoint is what the thread replaces), and the query_only reader, on
 * which the bound's checkpoint runs (a checkpoint is allowed on a query_only connection, and the reader is never in
 * the middle of a write transaction, which the writer may be whenever a timer fires).
 * Other processes (CLI commands next to the server) keep SQLite's automatic checkpoint on their connections. The
 * commit watch (commit-watch.ts) is unaffected: a checkpoint does not touch the WAL-index header it reads, and the
 * write that starts the WAL over changes it, which only makes the watchers look again. Within one process SQLite
 * keeps the connections to one file on one lock record and maps `-shm` once for all of them, and it defers closing a
 * descriptor while another connection holds locks, so the thread's connection closing never drops the server's locks.
 */
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Logger } from "../lib/log";

/** How often the thread looks for frames to copy. */
export const CHECKPOINT_INTERVAL_MS = 100;
/** The WAL size (pages) past which the server's connection copies the rest itself: 4000 pages, ~16 MiB. */
export const CHECKPOINT_BOUND_FRAMES = 4000;
/** SQLite's default automatic checkpoint, given back to the server's connection when the thread fails. */
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
const STOP_TIMEOUT_MS = 5000;
/** Half SQLite's automatic threshold: the thread is started before the first in-request checkpoint is due. */
const START_AFTER_PAGES = 500;
const WATCH_INTERVAL_MS = 250;

/** The thread, as source: a Blob worker needs no second entry point in the single-file build. */
const WORKER_SOURCE = `
import { Database } from "bun:sqlite";
let db = null;
let timer = null;
const checkpoint = () => db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
function tick(bound, catchUp) {
  try {
    let result = checkpoint();
    for (let i = 1; i < catchUp && result.busy === 0 && result.log > result.checkpointed; i++) result = checkpoint();
    if (result.log >= bound) postMessage({ kind: "start-over", log: result.log });
  } catch (error) {
    // The server's connection takes SQLite's automatic checkpoint back: this thread is done.
    if (timer !== null) clearInterval(timer);
    timer = null;
    postMessage({ kind: "failed", message: String(error && error.message ? error.message : error) });
  }
}
self.onmessage = (event) => {
  const message = event.data;
  if (message.kind === "start") {
    try {
      db = new Database(message.path, { readwrite: true, create: false });
      db.exec("PRAGMA busy_timeout = " + message.busyTimeoutMs);
    } catch (error) {
      postMessage({ kind: "failed", message: String(error && error.message ? error.message : error) });
      return;
    }
    timer = setInterval(() => tick(message.boundFrames, message.catchUpPasses), message.intervalMs);
    postMessage({ kind: "started" });
  } else if (message.kind === "stop") {
    if (timer !== null) clearInterval(timer);
    timer = null;
    try {
      db?.close();
    } catch {}
    db = null;
    postMessage({ kind: "stopped" });
  }
};
`;

export interface Checkpointer {
  /** Resolves once the thread checkpoints (or has failed, the automatic checkpoint being back); see startAfterPages. */
  readonly ready: Promise<void>;
  /** Stops the thread and gives the committer SQLite's automatic checkpoint back. Call before closing the connections. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  /** The thread starts once the WAL file holds this many pages (0: at once). */
  startAfterPages?: number;
  /** How often the WAL file's size is looked at until then. */
  watchIntervalMs?: number;
  intervalMs?: number;
  boundFrames?: number;
  /** PASSIVE passes per tick at most, to catch up with frames written during the previous one. */
  catchUpPasses?: number;
  /**
   * The connection that commits (the store's writer), whose automatic checkpoint is turned off while the thread runs
   * and given back when it stops or fails. Default: `sqlite` itself.
   */
  committer?: Database;
}

/**
 * Starts checkpointing `sqlite`'s file (a WAL database on disk) from a thread; a no-op for anything else. The bound's
 * checkpoint runs on `sqlite`; the automatic checkpoint is turned off on `options.committer` (default `sqlite`).
 */
export function startCheckpointer(sqlite: Database, log: Logger, options: CheckpointerOptions = {}): Checkpointer {
  const committer = options.committer ?? sqlite;
  const path = sqlite.filename;
  const mode = sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode;
  if (!path || path === ":memory:" || mode?.toLowerCase() !== "wal") {
    return { ready: Promise.resolve(), stop: async () => {} };
  }

  let fellBack = false;
  const fallBack = (why: string) => {
    if (fellBack) return;
    fellBack = true;
    log.error("WAL checkpoint thread failed; the database checkpoints inside requests again", { error: why });
    try {
      committer.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
    } catch {
      /* the connection is closed: nothing left to checkpoint */
    }
  };

  /** The bound's last step, on this connection: copy what is left, so the next write starts the WAL over. */
  const startOver = (pages: number) => {
    if (fellBack) return;
    try {
      sqlite.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      log.debug("WAL at its bound: the server's connection copied the rest", { pages });
    } catch {
      /* closed while the message travelled: nothing left to do */
    }
  };

  let onStarted: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  let onStopped: (() => void) | null = null;
  let worker: Worker | null = null;

  /** Starts the thread and hands it the checkpoints. */
  const launch = () => {
    committer.exec("PRAGMA wal_autocheckpoint = 0");
    const url = URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
    const thread = new Worker(url);
    worker = thread;
    thread.onmessage = (event: MessageEvent) => {
      const message = event.data as { kind: string; message?: string; log?: number };
      if (message.kind === "started") {
        URL.revokeObjectURL(url); // the thread has loaded its source
        onStarted();
      } else if (message.kind === "stopped") onStopped?.();
      else if (message.kind === "start-over") startOver(message.log ?? 0);
      else if (message.kind === "failed") {
        fallBack(message.message ?? "unknown");
        onStarted();
      }
    };
    thread.onerror = (event) => {
      fallBack(event.message);
      onStarted();
    };
    thread.postMessage({
      kind: "start",
      path,
      busyTimeoutMs: 5000,
      intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      boundFrames: options.boundFrames ?? CHECKPOINT_BOUND_FRAMES,
      catchUpPasses: options.catchUpPasses ?? 4,
    });
  };

  // The thread (a JavaScript VM, ~5 MB) starts once the database is written to: until the WAL file reaches
  // startAfterPages, SQLite's own checkpoint has nothing costly to do, and an idle or read-only server never pays.
  const startAfterPages = options.startAfterPages ?? START_AFTER_PAGES;
  let watch: ReturnType<typeof setInterval> | null = null;
  if (startAfterPages <= 0) launch();
  else {
    const pageSize = sqlite.query<{ page_size: number }, []>("PRAGMA page_size").get()?.page_size ?? 4096;
    const walFile = `${path}-wal`;
    watch = setInterval(() => {
      let walBytes = 0;
      try {
        walBytes = statSync(walFile).size;
      } catch {
        return; // no WAL yet
      }
      if (walBytes < startAfterPages * pageSize) return;
      if (watch !== null) clearInterval(watch);
      watch = null;
      launch();
    }, options.watchIntervalMs ?? WATCH_INTERVAL_MS);
    watch.unref?.();
  }

  let stopping: Promise<void> | null = null;
  return {
    ready,
    stop() {
      stopping ??= (async () => {
        if (watch !== null) clearInterval(watch);
        watch = null;
        const thread = worker;
        if (thread === null) return;
        const stopped = new Promise<void>((resolve) => {
          onStopped = resolve;
          setTimeout(resolve, STOP_TIMEOUT_MS).unref?.();
        });
        thread.postMessage({ kind: "stop" });
        await stopped;
        thread.terminate();
        if (!fellBack) {
          try {
            committer.exec(`PRAGMA wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
          } catch {
            /* already closed */
          }
        }
      })();
      return stopping;
    },
  };
}
