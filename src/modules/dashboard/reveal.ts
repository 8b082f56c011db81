/**
 * Shows a new secret exactly once after a redirect (POST → 303 → GET), so a reload never mints again and the secret
 * never travels in a URL. The minting POST stores it in the database (table `secret_reveals`) under a random one-time
 * token bound to the session, and redirects with the token; the GET takes it with one conditional
 * `DELETE … WHERE token_hash AND session_id AND expires_at > now RETURNING sealed`, so whichever replica the GET
 * reaches shows it, and two requests racing on one token (two replicas, a double reload) show it at most once.
 *
 * The row holds neither the token nor the secret in clear: an HMAC of the token under the instance secret, and the
 * value sealed (AES-256-GCM, its own derived key, the token hash as additional data). Ten minutes after the POST, or
 * when the session is deleted (sign-out), the value is gone; expired rows are deleted by the session's next stash and
 * by the `__secret_reveals_tidy__` job (src/system-jobs.ts). Neither the token's hash nor the value is ever logged.
 */
import { and, eq, gt, lte } from "drizzle-orm";
import type { Deps } from "../../deps";
import { secretReveals } from "../../db/tables";
import { deriveKey, hmacHex } from "../../lib/instance-secret";
import { openJson, sealJson } from "../../store/sealing";
import { randomToken } from "../../web/session";

/** How long a stashed secret waits for its GET. */
export const REVEAL_TTL_MS = 10 * 60 * 1000;
/** Purpose labels of the derived keys: the token's HMAC and the value's sealing. */
const TOKEN_KEY_LABEL = "dashboard:secret-reveal:token:v1";
const SEAL_KEY_LABEL = "dashboard:secret-reveal:value:v1";
/** A token is randomToken()'s 32 bytes in base64url; anything else is not looked up. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface Revealed {
  title: string;
  secret: string;
  /** Plain text shown under the secret (e.g. the old key's grace end). */
  note?: string;
}

type RevealDeps = Pick<Deps, "store" | "clock" | "instanceSecret" | "log">;

function tokenHash(deps: RevealDeps, token: string): string {
  return hmacHex(deriveKey(deps.instanceSecret, TOKEN_KEY_LABEL), token);
}

/** Keeps `value` for one GET by the same session (on any replica); answers the token for the redirect. */
export async function stashSecret(deps: RevealDeps, sessionId: string, value: Revealed): Promise<string> {
  const now = deps.clock.now();
  const token = randomToken();
  const hash = tokenHash(deps, token);
  const sealed = sealJson(deps.instanceSecret, hash, value, SEAL_KEY_LABEL);
  await deps.store.write((tx) => tx.insert(secretReveals).values({ tokenHash: hash, sessionId, sealed, expiresAt: now + REVEAL_TTL_MS }).run());
  // On the way, this session's expired rows (never another's: two replicas deleting one set of rows in different orders
  // could deadlock on PostgreSQL). Best effort, after the insert committed: the key is already minted, and a failure
  // here must not lose its one showing.
  try {
    await deps.store.write((tx) =>
      tx.delete(secretReveals).where(and(eq(secretReveals.sessionId, sessionId), lte(secretReveals.expiresAt, now))).run(),
    );
  } catch (error) {
    deps.log.warn("could not delete a session's expired secret reveals", { error: String(error) });
  }
  return token;
}

/** The stashed value, once: null when unknown, already taken, expired, or stashed by another session. */
export async function takeSecret(deps: RevealDeps, sessionId: string, token: string): Promise<Revealed | null> {
  if (!TOKEN_SHAPE.test(token)) return null;
  const now = deps.clock.now();
  const hash = tokenHash(deps, token);
  const taken = await deps.store.write((tx) =>
    tx
      .delete(secretReveals)
      .where(and(eq(secretReveals.tokenHash, hash), eq(secretReveals.sessionId, sessionId), gt(secretReveals.expiresAt, now)))
      .returning({ sealed: secretReveals.sealed })
      .all(),
  );
  const row = taken[0];
  if (!row) return null;
  try {
    return openJson<Revealed>(deps.instanceSecret, hash, row.sealed, SEAL_KEY_LABEL);
  } catch {
    deps.log.warn("a pending secret reveal did not open (tampered with, or sealed under another instance secret)");
    return null;
  }
}

/** Deletes reveals whose ten minutes have passed (the periodic job; a stash also does it). Answers how many. */
export async function tidySecretReveals(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const now = deps.clock.now();
  const removed = await deps.store.write((tx) =>
    tx.delete(secretReveals).where(lte(secretReveals.expiresAt, now)).returning({ tokenHash: secretReveals.tokenHash }).all(),
  );
  return removed.length;
}
