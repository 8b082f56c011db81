/**
 * Turns an Authorization header into an AuthContext, or null. Every failure is the same null: the caller answers
 * one 401 body whatever went wrong, so missing, malformed, unknown, revoked, expired and retired keys are
 * indistinguishable. Identity comes only from the key.
 */
import type { Database } from "bun:sqlite";
import type { Deps } from "../deps";
import { type CommitWatch, watchCommits } from "../db/commit-watch";
import { isWellFormedKey } from "../lib/api-key-format";
import { hashKeySecret, keyState } from "./key-secret";
import { type Role, type Scope, effectiveScopes, parseStoredScopes } from "./scopes";

export interface AuthContext {
  keyId: string;
  accountId: string;
  userId: string;
  role: Role;
  /** Effective groups: the key's own ∩ the member's current role. */
  scopes: Scope[];
}

/** The exact 401 body (interface.md Authentication 8). */
export const INVALID_KEY_BODY = '{"error":"Invalid API key"}';
/** lastUsedAt is written at most this often per key, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

interface KeyLookupRow {
  id: string;
  account_id: string;
  user_id: string;
  scopes: string;
  revoked_at: number | null;
  expires_at: number | null;
  grace_until: number | null;
  last_used_at: number | null;
  role: Role | null;
  disabled_at: number | null;
}

const LOOKUP_SQL = `SELECT k.id, k.account_id, k.user_id, k.scopes, k.revoked_at, k.expires_at, k.grace_until,
  k.last_used_at, m.role, a.disabled_at
  FROM api_keys k
  JOIN accounts a ON a.id = k.account_id
  LEFT JOIN members m ON m.account_id = k.account_id AND m.user_id = k.user_id
  WHERE k.secret_hash = ?`;

const GENERATION_SQL = "SELECT n FROM auth_generation WHERE id = 1";
/** Entries kept before the cache starts over; a bound, not a tuning knob. */
const CACHE_LIMIT = 10_000;

interface CachedKey {
  row: KeyLookupRow;
  generation: number;
  /** The state that does not move with the clock: revoked, no membership, account disabled. */
  refused: boolean;
  /** The key's validity in time, as keyState reads it. */
  times: { revokedAt: number | null; expiresAt: number | null; graceUntil: number | null };
  /**
   * The context handed to every request of this key, built once per entry (nothing in it changes while the generation
   * holds). Shared, so never mutated; not frozen either, because frozen objects made every response measurably slower.
   */
  context: AuthContext;
}

/**
 * Per-database lookup state. NB: a cached row is trusted only while auth_generation is unchanged; the triggers in
 * db/auth-triggers.ts bump it on every change that can make a key stop working, from any connection. The counter
 * itself is re-read only when some transaction has committed since the last look (db/commit-watch.ts), so a
 * revocation by the CLI still applies on the very next request without a query on every request.
 *
 * Entries are keyed by the Authorization header value itself, so a repeat skips parsing, the format check and the
 * HMAC. Only values that matched a stored key are kept (never misses), at most CACHE_LIMIT of them, in this process's
 * memory only: the same place every request's Authorization header passes through anyway.
 */
class KeyLookup {
  private readonly lookup: { get(hash: string): KeyLookupRow | null };
  private readonly generation: { get(): { n: number } | null };
  private readonly commits: CommitWatch;
  private readonly cache = new Map<string, CachedKey>();
  private current = -1;

  constructor(sqlite: Database) {
    this.lookup = sqlite.query(LOOKUP_SQL) as unknown as KeyLookup["lookup"];
    this.generation = sqlite.query(GENERATION_SQL) as unknown as KeyLookup["generation"];
    this.commits = watchCommits(sqlite);
  }

  /** The key an Authorization header value presents, or null for anything that is not a working one. */
  find(deps: Pick<Deps, "instanceSecret">, authorization: string): CachedKey | null {
    // The WAL-index header is looked at before the counter is read: a commit in between shows up on the next look.
    if (this.commits.changed()) this.current = this.generation.get()?.n ?? -1;
    const generation = this.current;
    const cached = this.cache.get(authorization);
    if (cached && cached.generation === generation) return cached;
    const token = bearerToken(authorization);
    if (!token || !isWellFormedKey(token)) return null;
    const row = this.lookup.get(hashKeySecret(deps, token));
    if (!row) return null;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const role = row.role ?? "viewer";
    const entry: CachedKey = {
      row,
      generation,
      refused: row.role === null || row.disabled_at !== null || row.revoked_at !== null,
      times: { revokedAt: row.revoked_at, expiresAt: row.expires_at, graceUntil: row.grace_until },
      context: {
        keyId: row.id,
        accountId: row.account_id,
        userId: row.user_id,
        role,
        scopes: row.role === null ? [] : effectiveScopes(parseStoredScopes(row.scopes), row.role),
      },
    };
    this.cache.set(authorization, entry);
    return entry;
  }
}

const lookups = new WeakMap<Database, KeyLookup>();

function keyLookup(sqlite: Database): KeyLookup {
  let lookup = lookups.get(sqlite);
  if (!lookup) {
    lookup = new KeyLookup(sqlite);
    lookups.set(sqlite, lookup);
  }
  return lookup;
}

/** Extracts the token from `Authorization: Bearer <token>`; null for any other shape. */
export function bearerToken(header: string | null): string | null {
  if (!header || header.length < 8 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") return null;
  const token = header.slice(7);
  return /^[^\s]+$/.test(token) ? token : null;
}

/** Authenticates a request's Authorization header value. */
export function authenticate(
  deps: Pick<Deps, "sqlite" | "clock" | "instanceSecret">,
  authorization: string | null,
): AuthContext | null {
  if (!authorization) return null;
  const found = keyLookup(deps.sqlite).find(deps, authorization);
  if (!found || found.refused) return null;
  const now = deps.clock.now();
  const state = keyState(found.times, now);
  if (state !== "active" && state !== "grace") return null;
  const { row } = found;
  if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
    deps.sqlite.query("UPDATE api_keys SET last_used_at = ? WHERE id = ?").run(now, row.id);
    row.last_used_at = now;
  }
  return found.context;
}
