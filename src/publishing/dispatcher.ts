/**
 * The dispatcher: delivers every target whose time has come, exactly once in effect.
 *
 * - Claim: one write transaction picks due targets whose lease is free or expired and stamps each with a fresh
 *   lease token and expiry. Every later write of that delivery is conditional on the token (a fence): a worker whose
 *   lease expired and was taken over can never overwrite the new owner's outcome.
 * - `send_started_at` is written (fenced) just before the request leaves and cleared when the outcome is recorded.
 *   A claim that finds it set knows an earlier attempt's outcome is unknown (a crash, a timeout) and reconciles
 *   with the provider first (Bluesky: getRecord on the deterministic record key; Mastodon: its scheduled list by
 *   Idempotency-Key; webhooks: resending under the same Idempotency-Key is absorbed by the receiver).
 * - The provider's post id is saved the moment it is known (Bluesky: before the record is written).
 * - Transient failures retry with backoff; the 5th failed attempt fails the target with the platform's message.
 *   A crash is not an attempt: it is reconciled instead.
 */
import { and, asc, eq, inArray, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { DISPATCH_DEFAULTS, type DispatchConfig } from "../config";
import { forUpdateSkipLocked, greaterOf, minOf } from "../db/portable-sql";
import { accounts, connections, scheduledPosts, scheduledPostTargets } from "../db/tables";
import type { Deps } from "../deps";
import { newId } from "../lib/ids";
import { type ConnectionRow, markConnectionBlocked, openConnection, saveConnectionSession } from "../store/connections";
import type { DeliveryContext, DeliveryResult } from "./connector";
import { DeliveryError } from "./connector";
import { loadDeliveryContent } from "./content";
import { DELIVERY_OUTCOME, recordDeliveryOutcome } from "./delivery-metrics";
import { claimDueEvents, deliverEvent, nextEventWakeAt } from "./event-delivery";
import { refreshPostStatus } from "./post-status";
import { connectorFor } from "./registry";

/** Attempts before a target fails for good. */
export const MAX_ATTEMPTS = 5;
/** Wait after the n-th failed attempt (1-based) before the next one. */
export const BACKOFF_MS = [30_000, 120_000, 600_000, 1_800_000] as const;
export const DEFAULT_LEASE_MS = DISPATCH_DEFAULTS.leaseMs;
export const DEFAULT_CONCURRENCY = DISPATCH_DEFAULTS.concurrency;
/** Longest the idle loop sleeps before looking for due work again. */
export const DEFAULT_POLL_MS = DISPATCH_DEFAULTS.pollMs;
/** Never spin: even when work seems due, yield this long between empty claims. */
const MIN_IDLE_SLEEP_MS = 5;
/** Longest the loop waits between passes while the database keeps failing (it doubles from the poll interval). */
const MAX_FAILURE_BACKOFF_MS = 5000;
const PENDING = ["scheduled", "publishing"] as const;

export interface Claim {
  targetId: string;
  leaseToken: string;
  /** An earlier attempt started sending and its outcome was never recorded. */
  outcomeUnknown: boolean;
}

/** Operational tuning; read and validated with the rest of the configuration (Config.dispatch in src/config.ts). */
export type DispatcherOptions = DispatchConfig;

/**
 * Condition: the target's account is not disabled. A disabled account delivers nothing; what becomes of its posts
 * that fell due meanwhile is decided when it is re-enabled (accounts/service.ts, setAccountDisabled).
 */
function accountActive() {
  return sql`${scheduledPostTargets.accountId} not in (select ${accounts.id} from ${accounts} where ${accounts.disabledAt} is not null)`;
}

/**
 * Condition: the target is pending, due (unless `anyTime`), and its lease is free or expired; for delivery (not
 * `anyTime`, which is cancel) also that its account is active.
 */
function claimable(now: number, anyTime = false) {
  return and(
    inArray(scheduledPostTargets.status, PENDING),
    anyTime ? undefined : and(isNotNull(scheduledPostTargets.nextAttemptAt), lte(scheduledPostTargets.nextAttemptAt, now), accountActive()),
    or(isNull(scheduledPostTargets.leaseExpiresAt), lte(scheduledPostTargets.leaseExpiresAt, now)),
  );
}

/**
 * Claims up to `limit` due targets (or only `onlyIds`; with `anyTime` also before they are due, for cancel) with
 * fresh leases, in one write transaction (its body awaits only the database).
 */
export async function claimDueTargets(
  deps: Pick<Deps, "store" | "clock">,
  limit: number,
  leaseMs: number,
  onlyIds?: readonly string[],
  anyTime = false,
): Promise<Claim[]> {
  return deps.store.write(async (tx) => {
    // Read once the writer is ours: the leases run from the moment they are stamped.
    const now = deps.clock.now();
    const where = onlyIds ? and(claimable(now, anyTime), inArray(scheduledPostTargets.id, [...onlyIds])) : claimable(now);
    // PostgreSQL: the rows are locked (skipping rows another claimer holds); the conditional update stays the fence.
    const due = await forUpdateSkipLocked(
      deps.store.dialect,
      tx
        .select({ id: scheduledPostTargets.id, postId: scheduledPostTargets.postId, sendStartedAt: scheduledPostTargets.sendStartedAt })
        .from(scheduledPostTargets)
        .where(where)
        // Ties in insertion order (SQLite's rowid order, made explicit for PostgreSQL): a post's targets are withdrawn
        // in the order they were scheduled.
        .orderBy(asc(scheduledPostTargets.nextAttemptAt), asc(scheduledPostTargets.createdAt), asc(scheduledPostTargets.id))
        .limit(limit),
    ).all();
    const claims: Claim[] = [];
    const posts = new Set<string>();
    for (const row of due) {
      const leaseToken = newId();
      const updated = await tx
        .update(scheduledPostTargets)
        .set({ status: "publishing", leaseToken, leaseExpiresAt: now + leaseMs, updatedAt: now })
        .where(and(eq(scheduledPostTargets.id, row.id), claimable(now, anyTime)))
        .returning({ id: scheduledPostTargets.id })
        .all();
      if (updated.length !== 1) continue;
      claims.push({ targetId: row.id, leaseToken, outcomeUnknown: row.sendStartedAt !== null });
      posts.add(row.postId);
    }
    // In id order: on PostgreSQL each refresh locks its post row, and writers taking several take them in one order.
    for (const postId of [...posts].sort()) await refreshPostStatus(tx, postId, now);
    return claims;
  });
}

/** The fence: the target row still carries our lease token. */
function fenced(claim: Claim) {
  return and(eq(scheduledPostTargets.id, claim.targetId), eq(scheduledPostTargets.leaseToken, claim.leaseToken));
}

/** A fenced write; answers false when the lease was lost (someone else owns the target now). */
async function fencedUpdate(deps: Pick<Deps, "store">, claim: Claim, values: Partial<typeof scheduledPostTargets.$inferInsert>): Promise<boolean> {
  const rows = await deps.store.write((tx) =>
    tx.update(scheduledPostTargets).set(values).where(fenced(claim)).returning({ id: scheduledPostTargets.id }).all(),
  );
  return rows.length === 1;
}

/**
 * Records a successful delivery (fenced) and the post's new status, in one transaction, and counts a publication.
 * `scheduledTime` is given when this service sent the post itself (its lateness is then observed).
 */
async function recordSuccess(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  result: DeliveryResult,
  scheduledTime?: number,
): Promise<boolean> {
  const now = deps.clock.now();
  const written = await deps.store.write(async (tx) => {
    const base = { leaseToken: null, leaseExpiresAt: null, sendStartedAt: null, nextAttemptAt: null, errorMessage: null, updatedAt: now };
    const values =
      result.kind === "published"
        ? { ...base, status: "published" as const, providerPostId: result.providerPostId, publishedUrl: result.publishedUrl, publishedAt: now }
        : { ...base, status: "scheduled" as const, providerPostId: result.providerPostId, heldByProvider: true };
    const rows = await tx.update(scheduledPostTargets).set(values).where(fenced(claim)).returning({ platform: scheduledPostTargets.platform }).all();
    if (rows.length === 1) await refreshPostStatus(tx, postId, now);
    return rows[0] ?? null;
  });
  // A hand-over (the provider holds the post) is not an outcome yet: the confirmation job counts it when it went out.
  if (written && result.kind === "published") {
    const lateness = scheduledTime === undefined ? undefined : { scheduledTime, publishedAt: now };
    recordDeliveryOutcome(deps, written.platform, DELIVERY_OUTCOME.published, lateness);
  }
  return written !== null;
}

/** The wait after the n-th failed attempt. */
export function backoffAfter(attempts: number): number {
  return BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length) - 1] ?? BACKOFF_MS[0];
}

