/**
 * A real PostgreSQL for tests: Debian's `postgresql` (15; scripts/test-setup.sh installs it with `postgresql-contrib`
 * for `unaccent`), one cluster in a temp dir, listening on 127.0.0.1 and a free port, its socket in the same dir.
 * As root (CI, this machine) the server runs as the `postgres` user, as initdb refuses root; otherwise as whoever runs
 * the tests. Trust authentication on loopback only. `startPostgres()` takes about 1–2 s: share one per test file and
 * give each test its own database (`createDatabase`). `stop()` ends the server (fast shutdown) and removes the dir.
 */
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Debian's layout for the server binaries of the installed major version. */
const PG_BIN = "/usr/lib/postgresql/15/bin";
const SUPERUSER = "seedcast";

export interface Postgres {
  host: "127.0.0.1";
  port: number;
  /** `postgres://seedcast@127.0.0.1:<port>/<database>` */
  url(database?: string): string;
  /** Creates an empty database (a fresh name when none is given) and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Runs SQL through psql against `database` and returns its unaligned, tuples-only output. */
  psql(sql: string, database?: string): Promise<string>;
  /** Stops the server (it can be started again with `restart`), e.g. to test losing the database. */
  pause(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** stop, synchronously (from a process "exit" handler). */
  stopSync(): void;
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

const asRoot = process.getuid?.() === 0;

/** `cmd` as the user the cluster belongs to. */
function asOwner(cmd: string[]): string[] {
  if (!asRoot) return cmd;
  // runuser (util-linux) passes the argument vector through unquoted, unlike `su -c`.
  return ["runuser", "-u", "postgres", "--", ...cmd];
}

async function run(cmd: string[], what: string): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: "pipe", stderr: "pipe", cwd: tmpdir() });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${what} failed (exit ${code}): ${err.trim() || out.trim()}`);
  return out;
}

let counter = 0;

/** initdb + pg_ctl start on a free port; answers once the server accepts connections. */
export async function startPostgres(): Promise<Postgres> {
  if (!(await Bun.file(join(PG_BIN, "initdb")).exists())) {
    throw new Error(`${PG_BIN}/initdb is missing: run scripts/test-setup.sh (apt-get install -y postgresql postgresql-contrib)`);
  }
  const dir = mkdtempSync(join(tmpdir(), "seedcast-pg-"));
  // The cluster's owner must be able to write here (mkdtemp makes it 0700 for root).
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const port = freePort();
  await run(asOwner([join(PG_BIN, "initdb"), "-D", data, "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"]), "initdb");
  // fsync off: a test cluster needs no durability, and it keeps 2 shared cores free for the code under test.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run(asOwner([join(PG_BIN, "pg_ctl"), "-D", data, "-o", options, "-l", join(dir, "server.log"), "-w", "start"]), "pg_ctl start");
  const halt = () => run(asOwner([join(PG_BIN, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"]), "pg_ctl stop");
  await start();
  let running = true;

  const url = (database = "postgres") => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
  const psql = (sql: string, database = "postgres") =>
    run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", SUPERUSER, "-d", database, "-c", sql], "psql");

  return {
    host: "127.0.0.1",
    port,
    url,
    psql,
    async createDatabase(name = `t${process.pid}_${++counter}_${Date.now().toString(36)}`) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await psql(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async pause() {
      if (running) await halt();
      running = false;
    },
    async restart() {
      if (!running) await start();
      running = true;
    },
    stopSync() {
      if (running) Bun.spawnSync(asOwner([join(PG_BIN, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]), { cwd: tmpdir() });
      running = false;
      rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      try {
        if (running) await halt();
      } finally {
        running = false;
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
