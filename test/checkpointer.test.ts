/**
 * WAL checkpoints on a thread (db/checkpointer.ts), on real database files: the server's connection no longer
 * checkpoints, the thread copies the WAL into the database file, the WAL starts over instead of growing (also under
 * writes that never pause), the commit watch keeps telling commits from checkpoints, the thread waits for the first
 * writes, and stopping gives the connection SQLite's automatic checkpoint back. On the store (db/store.ts: a writer and a
 * query_only reader, as `seedcast serve` runs it) the writer stops checkpointing and the bound's checkpoint runs on the
 * reader.
 * Nothing here is timed: each step waits (with a generous deadline) for the file change it expects.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Checkpointer, startCheckpointer } from "../src/db/checkpointer";
import { openDatabase } from "../src/db/client";
import { watchCommits } from "../src/db/commit-watch";
import { openSqliteStore } from "../src/db/store";
import { createLogger } from "../src/lib/log";

const PAGE = 4096;
const ROWS_PER_BATCH = 200;

interface Opened {
  dir: string;
  file: string;
  sqlite: Database;
  checkpointer: Checkpointer | null;
  logs: string[];
}

const opened: Opened[] = [];

function open(): Opened {
  const dir = mkdtempSync(join(tmpdir(), "seedcast-checkpointer-"));
  const file = join(dir, "c.db");
  const { sqlite } = openDatabase(file);
  sqlite.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  const one: Opened = { dir, file, sqlite, checkpointer: null, logs: [] };
  opened.push(one);
  return one;
}

afterEach(async () => {
  for (const one of opened.splice(0)) {
    await one.checkpointer?.stop();
    one.sqlite.close();
    rmSync(one.dir, { recursive: true, force: true });
  }
});

/** One transaction of ROWS_PER_BATCH rows of about a page each. */
function writeBatch(sqlite: Database): void {
  sqlite.transaction(() => {
    const insert = sqlite.query("INSERT INTO t (v) VALUES (randomblob(3000))");
    for (let i = 0; i < ROWS_PER_BATCH; i++) insert.run();
  })();
}

function size(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

/** Waits until `check` holds; fails with `what` after 30 s (a deadline, not a speed assertion). */
async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await Bun.sleep(20);
  }
}

/**
 * The WAL-index's frame count (mxFrame, header offset 16) and how many of them a checkpoint has copied (nBackfill,
 * offset 96), read by another process: closing a descriptor of `-shm` in this one would drop this process's locks.
 */
async function walProgress(file: string): Promise<{ frames: number; copied: number }> {
  const script = `const fs = require("node:fs"); const b = Buffer.alloc(100); const fd = fs.openSync(${JSON.stringify(`${file}-shm`)}, "r"); fs.readSync(fd, b, 0, 100, 0); console.log(JSON.stringify({ frames: b.readUInt32LE(16), copied: b.readUInt32LE(96) }));`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  return JSON.parse(out) as { frames: number; copied: number };
}

/** Waits until `check` holds; fails with `what` after 30 s (a deadline, not a speed assertion). */
async function untilAsync(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await Bun.sleep(20);
  }
}

function autocheckpoint(sqlite: Database): number {
  return sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()?.wal_autocheckpoint ?? -1;
}

