/**
 * Shows a new secret exactly once after a redirect (POST → 303 → GET), so a reload never mints again and the secret
 * never travels in a URL. The minting POST stashes it here under a random one-time token bound to the session; the
 * GET takes it (and deletes it). Nothing is written to disk: a restart, or ten minutes, forgets it. With several
 * replicas the GET may reach another process, which then says the secret was already shown (documented).
 */
import { randomToken } from "../../web/session";

/** How long a stashed secret waits for its GET. */
export const REVEAL_TTL_MS = 10 * 60 * 1000;
const MAX_PENDING = 1000;

export interface Revealed {
  title: string;
  secret: string;
  /** Plain text shown under the secret (e.g. the old key's grace end). */
  note?: string;
}

const pending = new Map<string, { sessionId: string; expiresAt: number; value: Revealed }>();

function sweep(now: number): void {
  for (const [token, entry] of pending) if (entry.expiresAt <= now) pending.delete(token);
  while (pending.size >= MAX_PENDING) {
    const oldest = pending.keys().next().value;
    if (oldest === undefined) break;
    pending.delete(oldest);
  }
}

/** Keeps `value` for one GET by the same session; answers the token for the redirect. */
export function stashSecret(sessionId: string, value: Revealed, now = Date.now()): string {
  sweep(now);
  const token = randomToken();
  pending.set(token, { sessionId, expiresAt: now + REVEAL_TTL_MS, value });
  return token;
}

/** The stashed value, once: null when unknown, already taken, expired, or stashed by another session. */
export function takeSecret(sessionId: string, token: string, now = Date.now()): Revealed | null {
  const entry = pending.get(token);
  if (!entry || entry.sessionId !== sessionId) return null;
  pending.delete(token);
  return entry.expiresAt > now ? entry.value : null;
}
