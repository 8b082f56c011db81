/**
 * Sealing of connection secrets at rest: AES-256-GCM under a key derived from the instance secret, a fresh random
 * 96-bit nonce per value, the connection id as additional data (a sealed value copied onto another row does not open).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveKey } from "../../lib/instance-secret";

/** Purpose label of the derived key; changing it makes every stored credential unreadable. */
const KEY_LABEL = "connections:credentials:v1";
const FORMAT_PREFIX = "v1.";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals `value` (any JSON) for the connection `connectionId`. `label` names the derived key: other secrets sealed the
 * same way (event webhook signing secrets) pass their own, so no key serves two purposes.
 */
export function sealJson(instanceSecret: Uint8Array, connectionId: string, value: unknown, label = KEY_LABEL): string {
  const key = deriveKey(instanceSecret, label);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(connectionId));
  const body = Buffer.concat([cipher.update(JSON.stringify(value), "utf8"), cipher.final()]);
  return FORMAT_PREFIX + Buffer.concat([nonce, cipher.getAuthTag(), body]).toString("base64");
}

/** Opens a value sealed by sealJson; throws when it was tampered with or sealed for another connection. */
export function openJson<T>(instanceSecret: Uint8Array, connectionId: string, sealed: string, label = KEY_LABEL): T {
  if (!sealed.startsWith(FORMAT_PREFIX)) throw new Error("unknown sealed credential format");
  const raw = Buffer.from(sealed.slice(FORMAT_PREFIX.length), "base64");
  const key = deriveKey(instanceSecret, label);
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, NONCE_BYTES));
  decipher.setAAD(Buffer.from(connectionId));
  decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
  const plain = Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
  return JSON.parse(plain.toString("utf8")) as T;
}