describe("WAL checkpoints on a thread", () => {
  test("the connection stops checkpointing; the thread copies the WAL into the file, and the WAL starts over", async () => {
    const one = open();
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 0 });
    await one.checkpointer.ready;
    expect(autocheckpoint(one.sqlite)).toBe(0);

    const rows = () => one.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()?.n ?? 0;
    let wrote = 0;
    const walSizes: number[] = [];
    for (let batch = 0; batch < 8; batch++) {
      writeBatch(one.sqlite);
      wrote += ROWS_PER_BATCH;
      walSizes.push(size(`${one.file}-wal`));
      const { frames } = await walProgress(one.file);
      expect(frames).toBeGreaterThanOrEqual(ROWS_PER_BATCH);
      // This connection no longer checkpoints: only the thread can copy the frames.
      await untilAsync(`batch ${batch} checkpointed`, async () => {
        const progress = await walProgress(one.file);
        return progress.copied === progress.frames;
      });
    }
    expect(rows()).toBe(wrote);
    expect(size(one.file)).toBeGreaterThanOrEqual(wrote * 3000);
    // Each batch started the WAL over from its first frame: the file stayed the size of one batch, give or take the
    // odd interior page of a deeper tree (without the thread it holds them all, as the control below shows).
    expect(walSizes[0]).toBeGreaterThan(ROWS_PER_BATCH * PAGE * 0.5);
    for (const walSize of walSizes) expect(walSize).toBeLessThan((walSizes[0] as number) + 8 * PAGE);
    expect(one.logs.filter((line) => line.includes("WAL checkpoint thread failed"))).toEqual([]);
  });

  test("under writes that never leave the thread time to catch up, the WAL stays bounded", async () => {
    const one = open();
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 0, intervalMs: 20, boundFrames: 300 });
    await one.checkpointer.ready;
    const batches = 40;
    let largestWal = 0;
    for (let batch = 0; batch < batches; batch++) {
      writeBatch(one.sqlite);
      largestWal = Math.max(largestWal, size(`${one.file}-wal`));
      await Bun.sleep(5); // the event loop turns, as between requests: the thread's messages get through
    }
    // Without a start-over the WAL would hold all 40 batches (~8000 pages).
    expect(largestWal).toBeLessThan((batches * ROWS_PER_BATCH * PAGE) / 2);
    expect(one.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()?.n).toBe(batches * ROWS_PER_BATCH);
    expect(one.logs.filter((line) => line.includes("WAL checkpoint thread failed"))).toEqual([]);
  });

  test("on the store: the writer stops checkpointing, the bound's checkpoint runs on the query_only reader, the WAL stays bounded", async () => {
    const dir = mkdtempSync(join(tmpdir(), "seedcast-checkpointer-store-"));
    const file = join(dir, "s.db");
    const setup = openDatabase(file);
    setup.sqlite.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
    setup.sqlite.close();
    const store = openSqliteStore(file);
    const logs: string[] = [];
    // As serve.ts does: the writer is the committer.
    const writer = await store.withWriter((w) => w);
    const checkpointer = startCheckpointer(store.sqlite, createLogger("warn", (line) => logs.push(line)), {
      committer: writer,
      startAfterPages: 0,
      intervalMs: 20,
      boundFrames: 300,
    });
    try {
      await checkpointer.ready;
      expect(autocheckpoint(writer)).toBe(0);
      const batches = 40;
      let largestWal = 0;
      for (let batch = 0; batch < batches; batch++) {
        await store.withWriter((w) => writeBatch(w));
        largestWal = Math.max(largestWal, size(`${file}-wal`));
        await Bun.sleep(5);
      }
      expect(largestWal).toBeLessThan((batches * ROWS_PER_BATCH * PAGE) / 2);
      expect(store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM t").get()?.n).toBe(batches * ROWS_PER_BATCH);
      expect(logs.filter((line) => line.includes("WAL checkpoint thread failed"))).toEqual([]);
      await checkpointer.stop();
      expect(autocheckpoint(writer)).toBe(1000);
    } finally {
      await checkpointer.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("without the thread, the same writes with the automatic checkpoint off stay in the WAL (the control)", async () => {
    const one = open();
    one.sqlite.exec("PRAGMA wal_autocheckpoint = 0");
    const before = size(one.file);
    for (let batch = 0; batch < 3; batch++) writeBatch(one.sqlite);
    await Bun.sleep(300);
    expect(size(one.file)).toBe(before);
    expect(size(`${one.file}-wal`)).toBeGreaterThan(3 * ROWS_PER_BATCH * PAGE * 0.7);
  });

  test("the commit watch tells commits from checkpoints while the thread runs", async () => {
    const one = open();
    const watch = watchCommits(one.sqlite);
    expect(watch.live).toBe(true);
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 0 });
    await one.checkpointer.ready;
    watch.changed();

    writeBatch(one.sqlite);
    expect(watch.changed()).toBe(true);
    await until("the batch checkpointed", () => size(one.file) >= ROWS_PER_BATCH * 3000);
    // A checkpoint is not a commit: nothing new to read.
    expect(watch.changed()).toBe(false);
    // The next write starts the WAL over, and is seen.
    one.sqlite.exec("INSERT INTO t (v) VALUES (x'00')");
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);
  });

  test("stopping gives the connection SQLite's automatic checkpoint back, and the file closes cleanly", async () => {
    const one = open();
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 0 });
    await one.checkpointer.ready;
    writeBatch(one.sqlite);
    await one.checkpointer.stop();
    expect(autocheckpoint(one.sqlite)).toBe(1000);
    one.checkpointer = null;
    one.sqlite.close();
    // The last connection to close checkpoints and removes the WAL: the thread left nothing open behind.
    expect(existsSync(`${one.file}-wal`)).toBe(false);
    opened.splice(opened.indexOf(one), 1);
    rmSync(one.dir, { recursive: true, force: true });
  });

  test("the thread starts only once the database is written to; until then SQLite's own checkpoint stays", async () => {
    const one = open();
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 50, watchIntervalMs: 20 });
    let started = false;
    void one.checkpointer.ready.then(() => {
      started = true;
    });
    // Reads only (and the few pages of the table's creation): no thread.
    one.sqlite.query("SELECT count(*) FROM t").get();
    await Bun.sleep(200);
    expect(started).toBe(false);
    expect(autocheckpoint(one.sqlite)).toBe(1000);
    writeBatch(one.sqlite);
    await one.checkpointer.ready;
    expect(autocheckpoint(one.sqlite)).toBe(0);
    writeBatch(one.sqlite);
    await untilAsync("the thread's checkpoint", async () => {
      const progress = await walProgress(one.file);
      return progress.copied === progress.frames;
    });
  });

  test("when the thread cannot open the database, the connection gets SQLite's automatic checkpoint back, and says so", async () => {
    const one = open();
    // The file is gone from its path (this connection keeps its open descriptor): the thread's open fails.
    rmSync(one.file);
    one.checkpointer = startCheckpointer(one.sqlite, createLogger("warn", (line) => one.logs.push(line)), { startAfterPages: 0 });
    await one.checkpointer.ready;
    expect(autocheckpoint(one.sqlite)).toBe(1000);
    expect(one.logs.some((line) => line.includes("WAL checkpoint thread failed"))).toBe(true);
  });

  test("stopped before it started, nothing was changed", async () => {
    const one = open();
    const checkpointer = startCheckpointer(one.sqlite, createLogger("warn", () => {}), { startAfterPages: 1_000_000 });
    await checkpointer.stop();
    expect(autocheckpoint(one.sqlite)).toBe(1000);
  });

  test("an in-memory database has nothing to checkpoint: no thread, the connection untouched", async () => {
    const { sqlite } = openDatabase(":memory:");
    const checkpointer = startCheckpointer(sqlite, createLogger("warn", () => {}));
    await checkpointer.ready;
    expect(autocheckpoint(sqlite)).toBe(1000);
    await checkpointer.stop();
    sqlite.close();
  });
});
