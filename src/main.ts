/**
 * Entry of the compiled binary: parse argv, dispatch to cli/. `seedcast` alone serves.
 */
import { accountCommand, memberCommand } from "./cli/account";
import { fail, output, UsageError } from "./cli/args";
import { backupCommand, restoreCommand } from "./cli/backup";
import { connectionsCommand } from "./cli/connections";
import { creditsCommand } from "./cli/credits";
import { keysCommand } from "./cli/keys";
import { secretCommand } from "./cli/secret";
import { serveCommand } from "./cli/serve";
import { bootstrap, bootstrapWithMigrations } from "./bootstrap";
import { type Config, ConfigError, loadConfig } from "./config";
import { knownMigrations } from "./db/migrate";
import type { Deps } from "./deps";
import { InstanceSecretError } from "./lib/instance-secret";
import { silentLogger } from "./lib/log";
import { VERSION } from "./version";

const HELP = `seedcast ${VERSION}: self-hosted content scheduling

Commands (each takes --json):
  serve                      run the server (default)
  migrate                    apply database migrations
  account create --name N --email E --password P [--credits C]
  account disable ID | enable ID
  member add --account ID --email E --password P --role owner|editor|viewer
  member set-role USERID ROLE
  member set-password USERID (reads the password from a prompt, or from stdin when piped)
  keys mint --account ID --name N --groups read,create,schedule,voice [--expires-days 30|90|365|never] [--member USERID]
  keys rotate ID | keys revoke ID | keys list --account ID
  credits grant --account ID --amount A
  backup FILE                (consistent online copy: database, instance secret unless INSTANCE_SECRET holds it, media)
  restore FILE [--force]     (offline; refuses a non-empty data dir without --force)
  connections add --account ID --platform bluesky|mastodon|webhook ... | check ID | list | remove ID (--account ID)
  secret new                 print a fresh INSTANCE_SECRET (32 random bytes, base64); reads no configuration
  migrate-data --to postgres [--verify-only]
                             copy the appliance in DATA_DIR (database and media) into DATABASE_URL and the
                             MEDIA_STORE=s3 bucket, then verify row counts, checksums and every object; needs
                             INSTANCE_SECRET set to DATA_DIR/instance.secret's content, an empty database and an
                             empty bucket. Stop the server first: a running one is read through a consistent
                             snapshot (VACUUM INTO), but what it writes afterwards is not copied. --verify-only
                             compares again and writes nothing. Then serve with the same variables.
  version

Configuration is read from the environment; see docs/configuration.md.`;

type Command = (deps: Deps, argv: string[]) => Promise<void>;

const COMMANDS: Record<string, Command> = {
  account: accountCommand,
  member: memberCommand,
  keys: keysCommand,
  credits: creditsCommand,
  connections: connectionsCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command = "serve", ...rest] = argv;
  const json = rest.includes("--json") || command === "--json";
  try {
    if (command === "version" || command === "--version") {
      output(json, { version: VERSION }, VERSION);
      return 0;
    }
    if (command === "help" || command === "--help" || command === "-h") {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    // Before the configuration: it is how a person gets the INSTANCE_SECRET a configuration may be missing.
    if (command === "secret") {
      secretCommand(rest);
      return 0;
    }
    const config = loadConfig();
    // backup and restore have their own refusal in PostgreSQL mode, the one that mode keeps (cli/backup.ts).
    if (command === "backup") {
      await backupCommand(config, rest);
      return 0;
    }
    if (command === "restore") {
      await restoreCommand(config, rest);
      return 0;
    }
    // DATA_DIR's appliance → the PostgreSQL database and bucket the environment names (loaded only for this command).
    if (command === "migrate-data") return await (await import("./cli/migrate-data")).migrateDataCommand(config, rest);
    const handler = COMMANDS[command];
    if (!handler && command !== "serve" && command !== "migrate") throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
    if (command === "serve") {
      await serveCommand(config);
      return 0;
    }
    if (command === "migrate") {
      const { deps, applied } = await bootstrapWithMigrations({ ...config }, { log: silentLogger });
      const known = config.database.kind === "postgres" ? (await import("./db/pg/migrate")).knownPgMigrations() : knownMigrations();
      output(json, { applied, known });
      await deps.store.close();
      return 0;
    }
    if (!handler) throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
    const deps = await bootstrap(config, { log: silentLogger });
    try {
      await handler(deps, rest);
    } finally {
      await deps.store.close();
    }
    return 0;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof InstanceSecretError) {
      process.stderr.write(`seedcast: configuration: ${error.message}\n`);
      return 2;
    }
    return fail(json, error);
  }
}

// NB: no top-level await, so the bundle can be compiled to bytecode (faster start).
void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
