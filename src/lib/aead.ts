/**
 * Authenticated encryption of short texts at rest: AES-256-GCM, a fresh random 96-bit nonce per value, and additional
 * data binding the value to where it is stored (a sealed value copied elsewhere does not open).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const FORMAT_PREFIX = "aead1.";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** True when `value` has the shape sealText writes. */
export function isSealed(value: string): boolean {
  return value.startsWith(FORMAT_PREFIX);
}

/** Seals `text` under the 32-byte `key`, bound to `aad`. */
export function sealText(key: Uint8Array, aad: string, text: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final()]);
  return FORMAT_PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString("base64");
}

/** Opens a value sealed by sealText, or null when the key or the binding is not the one it was sealed with. */
export function openText(key: Uint8Array, aad: string, sealed: string): string | null {
  if (!isSealed(sealed)) return null;
  try {
    const raw = Buffer.from(sealed.slice(FORMAT_PREFIX.length), "base64");
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}