/** Records a failed attempt (fenced): retry later with backoff, or fail for good with the platform's message. */
async function recordFailure(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  attemptsSoFar: number,
  error: DeliveryError,
): Promise<void> {
  const now = deps.clock.now();
  const attempts = attemptsSoFar + 1;
  const final = error.kind === "permanent" || attempts >= MAX_ATTEMPTS;
  const message = error.kind === "permanent" || attempts < MAX_ATTEMPTS ? error.message : `Gave up after ${attempts} attempts: ${error.message}`;
  const written = await deps.store.write(async (tx) => {
    const values = final
      ? { status: "failed" as const, errorMessage: message, nextAttemptAt: null, sendStartedAt: null }
      : {
          status: "scheduled" as const,
          errorMessage: message,
          nextAttemptAt: now + backoffAfter(attempts),
        };
    const ok = await tx
      .update(scheduledPostTargets)
      .set({ ...values, attempts, leaseToken: null, leaseExpiresAt: null, updatedAt: now })
      .where(fenced(claim))
      .returning({ platform: scheduledPostTargets.platform })
      .all();
    if (ok.length === 1) await refreshPostStatus(tx, postId, now);
    return ok[0] ?? null;
  });
  if (written) recordDeliveryOutcome(deps, written.platform, final ? DELIVERY_OUTCOME.failed : DELIVERY_OUTCOME.retry);
}

