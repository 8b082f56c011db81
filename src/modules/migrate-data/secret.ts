/**
 * INSTANCE_SECRET against the appliance's secret. API key, session and OAuth token hashes are HMACs under the secret,
 * and stored credentials are sealed with keys derived from it: copied under another secret, every one of them would
 * be invalid on PostgreSQL. Nothing secret is ever part of a message.
 */
import type { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { INSTANCE_SECRET_FILE, decodeBase64Secret, instanceSecretFingerprint } from "../../lib/instance-secret";
import { SECRET_KEY_LABEL } from "../../store/events";
import { openJson } from "../../store/sealing";
import { MigrateDataError } from "./errors";

/** How the secret was checked, for the report. */
export type SecretCheck = "matches instance.secret" | "matches the fingerprint the database recorded" | "opens the stored credentials" | "not checkable";

function mismatch(why: string, fix: string): MigrateDataError {
  return new MigrateDataError(
    "secret_mismatch",
    `INSTANCE_SECRET ${why}. Every API key, sign-in session, OAuth token and stored connection credential would be invalid on PostgreSQL. ${fix} Nothing was copied.`,
  );
}

/**
 * Before anything else is read: when DATA_DIR holds instance.secret, INSTANCE_SECRET must be its very bytes.
 * Returns false when there is no file (the appliance itself ran with INSTANCE_SECRET; see `checkSecretOpensCredentials`).
 */
export function checkSecretFile(dataDir: string, secret: Uint8Array): boolean {
  const path = join(dataDir, INSTANCE_SECRET_FILE);
  if (!existsSync(path)) return false;
  const file = decodeBase64Secret(readFileSync(path, "utf8"));
  if (!file) throw new MigrateDataError("secret_mismatch", `${path} is damaged (not base64); nothing was copied.`);
  if (!Buffer.from(file).equals(Buffer.from(secret))) {
    throw mismatch(
      `differs from the appliance's instance secret in ${path}`,
      `Set INSTANCE_SECRET to the content of ${path} (the one base64 line in it) and run again, and keep that value for every replica.`,
    );
  }
  return true;
}

/**
 * With no instance.secret in DATA_DIR, the appliance ran with INSTANCE_SECRET. The value given must have the
 * fingerprint the appliance's database recorded at its starts (`instance_identity`; the row is copied too, so
 * PostgreSQL mode would refuse the pair at start anyway: refusing here copies nothing). A database from before that
 * table (no row): the value must open what the appliance sealed under its secret (a connection's credentials, else an
 * event webhook's signing secret). When nothing sealed exists either, there is nothing to check it against.
 */
export function checkSecretOpensCredentials(sqlite: Database, secret: Uint8Array): SecretCheck {
  const recorded = sqlite.query<{ f: string }, []>("SELECT secret_fingerprint AS f FROM instance_identity WHERE id = 1").get();
  if (recorded) {
    if (recorded.f !== instanceSecretFingerprint(secret)) {
      throw mismatch(
        "is not the secret the appliance's database was made under (it has no instance.secret file, so it ran with INSTANCE_SECRET, and its database records that secret's fingerprint)",
        "Set INSTANCE_SECRET to the value the appliance runs with and run again.",
      );
    }
    return "matches the fingerprint the database recorded";
  }
  const connection = sqlite.query<{ id: string; credentials_sealed: string }, []>("SELECT id, credentials_sealed FROM connections ORDER BY id LIMIT 1").get();
  const webhook = sqlite.query<{ id: string; secret_sealed: string }, []>("SELECT id, secret_sealed FROM event_webhooks ORDER BY id LIMIT 1").get();
  if (!connection && !webhook) return "not checkable";
  try {
    if (connection) openJson(secret, connection.id, connection.credentials_sealed);
    else openJson(secret, webhook!.id, webhook!.secret_sealed, SECRET_KEY_LABEL);
  } catch {
    throw mismatch(
      "does not open the credentials the appliance stored (it has no instance.secret file, so it ran with INSTANCE_SECRET)",
      "Set INSTANCE_SECRET to the value the appliance runs with and run again.",
    );
  }
  return "opens the stored credentials";
}
