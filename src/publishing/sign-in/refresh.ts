/**
 * Token refresh, one place for every network (decisions.md §12 "Tokens"; a network only declares its token endpoint
 * and its dead-grant words):
 * - ahead of expiry: the daily job refreshes what expires within 7 days (`refreshExpiringTokens`); a delivery
 *   refreshes a token with under 5 minutes left (`connectionForDelivery`);
 * - one refresh at a time per connection, across replicas: a lease on the connection row (`refresh_lease_*`), taken
 *   by a conditional UPDATE that also requires the expiry it read, so a caller arriving after a refresh finished
 *   finds the token fresh and refreshes nothing. The others wait for the lease to end, then read the new token.
 *   Connections made in one sign-in (Pinterest boards: one rotating refresh token) are leased together, all or none;
 * - the new access and refresh tokens are stored in one write, fenced by the lease; an answer without a refresh token
 *   keeps the stored one (a network that does not rotate sends none);
 * - a refusal that means the grant is gone (`invalid_grant`, or the network's word) → not ready with
 *   "<Network> no longer accepts Seedcast's sign-in: reconnect <Network>", the needs-attention notice and the
 *   `connection.needs_attention` event (markConnectionBlocked); any other refusal likewise, with the network's words;
 * - a network error, 5xx or 429 is transient: nothing changes, the connection stays ready, the token is used while it
 *   lasts, and the next delivery or job tries again.
 * Time is the injected clock (tests move it); only the wait between two looks at a lease is real time.
 */
import { and, eq, inArray, isNotNull, isNull, lte, or } from "drizzle-orm";
import { connections } from "../../db/tables";
import type { Deps } from "../../deps";
import { type ConnectionRow, type OpenConnection, markConnectionBlocked, openConnection } from "../../store/connections";
import { sealJson } from "../../store/sealing";
import { DeliveryError } from "../connector";
import { PROVIDER_TIMEOUT_MS } from "../outbound";
import { type SignInNetwork, deadGrantReason } from "./network";
import { signInNetworkFor } from "./registry";
import { requestToken } from "./token-endpoint";

/** A delivery refreshes a token with less than this left. */
export const REFRESH_AT_DELIVERY_MS = 5 * 60 * 1000;
/** The daily job refreshes tokens expiring within this. */
export const REFRESH_AHEAD_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a refresh may hold its lease: well past one token-endpoint call's time limit. */
const LEASE_MS = 4 * PROVIDER_TIMEOUT_MS;
/** Real time between two looks at another caller's lease. */
const WAIT_STEP_MS = 25;
/** Real time a caller waits for another's refresh before going on with what it has. */
const MAX_WAIT_MS = LEASE_MS + 5_000;

/** Finds the sign-in declaration of a platform (the registry; tests pass their own network). */
export type NetworkLookup = (platform: string) => SignInNetwork | null;

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

async function readRow(deps: Pick<Deps, "store">, id: string): Promise<ConnectionRow> {
  const row = await deps.store.db.select().from(connections).where(eq(connections.id, id)).get();
  if (!row) throw new DeliveryError("permanent", "The connection was removed from this account.");
  return row;
}

function needsRefresh(row: ConnectionRow, now: number, minValidityMs: number): boolean {
  return row.tokenExpiresAt !== null && row.tokenExpiresAt - now <= minValidityMs;
}

/**
 * The ids of the connections made in the same sign-in as `row` (the same `grant`: Pinterest boards ticked together),
 * `row`'s own included, in id order. They share one rotating refresh token, so one refresh at a time for all of them.
 */
async function grantRowIds(deps: Deps, row: ConnectionRow): Promise<string[]> {
  const grantOf = (r: ConnectionRow): string | undefined => {
    try {
      return openConnection(deps, r).credentials.grant;
    } catch {
      return undefined;
    }
  };
  const grant = grantOf(row);
  if (grant === undefined) return [row.id];
  const rows = await deps.store.db.select().from(connections).where(and(eq(connections.accountId, row.accountId), eq(connections.platform, row.platform))).all();
  const ids = rows.filter((r) => r.id === row.id || grantOf(r) === grant).map((r) => r.id);
  if (!ids.includes(row.id)) ids.push(row.id);
  return ids.sort();
}

