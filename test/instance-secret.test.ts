/**
 * The instance secret and DATABASE_URL as a person meets them: `seedcast secret new`, INSTANCE_SECRET, the refusals at
 * start (each names the variable and never echoes a secret), and backups of an instance whose secret is in the
 * environment. Every check runs the real CLI or server in a child process (`bun src/main.ts ...`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as tar from "tar";
import { loadConfig } from "../src/config";
import { decodeBase64Secret, instanceSecretFingerprint } from "../src/lib/instance-secret";
import { type ChildServer, startChildServer } from "./helpers/child-server";
import { type CliRun, runCli } from "./helpers/cli";

const ROOT = resolve(import.meta.dir, "..");

const scratch = mkdtempSync(join(tmpdir(), "seedcast-secret-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let dirs = 0;
/** A fresh, not yet existing data dir under the scratch folder. */
function newDataDir(): string {
  dirs += 1;
  return join(scratch, `data-${dirs}`);
}

const cli = (env: Record<string, string>, ...args: string[]): Promise<CliRun> => runCli(args, { env });

describe("seedcast secret new", () => {
  test("prints one line of base64 that decodes to 32 random bytes, a different one each call", async () => {
    const a = await cli({}, "secret", "new");
    const b = await cli({}, "secret", "new");
    expect(a.code).toBe(0);
    expect(a.err).toBe("");
    expect(a.out).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    expect(Buffer.from(a.out.trim(), "base64")).toHaveLength(32);
    expect(b.out).not.toBe(a.out);

    const j = await cli({}, "secret", "new", "--json");
    expect(j.code).toBe(0);
    expect(Object.keys(j.json)).toEqual(["instanceSecret"]);
    expect(Buffer.from(j.json.instanceSecret as string, "base64")).toHaveLength(32);
    expect(j.json.instanceSecret).not.toBe(a.out.trim());
  });

  test("needs no valid configuration (it is how a missing INSTANCE_SECRET is made), and opens no data dir", async () => {
    const dataDir = newDataDir();
    const run = await cli({ DATA_DIR: dataDir, DATABASE_URL: "postgres://app:pw@db.internal/seedcast", PORT: "not-a-port" }, "secret", "new");
    expect(run.code).toBe(0);
    expect(Buffer.from(run.out.trim(), "base64")).toHaveLength(32);
    expect(await Bun.file(dataDir).exists()).toBe(false);
  });

  test("anything but `secret new` is a usage error (exit 2) naming the command", async () => {
    for (const args of [["secret"], ["secret", "old"], ["secret", "new", "extra"], ["secret", "new", "--bytes", "64"]]) {
      const run = await cli({}, ...args, "--json");
      expect({ args, code: run.code, error: run.json.error }).toEqual({ args, code: 2, error: "usage" });
    }
    const help = await cli({}, "help");
    expect(help.out).toContain("secret new");
  });
});

