/**
 * `seedcast migrate-data --to postgres` end to end: an appliance data dir filled through the real services and CLI,
 * copied by the real CLI (`bun src/main.ts migrate-data`) into a real PostgreSQL 15 (test/helpers/postgres.ts) and a
 * real Ceph radosgw bucket (test/helpers/radosgw.ts, which checks SigV4), then read back through both drizzle schemas.
 * Refusals are shown to write nothing; a corrupted row and a missing object are shown to fail the verification.
 * The source is an appliance (SQLite, media in DATA_DIR, the secret in its file) and the target this file's own
 * PostgreSQL and radosgw, whatever the test run's database: a PostgreSQL run (SEEDCAST_TEST_DATABASE=postgres) would
 * only repeat it, next to a second radosgw, so it skips itself there.
 */
import { S3Client } from "bun";
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { getTableName, is, sql } from "drizzle-orm";
import { drizzle as drizzleSqlite } from "drizzle-orm/bun-sqlite";
import { PgTable, bigint, customType, pgTable, text } from "drizzle-orm/pg-core";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { openPostgres } from "../src/db/pg/client";
import * as pgSchema from "../src/db/pg/schema";
import * as sqliteSchema from "../src/db/schema";
import { createLocalStorage } from "../src/lib/storage-local";
import { createS3Storage } from "../src/lib/storage-s3";
import { addConnection } from "../src/modules/connections/service";
import { buildPlan } from "../src/modules/migrate-data/plan";
import { runCli } from "./helpers/cli";
import { type Postgres, startPostgres } from "./helpers/postgres";
import { type Radosgw, startRadosgw } from "./helpers/radosgw";
import { isSqliteStore } from "../src/db/store";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

/** The run this file belongs to (see the header). */
const onSqlite = TEST_DIALECT === "sqlite";
const describeSqlite = describe.skipIf(!onSqlite);

/** A consistent copy of the appliance's database at `path` (VACUUM INTO, on the store's writer). */
async function snapshotInto(path: string): Promise<void> {
  if (!isSqliteStore(world.store)) throw new Error("the appliance is a SQLite one");
  await world.store.withWriter((sqlite) => sqlite.query("VACUUM INTO ?").run(path));
}

let pg: Postgres;
let gw: Radosgw;
let world: World;
let dataDir: string;
let secret: string;
let receiver: ReturnType<typeof Bun.serve>;
let bucketCounter = 0;

/** A fresh empty bucket for one run. */
async function freshBucket(): Promise<string> {
  const name = `migrate-${process.pid}-${++bucketCounter}`;
  await gw.createBucket(name);
  return name;
}

function envFor(database: string, bucket: string, over: Record<string, string> = {}): Record<string, string> {
  return { DATA_DIR: dataDir, DATABASE_URL: database, INSTANCE_SECRET: secret, ...gw.env({ S3_BUCKET: bucket }), ...over };
}

function bucketStore(bucket: string) {
  return createS3Storage({ endpoint: gw.endpoint, bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey });
}

/** Every table of the database with its row count (public schema), as psql sees it. */
async function pgTableCounts(database: string): Promise<Record<string, number>> {
  const names = (await pg.psql("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1", dbName(database))).split("\n").filter(Boolean);
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = Number(await pg.psql(`SELECT count(*) FROM "${name}"`, dbName(database)));
  return counts;
}

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

function sqliteTables(): Map<string, SQLiteTable> {
  const map = new Map<string, SQLiteTable>();
  for (const v of Object.values(sqliteSchema)) if (is(v, SQLiteTable)) map.set(getTableName(v), v);
  return map;
}

function pgTables(): Map<string, PgTable> {
  const map = new Map<string, PgTable>();
  for (const v of Object.values(pgSchema)) if (is(v, PgTable)) map.set(getTableName(v), v);
  return map;
}

function mediaFiles(): string[] {
  const root = join(dataDir, "media");
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.push(relative(root, path));
    }
  };
  walk(root);
  return out.sort();
}

