/**
 * OAuth secrets (decisions.md §9): opaque, in the API keys' design (prefix + 43 base62 + CRC32), so a scanner and the
 * server tell them apart from keys and reject a mistyped one without a lookup. Stored only as an HMAC under the
 * instance secret.
 */
import type { Deps } from "../../deps";
import { generatePrefixedSecret, isWellFormedPrefixedSecret } from "../../lib/api-key-format";
import { hmacHex } from "../../lib/instance-secret";

export const ACCESS_TOKEN_PREFIX = "sco_";
export const REFRESH_TOKEN_PREFIX = "scr_";
/** Authorization codes and client secrets use the same design under their own prefixes. */
export const CODE_PREFIX = "scc_";
export const CLIENT_SECRET_PREFIX = "scs_";

export type SecretPrefix = typeof ACCESS_TOKEN_PREFIX | typeof REFRESH_TOKEN_PREFIX | typeof CODE_PREFIX | typeof CLIENT_SECRET_PREFIX;

/** A fresh secret under `prefix`. */
export function newSecret(prefix: SecretPrefix): string {
  return generatePrefixedSecret(prefix);
}

/** True when `value` is a well-formed secret under `prefix` (checksum included). */
export function isSecret(prefix: SecretPrefix, value: string): boolean {
  return isWellFormedPrefixedSecret(prefix, value);
}

/** The stored form of a secret: HMAC-SHA256 (hex) under the instance secret, bound to its purpose by the prefix. */
export function hashSecret(deps: Pick<Deps, "instanceSecret">, value: string): string {
  return hmacHex(deps.instanceSecret, value);
}