/** 32 bytes whose base64 has `+` and `/` (so the URL-safe spelling differs), and both spellings. */
function spellings(): { standard: string; urlSafe: string } {
  for (;;) {
    const standard = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    if (standard.includes("+") && standard.includes("/")) {
      return { standard, urlSafe: standard.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") };
    }
  }
}

async function newSecret(): Promise<string> {
  return (await cli({}, "secret", "new")).out.trim();
}

/** An account and a key minted through the CLI in `dataDir`, under `env`. */
async function accountWithKey(dataDir: string, env: Record<string, string>): Promise<{ accountId: string; key: string }> {
  const created = await cli({ DATA_DIR: dataDir, ...env }, "account", "create", "--name", "A", "--email", `o${dirs}@secret.test`, "--password", "hunter2hunter2", "--json");
  expect(created.code).toBe(0);
  const minted = await cli({ DATA_DIR: dataDir, ...env }, "keys", "mint", "--account", created.json.accountId as string, "--name", "k", "--groups", "read", "--expires-days", "never", "--json");
  expect(minted.code).toBe(0);
  return { accountId: created.json.accountId as string, key: minted.json.key as string };
}

const servers: ChildServer[] = [];
afterAll(() => {
  for (const s of servers) s.proc.kill("SIGKILL");
});

async function serve(dataDir: string, env: Record<string, string>): Promise<ChildServer> {
  const server = await startChildServer([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { DATA_DIR: dataDir, LOG_LEVEL: "info", BASE_URL: "http://localhost", ...env },
    logFile: join(scratch, `serve-${servers.length}.log`),
  });
  servers.push(server);
  return server;
}

async function stop(server: ChildServer): Promise<void> {
  server.proc.kill("SIGTERM");
  await server.proc.exited;
}

async function health(server: ChildServer, key: string): Promise<number> {
  const res = await fetch(`${server.base}/api/v1/health`, { headers: { authorization: `Bearer ${key}` } });
  await res.body?.cancel();
  return res.status;
}

describe("INSTANCE_SECRET", () => {
  test("a server started with it accepts a key the CLI minted under it, and no instance.secret file is ever written", async () => {
    const dataDir = newDataDir();
    const secret = await newSecret();
    const { key } = await accountWithKey(dataDir, { INSTANCE_SECRET: secret });
    expect(existsSync(join(dataDir, "seedcast.db"))).toBe(true);
    expect(existsSync(join(dataDir, "instance.secret"))).toBe(false);

    const server = await serve(dataDir, { INSTANCE_SECRET: secret });
    expect(await health(server, key)).toBe(200);
    expect(existsSync(join(dataDir, "instance.secret"))).toBe(false);
    expect(server.log()).not.toContain(secret);
    await stop(server);

    // The key hangs on the secret: under another one (no file to compare with here) the start is refused by the
    // fingerprint the database recorded (see "the secret's fingerprint in the database" below) instead of every key
    // answering 401.
    const other = await cli({ DATA_DIR: dataDir, INSTANCE_SECRET: await newSecret(), PORT: "0" }, "serve");
    expect(other.code).toBe(2);
    expect(other.err).toContain("INSTANCE_SECRET is not the instance secret");
  });

  test("standard and URL-safe (unpadded) spellings of the same bytes are the same secret", async () => {
    const dataDir = newDataDir();
    const { standard, urlSafe } = spellings();
    const { key } = await accountWithKey(dataDir, { INSTANCE_SECRET: standard });
    const server = await serve(dataDir, { INSTANCE_SECRET: urlSafe });
    expect(await health(server, key)).toBe(200);
    await stop(server);
  });

  test("against a different instance.secret already in DATA_DIR it refuses to start, naming the file, writing nothing", async () => {
    const dataDir = newDataDir();
    const { key } = await accountWithKey(dataDir, {});
    const filePath = join(dataDir, "instance.secret");
    const fileSecret = readFileSync(filePath, "utf8").trim();
    const dbBefore = readFileSync(join(dataDir, "seedcast.db"));
    const entriesBefore = readdirSync(dataDir).sort();
    const wrong = await newSecret();

    for (const args of [["serve"], ["migrate"], ["keys", "list", "--account", "x"], ["backup", join(scratch, "never.tar.gz")]]) {
      const run = await cli({ DATA_DIR: dataDir, INSTANCE_SECRET: wrong, PORT: "0" }, ...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.err).toContain("INSTANCE_SECRET differs from the instance secret already in");
      expect(run.err).toContain(filePath);
      expect(run.err).toContain("set INSTANCE_SECRET to the content of");
      expect(run.err).not.toContain(wrong);
      expect(run.err).not.toContain(fileSecret);
      expect(run.out).not.toContain(fileSecret);
    }
    expect(readFileSync(join(dataDir, "seedcast.db")).equals(dbBefore)).toBe(true);
    expect(readdirSync(dataDir).sort()).toEqual(entriesBefore);
    expect(existsSync(join(scratch, "never.tar.gz"))).toBe(false);

    // Doing what the message says (the file's content into the variable) keeps every key working.
    const server = await serve(dataDir, { INSTANCE_SECRET: fileSecret });
    expect(await health(server, key)).toBe(200);
    await stop(server);
  });

  test("a data dir whose database is there but whose secret is not (INSTANCE_SECRET unset again) refuses instead of making a new one", async () => {
    const dataDir = newDataDir();
    const secret = await newSecret();
    await accountWithKey(dataDir, { INSTANCE_SECRET: secret });
    const run = await cli({ DATA_DIR: dataDir, PORT: "0" }, "serve");
    expect(run.code).toBe(2);
    expect(run.err).toContain("INSTANCE_SECRET is not set");
    expect(run.err).toContain("set it again to the same value");
    expect(existsSync(join(dataDir, "instance.secret"))).toBe(false);
  });

  test.each([
    ["not base64", "this is not base64!"],
    ["not base64 (a wrong length)", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZn1"],
    ["too short", Buffer.from(crypto.getRandomValues(new Uint8Array(31))).toString("base64")],
    ["too short (16 bytes)", Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")],
  ])("%s: the start is refused naming the variable and the rule, never the value", async (_what, value) => {
    const dataDir = newDataDir();
    const run = await cli({ DATA_DIR: dataDir, INSTANCE_SECRET: value, PORT: "0" }, "serve");
    expect(run.code).toBe(2);
    expect(run.err).toContain("seedcast: configuration: INSTANCE_SECRET must be base64 (standard or URL-safe) of at least 32 random bytes");
    expect(run.err).toContain("seedcast secret new");
    expect(run.err).not.toContain(value);
    expect(existsSync(dataDir)).toBe(false);
  });
});

/** The fingerprint the database in `dataDir` recorded (null: no row), read from the file itself. */
function recordedFingerprint(dataDir: string): string | null {
  const db = new Database(join(dataDir, "seedcast.db"), { readonly: true });
  try {
    return db.query<{ f: string }, []>("SELECT secret_fingerprint AS f FROM instance_identity WHERE id = 1").get()?.f ?? null;
  } finally {
    db.close();
  }
}

function fingerprintOf(base64: string): string {
  return instanceSecretFingerprint(decodeBase64Secret(base64)!);
}

/** Every row of every table (search's shadow tables included), to show a refused start changed nothing. */
function dumpDatabase(dataDir: string): Record<string, string[]> {
  const db = new Database(join(dataDir, "seedcast.db"), { readonly: true });
  try {
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    return Object.fromEntries(tables.map(({ name }) => [name, db.query(`SELECT * FROM "${name}"`).all().map((r) => JSON.stringify(r)).sort()]));
  } finally {
    db.close();
  }
}

describe("the secret's fingerprint in the database", () => {
  test("INSTANCE_SECRET: the first start records it; another value is refused with nothing written; the original works again", async () => {
    const dataDir = newDataDir();
    const a = await newSecret();
    const { key } = await accountWithKey(dataDir, { INSTANCE_SECRET: a });
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(a));
    expect(existsSync(join(dataDir, "instance.secret"))).toBe(false);

    const dbBefore = readFileSync(join(dataDir, "seedcast.db"));
    const rowsBefore = dumpDatabase(dataDir);
    const entriesBefore = readdirSync(dataDir).sort();
    const b = await newSecret();
    for (const args of [["serve"], ["migrate"], ["keys", "list", "--account", "x"], ["backup", join(scratch, "never-fp.tar.gz")]]) {
      const run = await cli({ DATA_DIR: dataDir, INSTANCE_SECRET: b, PORT: "0" }, ...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.err).toContain("seedcast: configuration: INSTANCE_SECRET is not the instance secret");
      expect(run.err).toContain(join(dataDir, "seedcast.db"));
      expect(run.err).toContain("Every API key, sign-in session, OAuth token and stored connection credential");
      expect(run.err).toContain("Set INSTANCE_SECRET back to the value this database first ran with");
      for (const secretText of [a, b, fingerprintOf(a), fingerprintOf(b)]) {
        expect(run.err).not.toContain(secretText);
        expect(run.out).not.toContain(secretText);
      }
    }
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(a));
    expect(dumpDatabase(dataDir)).toEqual(rowsBefore);
    expect(readFileSync(join(dataDir, "seedcast.db")).equals(dbBefore)).toBe(true);
    expect(readdirSync(dataDir).sort()).toEqual(entriesBefore);
    expect(existsSync(join(scratch, "never-fp.tar.gz"))).toBe(false);

    // The original value: the start goes through and the key minted under it still authenticates.
    const server = await serve(dataDir, { INSTANCE_SECRET: a });
    expect(await health(server, key)).toBe(200);
    await stop(server);
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(a));
  });

  test("a database from before the fingerprint (no row) adopts the secret it is started with, then holds to it", async () => {
    const dataDir = newDataDir();
    const a = await newSecret();
    const { key } = await accountWithKey(dataDir, { INSTANCE_SECRET: a });
    const db = new Database(join(dataDir, "seedcast.db"));
    db.exec("DELETE FROM instance_identity");
    db.close();
    expect(recordedFingerprint(dataDir)).toBeNull();

    const server = await serve(dataDir, { INSTANCE_SECRET: a });
    expect(await health(server, key)).toBe(200);
    await stop(server);
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(a));

    const other = await cli({ DATA_DIR: dataDir, INSTANCE_SECRET: await newSecret(), PORT: "0" }, "serve");
    expect(other.code).toBe(2);
    expect(other.err).toContain("INSTANCE_SECRET is not the instance secret");
  });

  test("processes starting at once on a database without the row agree: one secret's fingerprint is recorded and only its side starts", async () => {
    const dataDir = newDataDir();
    const a = await newSecret();
    await accountWithKey(dataDir, { INSTANCE_SECRET: a });
    const db = new Database(join(dataDir, "seedcast.db"));
    db.exec("DELETE FROM instance_identity");
    db.close();
    const b = await newSecret();
    const secrets = [a, b, a, b, a, b];
    const runs = await Promise.all(secrets.map((secret) => cli({ DATA_DIR: dataDir, INSTANCE_SECRET: secret }, "migrate", "--json")));
    const recorded = recordedFingerprint(dataDir);
    expect([fingerprintOf(a), fingerprintOf(b)]).toContain(recorded!);
    expect(runs.map((r) => r.code)).toEqual(secrets.map((secret) => (fingerprintOf(secret) === recorded ? 0 : 2)));
    for (const run of runs.filter((r) => r.code === 2)) expect(run.err).toContain("INSTANCE_SECRET is not the instance secret");
  });

  test("instance.secret (no INSTANCE_SECRET): recorded on the first start; a different valid file is refused, the original works", async () => {
    const dataDir = newDataDir();
    const { key } = await accountWithKey(dataDir, {});
    const filePath = join(dataDir, "instance.secret");
    const original = readFileSync(filePath, "utf8");
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(original));

    const rowsBefore = dumpDatabase(dataDir);
    const replacement = await newSecret();
    writeFileSync(filePath, replacement, { mode: 0o600 });
    const run = await cli({ DATA_DIR: dataDir, PORT: "0" }, "serve");
    expect(run.code).toBe(2);
    expect(run.err).toContain("the instance.secret file in DATA_DIR is not the instance secret");
    expect(run.err).toContain("Put back the instance.secret this database first ran with");
    expect(run.err).not.toContain(replacement);
    expect(run.err).not.toContain(original.trim());
    expect(dumpDatabase(dataDir)).toEqual(rowsBefore);
    expect(readFileSync(filePath, "utf8")).toBe(replacement);

    writeFileSync(filePath, original, { mode: 0o600 });
    const server = await serve(dataDir, {});
    expect(await health(server, key)).toBe(200);
    await stop(server);
  });

  test("moving the file's secret into INSTANCE_SECRET keeps the fingerprint (the same bytes), so the start goes through", async () => {
    const dataDir = newDataDir();
    const { key } = await accountWithKey(dataDir, {});
    const filePath = join(dataDir, "instance.secret");
    const fileSecret = readFileSync(filePath, "utf8").trim();
    rmSync(filePath);
    const server = await serve(dataDir, { INSTANCE_SECRET: fileSecret });
    expect(await health(server, key)).toBe(200);
    await stop(server);
    expect(recordedFingerprint(dataDir)).toBe(fingerprintOf(fileSecret));
  });
});