/** The appliance's rows of every table, read through SQLite's drizzle schema. */
function sqliteRowsByTable(): Map<string, Record<string, unknown>[]> {
  const sqlite = new Database(join(dataDir, "seedcast.db"), { readonly: true });
  try {
    const db = drizzleSqlite(sqlite);
    const out = new Map<string, Record<string, unknown>[]>();
    for (const [name, table] of sqliteTables()) out.set(name, db.select().from(table).all() as Record<string, unknown>[]);
    return out;
  } finally {
    sqlite.close();
  }
}

const sortRows = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

beforeAll(async () => {
  if (!onSqlite) return;
  [pg, gw] = await Promise.all([startPostgres(), startRadosgw()]);
  receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
  // The appliance, built through the real services (in-process app) and, below, the real CLI.
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  dataDir = world.dataDir;
  secret = readFileSync(join(dataDir, "instance.secret"), "utf8").trim();
  const a = await world.createAccount({ credits: 500, name: "Café Ünïcode" });
  await a.addMember("editor");
  await a.mint(["read"], { name: "reader", expiresDays: 90 });
  const seeds: string[] = [];
  for (const [title, content] of [
    ["Crème brûlée à Noël", "Une recette de fête, déjà testée: crème, sucre, vanille."],
    ["Zażółć gęślą jaźń", "Łódź in spring — ogród i kawiarnia."],
    ["日本語のタイトル", "桜の季節のお知らせ。"],
    ["Seedlings 🌱", "Emoji and \"quotes\" and a backslash \\ and a newline\nin the content."],
  ]) {
    const res = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title, content, category: "événements" }, headers: { "idempotency-key": `seed-${seeds.length}` } });
    expect(res.status).toBe(201);
    seeds.push(res.json.id);
  }
  // A seed made and deleted again: SQLite's AUTOINCREMENT never hands its seq out again (sqlite_sequence > max(seq)).
  const gone = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "Deleted again", content: "Short-lived." } });
  expect((await world.call("DELETE", `/api/v1/seeds/${gone.json.id}`, { key: a.key })).status).toBe(200);
  // Creations with generated images (assets in the library, media files on disk) and credit holds + ledger rows.
  const creations: string[] = [];
  for (const seedId of seeds.slice(0, 3)) {
    const res = await world.call("POST", "/api/v1/creations/generate", { key: a.key, body: { seed_id: seedId, include_visual: true, aspect_ratio: "portrait" } });
    expect(res.status).toBe(201);
    creations.push(res.json.creation.id);
  }
  // A connection whose credentials are sealed under the instance secret, a scheduled post to it, an event webhook.
  const connection = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `http://127.0.0.1:${receiver.port}/posts`, secret: "webhook-signing-secret" });
  expect(connection.readyToPost).toBe(true);
  const at = new Date(world.clock.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const post = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: creations[0], scheduled_time: at, targets: ["webhook"] } });
  expect(post.status).toBe(200);
  const hook = await world.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `http://127.0.0.1:${receiver.port}/events`, events: ["post.published", "credits.low"] } });
  expect(hook.status).toBe(201);
  const voice = await world.call("PUT", "/api/v1/voice", { key: a.key, body: { tone: "chaleureux", audience: "voisins", language: "fr", emoji: "some", hashtags: ["#jardin", "#été"], bannedWords: ["cheap"], signature: "— L'équipe" } });
  expect([200, 201]).toContain(voice.status);
  // An OAuth client registered the way an MCP client does it (RFC 7591).
  const registered = await world.call("POST", "/oauth/register", { body: { client_name: "Agent façade", redirect_uris: ["http://127.0.0.1:7777/callback"], token_endpoint_auth_method: "none" } });
  expect(registered.status).toBe(201);
  // A file no row names (a crash's leftover, which the sweep would age out) is still an object of the local store,
  // and a large one: it streams in many chunks.
  const leftover = join(dataDir, "media", a.accountId, "0190a0a0-0000-7000-8000-00000000beef.png");
  writeFileSync(leftover, randomBytes(3 * 1024 * 1024 + 17));
  // The real CLI on the same data dir, while the app above still has the database open.
  const created = await runCli(["account", "create", "--name", "Second Shop", "--email", "owner@second.example", "--password", "correct horse battery", "--credits", "42", "--json"], { env: { DATA_DIR: dataDir } });
  expect(created.code).toBe(0);
  const { accountId: secondId, userId: secondOwner } = created.json as { accountId: string; userId: string };
  expect((await runCli(["credits", "grant", "--account", secondId, "--amount", "8", "--json"], { env: { DATA_DIR: dataDir } })).code).toBe(0);
  const minted = await runCli(["keys", "mint", "--account", secondId, "--name", "cli key", "--groups", "read,create", "--member", secondOwner, "--json"], { env: { DATA_DIR: dataDir } });
  expect(minted.code).toBe(0);
}, 180_000);

