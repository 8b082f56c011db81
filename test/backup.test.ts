/**
 * Backup and restore: an archive taken while writes keep coming restores to a working instance whose data is exactly
 * the snapshot's (every row identical to the live row, every media file byte-identical, keys still valid).
 * SQLite only: backup and restore are an appliance's (PostgreSQL mode refuses them; instance-secret.test.ts checks the refusal).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/log";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { type Store, isSqliteStore } from "../src/db/store";
import { createBackup, restoreBackup, rotateBackups, SERVE_PID_FILE } from "../src/modules/backup/service";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

const scratch = mkdtempSync(join(tmpdir(), "seedcast-backup-test-"));
let world: World;
beforeAll(async () => {
  if (TEST_DIALECT === "sqlite") world = await createWorld();
});
afterAll(async () => {
  await world?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function png(seed: number): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: seed % 256, g: (seed * 7) % 256, b: 99 } } }).png().toBuffer(),
  );
}

function rows(db: Database, table: string): Record<string, unknown>[] {
  return db.query(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[];
}

test("createBackup refuses a PostgreSQL store, naming pg_dump, and writes nothing", async () => {
  const file = join(scratch, "from-postgres.tar.gz");
  const deps = {
    store: { dialect: "postgres" } as unknown as Store,
    config: loadConfig({ DATA_DIR: scratch, BASE_URL: "http://localhost", LOG_LEVEL: "silent" }),
    clock: new ManualClock(0),
    instanceSecret: new Uint8Array(32),
  };
  await expect(createBackup(deps, file)).rejects.toThrow(/pg_dump/);
  expect(existsSync(file)).toBe(false);
});

describe.skipIf(TEST_DIALECT !== "sqlite")("backup and restore", () => {
  test("a backup taken under write load restores to a working instance with identical data", async () => {
    const acct = await world.createAccount({ credits: 50 });
    const assetIds: string[] = [];
    for (let i = 0; i < 5; i++) assetIds.push((await ingestImageBytes(world.deps, acct.accountId, { bytes: await png(i), fileName: `p${i}` })).id);
    for (let i = 0; i < 20; i++) {
      const res = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: `Seed ${i}`, content: `Launch notes number ${i}.` } });
      expect(res.status).toBe(201);
    }

    // Writers keep going while the backup runs.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        const res = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: `Live ${written}`, content: "written during the backup" } });
        expect(res.status).toBe(201);
        written += 1;
        if (written % 3 === 0) await ingestImageBytes(world.deps, acct.accountId, { bytes: await png(1000 + written), fileName: "live" });
        await Bun.sleep(1);
      }
    })();
    await Bun.sleep(20);
    const file = join(scratch, "under-load.tar.gz");
    const manifest = await createBackup(world.deps, file);
    writing = false;
    await writer;
    expect(written).toBeGreaterThan(0);
    expect(manifest.counts.seeds).toBeGreaterThanOrEqual(20);
    expect(manifest.mediaFiles).toBe(manifest.counts.assets ?? -1);

    const target = join(scratch, "restored");
    const restored = await restoreBackup(target, file, false);
    expect(restored.movedAside).toBeNull();

    // The store's reader connection (query_only: reads are all this needs).
    if (!isSqliteStore(world.store)) throw new Error("SQLite only");
    const live = world.store.sqlite;
    const copy = new Database(join(target, "seedcast.db"), { readonly: true });
    try {
      for (const table of ["accounts", "users", "members", "api_keys", "assets", "seeds", "credit_ledger", "credit_holds"]) {
        const restoredRows = rows(copy, table);
        expect({ table, n: restoredRows.length }).toEqual({ table, n: manifest.counts[table] ?? restoredRows.length });
        const liveById = new Map(rows(live, table).map((r) => [JSON.stringify(r.id ?? `${r.account_id}/${r.user_id}`), r]));
        for (const row of restoredRows) {
          const key = JSON.stringify(row.id ?? `${row.account_id}/${row.user_id}`);
          const liveRow = { ...(liveById.get(key) ?? {}) };
          const restoredRow = { ...row };
          if (table === "api_keys") delete liveRow.last_used_at, delete restoredRow.last_used_at;
          if (table === "accounts") {
            // Balances move on after the snapshot (live writes are free here, so they must not have).
            expect(restoredRow.credits_balance).toBe(liveRow.credits_balance);
          }
          expect(restoredRow).toEqual(liveRow);
        }
      }
      // Every media file of the snapshot is in the archive, byte-identical.
      for (const asset of rows(copy, "assets") as { storage_key: string }[]) {
        const restoredBytes = await Bun.file(join(target, "media", asset.storage_key)).bytes();
        const liveBytes = await Bun.file(join(world.dataDir, "media", asset.storage_key)).bytes();
        expect(Buffer.from(restoredBytes).equals(Buffer.from(liveBytes))).toBe(true);
      }
    } finally {
      copy.close();
    }

    // The restored data dir runs: the same key authenticates (the instance secret travelled) and data is served.
    const config = loadConfig({ DATA_DIR: target, BASE_URL: "http://localhost", LOG_LEVEL: "silent" });
    const deps = await bootstrap(config, { clock: new ManualClock(world.clock.now()), log: silentLogger });
    try {
      const app = createApp(deps);
      const health = await app.handle(new Request("http://localhost/api/v1/health", { headers: { authorization: `Bearer ${acct.key}` } }));
      expect(health.status).toBe(200);
      const seeds = await (await app.handle(new Request("http://localhost/api/v1/seeds?limit=200", { headers: { authorization: `Bearer ${acct.key}` } }))).json();
      expect(seeds.seeds.length).toBe(manifest.counts.seeds);
      const media = await app.handle(new Request(`http://localhost/media/${assetIds[0]}.png`));
      expect(media.status).toBe(200);
    } finally {
      await deps.store.close();
    }
  });

  test("restore refuses a non-empty data dir without --force, and moves it aside with --force", async () => {
    const file = join(scratch, "plain.tar.gz");
    await createBackup(world.deps, file);
    const target = join(scratch, "occupied");
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, "keep.txt"), "precious");
    await expect(restoreBackup(target, file, false)).rejects.toThrow(/not empty/);
    expect(readdirSync(target)).toEqual(["keep.txt"]);
    const result = await restoreBackup(target, file, true);
    expect(result.movedAside).toBeTruthy();
    expect(existsSync(join(result.movedAside as string, "keep.txt"))).toBe(true);
    expect(existsSync(join(target, "seedcast.db"))).toBe(true);
  });

  test("restore refuses while a server runs on the data dir, and refuses a file that is not a backup", async () => {
    const file = join(scratch, "plain2.tar.gz");
    await createBackup(world.deps, file);
    const target = join(scratch, "running");
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, SERVE_PID_FILE), `${process.pid}\n`);
    await expect(restoreBackup(target, file, true)).rejects.toThrow(/running/);
    const junk = join(scratch, "junk.tar.gz");
    writeFileSync(junk, "not an archive");
    await expect(restoreBackup(join(scratch, "fresh"), junk, false)).rejects.toThrow();
  });

  test("scheduled backups keep only the newest archives", async () => {
    const dir = join(scratch, "rotating");
    mkdirSync(dir);
    for (let i = 0; i < 4; i++) {
      world.clock.advance(60_000);
      await rotateBackups(world.deps, dir, 2);
    }
    expect(readdirSync(dir).filter((n) => n.endsWith(".tar.gz"))).toHaveLength(2);
  });
});

describe.skipIf(TEST_DIALECT !== "sqlite")("backup and restore through the CLI", () => {
  test("seedcast backup then seedcast restore round-trips", async () => {
    const source = join(scratch, "cli-src");
    const run = async (dataDir: string, ...args: string[]) => {
      const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], { env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
      return { code, json: JSON.parse(out || "{}") };
    };
    const created = await run(source, "account", "create", "--name", "C", "--email", "c@cli.test", "--password", "password123", "--json");
    expect(created.code).toBe(0);
    const archive = join(scratch, "cli.tar.gz");
    const backup = await run(source, "backup", archive, "--json");
    expect(backup.code).toBe(0);
    expect(backup.json.counts.accounts).toBe(1);
    const dest = join(scratch, "cli-dest");
    const restore = await run(dest, "restore", archive, "--json");
    expect(restore.code).toBe(0);
    const again = await run(dest, "restore", archive, "--json");
    expect(again.code).toBe(1);
    expect(again.json.message).toContain("not empty");
    const listed = await run(dest, "keys", "list", "--account", created.json.accountId, "--json");
    expect(listed.code).toBe(0);
  });
});