describe("backups and the fingerprint their database carries", () => {
  test("an archive whose database was made under another secret than the one it carries is refused before anything is restored", async () => {
    const source = newDataDir();
    await accountWithKey(source, {});
    const archive = join(scratch, "fp-good.tar.gz");
    expect((await cli({ DATA_DIR: source }, "backup", archive)).code).toBe(0);

    // The same archive with another (valid) instance.secret in it: the manifest says "file", so only the row can tell.
    const unpacked = join(scratch, "fp-unpacked");
    rmSync(unpacked, { recursive: true, force: true });
    await Bun.$`mkdir -p ${unpacked}`.quiet();
    await tar.x({ file: archive, cwd: unpacked });
    const swapped = await newSecret();
    writeFileSync(join(unpacked, "seedcast-backup", "instance.secret"), swapped, { mode: 0o600 });
    const tampered = join(scratch, "fp-tampered.tar.gz");
    await tar.c({ file: tampered, cwd: unpacked, gzip: true }, ["seedcast-backup"]);

    const dest = newDataDir();
    const run = await cli({ DATA_DIR: dest }, "restore", tampered, "--json");
    expect(run.code).toBe(1);
    expect(run.json.message).toContain("this backup's database was made under another instance secret");
    expect(run.out).not.toContain(swapped);
    expect(existsSync(join(dest, "seedcast.db"))).toBe(false);
    expect(existsSync(join(dest, "instance.secret"))).toBe(false);

    // The untouched archive restores, and the restored instance starts on the secret its database recorded.
    const ok = newDataDir();
    expect((await cli({ DATA_DIR: ok }, "restore", archive)).code).toBe(0);
    expect(recordedFingerprint(ok)).toBe(fingerprintOf(readFileSync(join(ok, "instance.secret"), "utf8")));
    expect(recordedFingerprint(ok)).toBe(recordedFingerprint(source));
  });
});

