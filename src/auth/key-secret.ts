/** What authentication and key management share about a stored API key: its state in time and its hash. */
import type { apiKeys } from "../db/schema";
import type { Deps } from "../deps";
import { hmacHex } from "../lib/instance-secret";

export type KeyState = "active" | "grace" | "retired" | "revoked" | "expired";

/** The state of a stored key at time `now`. */
export function keyState(row: Pick<typeof apiKeys.$inferSelect, "revokedAt" | "expiresAt" | "graceUntil">, now: number): KeyState {
  if (row.revokedAt !== null) return "revoked";
  if (row.graceUntil !== null) return now < row.graceUntil ? "grace" : "retired";
  if (row.expiresAt !== null && now >= row.expiresAt) return "expired";
  return "active";
}

/** Hash under which a secret is stored and looked up. */
export function hashKeySecret(deps: Pick<Deps, "instanceSecret">, secret: string): string {
  return hmacHex(deps.instanceSecret, secret);
}