/** Thrown inside takeLease's write to roll back the leases it took when one of the sign-in's rows is taken. */
class LeaseHeldElsewhere extends Error {}

/**
 * Takes the refresh lease of `row` (only while its expiry is still the one read) and of every connection of the same
 * sign-in, all or none, in one write; answers the ids now held, or null. Rows are taken in id order, so two callers
 * on PostgreSQL queue on the same first row instead of deadlocking; the second then finds it leased and takes none.
 * Without this a delivery on one Pinterest board and the job (or another replica) on its sibling would each present
 * the shared refresh token, and the network would refuse the second as reused: a dead grant for a live sign-in.
 */
async function takeLease(deps: Deps, row: ConnectionRow, lease: string): Promise<string[] | null> {
  const ids = await grantRowIds(deps, row);
  const now = deps.clock.now();
  try {
    return await deps.store.write(async (tx) => {
      for (const id of ids) {
        const free = or(isNull(connections.refreshLeaseExpiresAt), lte(connections.refreshLeaseExpiresAt, now));
        const unchanged = row.tokenExpiresAt === null ? isNull(connections.tokenExpiresAt) : eq(connections.tokenExpiresAt, row.tokenExpiresAt);
        const taken = await tx
          .update(connections)
          .set({ refreshLeaseToken: lease, refreshLeaseExpiresAt: now + LEASE_MS })
          .where(id === row.id ? and(eq(connections.id, id), unchanged, free) : and(eq(connections.id, id), free))
          .returning({ id: connections.id })
          .all();
        if (taken.length !== 1) throw new LeaseHeldElsewhere();
      }
      return ids;
    });
  } catch (error) {
    if (error instanceof LeaseHeldElsewhere) return null;
    throw error;
  }
}

async function releaseLease(deps: Pick<Deps, "store">, held: readonly string[], lease: string): Promise<void> {
  await deps.store.write((tx) =>
    tx
      .update(connections)
      .set({ refreshLeaseToken: null, refreshLeaseExpiresAt: null })
      .where(and(inArray(connections.id, [...held]), eq(connections.refreshLeaseToken, lease)))
      .run(),
  );
}