afterAll(async () => {
  await world?.close();
  receiver?.stop(true);
  await Promise.all([pg?.stop(), gw?.stop()]);
});

describeSqlite("refusals write nothing", () => {
  test("missing S3 variables, DATABASE_URL or INSTANCE_SECRET: a configuration error naming it; no table, no object", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const env = envFor(database, bucket);
    delete env.S3_ENDPOINT;
    const run = await runCli(["migrate-data", "--to", "postgres"], { env });
    expect(run.code).toBe(2);
    expect(run.err).toContain("S3_ENDPOINT");
    const local = await runCli(["migrate-data", "--to", "postgres"], { env: { ...envFor(database, bucket), MEDIA_STORE: "local" } });
    expect(local.code).toBe(2);
    expect(local.err).toContain("MEDIA_STORE=s3");
    const noDatabase = envFor(database, bucket);
    delete noDatabase.DATABASE_URL;
    const withoutUrl = await runCli(["migrate-data", "--to", "postgres"], { env: noDatabase });
    expect(withoutUrl.code).toBe(2);
    expect(withoutUrl.err).toContain("needs DATABASE_URL");
    const noSecret = envFor(database, bucket);
    delete noSecret.INSTANCE_SECRET;
    const withoutSecret = await runCli(["migrate-data", "--to", "postgres"], { env: noSecret });
    expect(withoutSecret.code).toBe(2);
    expect(withoutSecret.err).toContain("needs INSTANCE_SECRET");
    expect(await pgTableCounts(database)).toEqual({});
    expect((await bucketStore(bucket).list()).entries).toEqual([]);
  });

  test("INSTANCE_SECRET other than DATA_DIR/instance.secret: refused, secret never printed; nothing written", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const other = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket, { INSTANCE_SECRET: other }) });
    expect(run.code).toBe(1);
    expect(run.json.error).toBe("secret_mismatch");
    expect(String(run.json.message)).toContain("instance.secret");
    expect(String(run.json.message)).toContain("set INSTANCE_SECRET to the content of".replace("set", "Set"));
    expect(run.out + run.err).not.toContain(other);
    expect(run.out + run.err).not.toContain(secret);
    expect(await pgTableCounts(database)).toEqual({});
    expect((await bucketStore(bucket).list()).entries).toEqual([]);
  });

  test("a target that already holds Seedcast rows: refused, the row and the bucket untouched", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const client = openPostgres(database, { max: 1 });
    const { migratePostgres } = await import("../src/db/pg/migrate");
    await migratePostgres(client.sql);
    await client.sql`INSERT INTO accounts (id, name, created_at) VALUES ('someone-else', 'Other instance', 1)`;
    await client.close();
    const before = await pgTableCounts(database);
    const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket) });
    expect(run.code).toBe(1);
    expect(run.json.error).toBe("target_not_empty");
    expect(String(run.json.message)).toContain("accounts");
    expect(await pgTableCounts(database)).toEqual(before);
    expect(before.accounts).toBe(1);
    expect((await bucketStore(bucket).list()).entries).toEqual([]);
  });

  test("usage: --to must say postgres", async () => {
    const run = await runCli(["migrate-data"], { env: envFor(await pg.createDatabase(), "unused-bucket") });
    expect(run.code).toBe(2);
    expect(run.err).toContain("--to postgres");
  });
});