describe("the configuration holding both", () => {
  test("neither the secret nor the database password shows when the config is printed or serialised", () => {
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(48))).toString("base64url");
    const config = loadConfig({ DATA_DIR: "/tmp/seedcast-config-test", DATABASE_URL: "postgresql://app:Cfg-Pass-91@db.internal:5432/seedcast?password=Cfg-Pass-92", INSTANCE_SECRET: secret });
    expect(config.instanceSecret?.bytes).toHaveLength(48);
    expect(config.database.kind === "postgres" && config.database.url).toContain("Cfg-Pass-91");
    for (const shown of [JSON.stringify(config), Bun.inspect(config), String(config.database.kind === "postgres" && config.database.redacted)]) {
      expect(shown).not.toContain("Cfg-Pass-91");
      expect(shown).not.toContain("Cfg-Pass-92");
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(Buffer.from(config.instanceSecret?.bytes ?? []).toString("base64"));
    }
    expect(JSON.stringify(config.database)).toBe('{"kind":"postgres","url":"postgresql://app:***@db.internal:5432/seedcast?password=***"}');
    expect(loadConfig({ DATA_DIR: "/tmp/seedcast-config-test" })).toMatchObject({ database: { kind: "sqlite" }, instanceSecret: null });
    // A long secret as `openssl rand -base64 64` prints it (wrapped at 64 columns) is read whole.
    const long = crypto.getRandomValues(new Uint8Array(64));
    const wrapped = Buffer.from(long).toString("base64").replace(/(.{64})/, "$1\n");
    expect(wrapped).toContain("\n");
    expect(Buffer.from(loadConfig({ DATA_DIR: "/tmp/seedcast-config-test", INSTANCE_SECRET: `${wrapped}\n` }).instanceSecret?.bytes ?? []).equals(Buffer.from(long))).toBe(true);
  });
});

