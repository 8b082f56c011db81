/**
 * Backups: one .tar.gz holding a consistent snapshot of the database, the instance secret (API key hashes and
 * encrypted connection credentials depend on it) and every media file the snapshot refers to.
 *
 * When the secret comes from INSTANCE_SECRET, the archive does not carry it (a person who put it in the environment
 * keeps it apart from the data on purpose): the manifest says so and holds the secret's fingerprint, and restore
 * needs INSTANCE_SECRET set to the same value (checked against the fingerprint) before it writes anything.
 *
 * Online and consistent: the database is copied with `VACUUM INTO`, a single read transaction, so the copy is one
 * instant. It runs on the store's writer connection (the reader is query_only, which refuses it) holding the writer,
 * so this process's writes wait for the copy; other processes' writers keep going. Media files are immutable once
 * written; the ones the snapshot names are hardlinked (copied across devices) into the staging folder. NB: an asset
 * deleted after the snapshot but before its file was staged is dropped from the snapshot too, so an archive never
 * holds a row without its file.
 */
import { Database } from "bun:sqlite";
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import * as tar from "tar";
import { MEDIA_DIR } from "../../bootstrap";
import { DB_FILE_NAME } from "../../db/client";
import { knownMigrations } from "../../db/migrate";
import { isSqliteStore } from "../../db/store";
import type { Deps } from "../../deps";
import { INSTANCE_SECRET_FILE, decodeBase64Secret, instanceSecretFingerprint } from "../../lib/instance-secret";
import { VERSION } from "../../version";

export const BACKUP_ROOT = "seedcast-backup";
export const MANIFEST_FILE = "manifest.json";
export const BACKUP_FORMAT = 1;

export interface BackupManifest {
  format: number;
  version: string;
  createdAt: string;
  migrations: string[];
  counts: Record<string, number>;
  mediaFiles: number;
  /**
   * Where the instance secret is: in the archive (`file`; archives made before this field existed too), or not, as
   * it came from INSTANCE_SECRET (`environment`, with its fingerprint, so restore can check the value it is given).
   */
  instanceSecret?: { source: "file" } | { source: "environment"; fingerprint: string };
}

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupError";
  }
}

/**
 * Archives are an appliance's DATA_DIR: database file, instance secret, media folder. In PostgreSQL mode none of the
 * three is there, and the engines have their own tools, which this names.
 */
export const POSTGRES_BACKUP_REFUSAL =
  "seedcast backup and restore work on an appliance's DATA_DIR (SQLite and media on disk), and with DATABASE_URL the data lives in PostgreSQL. Back up the database with pg_dump (or your provider's snapshots and point-in-time recovery), turn on bucket versioning (or replication) for the media bucket, and keep INSTANCE_SECRET with them: the API keys and stored credentials in a dump only work under it.";

/**
 * Archives hold DATA_DIR's media folder; with MEDIA_STORE=s3 the media are in the bucket, so neither a backup nor a
 * restore could be whole. The bucket is backed up by the store itself (versioning, replication).
 */
export const S3_BACKUP_REFUSAL =
  "seedcast backup and restore cover DATA_DIR only, and with MEDIA_STORE=s3 the media live in the bucket: an archive would hold rows without their images. Turn on bucket versioning (or replication) for the media, and copy the database while the server is stopped.";

function stageFile(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

const COUNTED_TABLES = ["accounts", "users", "api_keys", "assets", "seeds", "creations", "scheduled_posts", "credit_ledger"];

function tableCounts(db: Database): Record<string, number> {
  const present = new Set(db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name));
  const counts: Record<string, number> = {};
  for (const table of COUNTED_TABLES) {
    if (present.has(table)) counts[table] = db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
  }
  return counts;
}