describeSqlite("a copy", () => {
  let database: string;
  let bucket: string;
  let report: Record<string, any>;

  beforeAll(async () => {
    database = await pg.createDatabase();
    bucket = await freshBucket();
    const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket) });
    if (run.code !== 0) console.log(run.out, run.err);
    expect(run.code).toBe(0);
    report = run.json;
  }, 120_000);

  test("exit 0, and the report says every table and every object verified, counts equal SQLite's", async () => {
    expect(report.ok).toBe(true);
    expect(report.mode).toBe("copy");
    expect(report.instanceSecret).toBe("matches instance.secret");
    const source = sqliteRowsByTable();
    const tables = report.tables as { table: string; ok: boolean; source: { rows: number; sha256: string }; target: { rows: number; sha256: string } }[];
    expect(tables.map((t) => t.table).sort()).toEqual([...source.keys()].sort());
    // The instance secret's fingerprint travels too (a PostgreSQL replica checks it at start): one row, same checksum.
    expect(source.get("instance_identity")).toHaveLength(1);
    expect(tables.find((t) => t.table === "instance_identity")?.ok).toBe(true);
    const pgCounts = await pgTableCounts(database);
    for (const t of tables) {
      expect(t.ok).toBe(true);
      expect(t.source.sha256).toBe(t.target.sha256);
      expect(t.source.rows).toBe(source.get(t.table)!.length);
      expect(pgCounts[t.table]).toBe(source.get(t.table)!.length);
    }
    // The data this test made is really there (not an empty copy that trivially matches).
    for (const name of ["accounts", "users", "members", "api_keys", "seeds", "creations", "assets", "credit_ledger", "credit_holds", "connections", "scheduled_posts", "scheduled_post_targets", "event_webhooks", "brand_voices", "idempotency_keys", "oauth_clients"]) {
      expect(source.get(name)!.length).toBeGreaterThan(0);
    }
    expect(report.media.ok).toBe(true);
    expect(report.media.objects).toBe(mediaFiles().length);
    expect(report.media.objects).toBeGreaterThanOrEqual(3);
  });

  test("every row equal field by field, read through both drizzle schemas (accents, booleans, JSON, seq)", async () => {
    const source = sqliteRowsByTable();
    const client = openPostgres(database, { max: 1 });
    try {
      const targets = pgTables();
      for (const [name, rows] of source) {
        const table = targets.get(name)!;
        const copied = (await client.db.select().from(table)) as Record<string, unknown>[];
        // Columns PostgreSQL generates itself (search's tsvector) are not SQLite's: compare the shared ones.
        const shared = copied.map((row) => Object.fromEntries(Object.keys(rows[0] ?? row).map((k) => [k, row[k]])));
        expect(sortRows(shared)).toEqual(sortRows(rows));
      }
      const titles = source.get("seeds")!.map((s) => s.title);
      expect(titles).toContain("Zażółć gęślą jaźń");
      const voice = (await client.sql`SELECT jsonb_typeof(hashtags) AS t, hashtags->>1 AS second FROM brand_voices`) as { t: string; second: string }[];
      expect(voice[0]).toEqual({ t: "array", second: "#été" });
    } finally {
      await client.close();
    }
  });

  test("seeds.seq kept, and the next seed inserted on PostgreSQL gets a seq SQLite never handed out", async () => {
    const maxSeq = Math.max(...sqliteRowsByTable().get("seeds")!.map((s) => s.seq as number));
    const sqlite = new Database(join(dataDir, "seedcast.db"), { readonly: true });
    const used = sqlite.query<{ seq: number }, []>("SELECT seq FROM sqlite_sequence WHERE name = 'seeds'").get()!.seq;
    sqlite.close();
    expect(used).toBe(maxSeq + 1); // the deleted seed's
    expect((report.sequences as { table: string; column: string; next: number }[]).find((s) => s.table === "seeds")).toEqual({ table: "seeds", column: "seq", next: used + 1 });
    const client = openPostgres(database, { max: 1 });
    try {
      const accountId = (await client.sql`SELECT id FROM accounts ORDER BY created_at LIMIT 1`)[0].id as string;
      const [inserted] = await client.db
        .insert(pgSchema.seeds)
        .values({ id: crypto.randomUUID(), accountId, title: "After the move", content: "Written on PostgreSQL.", createdAt: 1, updatedAt: 1 })
        .returning({ seq: pgSchema.seeds.seq });
      expect(inserted!.seq).toBe(used + 1);
      await client.sql`DELETE FROM seeds WHERE title = 'After the move'`;
    } finally {
      await client.close();
    }
  });

  test("every media file is in the bucket under the same key, byte for byte", async () => {
    const store = bucketStore(bucket);
    const client = new S3Client({ endpoint: gw.endpoint, bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey });
    const keys = mediaFiles();
    expect(keys.length).toBeGreaterThanOrEqual(3);
    expect((await store.list()).entries.map((e) => e.key).sort()).toEqual(keys);
    for (const key of keys) {
      const copied = await store.read(key);
      const original = readFileSync(join(dataDir, "media", key));
      expect(copied.length).toBe(statSync(join(dataDir, "media", key)).size);
      expect(Buffer.from(copied).equals(original)).toBe(true);
      // Put as the server's own uploads are: no Content-Type sent (Bun would otherwise infer image/png from the name
      // and leave it unsigned), so the object has the store's default type; /media serves the row's type.
      expect((await client.file(`media/${key}`).stat()).type).toBe("binary/octet-stream");
    }
  });

  test("a second run against the filled database is refused and changes nothing", async () => {
    const before = await pgTableCounts(database);
    const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, await freshBucket()) });
    expect(run.code).toBe(1);
    expect(run.json.error).toBe("target_not_empty");
    expect(await pgTableCounts(database)).toEqual(before);
  });

  test("--verify-only on the untouched copy passes; a corrupted row and a missing object fail it", async () => {
    const clean = await runCli(["migrate-data", "--to", "postgres", "--verify-only", "--json"], { env: envFor(database, bucket) });
    expect(clean.code).toBe(0);
    expect(clean.json.ok).toBe(true);
    expect(clean.json.mode).toBe("verify");

    const seq = Number(await pg.psql("SELECT min(seq) FROM seeds", dbName(database)));
    await pg.psql(`UPDATE seeds SET title = title || '!' WHERE seq = ${seq}`, dbName(database));
    const corrupted = await runCli(["migrate-data", "--to", "postgres", "--verify-only", "--json"], { env: envFor(database, bucket) });
    expect(corrupted.code).toBe(1);
    expect(corrupted.json.ok).toBe(false);
    const tables = corrupted.json.tables as { table: string; ok: boolean; source: { rows: number; sha256: string }; target: { rows: number; sha256: string }; firstDifference?: unknown }[];
    const seedsResult = tables.find((t) => t.table === "seeds")!;
    expect(seedsResult.ok).toBe(false);
    expect(seedsResult.source.rows).toBe(seedsResult.target.rows);
    expect(seedsResult.source.sha256).not.toBe(seedsResult.target.sha256);
    expect(seedsResult.firstDifference).toEqual({ primaryKey: { seq }, problem: "values differ" });
    expect(tables.filter((t) => !t.ok).map((t) => t.table)).toEqual(["seeds"]);

    // The text report says so too, and a missing object is caught by the media check.
    const key = mediaFiles()[0]!;
    await bucketStore(bucket).delete(key);
    const text = await runCli(["migrate-data", "--to", "postgres", "--verify-only"], { env: envFor(database, bucket) });
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/MISMATCH\s+seeds/);
    expect(text.out).toContain(`${key}: missing in the bucket`);
    expect(text.out).toContain("verification FAILED");
  });
});

