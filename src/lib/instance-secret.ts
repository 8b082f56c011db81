/**
 * The instance secret. API key hashes, OAuth token and session hashes are HMACs under it and stored credentials are
 * sealed with keys derived from it, so it must never change under a data dir (or a database) that already has them.
 *
 * It comes from one of two places:
 * - INSTANCE_SECRET (base64, at least 32 bytes; `seedcast secret new` prints one): required with DATABASE_URL and
 *   shared by every replica. The decoded bytes are the secret as they are: every use is an HMAC-SHA256 key (directly,
 *   or through deriveKey), which takes a key of any length, so a 32-byte value moved over from instance.secret keeps
 *   every existing hash and sealed value valid. DATA_DIR/instance.secret is then never created; if one is there it is
 *   only compared, and a different one stops the start.
 * - otherwise DATA_DIR/instance.secret: 32 random bytes (base64, mode 0600) generated on first start.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const INSTANCE_SECRET_FILE = "instance.secret";
/** The least INSTANCE_SECRET may decode to (the file holds exactly this many random bytes). */
export const INSTANCE_SECRET_MIN_BYTES = 32;

/** A refusal to start because the instance secret cannot be trusted (mismatch, damage, missing). */
export class InstanceSecretError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InstanceSecretError";
  }
}

/** A fresh secret: 32 random bytes, standard base64 (the format of instance.secret and of INSTANCE_SECRET). */
export function newInstanceSecret(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(INSTANCE_SECRET_MIN_BYTES))).toString("base64");
}

/**
 * Decodes base64, standard (`+/`) or URL-safe (`-_`), padded or not; whitespace is ignored (`openssl rand -base64 64`
 * wraps its line). Null when the text is not base64 at all; the caller checks the length.
 */
export function decodeBase64Secret(raw: string): Uint8Array | null {
  const text = raw.replace(/\s+/g, "");
  const body = text.replace(/={1,2}$/, "");
  if (body === "" || !/^[A-Za-z0-9+/_-]+$/.test(body)) return null;
  if (body.length % 4 === 1) return null; // no base64 text has this length
  if (body.length !== text.length && text.length % 4 !== 0) return null; // padding that does not pad
  return new Uint8Array(Buffer.from(body.replace(/-/g, "+").replace(/_/g, "/"), "base64"));
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

function readSecretFile(path: string): Uint8Array {
  const decoded = decodeBase64Secret(readFileSync(path, "utf8"));
  if (!decoded || decoded.length !== INSTANCE_SECRET_MIN_BYTES) {
    throw new InstanceSecretError(`${path} is damaged: expected 32 bytes of base64.`);
  }
  return decoded;
}

/**
 * The instance secret of `dataDir`: `fromEnv` (INSTANCE_SECRET, decoded) when set, else DATA_DIR/instance.secret,
 * created on first use. Refuses (InstanceSecretError) when:
 * - `fromEnv` is set and DATA_DIR holds an instance.secret with another value (everything made under the file's
 *   secret would silently stop working);
 * - neither is there but DATA_DIR already holds a database (`dbFile`): its keys and credentials were made under a
 *   secret that has gone missing (most often: INSTANCE_SECRET was unset), and a new one would orphan them all.
 * Nothing secret is ever part of a message.
 */
export function loadInstanceSecret(dataDir: string, fromEnv: Uint8Array | null, dbFile: string): Uint8Array {
  const path = join(dataDir, INSTANCE_SECRET_FILE);
  if (fromEnv) {
    if (existsSync(path) && !sameBytes(readSecretFile(path), fromEnv)) {
      throw new InstanceSecretError(
        `INSTANCE_SECRET differs from the instance secret already in ${path}. Every API key, sign-in session, OAuth ` +
          "token and stored connection credential of this data dir was made under that file's secret and would stop " +
          `working. To keep them, set INSTANCE_SECRET to the content of ${path} (the one base64 line in it is the ` +
          "value to use); the file may stay, as it then matches. If you mean to give all of them up, move the file out " +
          "of DATA_DIR.",
      );
    }
    return fromEnv;
  }
  if (!existsSync(path)) {
    if (existsSync(join(dataDir, dbFile))) {
      throw new InstanceSecretError(
        `${join(dataDir, dbFile)} exists but ${path} does not, and INSTANCE_SECRET is not set: the data dir's API keys, ` +
          "sessions and stored credentials were made under an instance secret that is missing. If this instance ran " +
          `with INSTANCE_SECRET, set it again to the same value; otherwise put the instance.secret file back (a backup ` +
          "archive holds it). Starting with a new secret would make all of them stop working.",
      );
    }
    writeFileSync(path, newInstanceSecret(), { mode: 0o600, flag: "wx" });
  }
  chmodSync(path, 0o600);
  return readSecretFile(path);
}

/** HMAC-SHA256 of `message` under `key`, as hex. */
export function hmacHex(key: Uint8Array, message: string): string {
  return new Bun.CryptoHasher("sha256", key).update(message).digest("hex");
}

/** Derives a purpose-bound 32-byte subkey (HMAC of the label) so no two uses share a key. */
export function deriveKey(secret: Uint8Array, label: string): Uint8Array {
  return new Uint8Array(new Bun.CryptoHasher("sha256", secret).update(`seedcast:${label}`).digest());
}

/**
 * A public fingerprint of the secret (an HMAC under it, so it tells nothing about it): the database records it
 * (`instance_identity`, checked at every start) and a backup that does not carry the secret records it in its manifest,
 * so a start or a restore under another secret is refused instead of breaking every key and credential.
 */
export function instanceSecretFingerprint(secret: Uint8Array): string {
  return hmacHex(deriveKey(secret, "instance-secret:fingerprint:v1"), "fingerprint");
}

/** Where the secret in use came from, to name it in a refusal. */
export type InstanceSecretSource = "environment" | "file";

/**
 * The refusal when the database records another secret's fingerprint than the one in use (src/db/instance-identity.ts
 * and its PostgreSQL twin). Names the source to fix; neither the secret nor a fingerprint is part of it.
 */
export function fingerprintMismatchError(source: InstanceSecretSource, database: string): InstanceSecretError {
  const what = source === "environment" ? "INSTANCE_SECRET" : `the ${INSTANCE_SECRET_FILE} file in DATA_DIR`;
  const fix =
    source === "environment"
      ? "Set INSTANCE_SECRET back to the value this database first ran with (or, if it ran from an instance.secret file, to that file's one base64 line)."
      : `Put back the ${INSTANCE_SECRET_FILE} this database first ran with (a backup archive holds it), or set INSTANCE_SECRET to the value it ran with.`;
  return new InstanceSecretError(
    `${what} is not the instance secret ${database} was made under (the database records another secret's fingerprint). ` +
      "Every API key, sign-in session, OAuth token and stored connection credential in it would stop working, so Seedcast " +
      `does not start. ${fix} Nothing was written.`,
  );
}