describe("BACKUP_CRON with DATABASE_URL", () => {
  test("is refused at configuration, naming pg_dump, without the URL's password", () => {
    const secret = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    let message = "";
    try {
      loadConfig({ DATA_DIR: "/tmp/seedcast-config-test", DATABASE_URL: "postgres://app:Cron-Pass-7@db.internal/seedcast", INSTANCE_SECRET: secret, BACKUP_CRON: "0 0 3 * * *" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("BACKUP_CRON cannot be used with DATABASE_URL");
    expect(message).toContain("pg_dump");
    expect(message).not.toContain("Cron-Pass-7");
  });
});

describe("DATABASE_URL", () => {
  const PASSWORD = "Pg-Pass-7f3a9c";
  const URL_WITH_PASSWORD = `postgres://seedcast:${PASSWORD}@127.0.0.1:5432/seedcast`;

  test("without INSTANCE_SECRET it is refused first: PostgreSQL mode needs the shared secret", async () => {
    const dataDir = newDataDir();
    for (const args of [["serve"], ["backup", join(scratch, "pg.tar.gz")], ["keys", "list", "--account", "x"]]) {
      const run = await cli({ DATA_DIR: dataDir, DATABASE_URL: URL_WITH_PASSWORD, PORT: "0" }, ...args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.err).toContain("DATABASE_URL (PostgreSQL mode) needs INSTANCE_SECRET");
      expect(run.err).toContain("seedcast secret new");
      expect(run.err + run.out).not.toContain(PASSWORD);
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  test("with INSTANCE_SECRET, every command that opens the database goes to PostgreSQL: unreachable, it fails naming the database, without its password or the secret", async () => {
    const dataDir = newDataDir();
    const secret = await newSecret();
    const urls = [URL_WITH_PASSWORD, `postgresql://seedcast@127.0.0.1:5432/seedcast?sslmode=disable&password=${PASSWORD}`];
    for (const url of urls) {
      for (const args of [["serve"], ["migrate"], ["account", "create", "--name", "A", "--email", "a@pg.test", "--password", "hunter2hunter2"], ["keys", "list", "--account", "x", "--json"]]) {
        const run = await cli({ DATA_DIR: dataDir, DATABASE_URL: url, INSTANCE_SECRET: secret, PORT: "0" }, ...args);
        expect({ args, code: run.code }).toEqual({ args, code: 1 });
        expect(run.err + run.out).toContain("could not be opened and migrated");
        expect(run.err + run.out).toContain("127.0.0.1:5432/seedcast");
        expect(run.err + run.out).not.toContain(PASSWORD);
        expect(run.err + run.out).not.toContain(secret);
      }
    }
    // Nothing was written to DATA_DIR: no database, no secret file (the secret is INSTANCE_SECRET's).
    expect(existsSync(join(dataDir, "seedcast.db"))).toBe(false);
    expect(existsSync(join(dataDir, "instance.secret"))).toBe(false);
  });

  test.each([
    ["another scheme", `mysql://seedcast:${PASSWORD}@127.0.0.1/seedcast`],
    ["not a URL", `seedcast:${PASSWORD} at db.internal`],
    ["a bare password", PASSWORD],
  ])("%s: refused naming DATABASE_URL and the rule, without the value", async (_what, url) => {
    const run = await cli({ DATA_DIR: newDataDir(), DATABASE_URL: url, INSTANCE_SECRET: await newSecret(), PORT: "0" }, "serve");
    expect(run.code).toBe(2);
    expect(run.err).toContain("seedcast: configuration: DATABASE_URL must be a PostgreSQL connection URL");
    expect(run.err).not.toContain(PASSWORD);
  });

  test("seedcast backup and restore refuse with the message that names pg_dump and bucket versioning", async () => {
    const dataDir = newDataDir();
    const archive = join(scratch, "pg-backup.tar.gz");
    const env = { DATA_DIR: dataDir, DATABASE_URL: URL_WITH_PASSWORD, INSTANCE_SECRET: await newSecret() };
    const backup = await cli(env, "backup", archive, "--json");
    expect(backup.code).toBe(1);
    expect(backup.json.message).toContain("pg_dump");
    expect(backup.json.message).toContain("bucket versioning");
    expect(backup.json.message).toContain("keep INSTANCE_SECRET");
    expect(backup.out + backup.err).not.toContain(PASSWORD);
    expect(existsSync(archive)).toBe(false);
    const text = await cli(env, "backup", archive);
    expect(text.code).toBe(1);
    expect(text.err).toContain("pg_dump");

    const restore = await cli(env, "restore", archive, "--json");
    expect(restore.code).toBe(1);
    expect(restore.json.message).toContain("pg_dump");
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe("backups of an instance whose secret is in INSTANCE_SECRET", () => {
  test("the archive leaves the secret out; restore needs the same INSTANCE_SECRET, and the restored instance takes the old keys", async () => {
    const source = newDataDir();
    const secret = await newSecret();
    const { key } = await accountWithKey(source, { INSTANCE_SECRET: secret });
    const archive = join(scratch, "env-secret.tar.gz");
    const backup = await cli({ DATA_DIR: source, INSTANCE_SECRET: secret }, "backup", archive, "--json");
    expect(backup.code).toBe(0);
    expect(backup.json.instanceSecret).toMatchObject({ source: "environment" });
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    const entries: string[] = [];
    await tar.t({ file: archive, onReadEntry: (e) => entries.push(e.path) });
    expect(entries).toContain("seedcast-backup/seedcast.db");
    expect(entries.some((p) => p.endsWith("instance.secret"))).toBe(false);
    expect(readFileSync(archive).includes(Buffer.from(secret))).toBe(false);

    // Without the variable, or with another value: refused before anything is restored.
    const dest = newDataDir();
    const bare = await cli({ DATA_DIR: dest }, "restore", archive, "--json");
    expect(bare.code).toBe(1);
    expect(bare.json.message).toContain("does not hold the instance secret");
    expect(bare.json.message).toContain("Set INSTANCE_SECRET to that same value");
    const wrong = await cli({ DATA_DIR: dest, INSTANCE_SECRET: await newSecret() }, "restore", archive, "--json");
    expect(wrong.code).toBe(1);
    expect(wrong.json.message).toContain("INSTANCE_SECRET is not the secret this backup");
    expect(existsSync(join(dest, "seedcast.db"))).toBe(false);

    const restored = await cli({ DATA_DIR: dest, INSTANCE_SECRET: secret }, "restore", archive);
    expect(restored.code).toBe(0);
    expect(restored.out).toContain("start the server with the same INSTANCE_SECRET");
    expect(existsSync(join(dest, "instance.secret"))).toBe(false);

    // Started without the variable, the restored data dir refuses (rather than minting a new secret)...
    const unset = await cli({ DATA_DIR: dest, PORT: "0" }, "serve");
    expect(unset.code).toBe(2);
    expect(unset.err).toContain("INSTANCE_SECRET is not set");
    // ...and with it, the key minted before the backup works.
    const server = await serve(dest, { INSTANCE_SECRET: secret });
    expect(await health(server, key)).toBe(200);
    await stop(server);
  });

  test("an archive that carries instance.secret restores under INSTANCE_SECRET only when they are the same secret", async () => {
    const source = newDataDir();
    const { key } = await accountWithKey(source, {});
    const fileSecret = readFileSync(join(source, "instance.secret"), "utf8").trim();
    const archive = join(scratch, "file-secret.tar.gz");
    expect((await cli({ DATA_DIR: source }, "backup", archive)).code).toBe(0);

    const dest = newDataDir();
    const other = await cli({ DATA_DIR: dest, INSTANCE_SECRET: await newSecret() }, "restore", archive, "--json");
    expect(other.code).toBe(1);
    expect(other.json.message).toContain("INSTANCE_SECRET is set to another value");
    expect(other.out).not.toContain(fileSecret);
    expect(existsSync(join(dest, "seedcast.db"))).toBe(false);

    const same = await cli({ DATA_DIR: dest, INSTANCE_SECRET: fileSecret }, "restore", archive);
    expect(same.code).toBe(0);
    expect(existsSync(join(dest, "instance.secret"))).toBe(false);
    const server = await serve(dest, { INSTANCE_SECRET: fileSecret });
    expect(await health(server, key)).toBe(200);
    await stop(server);
  });
});