describeSqlite("Storage.putStream", () => {
  test("S3 and local disk store a stream's bytes (and put()'s); a stream shorter than its stated size fails and leaves nothing", async () => {
    const bytes = new Uint8Array(1024 * 1024 + 3).map((_, i) => (i * 7) % 251);
    const streamOf = (data: Uint8Array) => new Blob([data as Uint8Array<ArrayBuffer>]).stream();
    const s3 = bucketStore(await freshBucket());
    const localRoot = mkdtempSync(join(tmpdir(), "seedcast-putstream-"));
    try {
      const local = createLocalStorage(localRoot);
      for (const store of [s3, local]) {
        await store.putStream("acct/one.png", streamOf(bytes), bytes.length);
        expect(Buffer.from(await store.read("acct/one.png")).equals(Buffer.from(bytes))).toBe(true);
        await expect(store.putStream("acct/two.png", streamOf(bytes.subarray(0, 1000)), bytes.length)).rejects.toThrow();
        expect(await store.exists("acct/two.png")).toBe(false);
        // put() of whole bytes shares the S3 request code with putStream (one presigned PUT, the ETag checked).
        await store.put("acct/three.png", bytes.subarray(0, 4096));
        expect(Buffer.from(await store.read("acct/three.png")).equals(Buffer.from(bytes.subarray(0, 4096)))).toBe(true);
        const listing = await store.list();
        expect(listing.entries.map((e) => e.key).sort()).toEqual(["acct/one.png", "acct/three.png"]);
        expect(listing.temps).toEqual([]);
      }
    } finally {
      rmSync(localRoot, { recursive: true, force: true });
    }
  });
});

