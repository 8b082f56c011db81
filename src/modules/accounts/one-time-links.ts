/**
 * What invitations and password-reset links share: a random token in the link, only its HMAC stored, the link's
 * address, and the plain-word state of a link that cannot be used.
 */
import type { Deps } from "../../deps";
import { deriveKey, hmacHex } from "../../lib/instance-secret";
import { randomToken } from "../../web/session";

/** A token is randomToken()'s 32 bytes in base64url; anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Why a link cannot be used. */
export type LinkRefusal = "unknown" | "used" | "expired" | "revoked";

/** A new token and the hash to store for it. */
export function newLinkToken(deps: Pick<Deps, "instanceSecret">, label: string): { token: string; hash: string } {
  const token = randomToken();
  return { token, hash: hmacHex(deriveKey(deps.instanceSecret, label), token) };
}

/** The stored hash of `token` under the purpose `label`, or null when it cannot be a token. */
export function linkTokenHash(deps: Pick<Deps, "instanceSecret">, label: string, token: string): string | null {
  if (!TOKEN_SHAPE.test(token)) return null;
  return hmacHex(deriveKey(deps.instanceSecret, label), token);
}

/** The state of a stored link at `now`. */
export function linkState(row: { usedAt: number | null; revokedAt?: number | null; expiresAt: number }, now: number): LinkRefusal | "valid" {
  if (row.usedAt !== null) return "used";
  if (row.revokedAt !== undefined && row.revokedAt !== null) return "revoked";
  if (row.expiresAt <= now) return "expired";
  return "valid";
}

/**
 * Why a link could not be taken when its conditional UPDATE matched nothing: what its row says, "used" when the row
 * still reads as valid (another request took it in between), "unknown" when there is no row.
 */
export function untakenRefusal(row: Parameters<typeof linkState>[0] | undefined, now: number): LinkRefusal {
  if (!row) return "unknown";
  const state = linkState(row, now);
  return state === "valid" ? "used" : state;
}

/** How long a dead link (expired, used or withdrawn) is kept before the periodic job deletes it: it still says why. */
export const DEAD_LINK_KEEP_MS = 30 * 24 * 3_600_000;
