/**
 * The WAL-index commit watch: it must never miss a commit (from this connection, another connection, or another
 * process), and it should stay quiet when nothing committed. Real database files; the other process is a real one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/client";
import { watchCommits } from "../src/db/commit-watch";

let dir: string;
let sqlite: Database;
let file: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "seedcast-commit-watch-"));
  file = join(dir, "w.db");
  sqlite = openDatabase(file).sqlite;
  sqlite.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)");
});

afterAll(() => {
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `sql` against the file from a separate bun process. */
async function writeFromAnotherProcess(sql: string): Promise<void> {
  const script = `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(file)}); db.exec("PRAGMA busy_timeout = 5000"); db.exec(${JSON.stringify(sql)}); db.close();`;
  const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "inherit", stderr: "inherit" });
  expect(await proc.exited).toBe(0);
}

describe("watchCommits on a WAL file", () => {
  test("watches the shared header; the first look answers changed, then only commits do", () => {
    const watch = watchCommits(sqlite);
    expect(watch.live).toBe(true);
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);
    sqlite.query("SELECT count(*) FROM t").get();
    expect(watch.changed()).toBe(false);
    sqlite.query("INSERT INTO t (v) VALUES ('same connection')").run();
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);
  });

  test("sees a commit of another connection in this process, and not a rolled-back transaction", () => {
    const watch = watchCommits(sqlite);
    watch.changed();
    const other = new Database(file);
    try {
      other.exec("BEGIN IMMEDIATE; INSERT INTO t (v) VALUES ('rolled back'); ROLLBACK;");
      expect(watch.changed()).toBe(false);
      other.query("INSERT INTO t (v) VALUES ('other connection')").run();
      expect(watch.changed()).toBe(true);
    } finally {
      other.close();
    }
  });

  test("sees every commit of another process, across checkpoints that restart the WAL", async () => {
    const watch = watchCommits(sqlite);
    watch.changed();
    for (let i = 0; i < 3; i++) {
      await writeFromAnotherProcess(`INSERT INTO t (v) VALUES ('process ${i}')`);
      expect(watch.changed()).toBe(true);
      expect(watch.changed()).toBe(false);
      sqlite.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      watch.changed();
    }
    await writeFromAnotherProcess("UPDATE t SET v = 'after restart' WHERE id = 1");
    expect(watch.changed()).toBe(true);
  });

  test("a value read after a quiet look is the current one (look first, then query)", async () => {
    const watch = watchCommits(sqlite);
    const read = () => sqlite.query<{ v: string }, []>("SELECT v FROM t WHERE id = 1").get()?.v;
    let cached = watch.changed() ? read() : undefined;
    for (const v of ["a", "b", "c"]) {
      await writeFromAnotherProcess(`UPDATE t SET v = '${v}' WHERE id = 1`);
      if (watch.changed()) cached = read();
      expect(cached).toBe(v);
    }
  });
});

describe("watchCommits without a shared WAL index", () => {
  test("an in-memory database: every look answers changed", () => {
    const memory = new Database(":memory:");
    const watch = watchCommits(memory);
    expect(watch.live).toBe(false);
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(true);
    memory.close();
  });

  test("a rollback-journal file: every look answers changed", () => {
    const plain = new Database(join(dir, "plain.db"), { create: true });
    plain.exec("CREATE TABLE x (a)");
    const watch = watchCommits(plain);
    expect(watch.live).toBe(false);
    expect(watch.changed()).toBe(true);
    plain.close();
  });
});
