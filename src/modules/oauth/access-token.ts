/**
 * Who an OAuth access token speaks for, checked at every request (decisions.md §9): the token exists, has not
 * expired, its grant is not revoked, the member is still in the account, the account is not disabled. The effective
 * groups are the grant's ∩ the member's current role. Every failure is the same null, like API keys. Also the
 * per-grant rate limit, the counterpart of the per-key one in http/pipeline.ts.
 *
 * Lookups are cached per database until any transaction commits (db/commit-watch.ts, the API keys' cache does the
 * same): a revocation, role change, removal or disable by any process is a commit, so it applies at the next request;
 * expiry is checked against the clock at every request. Without the cache the joined lookup and the HMAC were ~30 µs of
 * every /mcp request.
 */
import type { Database } from "bun:sqlite";
import { type CommitWatch, watchCommits } from "../../db/commit-watch";
import type { Deps } from "../../deps";
import { RateLimiter } from "../../http/rate-limit";
import { type Role, type Scope, effectiveScopes, parseStoredScopes } from "../auth/scopes";
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

/** Rows of tokens that were found, by token, valid while no transaction has committed since they were read. */
class AccessTokenCache {
  private readonly commits: CommitWatch;
  private readonly rows = new Map<string, TokenLookupRow>();

  constructor(sqlite: Database) {
    this.commits = watchCommits(sqlite);
  }

  /** The stored row of `token`, or null when there is none. */
  row(deps: Pick<Deps, "db" | "instanceSecret">, token: string): TokenLookupRow | null {
    // The WAL-index header is looked at before the query: a commit in between shows up on the next look.
    if (this.commits.changed()) this.rows.clear();
    const cached = this.rows.get(token);
    if (cached) return cached;
    const row = statements(deps.db).accessLookup.get({ hash: hashSecret(deps, token) });
    if (!row) return null;
    if (this.rows.size >= CACHE_LIMIT) this.rows.clear();
    this.rows.set(token, row);
    return row;
  }
}

const caches = new WeakMap<Database, AccessTokenCache>();

/** The principal an access token presents, or null for anything that is not a working one. Synchronous. */
export function authenticateAccessToken(deps: Pick<Deps, "db" | "sqlite" | "clock" | "instanceSecret">, token: string): OAuthPrincipal | null {
  if (!isSecret(ACCESS_TOKEN_PREFIX, token)) return null;
  let cache = caches.get(deps.sqlite);
  if (!cache) {
    cache = new AccessTokenCache(deps.sqlite);
    caches.set(deps.sqlite, cache);
  }
  const row = cache.row(deps, token);
  if (!row || row.role === null || row.disabledAt !== null) return null;
  if (row.tokenRevokedAt !== null || row.grantRevokedAt !== null) return null;
  const now = deps.clock.now();
  if (now >= row.expiresAt) return null;
  if (row.lastUsedAt === null || now - row.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
    statements(deps.db).touchGrant.run({ now, id: row.grantId });
    row.lastUsedAt = now;
  }
  return {
    grantId: row.grantId,
    clientId: row.clientId,
    accountId: row.accountId,
    userId: row.userId,
    role: row.role,
    scopes: effectiveScopes(parseStoredScopes(row.scopes), row.role),
  };
}

const limiters = new WeakMap<Database, RateLimiter>();

/**
 * Takes one request from a grant's budget (RATE_LIMIT_PER_MINUTE, the same as a key's). Returns 0 when allowed, else
 * the seconds to wait (answer 429 `rate_limited` with Retry-After).
 */
export function takeGrantRequest(deps: Pick<Deps, "sqlite" | "clock" | "config">, grantId: string): number {
  let limiter = limiters.get(deps.sqlite);
  if (!limiter) {
    limiter = new RateLimiter(deps.config.rateLimitPerMinute, deps.clock);
    limiters.set(deps.sqlite, limiter);
  }
  return limiter.take(`grant:${grantId}`);
}