/** Refreshes under the lease `lease` (held on `held`: the row and its sign-in's others); answers the connection as stored afterwards. */
async function refreshUnderLease(deps: Deps, row: ConnectionRow, network: SignInNetwork, lease: string, held: readonly string[]): Promise<OpenConnection> {
  const open = openConnection(deps, row);
  const refreshToken = open.credentials.refreshToken;
  const stillValid = row.tokenExpiresAt !== null && row.tokenExpiresAt > deps.clock.now();
  const renewsItself = network.refreshAccessToken !== undefined;
  if (!refreshToken && !renewsItself) {
    // A token that cannot be refreshed (no refresh token was ever given) is used until it expires.
    await releaseLease(deps, held, lease);
    return open;
  }
  let answer: Awaited<ReturnType<typeof requestToken>>;
  try {
    const app = await network.appOf(deps, row.endpoint);
    answer =
      network.refreshAccessToken !== undefined
        ? await network.refreshAccessToken(deps, app, open.credentials.token ?? "")
        : await requestToken(deps, app, { grant_type: "refresh_token", refresh_token: refreshToken ?? "" }, network.deadGrantErrors);
  } catch (error) {
    answer = { ok: false, kind: "transient", error: "unreachable", words: (error as Error).message };
  }
  if (answer.ok) {
    const credentials: Record<string, string> = { ...open.credentials, token: answer.tokens.accessToken };
    const nextRefresh = answer.tokens.refreshToken ?? refreshToken;
    if (nextRefresh) credentials.refreshToken = nextRefresh;
    const tokens = answer.tokens;
    // The new pair in one write, only while this caller still holds the lease; the connections made from the same
    // sign-in (Pinterest boards, chosen together) share its grant and take the new pair in the same write, since a
    // rotated refresh token is spent for all of them.
    const stored = await deps.store.write(async (tx) => {
      const mine = await tx
        .update(connections)
        .set({
          credentialsSealed: sealJson(deps.instanceSecret, row.id, credentials),
          tokenExpiresAt: tokens.expiresAt,
          refreshLeaseToken: null,
          refreshLeaseExpiresAt: null,
          updatedAt: deps.clock.now(),
        })
        .where(and(eq(connections.id, row.id), eq(connections.refreshLeaseToken, lease)))
        .returning()
        .get();
      const grant = open.credentials.grant;
      if (!mine || credentials.refreshToken === refreshToken || grant === undefined) return mine;
      const siblings = await tx.select().from(connections).where(and(eq(connections.accountId, row.accountId), eq(connections.platform, row.platform))).all();
      for (const sibling of siblings) {
        if (sibling.id === row.id) continue;
        const theirs = openConnection(deps, sibling);
        if (theirs.credentials.grant !== grant || theirs.credentials.refreshToken !== refreshToken) continue;
        const shared = { ...theirs.credentials, token: tokens.accessToken, refreshToken: credentials.refreshToken };
        await tx
          .update(connections)
          .set({ credentialsSealed: sealJson(deps.instanceSecret, sibling.id, shared), tokenExpiresAt: tokens.expiresAt, updatedAt: deps.clock.now() })
          .where(eq(connections.id, sibling.id))
          .run();
      }
      return mine;
    });
    if (held.length > 1) await releaseLease(deps, held, lease);
    if (!stored) {
      deps.log.warn("a token refresh outlived its lease; its answer was not stored", { connectionId: row.id, platform: row.platform });
      return openConnection(deps, await readRow(deps, row.id));
    }
    deps.log.info("refreshed a connection's sign-in", { connectionId: row.id, platform: row.platform });
    return openConnection(deps, stored);
  }
  await releaseLease(deps, held, lease);
  if (answer.kind === "transient") {
    deps.log.warn("a token refresh failed for now; will try again", { connectionId: row.id, platform: row.platform, error: answer.error });
    if (stillValid) return open;
    throw new DeliveryError("transient", `${network.name} could not renew Seedcast's sign-in just now (${answer.words}); will try again.`);
  }
  const reason =
    answer.kind === "dead"
      ? deadGrantReason(network)
      : `${network.name} refused to renew Seedcast's sign-in (${answer.words}): reconnect ${network.name}`;
  await markConnectionBlocked(deps, row.id, reason);
  throw new DeliveryError("auth", reason);
}

/**
 * The connection with an access token valid for at least `minValidityMs` more: refreshed when it is not (one refresh
 * at a time per connection, across replicas). Throws DeliveryError: `auth` when the grant is gone (the connection is
 * then not ready), `transient` when the token has run out and the network cannot renew it now.
 */
export async function ensureFreshToken(deps: Deps, connectionId: string, network: SignInNetwork, minValidityMs: number): Promise<OpenConnection> {
  const giveUpAt = performance.now() + MAX_WAIT_MS;
  const lease = crypto.randomUUID();
  for (;;) {
    const row = await readRow(deps, connectionId);
    if (!needsRefresh(row, deps.clock.now(), minValidityMs)) return openConnection(deps, row);
    const held = await takeLease(deps, row, lease);
    if (held) return refreshUnderLease(deps, row, network, lease, held);
    if (performance.now() > giveUpAt) {
      if (row.tokenExpiresAt !== null && row.tokenExpiresAt > deps.clock.now()) return openConnection(deps, row);
      throw new DeliveryError("transient", `${network.name}'s sign-in is being renewed; will try again.`);
    }
    await sleep(WAIT_STEP_MS);
  }
}

