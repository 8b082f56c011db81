/**
 * Turns an Authorization header into an AuthContext, or null. Every failure is the same null: the caller answers
 * one 401 body whatever went wrong, so missing, malformed, unknown, revoked, expired and retired keys are
 * indistinguishable. Identity comes only from the key.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Deps } from "../deps";
import { accounts, apiKeys, members } from "../db/tables";
import { type ChangeWatch, type Store, type StoreDb, isSqliteStore } from "../db/store";
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

function prepareLookup(db: StoreDb) {
  return db
    .select({
      id: apiKeys.id,
      accountId: apiKeys.accountId,
      userId: apiKeys.userId,
      scopes: apiKeys.scopes,
      revokedAt: apiKeys.revokedAt,
      expiresAt: apiKeys.expiresAt,
      graceUntil: apiKeys.graceUntil,
      lastUsedAt: apiKeys.lastUsedAt,
      role: members.role,
      disabledAt: accounts.disabledAt,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .leftJoin(members, and(eq(members.accountId, apiKeys.accountId), eq(members.userId, apiKeys.userId)))
    .where(eq(apiKeys.secretHash, sql.placeholder("hash")))
    .prepare();
}

type KeyLookupRow = NonNullable<Awaited<ReturnType<ReturnType<typeof prepareLookup>["get"]>>>;

/** The lookup statement, prepared once per database it runs on (the store's reader, or the pool on PostgreSQL). */
const lookupStatements = new WeakMap<StoreDb, ReturnType<typeof prepareLookup>>();

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
 * Per-store lookup state. NB: a cached row is trusted only while the auth generation is unchanged; the triggers in
 * db/auth-triggers.ts (db/pg/auth-triggers.ts) bump the auth_generation counter on every change that can make a key
 * stop working, from any connection or process. The store's auth watch (`store.authChanges()`) says when to look
 * again: on SQLite it reports any commit (the WAL-index header, db/commit-watch.ts, a memory read) and the counter is
 * then re-read on the reader, so a revocation by the CLI still applies on the very next request without a query on
 * every request; on PostgreSQL the watch reads the counter itself, so a change of it is a new generation.
 *
 * Entries are keyed by the Authorization header value itself, so a repeat skips parsing, the format check and the
 * HMAC. Only values that matched a stored key are kept (never misses), at most CACHE_LIMIT of them, in this process's
 * memory only: the same place every request's Authorization header passes through anyway.
 */
class KeyLookup {
  private readonly changes: ChangeWatch;
  private readonly generation: { get(): { n: number } | null } | null;
  private readonly cache = new Map<string, CachedKey>();
  private current = -1;

  constructor(store: Store) {
    this.changes = store.authChanges();
    this.generation = isSqliteStore(store) ? (store.sqlite.query(GENERATION_SQL) as unknown as { get(): { n: number } | null }) : null;
  }

  /** Moves to the current generation after the watch reported a change. */
  private advance(): void {
    // PostgreSQL: the watch answered "changed" because the counter moved, so this is a new generation.
    this.current = this.generation ? (this.generation.get()?.n ?? -1) : this.current + 1;
  }

  /**
   * The key an Authorization header value presents, or null for anything that is not a working one. Synchronous on a
   * hit while the watch answers synchronously (SQLite); a promise when it has to wait for the database.
   */
  find(deps: Pick<Deps, "store" | "instanceSecret">, authorization: string): CachedKey | null | Promise<CachedKey | null> {
    // The watch is looked at before the counter is read: a commit in between shows up on the next look.
    const changed = this.changes.changed();
    if (typeof changed !== "boolean") {
      return changed.then((yes) => {
        if (yes) this.advance();
        return this.lookUp(deps, authorization);
      });
    }
    if (changed) this.advance();
    return this.lookUp(deps, authorization);
  }

  private lookUp(deps: Pick<Deps, "store" | "instanceSecret">, authorization: string): CachedKey | null | Promise<CachedKey | null> {
    const generation = this.current;
    const cached = this.cache.get(authorization);
    if (cached && cached.generation === generation) return cached;
    const token = bearerToken(authorization);
    if (!token || !isWellFormedKey(token)) return null;
    return this.load(deps, authorization, token, generation);
  }

  private async load(deps: Pick<Deps, "store" | "instanceSecret">, authorization: string, token: string, generation: number): Promise<CachedKey | null> {
    const db = deps.store.db;
    let statement = lookupStatements.get(db);
    if (!statement) {
      statement = prepareLookup(db);
      lookupStatements.set(db, statement);
    }
    const row = await statement.get({ hash: hashKeySecret(deps, token) });
    if (!row) return null;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const role = row.role ?? "viewer";
    const entry: CachedKey = {
      row,
      generation,
      refused: row.role === null || row.disabledAt !== null || row.revokedAt !== null,
      times: { revokedAt: row.revokedAt, expiresAt: row.expiresAt, graceUntil: row.graceUntil },
      context: {
        keyId: row.id,
        accountId: row.accountId,
        userId: row.userId,
        role,
        scopes: row.role === null ? [] : effectiveScopes(parseStoredScopes(row.scopes), row.role),
      },
    };
    this.cache.set(authorization, entry);
    return entry;
  }
}

const lookups = new WeakMap<Store, KeyLookup>();

function keyLookup(store: Store): KeyLookup {
  let lookup = lookups.get(store);
  if (!lookup) {
    lookup = new KeyLookup(store);
    lookups.set(store, lookup);
  }
  return lookup;
}

/** Extracts the token from `Authorization: Bearer <token>`; null for any other shape. */
export function bearerToken(header: string | null): string | null {
  if (!header || header.length < 8 || header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== "bearer") return null;
  const token = header.slice(7);
  return /^[^\s]+$/.test(token) ? token : null;
}

type AuthDeps = Pick<Deps, "store" | "clock" | "instanceSecret" | "log">;

/**
 * Authenticates a request's Authorization header value. Answers synchronously when it can (SQLite, a cached key) and
 * a promise otherwise: callers await it.
 */
export function authenticate(deps: AuthDeps, authorization: string | null): AuthContext | null | Promise<AuthContext | null> {
  if (!authorization) return null;
  const found = keyLookup(deps.store).find(deps, authorization);
  if (found instanceof Promise) return found.then((key) => decide(deps, key));
  return decide(deps, found);
}

/** The answer for a looked-up key, now; records the key's use off the read path. */
function decide(deps: AuthDeps, found: CachedKey | null): AuthContext | null {
  if (!found || found.refused) return null;
  const now = deps.clock.now();
  const state = keyState(found.times, now);
  if (state !== "active" && state !== "grace") return null;
  const { row } = found;
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    row.lastUsedAt = now;
    touchKey(deps, row.id, now);
  }
  return found.context;
}

/** Records a key's use in its own write, not awaited: the request does not wait for the writer (errors are logged). */
function touchKey(deps: Pick<Deps, "store" | "log">, keyId: string, now: number): void {
  void deps.store
    .write(async (tx) => {
      await tx.update(apiKeys).set({ lastUsedAt: now }).where(eq(apiKeys.id, keyId)).run();
    })
    .catch((error: unknown) => deps.log.error("could not record an API key's last use", { keyId, error: String(error) }));
}