describeSqlite("two runs at once against one empty database and bucket", () => {
  test("one copies, the other is refused, and the copy stays whole", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const runs = await Promise.all([1, 2].map(() => runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket) })));
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1]);
    const refused = runs.find((r) => r.code === 1)!;
    expect(["target_not_empty", "bucket_not_empty"]).toContain(String(refused.json.error));
    const check = await runCli(["migrate-data", "--to", "postgres", "--verify-only", "--json"], { env: envFor(database, bucket) });
    expect(check.code).toBe(0);
    expect(check.json.ok).toBe(true);
    expect((check.json.media as { objects: number }).objects).toBe(mediaFiles().length);
  });
});

describeSqlite("an appliance left by an older Seedcast (a migration behind)", () => {
  test("the snapshot is migrated and copied; the appliance's own database is left as it was", async () => {
    const oldDir = mkdtempSync(join(tmpdir(), "seedcast-older-"));
    try {
      await snapshotInto(join(oldDir, "seedcast.db"));
      cpSync(join(dataDir, "instance.secret"), join(oldDir, "instance.secret"));
      cpSync(join(dataDir, "media"), join(oldDir, "media"), { recursive: true });
      // As a Seedcast from before 0006 left it: no user_preferences table, no tag.
      const old = new Database(join(oldDir, "seedcast.db"));
      old.exec("DROP TABLE user_preferences; DELETE FROM __seedcast_migrations WHERE tag = '0006_user_preferences'");
      old.close();
      const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(await pg.createDatabase(), await freshBucket(), { DATA_DIR: oldDir }) });
      expect(run.code).toBe(0);
      expect(run.json.ok).toBe(true);
      expect((run.json.source as { sqliteMigrationsApplied: string[] }).sqliteMigrationsApplied).toEqual(["0006_user_preferences"]);
      const after = new Database(join(oldDir, "seedcast.db"), { readonly: true });
      expect(after.query("SELECT name FROM sqlite_master WHERE name = 'user_preferences'").get()).toBeNull();
      expect(after.query("SELECT tag FROM __seedcast_migrations WHERE tag = '0006_user_preferences'").get()).toBeNull();
      after.close();
    } finally {
      rmSync(oldDir, { recursive: true, force: true });
    }
  });
});

