/**
 * Who an OAuth access token speaks for, checked at every request (decisions.md §9): the token exists, has not
 * expired, its grant is not revoked, the member is still in the account, the account is not disabled. The effective
 * groups are the grant's ∩ the member's current role. Every failure is the same null, like API keys. Also the
 * per-grant rate limit, the counterpart of the per-key one in http/pipeline.ts.
 *
 * Lookups are cached per store until its auth watch reports a change (`store.authChanges()`, a watch of its own: on
 * SQLite any commit, read from the WAL-index header, db/commit-watch.ts; on PostgreSQL the auth generation counter,
 * which the triggers of db/pg/auth-triggers.ts bump on grant and token revocations too; the API keys' cache does the
 * same): a revocation, role change, removal or disable by any process shows up there, so it applies at the next
 * request; expiry is checked against the clock at every request. Without the cache the joined lookup and the HMAC were
 * ~30 µs of every /mcp request.
 *
 * The grant's lastUsedAt is written off the read path: after the answer is decided, in its own `store.write()` that
 * nobody awaits (errors are logged), at most once a minute per grant.
 */
import type { ChangeWatch, Store } from "../../db/store";
import type { Deps } from "../../deps";
import { type Limiter, createRateLimiter } from "../../http/rate-limit";
import { type Role, type Scope, effectiveScopes, parseStoredScopes } from "../../auth/scopes";
import { type TokenLookupRow, statements } from "./statements";
import { ACCESS_TOKEN_PREFIX, hashSecret, isSecret } from "./token-format";

export interface OAuthPrincipal {
  grantId: string;
  clientId: string;
  accountId: string;
  userId: string;
  /** The member's current role. */
  role: Role;
  /** Effective groups: the grant's own ∩ the member's current role. */
  scopes: Scope[];
}

/** lastUsedAt is written at most this often per grant, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** Entries kept before the cache starts over; a bound, not a tuning knob. */
const CACHE_LIMIT = 10_000;

/** Rows of tokens that were found, by token, valid while the store's auth watch reports no change since they were read. */
class AccessTokenCache {
  private readonly changes: ChangeWatch;
  private readonly rows = new Map<string, TokenLookupRow>();

  constructor(store: Store) {
    this.changes = store.authChanges();
  }

  /** The stored row of `token`, or null when there is none. */
  async row(deps: Pick<Deps, "store" | "instanceSecret">, token: string): Promise<TokenLookupRow | null> {
    // The watch is looked at before the query: a change in between shows up on the next look.
    const changed = this.changes.changed();
    if (typeof changed === "boolean" ? changed : await changed) this.rows.clear();
    const cached = this.rows.get(token);
    if (cached) return cached;
    const row = await statements(deps.store.db).accessLookup.get({ hash: hashSecret(deps, token) });
    if (!row) return null;
    if (this.rows.size >= CACHE_LIMIT) this.rows.clear();
    this.rows.set(token, row);
    return row;
  }
}

const caches = new WeakMap<Store, AccessTokenCache>();

/** The principal an access token presents, or null for anything that is not a working one. */
export async function authenticateAccessToken(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret" | "log">,
  token: string,
): Promise<OAuthPrincipal | null> {
  if (!isSecret(ACCESS_TOKEN_PREFIX, token)) return null;
  let cache = caches.get(deps.store);
  if (!cache) {
    cache = new AccessTokenCache(deps.store);
    caches.set(deps.store, cache);
  }
  const row = await cache.row(deps, token);
  if (!row || row.role === null || row.disabledAt !== null) return null;
  if (row.tokenRevokedAt !== null || row.grantRevokedAt !== null) return null;
  const now = deps.clock.now();
  if (now >= row.expiresAt) return null;
  const principal: OAuthPrincipal = {
    grantId: row.grantId,
    clientId: row.clientId,
    accountId: row.accountId,
    userId: row.userId,
    role: row.role,
    scopes: effectiveScopes(parseStoredScopes(row.scopes), row.role),
  };
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    row.lastUsedAt = now;
    touchGrant(deps, row.grantId, now);
  }
  return principal;
}

/** Records a grant's use in its own write, not awaited: the request does not wait for the writer (errors are logged). */
function touchGrant(deps: Pick<Deps, "store" | "log">, grantId: string, now: number): void {
  void deps.store
    .write(async (tx) => {
      await statements(tx).touchGrant.run({ now, id: grantId });
    })
    .catch((error: unknown) => deps.log.error("could not record an OAuth grant's last use", { grantId, error: String(error) }));
}

const limiters = new WeakMap<Store, Limiter>();

/**
 * Takes `messages` requests (a JSON-RPC batch counts each of its messages) from a grant's budget
 * (RATE_LIMIT_PER_MINUTE, the same as a key's; shared by every replica in PostgreSQL mode, http/rate-limit.ts), all or
 * none. Resolves to 0 when allowed, else the seconds to wait (answer 429 `rate_limited` with Retry-After).
 */
export async function takeGrantRequest(deps: Pick<Deps, "store" | "clock" | "config">, grantId: string, messages = 1): Promise<number> {
  let limiter = limiters.get(deps.store);
  if (!limiter) {
    limiter = createRateLimiter(deps, "grant", deps.config.rateLimitPerMinute);
    limiters.set(deps.store, limiter);
  }
  return limiter.take(grantId, messages);
}
