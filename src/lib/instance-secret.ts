/**
 * The instance secret: 32 random bytes generated into DATA_DIR on first start (mode 0600). API key hashes are
 * HMACs under it and connection credentials are encrypted with keys derived from it, so it must survive restarts
 * and travel with backups.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const INSTANCE_SECRET_FILE = "instance.secret";

/** Reads the instance secret from `dataDir`, creating it on first use. */
export function loadInstanceSecret(dataDir: string): Uint8Array {
  const path = join(dataDir, INSTANCE_SECRET_FILE);
  if (!existsSync(path)) {
    const secret = crypto.getRandomValues(new Uint8Array(32));
    writeFileSync(path, Buffer.from(secret).toString("base64"), { mode: 0o600, flag: "wx" });
  }
  chmodSync(path, 0o600);
  const decoded = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (decoded.length !== 32) throw new Error(`${path} is damaged: expected 32 bytes of base64.`);
  return new Uint8Array(decoded);
}

/** HMAC-SHA256 of `message` under `key`, as hex. */
export function hmacHex(key: Uint8Array, message: string): string {
  return new Bun.CryptoHasher("sha256", key).update(message).digest("hex");
}

/** Derives a purpose-bound 32-byte subkey (HMAC of the label) so no two uses share a key. */
export function deriveKey(secret: Uint8Array, label: string): Uint8Array {
  return new Uint8Array(new Bun.CryptoHasher("sha256", secret).update(`seedcast:${label}`).digest());
}