describeSqlite("an appliance that ran with INSTANCE_SECRET (no instance.secret file)", () => {
  let envDir: string;

  beforeAll(async () => {
    // A copy of the appliance as an env-mode one would look: database and media, no instance.secret.
    envDir = mkdtempSync(join(tmpdir(), "seedcast-envmode-"));
    await snapshotInto(join(envDir, "seedcast.db"));
  });
  afterAll(() => rmSync(envDir, { recursive: true, force: true }));

  const run = (database: string, bucket: string, over: Record<string, string> = {}) =>
    runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket, { DATA_DIR: envDir, ...over }) });

  test("the secret is checked against the recorded fingerprint, or (no row: an older appliance) by opening a sealed credential; image rows without files and a newer Seedcast's database are refused; each writes nothing", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const other = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64");
    const wrong = await run(database, bucket, { INSTANCE_SECRET: other });
    expect(wrong.code).toBe(1);
    expect(wrong.json.error).toBe("secret_mismatch");
    expect(String(wrong.json.message)).toContain("its database records that secret's fingerprint");
    expect(wrong.out + wrong.err).not.toContain(other);
    // An appliance from before the fingerprint (no row): the secret must open a sealed credential instead.
    const withoutRow = new Database(join(envDir, "seedcast.db"));
    const identity = withoutRow.query<{ secret_fingerprint: string; created_at: number }, []>("SELECT secret_fingerprint, created_at FROM instance_identity").get()!;
    withoutRow.query("DELETE FROM instance_identity").run();
    withoutRow.close();
    const wrongOld = await run(database, bucket, { INSTANCE_SECRET: other });
    expect(wrongOld.code).toBe(1);
    expect(wrongOld.json.error).toBe("secret_mismatch");
    expect(String(wrongOld.json.message)).toContain("does not open the credentials");

    // The right secret (it opens the credentials: the run gets past the secret), but media/ was not brought along.
    const noMedia = await run(database, bucket);
    expect(noMedia.code).toBe(1);
    expect(noMedia.json.error).toBe("media_missing");
    expect(String(noMedia.json.message)).toContain("3 image(s)");

    // A migration this build does not know: the database comes from a newer Seedcast.
    const db = new Database(join(envDir, "seedcast.db"));
    db.query("INSERT INTO __seedcast_migrations (tag, applied_at) VALUES ('9999_from_the_future', 'x')").run();
    db.close();
    const newer = await run(database, bucket);
    expect(newer.code).toBe(1);
    expect(newer.json.error).toBe("source_too_new");
    expect(String(newer.json.message)).toContain("9999_from_the_future");
    const fixed = new Database(join(envDir, "seedcast.db"));
    fixed.query("DELETE FROM __seedcast_migrations WHERE tag = '9999_from_the_future'").run();
    fixed.close();

    expect(await pgTableCounts(database)).toEqual({});
    expect((await bucketStore(bucket).list()).entries).toEqual([]);

    // The row back: the right secret now passes by the fingerprint the database recorded.
    const withRow = new Database(join(envDir, "seedcast.db"));
    withRow.query("INSERT INTO instance_identity (id, secret_fingerprint, created_at) VALUES (1, ?, ?)").run(identity.secret_fingerprint, identity.created_at);
    withRow.close();
    cpSync(join(dataDir, "media"), join(envDir, "media"), { recursive: true });
    // Without --json: progress on stderr, the report on stdout.
    const ok = await runCli(["migrate-data", "--to", "postgres"], { env: envFor(database, bucket, { DATA_DIR: envDir }) });
    expect(ok.code).toBe(0);
    expect(ok.out).toContain("instance secret: matches the fingerprint the database recorded");
    expect(ok.out).toMatch(/ok\s+seeds\s+4 rows, sha256 [0-9a-f]{16}/);
    expect(ok.out).toMatch(/copied and verified: \d+ tables and 4 media objects match\./);
    expect(ok.err).toContain("migrate-data: copied seeds: 4 rows");
    expect(ok.err).toContain("migrate-data: verifying every table and media object");
  });

  test("all or nothing: a failure at commit rolls every row back and deletes the objects already put", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    // The schema in place (no rows), plus a deferred constraint trigger that fails the commit, i.e. after every table
    // and every object was copied.
    const client = openPostgres(database, { max: 1 });
    const { migratePostgres } = await import("../src/db/pg/migrate");
    await migratePostgres(client.sql);
    await client.sql.unsafe(`
      CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused at commit'; END $$;
      CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON accounts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit();
    `);
    await client.close();
    const failed = await run(database, bucket);
    expect(failed.code).toBe(1);
    expect(failed.out + failed.err).toContain("refused at commit");
    const counts = await pgTableCounts(database);
    // auth_generation's one row and the migrations' own table are the schema's, not copied data.
    const copied = Object.entries(counts).filter(([name, n]) => n > 0 && name !== "__seedcast_migrations" && name !== "auth_generation");
    expect(copied).toEqual([]);
    expect((await bucketStore(bucket).list()).entries).toEqual([]);
  });
});

