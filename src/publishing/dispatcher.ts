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
 * - The provider's post id is saved the moment it is known. A post in several parts (a thread, a first comment) goes
 *   out part by part; each part's provider id is saved (fenced, `parts_out`) before the next leaves, so a retry or a
 *   recovery resumes at the first part not out, and a target that fails midway says how many parts went out.
 * - Transient failures retry with backoff; the 5th failed attempt fails the target with the platform's message.
 *   A crash is not an attempt: it is reconciled instead.
 *
 * Work is done per batch, not per delivery (issue 22: the per-delivery transactions and reads halved the drain rate):
 * one claim stamps the whole batch; its targets, posts and connections are read in one query each, each connection
 * is unsealed once and each post's content loaded once for all its targets; `send_started_at` is stamped for the whole
 * batch in one fenced statement before any of its requests leaves; and successful outcomes are recorded in coalesced
 * transactions (src/db/coalescing-writer.ts): the outcomes that arrive while one transaction commits share the next.
 */
import { type SQL, and, asc, eq, inArray, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { type CoalescingWriter, coalescingWriter } from "../db/coalescing-writer";
import { DISPATCH_DEFAULTS, type DispatchConfig } from "../config";
import { forUpdateSkipLocked, greaterOf, minOf } from "../db/portable-sql";
import { accounts, connections, scheduledPosts, scheduledPostTargets } from "../db/tables";
import type { StoreDb } from "../db/store";
import type { Deps } from "../deps";
import { newId } from "../lib/ids";
import { type ConnectionRow, type OpenConnection, markConnectionBlocked, saveConnectionSession } from "../store/connections";
import type { DeliveryContent, DeliveryContext, DeliveryResult } from "./connector";
import { DeliveryError, partsOf, partsOutNote } from "./connector";
import { loadDeliveryContent } from "./content";
import { DELIVERY_OUTCOME, recordDeliveryOutcome } from "./delivery-metrics";
import { claimDueEvents, deliverEvent, nextEventWakeAt } from "./event-delivery";
import { markPostsPublishing, refreshPostStatus, refreshPostStatuses } from "./post-status";
import { connectorFor } from "./registry";
import { connectionForDelivery } from "./sign-in/refresh";

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
 * fresh leases, in one write transaction (its body awaits only the database). The claims come in claim order: earliest
 * due first, ties in insertion order. One lease token is stamped on the whole batch: the fence is the pair (target
 * id, token), and a target taken over later gets a token of its own.
 */
export async function claimDueTargets(
  deps: Pick<Deps, "store" | "clock">,
  limit: number,
  leaseMs: number,
  onlyIds?: readonly string[],
  anyTime = false,
): Promise<Claim[]> {
  if (limit <= 0 || onlyIds?.length === 0) return [];
  return deps.store.write(async (tx) => {
    // Read once the writer is ours: the leases run from the moment they are stamped.
    const now = deps.clock.now();
    let where = onlyIds ? and(claimable(now, anyTime), inArray(scheduledPostTargets.id, [...onlyIds])) : claimable(now);
    if (!onlyIds) {
      // The due time of the limit-th claimable target: the index (status, next_attempt_at) finds it reading `limit`
      // entries, while the tie-break order below would otherwise sort every due target of a backlog on every claim.
      // PostgreSQL: counting only rows no other claimer holds (their locks skipped; the rows counted are locked, as
      // the select below would lock them), so replicas claiming at once each find a cutoff past the others' rows.
      const cutoff = await forUpdateSkipLocked(
        deps.store.dialect,
        tx
          .select({ at: scheduledPostTargets.nextAttemptAt })
          .from(scheduledPostTargets)
          .where(where)
          .orderBy(asc(scheduledPostTargets.nextAttemptAt))
          .limit(1)
          .offset(limit - 1),
      ).get();
      if (cutoff?.at != null) where = and(where, lte(scheduledPostTargets.nextAttemptAt, cutoff.at));
    }
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
    if (due.length === 0) return [];
    const leaseToken = newId();
    const updated = await tx
      .update(scheduledPostTargets)
      .set({ status: "publishing", leaseToken, leaseExpiresAt: now + leaseMs, updatedAt: now })
      .where(and(inArray(scheduledPostTargets.id, due.map((row) => row.id)), claimable(now, anyTime)))
      .returning({ id: scheduledPostTargets.id })
      .all();
    const stamped = new Set(updated.map((row) => row.id));
    const claimed = due.filter((row) => stamped.has(row.id));
    // A claimed target is publishing, so its post is too (what refreshPostStatus would derive, with nothing to read).
    await markPostsPublishing(tx, claimed.map((row) => row.postId), now);
    return claimed.map((row) => ({ targetId: row.id, leaseToken, outcomeUnknown: row.sendStartedAt !== null }));
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

/** A successful delivery to record. `scheduledTime` is given when this service sent the post itself. */
interface Success {
  claim: Claim;
  postId: string;
  result: DeliveryResult;
  scheduledTime?: number;
}

/** What a recorded success wrote: the target's platform and the time recorded as its publication. */
interface Written {
  platform: string;
  at: number;
}

/** `CASE id WHEN <target id> THEN <value> … END`: one statement sets each target of a group its own value. */
function perTarget(items: readonly Success[], value: (item: Success) => string | null): SQL {
  return sql`(CASE ${scheduledPostTargets.id} ${sql.join(
    items.map((i) => sql`WHEN ${i.claim.targetId} THEN ${value(i)}`),
    sql` `,
  )} END)`;
}

/**
 * Writes successes (fenced) and their posts' new statuses inside `tx`: one UPDATE per lease token and kind of result
 * (the fence is `id IN (…) AND lease_token = <token>`), one refresh for all the posts. Answers, per item, what was
 * written, or null when its lease was lost.
 */
async function writeSuccesses(tx: StoreDb, now: number, items: readonly Success[]): Promise<(Written | null)[]> {
  const base = { leaseToken: null, leaseExpiresAt: null, sendStartedAt: null, nextAttemptAt: null, errorMessage: null, updatedAt: now };
  const groups = new Map<string, Success[]>();
  for (const item of items) {
    const key = `${item.result.kind}\u0000${item.claim.leaseToken}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  const platformOf = new Map<string, string>();
  for (const group of groups.values()) {
    const first = group[0];
    if (!first) continue;
    const providerPostId = perTarget(group, (i) => i.result.providerPostId);
    const values =
      first.result.kind === "published"
        ? {
            ...base,
            status: "published" as const,
            providerPostId,
            publishedUrl: perTarget(group, (i) => (i.result.kind === "published" ? i.result.publishedUrl : null)),
            publishedAt: now,
          }
        : { ...base, status: "scheduled" as const, providerPostId, heldByProvider: true };
    const rows = await tx
      .update(scheduledPostTargets)
      .set(values)
      .where(and(inArray(scheduledPostTargets.id, group.map((i) => i.claim.targetId)), eq(scheduledPostTargets.leaseToken, first.claim.leaseToken)))
      .returning({ id: scheduledPostTargets.id, platform: scheduledPostTargets.platform })
      .all();
    for (const row of rows) platformOf.set(row.id, row.platform);
  }
  const written = items.map((i) => {
    const platform = platformOf.get(i.claim.targetId);
    return platform === undefined ? null : { platform, at: now };
  });
  await refreshPostStatuses(tx, items.filter((i) => platformOf.has(i.claim.targetId)).map((i) => i.postId), now);
  return written;
}

/** Records the successes a dispatcher's deliveries report, many per transaction (src/db/coalescing-writer.ts). */
export type OutcomeWriter = CoalescingWriter<Success, Written | null>;

/** A new OutcomeWriter over `deps.store`: one per running dispatcher (or per runDueOnce). */
export function outcomeWriter(deps: Pick<Deps, "store" | "clock">): OutcomeWriter {
  // The time is read once the writer is ours, as a single write would.
  return coalescingWriter(deps.store, (tx, items) => writeSuccesses(tx, deps.clock.now(), items));
}

/**
 * Records a successful delivery (fenced) and the post's new status, in one transaction (shared with other outcomes
 * when `writer` is given), and counts a publication. `scheduledTime` is given when this service sent the post itself
 * (its lateness is then observed).
 */
async function recordSuccess(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  result: DeliveryResult,
  scheduledTime?: number,
  writer?: OutcomeWriter,
): Promise<boolean> {
  const item: Success = { claim, postId, result, scheduledTime };
  const written = writer ? await writer.submit(item) : ((await deps.store.write((tx) => writeSuccesses(tx, deps.clock.now(), [item])))[0] ?? null);
  // A hand-over (the provider holds the post) is not an outcome yet: the confirmation job counts it when it went out.
  if (written && result.kind === "published") {
    const lateness = scheduledTime === undefined ? undefined : { scheduledTime, publishedAt: written.at };
    recordDeliveryOutcome(deps, written.platform, DELIVERY_OUTCOME.published, lateness);
  }
  return written !== null;
}

/** The wait after the n-th failed attempt. */
export function backoffAfter(attempts: number): number {
  return BACKOFF_MS[Math.min(attempts, BACKOFF_MS.length) - 1] ?? BACKOFF_MS[0];
}

/** How far a delivery in several parts went: parts out, of how many. */
interface Progress {
  out: number;
  total: number;
}

/** The progress of a delivery whose connector records its parts (null when none is out: nothing to say). */
function progressOf(ctx: DeliveryContext): Progress | null {
  return ctx.partsOut.length > 0 ? { out: ctx.partsOut.length, total: partsOf(ctx.content).length } : null;
}

/**
 * Records a failed attempt (fenced): retry later with backoff, or fail for good with the platform's message, which
 * says how many parts went out when the post went out in part (`progress`: "2 of 5 parts went out: …").
 */
async function recordFailure(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  attemptsSoFar: number,
  error: DeliveryError,
  progress: Progress | null = null,
): Promise<void> {
  const now = deps.clock.now();
  const attempts = attemptsSoFar + 1;
  const final = error.kind === "permanent" || attempts >= MAX_ATTEMPTS;
  const platformMessage = error.kind === "permanent" || attempts < MAX_ATTEMPTS ? error.message : `Gave up after ${attempts} attempts: ${error.message}`;
  const message = progress && progress.out < progress.total ? `${partsOutNote(progress.out, progress.total)}: ${platformMessage}` : platformMessage;
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

/**
 * Records a target whose outcome nobody can tell as `unconfirmed` (fenced; decisions.md §12): it is never resent on
 * its own, and its message says so and what to do. Counted as a delivery outcome of its own.
 */
async function recordUnconfirmed(
  deps: Pick<Deps, "store" | "clock" | "metrics">,
  claim: Claim,
  postId: string,
  network: string,
  partsOut: number,
  parts: number,
  detail: string,
): Promise<void> {
  const now = deps.clock.now();
  const written = await deps.store.write(async (tx) => {
    const rows = await tx
      .update(scheduledPostTargets)
      .set({
        status: "unconfirmed",
        errorMessage: unconfirmedMessage(network, partsOut, parts, detail),
        nextAttemptAt: null,
        leaseToken: null,
        leaseExpiresAt: null,
        sendStartedAt: null,
        updatedAt: now,
      })
      .where(fenced(claim))
      .returning({ platform: scheduledPostTargets.platform })
      .all();
    if (rows.length === 1) await refreshPostStatus(tx, postId, now);
    return rows[0] ?? null;
  });
  if (written) recordDeliveryOutcome(deps, written.platform, DELIVERY_OUTCOME.unconfirmed);
}

/** The errorMessage of an unconfirmed target: what is unknown, what went out, and what a person does about it. */
export function unconfirmedMessage(network: string, partsOut: number, parts: number, detail: string): string {
  const progress =
    parts <= 1
      ? ""
      : partsOut === 0
        ? ` None of its ${parts} messages was confirmed; the first may or may not have gone out.`
        : ` ${partsOut} of ${parts} messages were confirmed; message ${partsOut + 1} may or may not have gone out.`;
  return (
    `${network} did not confirm whether this went out (${detail.replace(/[.\s]+$/, "")}), and it cannot be asked.${progress} ` +
    `It is not sent again on its own: look at ${network}, then answer "It was posted" or "Send again".`
  );
}

type TargetRow = typeof scheduledPostTargets.$inferSelect;
type PostRow = typeof scheduledPosts.$inferSelect;

/** A claimed target ready to go: its rows, and its delivery context or why it cannot have one. */
interface Prepared {
  target: TargetRow;
  post: PostRow;
  /** The context, or what building it threw (recorded as the attempt's failure). */
  context: { ctx: DeliveryContext; platform: ConnectionRow["platform"] } | { problem: unknown };
  /** `send_started_at` was stamped by the batch (claims whose earlier outcome is unknown reconcile first instead). */
  started: boolean;
}

/** The delivery context of a claimed target (fenced provider-id writes). */
function contextFor(deps: Deps, claim: Claim, target: TargetRow, connection: OpenConnection, content: DeliveryContent): DeliveryContext {
  // The parts out so far: a retry or a recovery resumes after them (savePartOut grows the list as parts go out).
  const partsOut = [...target.partsOut];
  return {
    deps,
    connection,
    targetId: target.id,
    content,
    partsOut,
    recordedProviderId: target.providerPostId ?? null,
    saveProviderPostId: async (id) => {
      if (!(await fencedUpdate(deps, claim, { providerPostId: id, updatedAt: deps.clock.now() }))) {
        throw new DeliveryError("unknown", "The delivery lease was lost.");
      }
    },
    savePartOut: async (index, providerId) => {
      if (index < partsOut.length && partsOut[index] === providerId) return;
      if (index !== partsOut.length) throw new Error(`Part ${index} cannot be recorded before part ${partsOut.length}.`);
      const next = [...partsOut, providerId];
      const values = { partsOut: next, updatedAt: deps.clock.now(), ...(index === 0 ? { providerPostId: providerId } : {}) };
      if (!(await fencedUpdate(deps, claim, values))) throw new DeliveryError("unknown", "The delivery lease was lost.");
      partsOut.push(providerId);
    },
    saveSession: (session) => saveConnectionSession(deps, connection.id, session),
  };
}

/**
 * Loads a batch of claims: the targets still carrying their claim's token (one query), their posts (one query), their
 * connections (one query, each unsealed once), each post's content (loaded once for all its targets). With `stamp`,
 * then stamps `send_started_at` on every target ready to send (and not due for reconciliation) in one fenced write.
 * Answers by target id; a claim whose lease was lost (or whose post is gone) is absent.
 */
async function prepareBatch(deps: Deps, claims: readonly Claim[], stamp: boolean): Promise<Map<string, Prepared>> {
  const prepared = new Map<string, Prepared>();
  const claimOf = new Map(claims.map((c) => [c.targetId, c]));
  if (claimOf.size === 0) return prepared;
  const targets = (await deps.store.db.select().from(scheduledPostTargets).where(inArray(scheduledPostTargets.id, [...claimOf.keys()])).all()).filter(
    (t) => t.leaseToken !== null && t.leaseToken === claimOf.get(t.id)?.leaseToken,
  );
  if (targets.length === 0) return prepared;
  const postIds = [...new Set(targets.map((t) => t.postId))];
  const posts = new Map((await deps.store.db.select().from(scheduledPosts).where(inArray(scheduledPosts.id, postIds)).all()).map((p) => [p.id, p]));
  const connectionIds = [...new Set(targets.flatMap((t) => (t.connectionId ? [t.connectionId] : [])))];
  const connectionRows = new Map(
    connectionIds.length === 0
      ? []
      : (await deps.store.db.select().from(connections).where(inArray(connections.id, connectionIds)).all()).map((row) => [row.id, row]),
  );
  const opened = new Map<string, Promise<OpenConnection>>();
  const contents = new Map<string, Promise<DeliveryContent>>();
  const build = async (claim: Claim, target: TargetRow, post: PostRow): Promise<Prepared["context"]> => {
    try {
      const row = target.connectionId ? connectionRows.get(target.connectionId) : undefined;
      if (!row) throw new DeliveryError("permanent", `The connection ${target.label} was removed from this account.`);
      let connection = opened.get(row.id);
      if (!connection) {
        // A token with under 5 minutes left is refreshed first (sign-in/refresh.ts), once per connection.
        connection = connectionForDelivery(deps, row);
        opened.set(row.id, connection);
      }
      // Targets of one post on one network send the same content (its version): loaded once.
      const contentKey = `${post.id}\u0000${row.platform}`;
      let content = contents.get(contentKey);
      if (!content) {
        content = loadDeliveryContent(deps, post, row.platform);
        contents.set(contentKey, content);
      }
      return { ctx: contextFor(deps, claim, target, await connection, await content), platform: row.platform };
    } catch (problem) {
      return { problem };
    }
  };
  // Built side by side: image reads from storage overlap (build never throws).
  await Promise.all(
    targets.map(async (target) => {
      const post = posts.get(target.postId);
      const claim = claimOf.get(target.id);
      if (!post || !claim) return;
      prepared.set(target.id, { target, post, context: await build(claim, target, post), started: false });
    }),
  );
  if (!stamp) return prepared;
  // Mark the sends as started (fenced) before anything leaves: a crash from here on is an unknown outcome.
  const ready = [...prepared.values()].filter((p) => "ctx" in p.context && !claimOf.get(p.target.id)?.outcomeUnknown);
  const byToken = new Map<string, string[]>();
  for (const p of ready) byToken.set(p.target.leaseToken ?? "", [...(byToken.get(p.target.leaseToken ?? "") ?? []), p.target.id]);
  if (byToken.size === 0) return prepared;
  const startedIds = await deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const ids: string[] = [];
    for (const [leaseToken, targetIds] of byToken) {
      const rows = await tx
        .update(scheduledPostTargets)
        .set({ sendStartedAt: now, updatedAt: now })
        .where(and(inArray(scheduledPostTargets.id, targetIds), eq(scheduledPostTargets.leaseToken, leaseToken)))
        .returning({ id: scheduledPostTargets.id })
        .all();
      ids.push(...rows.map((r) => r.id));
    }
    return ids;
  });
  for (const id of startedIds) {
    const p = prepared.get(id);
    if (p) p.started = true;
  }
  return prepared;
}

/**
 * Delivers one prepared claim: reconcile first when the last outcome is unknown, then send, then record — every
 * write fenced by the claim's lease token. Never throws for a delivery failure: failures are recorded on the target.
 */
async function deliverPrepared(deps: Deps, claim: Claim, prepared: Prepared | undefined, writer: OutcomeWriter): Promise<void> {
  if (!prepared) return; // lease lost, or the post was cancelled meanwhile
  const { target, post, context } = prepared;
  try {
    if ("problem" in context) throw context.problem;
    const { ctx, platform } = context;
    const connector = connectorFor(platform);
    let result: DeliveryResult | null = null;
    if (claim.outcomeUnknown && connector.recovery === "unconfirmed") {
      // The last attempt may have gone out and the network cannot be asked: a person decides, never a blind resend.
      await recordUnconfirmed(deps, claim, post.id, connector.capabilities(ctx.connection).name, ctx.partsOut.length, partsOf(ctx.content).length, "the delivery was interrupted before an answer was recorded");
      return;
    }
    if (claim.outcomeUnknown) {
      result = await connector.reconcile(ctx);
      if (result === null) {
        // Nothing landed: mark the send as started (fenced) before it leaves again, as the batch stamp does.
        if (!(await fencedUpdate(deps, claim, { sendStartedAt: deps.clock.now(), updatedAt: deps.clock.now() }))) return;
        result = await connector.deliver(ctx);
      }
    } else {
      if (!prepared.started) return; // the lease was lost before the send could be marked
      result = await connector.deliver(ctx);
    }
    if (!(await recordSuccess(deps, claim, post.id, result, post.scheduledTime, writer))) {
      deps.log.warn("delivery lease lost before its outcome was recorded", { targetId: target.id });
    }
  } catch (error) {
    const failure =
      error instanceof DeliveryError ? error : new DeliveryError("unknown", `Unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    if (failure.kind === "auth" && target.connectionId) await markConnectionBlocked(deps, target.connectionId, failure.message);
    deps.log.warn("delivery failed", { targetId: target.id, platform: target.platform, kind: failure.kind, message: failure.message });
    const connector = "ctx" in context ? connectorFor(context.platform) : null;
    if (failure.kind === "unknown" && connector?.recovery === "unconfirmed" && "ctx" in context) {
      const { ctx } = context;
      await recordUnconfirmed(deps, claim, post.id, connector.capabilities(ctx.connection).name, ctx.partsOut.length, partsOf(ctx.content).length, failure.message);
      return;
    }
    await recordFailure(deps, claim, post.id, target.attempts, failure, "ctx" in context ? progressOf(context.ctx) : null);
  }
}

/**
 * Delivers a batch of claims (prepareBatch, then every send at once, outcomes through `writer`). Answers one promise
 * per claim, in order, settled once that claim's outcome is recorded.
 */
export function deliverBatch(deps: Deps, claims: readonly Claim[], writer: OutcomeWriter = outcomeWriter(deps)): Promise<void>[] {
  const prepared = prepareBatch(deps, claims, true);
  return claims.map((claim) => prepared.then((batch) => deliverPrepared(deps, claim, batch.get(claim.targetId), writer)));
}

/** Delivers one claimed target (deliverBatch of one). Never throws for a delivery failure: it is recorded. */
export async function deliverClaim(deps: Deps, claim: Claim): Promise<void> {
  await Promise.all(deliverBatch(deps, [claim]));
}

/**
 * For cancel: asks the provider whether a claimed target's unknown earlier attempt took effect. Answers the result
 * (not recorded: the caller decides; parts found out are recorded), or null when not every part is out; `provesAbsence`
 * when nothing reached the provider. Throws DeliveryError.
 */
export async function reconcileClaim(deps: Deps, claim: Claim): Promise<{ result: DeliveryResult | null; provesAbsence: boolean }> {
  const prepared = (await prepareBatch(deps, [claim], false)).get(claim.targetId);
  if (!prepared) throw new DeliveryError("transient", "The delivery lease was lost.");
  if ("problem" in prepared.context) throw prepared.context.problem;
  const connector = connectorFor(prepared.context.platform);
  const { ctx } = prepared.context;
  const result = await connector.reconcile(ctx);
  // A post some of whose parts are out is not absent, whatever its connector can prove about the rest.
  return { result, provesAbsence: connector.reconcileProvesAbsence && ctx.partsOut.length === 0 };
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
  const writer = outcomeWriter(deps);
  let delivered = 0;
  for (;;) {
    const claims = await claimDueTargets(deps, concurrency, leaseMs, onlyIds);
    if (claims.length === 0) return delivered;
    await Promise.all(deliverBatch(deps, claims, writer));
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
  // Outcomes of every batch in flight share transactions.
  const writer = outcomeWriter(deps);
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
          const deliveries = deliverBatch(deps, claims, writer);
          for (const d of deliveries) start(() => d);
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
      if (!failed && claimed > 0) {
        // Posts came due this pass: more are likely due within moments (a backlog being worked off, a minute's posts
        // coming due one after another). Look again after the shortest sleep rather than read the next due time, a
        // scan of every pending target (8 ms with a backlog of 10,000: issue 22). A pass that finds none reads it.
        wait = 0;
      } else if (!failed && inFlight.size < options.concurrency) {
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

