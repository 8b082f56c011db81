/**
 * The API key secret format (decisions.md §2, after GitHub's token design):
 * `svc_` + 43 random base62 characters + CRC32 of those 43 characters in base62, left-padded with 0 to 6.
 * The checksum lets the server (and secret scanners) reject a mistyped key without a database lookup.
 */
export const KEY_PREFIX = "svc_";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
/** Total length of a well-formed secret. */
export const KEY_LENGTH = KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH;
const WELL_FORMED = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
/** Characters of the secret kept for display. */
export const DISPLAY_PREFIX_LENGTH = 8;

function toBase62(value: number, width: number): string {
  let out = "";
  let n = value >>> 0;
  while (n > 0) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out.padStart(width, "0");
}

function checksum(body: string): string {
  return toBase62(Bun.hash.crc32(body), CHECKSUM_LENGTH);
}

/** Generates a new API key secret with uniformly random base62 body (rejection sampling, no modulo bias). */
export function generateKeySecret(): string {
  return generatePrefixedSecret(KEY_PREFIX);
}

/**
 * A secret in the same design under another prefix (OAuth tokens use `sco_` and `scr_`): `prefix` + 43 random base62
 * characters + their CRC32 in base62, left-padded to 6.
 */
export function generatePrefixedSecret(prefix: string): string {
  let body = "";
  while (body.length < BODY_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(64))) {
      if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
    }
  }
  return `${prefix}${body}${checksum(body)}`;
}

/** True when `token` has the prefix, length, alphabet and a matching checksum. */
export function isWellFormedKey(token: string): boolean {
  if (!WELL_FORMED.test(token)) return false;
  const body = token.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  return token.slice(KEY_PREFIX.length + BODY_LENGTH) === checksum(body);
}

/** True when `token` is `prefix` + a well-formed body and checksum (see generatePrefixedSecret). */
export function isWellFormedPrefixedSecret(prefix: string, token: string): boolean {
  if (token.length !== prefix.length + BODY_LENGTH + CHECKSUM_LENGTH || !token.startsWith(prefix)) return false;
  const body = token.slice(prefix.length, prefix.length + BODY_LENGTH);
  if (!/^[0-9A-Za-z]+$/.test(token.slice(prefix.length))) return false;
  return token.slice(prefix.length + BODY_LENGTH) === checksum(body);
}