/**
 * The connection a delivery sends with: opened from `row`, its token refreshed first when under 5 minutes are left
 * (networks connected by sign-in whose tokens expire; every other connection is opened as it is).
 */
export async function connectionForDelivery(deps: Deps, row: ConnectionRow, networkFor: NetworkLookup = signInNetworkFor): Promise<OpenConnection> {
  if (!needsRefresh(row, deps.clock.now(), REFRESH_AT_DELIVERY_MS)) return openConnection(deps, row);
  const network = networkFor(row.platform);
  if (!network) return openConnection(deps, row);
  return ensureFreshToken(deps, row.id, network, REFRESH_AT_DELIVERY_MS);
}

/** One connection of the daily job: refreshed ahead (REFRESH_AHEAD_MS); how it ended. */
async function refreshAhead(deps: Deps, id: string, network: SignInNetwork, horizon: number): Promise<"refreshed" | "failed" | "unchanged"> {
  try {
    const before = (await readRow(deps, id)).tokenExpiresAt;
    await ensureFreshToken(deps, id, network, REFRESH_AHEAD_MS);
    // A transient refusal leaves the token as it was (still valid): not counted as refreshed. A connection renewed
    // meanwhile with another of the same sign-in (Pinterest boards share a grant) is neither.
    const after = (await readRow(deps, id)).tokenExpiresAt;
    if (after !== before) return "refreshed";
    return after === null || after <= horizon ? "failed" : "unchanged";
  } catch {
    return "failed";
  }
}

/**
 * The daily job: refreshes every ready connection whose token expires within 7 days, `concurrency` at once
 * (TOKEN_REFRESH_CONCURRENCY). Connections that hold the same refresh token (made in one sign-in: Pinterest boards)
 * form a lane, refreshed one after the other: two refreshes of one rotating token at once would present it twice, and
 * the second would be refused as reused (a dead grant). Each refresh stays single-flight across replicas through the
 * connection's lease. A failure is recorded on its connection (or left for the next run when transient), never thrown.
 */
export async function refreshExpiringTokens(
  deps: Deps,
  networkFor: NetworkLookup = signInNetworkFor,
  concurrency: number = deps.config.tokenRefreshConcurrency,
): Promise<{ refreshed: number; failed: number }> {
  const horizon = deps.clock.now() + REFRESH_AHEAD_MS;
  const due = await deps.store.db
    .select()
    .from(connections)
    .where(and(eq(connections.readyToPost, true), isNotNull(connections.tokenExpiresAt), lte(connections.tokenExpiresAt, horizon)))
    .all();
  // Lanes by refresh token (kept in memory only); a connection without one (or whose credentials do not open: its
  // refresh then fails on its own) is its own lane.
  const refreshTokenOf = (row: ConnectionRow): string | undefined => {
    try {
      return openConnection(deps, row).credentials.refreshToken;
    } catch {
      return undefined;
    }
  };
  const lanes = new Map<string, { id: string; network: SignInNetwork }[]>();
  for (const row of due) {
    const network = networkFor(row.platform);
    if (!network) continue;
    const key = `${row.platform} ${refreshTokenOf(row) ?? `connection ${row.id}`}`;
    const lane = lanes.get(key) ?? [];
    lane.push({ id: row.id, network });
    lanes.set(key, lane);
  }
  const queue = [...lanes.values()];
  let next = 0;
  let refreshed = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    for (let lane = queue[next++]; lane !== undefined; lane = queue[next++]) {
      for (const { id, network } of lane) {
        const outcome = await refreshAhead(deps, id, network, horizon);
        if (outcome === "refreshed") refreshed++;
        else if (outcome === "failed") failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, queue.length)) }, worker));
  return { refreshed, failed };
}
