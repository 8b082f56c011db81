/**
 * The media sweep (__media_sweep__) on a fresh world: files no asset names and stale temp files older than an hour
 * are deleted; stored assets and anything fresh (a write in progress) are kept. File ages are set relative to the
 * world's manual clock with utimes. The world keeps its media in DATA_DIR (MEDIA_STORE=local) on either database: a
 * PostgreSQL test run's worlds otherwise use the test bucket, whose sweep media-s3.test.ts covers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { MEDIA_DIR } from "../src/bootstrap";
import { systemJobs } from "../src/system-jobs";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { MEDIA_SWEEP_JOB_ID, sweepOrphanMedia } from "../src/modules/assets/sweep";
import { type World, createWorld } from "./helpers/world";
import { solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
let world: World;

beforeAll(async () => {
  world = await createWorld({ env: { MEDIA_STORE: "local" } });
});

afterAll(async () => {
  await world.close();
});

const mediaPath = (key: string): string => join(world.dataDir, MEDIA_DIR, key);

/** Writes a file under DATA_DIR/media whose mtime is `ageMs` before the world's clock. */
function plant(key: string, ageMs: number): string {
  const path = mediaPath(key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "stray bytes");
  age(key, ageMs);
  return path;
}

function age(key: string, ageMs: number): void {
  const at = (world.clock.now() - ageMs) / 1000;
  utimesSync(mediaPath(key), at, at);
}

describe("storage.list", () => {
  test("lists keys with their mtime under a prefix and reports temp files separately", async () => {
    plant("list-a/one.png", 10);
    plant("list-a/two.png.tmp-0190a0a0-0000-7000-8000-000000000000", 20);
    plant("list-b/three.png", 30);
    const all = await world.deps.storage.list("list-");
    expect(all.entries.map((e) => e.key).sort()).toEqual(["list-a/one.png", "list-b/three.png"]);
    expect(all.temps.map((e) => e.key)).toEqual(["list-a/two.png.tmp-0190a0a0-0000-7000-8000-000000000000"]);
    const a = await world.deps.storage.list("list-a/");
    expect(a.entries).toEqual([{ key: "list-a/one.png", mtimeMs: world.clock.now() - 10 }]);
    expect((await world.deps.storage.list("nowhere/")).entries).toEqual([]);
  });
});

describe("sweepOrphanMedia", () => {
  test("deletes old orphans and stale temps; keeps stored assets and fresh files", async () => {
    const acct = await world.createAccount();
    const asset = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(), fileName: "kept.png" });
    age(asset.storageKey, 3 * HOUR); // old, but named by its row
    const oldOrphan = plant(`${acct.accountId}/0190a0a0-0000-7000-8000-00000000dead.png`, HOUR + 60_000);
    const freshOrphan = plant(`${acct.accountId}/0190a0a0-0000-7000-8000-00000000beef.png`, 10 * 60_000);
    const staleTemp = plant(`${acct.accountId}/0190a0a0-0000-7000-8000-00000000cafe.png.tmp-0190a0a0-0000-7000-8000-000000000001`, 2 * HOUR);
    const freshTemp = plant(`${acct.accountId}/0190a0a0-0000-7000-8000-00000000f00d.png.tmp-0190a0a0-0000-7000-8000-000000000002`, 60_000);

    const result = await sweepOrphanMedia(world.deps);
    expect(existsSync(mediaPath(asset.storageKey))).toBe(true);
    expect(existsSync(oldOrphan)).toBe(false);
    expect(existsSync(freshOrphan)).toBe(true);
    expect(existsSync(staleTemp)).toBe(false);
    expect(existsSync(freshTemp)).toBe(true);
    // The list test's files are younger than an hour: kept too.
    expect(result).toEqual({ orphans: 1, temps: 1 });
    const served = await world.call("GET", `/media/${asset.id}.${asset.ext}`);
    expect(served.status).toBe(200);

    // An hour later the fresh orphan and temp are stale and go; the asset still stays.
    world.clock.advance(HOUR);
    const later = await sweepOrphanMedia(world.deps);
    expect(later.temps).toBe(2); // the list test's temp and the fresh one
    expect(existsSync(freshOrphan)).toBe(false);
    expect(existsSync(freshTemp)).toBe(false);
    expect(existsSync(mediaPath(asset.storageKey))).toBe(true);
    expect(await sweepOrphanMedia(world.deps)).toEqual({ orphans: 0, temps: 0 });
  });

  test("runs hourly as __media_sweep__", async () => {
    const job = systemJobs.find((j) => j.id === MEDIA_SWEEP_JOB_ID);
    expect(job?.schedule).toBe("0 41 * * * *");
    const orphan = plant("job/0190a0a0-0000-7000-8000-00000000abcd.png", 2 * HOUR);
    await job!.run(world.deps);
    expect(existsSync(orphan)).toBe(false);
  });
});