type TargetRow = typeof scheduledPostTargets.$inferSelect;
type PostRow = typeof scheduledPosts.$inferSelect;

/** Builds the delivery context of a claimed target (fenced provider-id writes). Throws DeliveryError. */
async function buildContext(deps: Deps, claim: Claim, target: TargetRow, post: PostRow): Promise<{ ctx: DeliveryContext; platform: ConnectionRow["platform"] }> {
  const row = target.connectionId ? await deps.store.db.select().from(connections).where(eq(connections.id, target.connectionId)).get() : undefined;
  if (!row) throw new DeliveryError("permanent", `The connection ${target.label} was removed from this account.`);
  const connection = openConnection(deps, row);
  const ctx: DeliveryContext = {
    deps,
    connection,
    targetId: target.id,
    content: await loadDeliveryContent(deps, post),
    saveProviderPostId: async (id) => {
      if (!(await fencedUpdate(deps, claim, { providerPostId: id, updatedAt: deps.clock.now() }))) {
        throw new DeliveryError("unknown", "The delivery lease was lost.");
      }
    },
    saveSession: (session) => saveConnectionSession(deps, connection.id, session),
  };
  return { ctx, platform: row.platform };
}

async function loadClaimed(deps: Pick<Deps, "store">, claim: Claim): Promise<{ target: TargetRow; post: PostRow } | null> {
  const target = await deps.store.db.select().from(scheduledPostTargets).where(fenced(claim)).get();
  if (!target) return null;
  const post = await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, target.postId)).get();
  return post ? { target, post } : null;
}

/**
 * Delivers one claimed target: reconcile first when the last outcome is unknown, then send, then record — every
 * write fenced by the claim's lease token. Never throws: failures are recorded on the target.
 */