describeSqlite("columns PostgreSQL generates (search's tsvector) are never written", () => {
  test("from drizzle's column config: the plan leaves a generatedAlwaysAs column out, and orders parents first", () => {
    const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });
    // The mirror's columns (fresh builders for each table), plus a `search` column.
    const seedsWith = <T extends Record<string, unknown>>(extra: T) =>
      pgTable("seeds", {
        seq: bigint("seq", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
        id: text("id").notNull(),
        accountId: text("account_id").notNull().references(() => pgSchema.accounts.id, { onDelete: "cascade" }),
        title: text("title").notNull(),
        content: text("content").notNull(),
        category: text("category"),
        imageAssetId: text("image_asset_id"),
        imageUrl: text("image_url"),
        createdAt: bigint("created_at", { mode: "number" }).notNull(),
        updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
        ...(extra as object),
      });
    const seedsWithSearch = seedsWith({ search: tsvector("search").generatedAlwaysAs(sql`to_tsvector('simple', title || ' ' || content)`) });
    const plans = buildPlan({ sqlite: sqliteSchema, pg: { ...pgSchema, seeds: seedsWithSearch } });
    const seeds = plans.find((p) => p.name === "seeds")!;
    expect(seeds.generated).toEqual(["search"]);
    expect(seeds.columns.map((c) => c.name)).not.toContain("search");
    expect(seeds.columns.map((c) => c.name)).toContain("seq");
    for (const [i, plan] of plans.entries()) {
      for (const parent of plan.references) expect(plans.findIndex((p) => p.name === parent)).toBeLessThan(i);
    }
    // Without the generated config, a column only PostgreSQL has is a schema bug the plan refuses.
    const plain = seedsWith({ search: text("search") });
    expect(() => buildPlan({ sqlite: sqliteSchema, pg: { ...pgSchema, seeds: plain } })).toThrow("column seeds.search exists on PostgreSQL only");
  });

  test("from the target's catalog: a generated column the schema does not name is filled by PostgreSQL, and listed", async () => {
    const database = await pg.createDatabase();
    const bucket = await freshBucket();
    const client = openPostgres(database, { max: 1 });
    const { migratePostgres } = await import("../src/db/pg/migrate");
    await migratePostgres(client.sql);
    // NB: seeds.search (the schema's own generated column) is there already; this one only the catalog knows.
    await client.sql.unsafe("ALTER TABLE seeds ADD COLUMN catalog_words tsvector GENERATED ALWAYS AS (to_tsvector('simple', title || ' ' || content)) STORED");
    await client.close();
    const run = await runCli(["migrate-data", "--to", "postgres", "--json"], { env: envFor(database, bucket) });
    expect(run.code).toBe(0);
    expect(run.json.ok).toBe(true);
    expect(run.json.generatedColumns).toEqual(["seeds.search", "seeds.catalog_words"]);
    expect((await pg.psql("SELECT count(*) FROM seeds WHERE catalog_words @@ to_tsquery('simple', 'brûlée')", dbName(database))).trim()).toBe("1");
  });
});