/** Writes a backup archive of the running instance to `file` (created atomically). Returns its manifest. */
export async function createBackup(deps: Pick<Deps, "store" | "config" | "clock" | "instanceSecret">, file: string): Promise<BackupManifest> {
  const store = deps.store;
  if (!isSqliteStore(store)) throw new BackupError(POSTGRES_BACKUP_REFUSAL);
  if (deps.config.media.kind === "s3") throw new BackupError(S3_BACKUP_REFUSAL);
  const target = resolve(file);
  const stage = mkdtempSync(join(tmpdir(), "seedcast-backup-"));
  const root = join(stage, BACKUP_ROOT);
  mkdirSync(join(root, MEDIA_DIR), { recursive: true });
  try {
    const dbCopy = join(root, DB_FILE_NAME);
    await store.withWriter((writer) => writer.query("VACUUM INTO ?").run(dbCopy));
    const snapshot = new Database(dbCopy);
    let mediaFiles = 0;
    let counts: Record<string, number>;
    try {
      const hasAssets = snapshot.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'assets'").get() !== null;
      const rows = hasAssets ? snapshot.query<{ id: string; storage_key: string }, []>("SELECT id, storage_key FROM assets").all() : [];
      const vanished: string[] = [];
      for (const row of rows) {
        const source = join(deps.config.dataDir, MEDIA_DIR, row.storage_key);
        try {
          stageFile(source, join(root, MEDIA_DIR, row.storage_key));
          mediaFiles += 1;
        } catch {
          vanished.push(row.id);
        }
      }
      if (vanished.length > 0) {
        snapshot.exec("PRAGMA foreign_keys = OFF");
        const del = snapshot.query("DELETE FROM assets WHERE id = ?");
        snapshot.transaction(() => {
          for (const id of vanished) del.run(id);
        })();
      }
      const check = snapshot.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get();
      if (check?.integrity_check !== "ok") throw new BackupError(`snapshot failed its integrity check: ${check?.integrity_check}`);
      counts = tableCounts(snapshot);
    } finally {
      snapshot.close();
    }
    const fromEnv = deps.config.instanceSecret !== null;
    if (!fromEnv) copyFileSync(join(deps.config.dataDir, INSTANCE_SECRET_FILE), join(root, INSTANCE_SECRET_FILE));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: VERSION,
      createdAt: new Date(deps.clock.now()).toISOString(),
      migrations: knownMigrations(),
      counts,
      mediaFiles,
      instanceSecret: fromEnv ? { source: "environment", fingerprint: instanceSecretFingerprint(deps.instanceSecret) } : { source: "file" },
    };
    writeFileSync(join(root, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    // The archive holds instance.secret (unless INSTANCE_SECRET stands in for it), which opens every sealed credential,
    // and the whole database: owner-only whatever the umask (a directory made here is owner-only too). The partial
    // file is created 0600 before tar opens it, so no moment exists where another local user could open it; chmod
    // covers a leftover partial file of another mode.
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    const partial = `${target}.partial-${process.pid}`;
    writeFileSync(partial, "", { mode: 0o600 });
    chmodSync(partial, 0o600);
    await tar.c({ gzip: true, file: partial, cwd: stage, portable: true }, [BACKUP_ROOT]);
    renameSync(partial, target);
    return manifest;
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The pid file `seedcast serve` keeps in DATA_DIR while it runs. */
export const SERVE_PID_FILE = "serve.pid";

/** True when a server is running on this data dir (its pid file names a live process). */
export async function serverRunning(dataDir: string): Promise<boolean> {
  const pidFile = join(dataDir, SERVE_PID_FILE);
  if (!existsSync(pidFile)) return false;
  const pid = Number((await readFile(pidFile, "utf8")).trim());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where the restored instance's secret comes from, checked before anything is moved: an archive without the secret
 * needs `envSecret` (INSTANCE_SECRET) with the fingerprint it recorded; an archive with it, restored while
 * INSTANCE_SECRET is set, needs the two to be equal (the server would refuse the pair at start otherwise). Returns
 * whether the archive's instance.secret file is to be placed (not when INSTANCE_SECRET stands in for it).
 */
async function checkSecret(root: string, manifest: BackupManifest, envSecret: Uint8Array | null): Promise<boolean> {
  if (manifest.instanceSecret?.source === "environment") {
    if (!envSecret) {
      throw new BackupError(
        "this backup does not hold the instance secret: the instance it was taken from read it from INSTANCE_SECRET. Set INSTANCE_SECRET to that same value and run restore again (and keep it set for the server).",
      );
    }
    if (instanceSecretFingerprint(envSecret) !== manifest.instanceSecret.fingerprint) {
      throw new BackupError(
        "INSTANCE_SECRET is not the secret this backup's keys and credentials were made under (its fingerprint differs from the one the backup recorded). Set it to the value the backed-up instance ran with.",
      );
    }
    return false;
  }
  const path = join(root, INSTANCE_SECRET_FILE);
  if (!existsSync(path)) throw new BackupError(`the backup lacks ${INSTANCE_SECRET_FILE}`);
  if (!envSecret) return true;
  const carried = decodeBase64Secret(await readFile(path, "utf8"));
  if (!carried || !Buffer.from(carried).equals(Buffer.from(envSecret))) {
    throw new BackupError(
      `this backup holds its own ${INSTANCE_SECRET_FILE}, and INSTANCE_SECRET is set to another value: the restored keys and credentials would not work. Either restore with INSTANCE_SECRET unset (the restored data dir then keeps the file), or set INSTANCE_SECRET to that file's content (${BACKUP_ROOT}/${INSTANCE_SECRET_FILE} in the archive).`,
    );
  }
  return false;
}

/**
 * The fingerprint the archive's database recorded (`instance_identity`, see src/db/instance-identity.ts) against the
 * secret the restored instance will run under (`secret`: INSTANCE_SECRET, or the archive's instance.secret), so an
 * archive whose database and secret do not belong together is refused here, before anything is moved, rather than by
 * the server's start afterwards. Archives from before the table (or before the first start that wrote the row) have
 * no row: the restored instance adopts its secret at start, and the manifest's check above is what holds them.
 */
function checkRecordedFingerprint(db: Database, secret: Uint8Array | null): void {
  const table = db.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'instance_identity'").get();
  if (!table?.n || !secret) return;
  const row = db.query<{ f: string }, []>("SELECT secret_fingerprint AS f FROM instance_identity WHERE id = 1").get();
  if (row && row.f !== instanceSecretFingerprint(secret)) {
    throw new BackupError(
      "this backup's database was made under another instance secret than the one it would be restored with (INSTANCE_SECRET, or the instance.secret the archive carries): its keys, sessions and credentials would not work, and the server would refuse to start on it. Restore with INSTANCE_SECRET set to the value the backed-up instance ran with.",
    );
  }
}

/**
 * Restores an archive into `dataDir` (offline: refuses while a server runs on it). A non-empty data dir is refused
 * unless `force`, in which case its current contents are moved into `<dataDir>/before-restore-<time>/` first.
 * `envSecret` is INSTANCE_SECRET (decoded) when set (see checkSecret).
 * NB: everything is staged inside `dataDir` itself, so the final moves are renames on one filesystem, which also
 * works when the data dir is a mount point (a container volume).
 */
export async function restoreBackup(
  dataDir: string,
  file: string,
  force: boolean,
  envSecret: Uint8Array | null = null,
): Promise<BackupManifest & { movedAside: string | null }> {
  const source = resolve(file);
  if (!existsSync(source) || !statSync(source).isFile()) throw new BackupError(`no backup file at ${source}`);
  if (await serverRunning(dataDir)) throw new BackupError(`a Seedcast server is running on ${dataDir}: stop it before restoring`);
  const existing = existsSync(dataDir) ? readdirSync(dataDir) : [];
  if (existing.length > 0 && !force) {
    throw new BackupError(`${dataDir} is not empty: restore refuses to overwrite it without --force`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const stage = mkdtempSync(join(dataDir, ".restore-"));
  try {
    await tar.x({ file: source, cwd: stage, strict: true, preservePaths: false });
    const root = join(stage, BACKUP_ROOT);
    const manifestPath = join(root, MANIFEST_FILE);
    if (!existsSync(manifestPath)) throw new BackupError(`${basename(source)} is not a Seedcast backup (no manifest)`);
    const manifest = JSON.parse(await readFile(manifestPath, "utf8")) as BackupManifest;
    if (manifest.format !== BACKUP_FORMAT) throw new BackupError(`unsupported backup format ${manifest.format}`);
    if (!existsSync(join(root, DB_FILE_NAME))) throw new BackupError(`the backup lacks ${DB_FILE_NAME}`);
    const placeSecretFile = await checkSecret(root, manifest, envSecret);
    const restoredSecret = placeSecretFile ? decodeBase64Secret(await readFile(join(root, INSTANCE_SECRET_FILE), "utf8")) : envSecret;
    const db = new Database(join(root, DB_FILE_NAME));
    try {
      const check = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get();
      if (check?.integrity_check !== "ok") throw new BackupError(`the backup's database is damaged: ${check?.integrity_check}`);
      checkRecordedFingerprint(db, restoredSecret);
    } finally {
      db.close();
    }
    let movedAside: string | null = null;
    if (existing.length > 0) {
      movedAside = join(dataDir, `before-restore-${Date.now()}`);
      mkdirSync(movedAside);
      for (const entry of existing) renameSync(join(dataDir, entry), join(movedAside, entry));
    }
    for (const entry of placeSecretFile ? [DB_FILE_NAME, INSTANCE_SECRET_FILE, MEDIA_DIR] : [DB_FILE_NAME, MEDIA_DIR]) {
      const from = join(root, entry);
      if (existsSync(from)) renameSync(from, join(dataDir, entry));
    }
    return { ...manifest, movedAside };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Writes a timestamped backup into `dir` and keeps only the newest `keep` archives there. */
export async function rotateBackups(deps: Pick<Deps, "store" | "config" | "clock" | "instanceSecret">, dir: string, keep: number): Promise<string> {
  const stamp = new Date(deps.clock.now()).toISOString().replace(/[:.]/g, "-");
  const file = join(dir, `seedcast-${stamp}.tar.gz`);
  await createBackup(deps, file);
  const archives = readdirSync(dir)
    .filter((n) => /^seedcast-.*\.tar\.gz$/.test(n))
    .sort()
    .reverse();
  for (const old of archives.slice(keep)) rmSync(join(dir, old), { force: true });
  return file;
}