export async function deliverClaim(deps: Deps, claim: Claim): Promise<void> {
  const loaded = await loadClaimed(deps, claim);
  if (!loaded) return; // lease lost, or the post was cancelled meanwhile
  const { target, post } = loaded;
  try {
    const { ctx, platform } = await buildContext(deps, claim, target, post);
    const connector = connectorFor(platform);
    let result: DeliveryResult | null = null;
    if (claim.outcomeUnknown) result = await connector.reconcile(ctx);
    if (result === null) {
      // Mark the send as started (fenced) before anything leaves: a crash from here on is an unknown outcome.
      if (!(await fencedUpdate(deps, claim, { sendStartedAt: deps.clock.now(), updatedAt: deps.clock.now() }))) return;
      result = await connector.deliver(ctx);
    }
    if (!(await recordSuccess(deps, claim, post.id, result, post.scheduledTime))) {
      deps.log.warn("delivery lease lost before its outcome was recorded", { targetId: target.id });
    }
  } catch (error) {
    const failure =
      error instanceof DeliveryError ? error : new DeliveryError("unknown", `Unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    if (failure.kind === "auth" && target.connectionId) await markConnectionBlocked(deps, target.connectionId, failure.message);
    deps.log.warn("delivery failed", { targetId: target.id, platform: target.platform, kind: failure.kind, message: failure.message });
    await recordFailure(deps, claim, post.id, target.attempts, failure);
  }
}

/**
 * For cancel: asks the provider whether a claimed target's unknown earlier attempt took effect. Answers the result
 * (not recorded: the caller decides), or null when nothing reached the provider. Throws DeliveryError.
 */
export async function reconcileClaim(deps: Deps, claim: Claim): Promise<{ result: DeliveryResult | null; provesAbsence: boolean }> {
  const loaded = await loadClaimed(deps, claim);
  if (!loaded) throw new DeliveryError("transient", "The delivery lease was lost.");
  const { ctx, platform } = await buildContext(deps, claim, loaded.target, loaded.post);
  const connector = connectorFor(platform);
  return { result: await connector.reconcile(ctx), provesAbsence: connector.reconcileProvesAbsence };
}

/** Records a claimed target as published (fenced), e.g. when cancel learns the provider already published it. */
export function recordPublishedClaim(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  providerPostId: string,
  publishedUrl: string | null,
): Promise<boolean> {
  return recordSuccess(deps, claim, postId, { kind: "published", providerPostId, publishedUrl });
}

/** Gives a claim back untouched (fenced): the target is pending again, as before the claim. */
export async function releaseClaim(deps: Pick<Deps, "store" | "clock">, claim: Claim, postId: string): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    const ok = await tx
      .update(scheduledPostTargets)
      .set({ status: "scheduled", leaseToken: null, leaseExpiresAt: null, updatedAt: now })
      .where(fenced(claim))
      .returning({ id: scheduledPostTargets.id })
      .all();
    if (ok.length === 1) await refreshPostStatus(tx, postId, now);
  });
}

/** Saves a provider post id on a claimed target (fenced). */
export function saveClaimProviderPostId(deps: Pick<Deps, "store" | "clock">, claim: Claim, providerPostId: string): Promise<boolean> {
  return fencedUpdate(deps, claim, { providerPostId, heldByProvider: true, updatedAt: deps.clock.now() });
}

/**
 * Withdraws a claimed target (fenced): it will never be delivered (a provider-held one was deleted there first).
 * Counted as a `withdrawn` delivery. Answers false when the lease was lost.
 */
export async function withdrawClaim(deps: Pick<Deps, "store" | "clock" | "metrics">, claim: Claim): Promise<boolean> {
  const now = deps.clock.now();
  const rows = await deps.store.write((tx) =>
    tx
      .update(scheduledPostTargets)
      .set({ status: "withdrawn", withdrawnAt: now, nextAttemptAt: null, leaseToken: null, leaseExpiresAt: null, sendStartedAt: null, updatedAt: now })
      .where(fenced(claim))
      .returning({ platform: scheduledPostTargets.platform })
      .all(),
  );
  if (rows[0]) recordDeliveryOutcome(deps, rows[0].platform, DELIVERY_OUTCOME.withdrawn);
  return rows.length === 1;
}

/** Claims and delivers every due target (in batches of `concurrency`), awaiting all. For jobs and tests. */
export async function runDueOnce(deps: Deps, opts: Partial<DispatcherOptions> = {}, onlyIds?: readonly string[]): Promise<number> {
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  let delivered = 0;
  for (;;) {
    const claims = await claimDueTargets(deps, concurrency, leaseMs, onlyIds);
    if (claims.length === 0) return delivered;
    await Promise.all(claims.map((c) => deliverClaim(deps, c)));
    delivered += claims.length;
    if (onlyIds) return delivered;
  }
}

/** When the next target becomes claimable (its due time or its lease expiry), or null when nothing is pending. */
export async function nextWakeAt(deps: Pick<Deps, "store">): Promise<number | null> {
  const row = await deps.store.db
    .select({ at: minOf(greaterOf(scheduledPostTargets.nextAttemptAt, sql`coalesce(${scheduledPostTargets.leaseExpiresAt}, 0)`)) })
    .from(scheduledPostTargets)
    .where(and(inArray(scheduledPostTargets.status, PENDING), isNotNull(scheduledPostTargets.nextAttemptAt), accountActive()))
    .get();
  return row?.at ?? null;
}

export interface RunningDispatcher {
  /** Looks for due work now (e.g. after scheduling). */
  wake(): void;
  /** Stops claiming and waits for every delivery in flight to be recorded. */
  stop(): Promise<void>;
  /** Deliveries in flight right now. */
  inFlight(): number;
}

/**
 * Runs the dispatcher continuously: keeps up to `concurrency` deliveries in flight (due post targets first, then
 * event webhook deliveries, event-delivery.ts), sleeps until the next due time (at most `pollMs`) when idle. Inside
 * `seedcast serve` only.
 */
export function startDispatcher(deps: Deps, options: DispatcherOptions): RunningDispatcher {
  const inFlight = new Set<Promise<void>>();
  // Event webhook deliveries never take more than half the slots, so a post that comes due while a slow event receiver
  // holds deliveries open still finds a free slot at once.
  const eventSlots = Math.max(1, Math.floor(options.concurrency / 2));
  let eventsInFlight = 0;
  let running = true;
  let wakeUp: (() => void) | null = null;
  // A wake that comes while the loop is not asleep (it awaits the database between sleeps) is kept for the next sleep.
  let woken = false;
  const wake = (): void => {
    const resolve = wakeUp;
    wakeUp = null;
    if (resolve) resolve();
    else woken = true;
  };
  const sleep = (ms: number): Promise<void> => {
    if (woken) {
      woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  };

  const start = (run: () => Promise<void>): void => {
    const p: Promise<void> = run()
      .catch((error) => deps.log.error("delivery crashed", { error: (error as Error).message }))
      .finally(() => {
        inFlight.delete(p);
        wake();
      });
    inFlight.add(p);
  };
  // Passes in a row whose database work failed (the database unreachable): the loop backs off and keeps going, so
  // deliveries resume by themselves once it answers again.
  let failures = 0;

  const loop = (async () => {
    while (running) {
      // This pass looks for work anyway: only wakes from here on matter.
      woken = false;
      const free = options.concurrency - inFlight.size;
      let claimed = 0;
      let failed = false;
      if (free > 0) {
        try {
          // Posts first: event webhook deliveries only take the slots no due post needs.
          const claims = await claimDueTargets(deps, free, options.leaseMs);
          // Counted as a full batch (look again at once) only when posts filled every free slot.
          claimed = claims.length === free ? free : claims.length;
          for (const c of claims) start(() => deliverClaim(deps, c));
          const events = await claimDueEvents(deps, Math.min(free - claims.length, eventSlots - eventsInFlight), options.leaseMs);
          eventsInFlight += events.length;
          for (const c of events) start(() => deliverEvent(deps, c).finally(() => (eventsInFlight -= 1)));
        } catch (error) {
          failed = true;
          deps.log.error("dispatch claim failed", { error: (error as Error).message });
        }
      }
      if (!running) break;
      if (!failed && free > 0 && claimed === free) {
        failures = 0;
        continue; // more may be due right now
      }
      let wait = options.pollMs;
      if (!failed && inFlight.size < options.concurrency) {
        try {
          // With every event slot taken, a finishing event delivery wakes the loop; due events are no reason to poll.
          const eventWake = eventsInFlight < eventSlots ? await nextEventWakeAt(deps) : null;
          for (const next of [await nextWakeAt(deps), eventWake]) {
            if (next !== null) wait = Math.max(0, Math.min(wait, next - deps.clock.now()));
          }
        } catch (error) {
          failed = true;
          deps.log.error("dispatch wake-up query failed", { error: (error as Error).message });
        }
      }
      if (failed) {
        failures += 1;
        wait = Math.min(options.pollMs * 2 ** Math.min(failures - 1, 10), Math.max(options.pollMs, MAX_FAILURE_BACKOFF_MS));
        // A delivery finishing meanwhile is no reason to hammer a database that just failed.
        woken = false;
      } else {
        failures = 0;
      }
      if (!running) break;
      await sleep(Math.max(wait, MIN_IDLE_SLEEP_MS));
    }
  })();

  return {
    wake,
    inFlight: () => inFlight.size,
    async stop() {
      running = false;
      wake();
      await loop;
      await Promise.all([...inFlight]);
    },
  };
}

