/**
 * Which database this test run's worlds are on: SQLite (the default) or, with SEEDCAST_TEST_DATABASE=postgres, the
 * scale-out setup: a real PostgreSQL (Debian's, test/helpers/postgres.ts) and media on a real Ceph radosgw
 * (test/helpers/radosgw.ts), each started once for the whole `bun test` process and stopped at its exit.
 * Every world gets a fresh database, copied from a template the migrations ran on once (CREATE DATABASE … TEMPLATE), so
 * a world starts in milliseconds and still runs the real migrator (it finds every tag applied), and a bucket of its own.
 */
import { SQL } from "bun";
import { type Postgres, startPostgres } from "./postgres";
import { type Radosgw, startRadosgw } from "./radosgw";

export const TEST_DIALECT: "sqlite" | "postgres" = process.env.SEEDCAST_TEST_DATABASE === "postgres" ? "postgres" : "sqlite";

/** A fixed instance secret for PostgreSQL worlds (64 hex digits), the same for every world and child process. */
export const TEST_INSTANCE_SECRET = "5eedca575eedca575eedca575eedca575eedca575eedca575eedca575eedca57";

let cluster: Promise<Postgres> | undefined;
let template: Promise<string> | undefined;
let counter = 0;
let gateway: Promise<Radosgw> | undefined;

/** The shared test radosgw of a PostgreSQL run (started on first use; it stops itself when the process exits). */
export function testRadosgw(): Promise<Radosgw> {
  gateway ??= startRadosgw({ bucket: "seedcast-test" });
  return gateway;
}

/**
 * The shared test cluster (started on first use). `bun test` fires no "exit" event, so test/helpers/run-end.ts (a
 * preload, bunfig.toml) stops it after the last test file; a signal stops it too.
 */
export function testPostgres(): Promise<Postgres> {
  cluster ??= startPostgres().then((pg) => {
    // First in line (the radosgw helper's own handler exits the process), and exit only when nobody else will.
    const onSignal = (signal: NodeJS.Signals) => {
      pg.stopSync();
      if (process.listenerCount(signal) === 0) process.exit(signal === "SIGINT" ? 130 : 143);
    };
    process.prependOnceListener("SIGTERM", onSignal);
    process.prependOnceListener("SIGINT", onSignal);
    return pg;
  });
  return cluster;
}

/** Stops whatever this run started (the cluster, the radosgw); the preload's afterAll calls it once. */
export async function stopTestServices(): Promise<void> {
  const [pg, s3] = [cluster, gateway];
  cluster = undefined;
  gateway = undefined;
  template = undefined;
  for (const client of clients.values()) await client.close().catch(() => {});
  clients.clear();
  await Promise.all([pg?.then((p) => p.stop()).catch(() => {}), s3?.then((g) => g.stop()).catch(() => {})]);
}

async function migratedTemplate(pg: Postgres): Promise<string> {
  const name = "seedcast_template";
  await pg.psql(`DROP DATABASE IF EXISTS ${name}`);
  await pg.createDatabase(name);
  const { openPgStore } = await import("../../src/db/pg/store");
  const { migratePostgres } = await import("../../src/db/pg/migrate");
  const store = openPgStore(pg.url(name), { max: 1 });
  try {
    await migratePostgres(store.client.sql);
  } finally {
    await store.close();
  }
  return name;
}

/** The environment that points a world (or a child process) at a fresh database of this run's dialect. */
export async function testDatabaseEnv(): Promise<Record<string, string>> {
  if (TEST_DIALECT === "sqlite") return {};
  const pg = await testPostgres();
  template ??= migratedTemplate(pg);
  const from = await template;
  const name = `w${process.pid}_${++counter}`;
  await pg.psql(`CREATE DATABASE ${name} TEMPLATE ${from}`);
  const s3 = await testRadosgw();
  const bucket = `w-${process.pid}-${counter}`;
  await s3.createBucket(bucket);
  return { DATABASE_URL: pg.url(name), INSTANCE_SECRET: TEST_INSTANCE_SECRET, ...s3.env({ S3_BUCKET: bucket }) };
}

const clients = new Map<string, SQL>();

/** One statement on `url` with `?` parameters (numbered for PostgreSQL); answers the rows. */
// biome-ignore lint: tests read arbitrary row shapes.
export async function testSql(url: string, text: string, params: unknown[]): Promise<any[]> {
  let client = clients.get(url);
  if (!client) {
    client = new SQL({ url, max: 2 });
    clients.set(url, client);
  }
  let n = 0;
  const numbered = text.replace(/\?/g, () => `$${++n}`);
  return [...(await client.unsafe(numbered, params))];
}

/** Closes testSql's connection to `url` (a world's close). */
export async function closeTestSql(url: string): Promise<void> {
  const client = clients.get(url);
  clients.delete(url);
  await client?.close();
}
