/**
 * Withdrawing pending targets, shared by cancelling a post and removing a connection: claim every pending target or
 * none, settle each claim whose last attempt has an unknown outcome, take provider-held posts back from the provider,
 * and mark the rest withdrawn. A target some of whose parts (a thread's) are out is refused unless the caller says
 * otherwise (WithdrawOptions.partlyOut): they cannot be taken back. A target that turns out to be out already is
 * recorded as published and handed to the caller's `onPublished`, which decides whether that stops everything
 * (cancel) or not (connection removal).
 */
import { eq } from "drizzle-orm";
import type { scheduledPostTargets } from "../db/schema/scheduled-posts";
import { connections, scheduledPosts } from "../db/tables";
import type { Deps } from "../deps";
import { AppError } from "../lib/errors";
import { type ConnectionRow, type OpenConnection, openConnection } from "../store/connections";
import { loadDeliveryContent } from "./content";
import {
  type Claim,
  DEFAULT_LEASE_MS,
  claimDueTargets,
  reconcileClaim,
  recordPublishedClaim,
  releaseClaim,
  saveClaimProviderPostId,
  withdrawClaim,
} from "./dispatcher";
import { connectorFor } from "./registry";

type TargetRow = typeof scheduledPostTargets.$inferSelect;

export interface WithdrawOptions {
  /** The refusal when another delivery holds one of the targets right now. */
  busy(): AppError;
  /** The refusal when a provider could not be asked or did not answer; nothing is withdrawn then. */
  failed(target: TargetRow, why: string): AppError;
  /** Called after a target was found already published (and recorded so); throw to stop everything. */
  onPublished(target: TargetRow): void;
  /**
   * A target some of whose parts (a thread's) are out: "refuse" (the default: cancel, reschedule; what is out cannot
   * be taken back, and the rest follows) or "withdraw" the rest (removing the connection: the rest can never go).
   */
  partlyOut?: "refuse" | "withdraw";
}

/**
 * Withdraws every target in `pending` (all of them, or none: any refusal releases every claim still open).
 * On return every target is `withdrawn` or `published`.
 */
export async function withdrawPendingTargets(deps: Deps, pending: readonly TargetRow[], options: WithdrawOptions): Promise<void> {
  if (pending.length === 0) return;
  const claims = await claimDueTargets(deps, pending.length, DEFAULT_LEASE_MS, pending.map((t) => t.id), true);
  const byId = new Map(pending.map((t) => [t.id, t]));
  const open = new Set(claims);
  const releaseAll = async (): Promise<void> => {
    for (const claim of open) await releaseClaim(deps, claim, byId.get(claim.targetId)?.postId ?? "");
    open.clear();
  };
  if (claims.length < pending.length) {
    await releaseAll();
    throw options.busy();
  }
  const opened = new Map<string, OpenConnection | null>();
  for (const claim of claims) {
    const target = byId.get(claim.targetId);
    if (!target) continue;
    try {
      const outcome = await withdrawOne(deps, claim, target, opened, options.partlyOut ?? "refuse");
      open.delete(claim);
      if (outcome === "published") options.onPublished(target);
    } catch (error) {
      await releaseAll();
      if (error instanceof AppError) throw error;
      throw options.failed(target, error instanceof Error ? error.message : String(error));
    }
  }
}

/** Settles and withdraws one claimed target; says whether it was withdrawn or turned out to be published. */
async function withdrawOne(
  deps: Deps,
  claim: Claim,
  target: TargetRow,
  opened: Map<string, OpenConnection | null>,
  partlyOut: "refuse" | "withdraw",
): Promise<"withdrawn" | "published"> {
  let providerPostId = target.heldByProvider ? target.providerPostId : null;
  if (!target.heldByProvider && target.partsOut.length > 0) {
    if (partlyOut === "withdraw") {
      await withdrawClaim(deps, claim);
      return "withdrawn";
    }
    // Parts of a thread are out and cannot be taken back: withdrawing the rest would leave half a thread unaccounted for.
    throw new Error(`${partsAlreadyOut(target.partsOut.length)} went out already and cannot be taken back; the rest follows.`);
  }
  if (claim.outcomeUnknown && !target.heldByProvider) {
    const { result: found, provesAbsence } = await reconcileClaim(deps, claim);
    if (found === null && !provesAbsence) {
      // The last attempt may have reached a provider that cannot be asked (a webhook): withdrawing now could leave
      // a post out there that the calendar no longer shows. Let the dispatcher settle it first.
      throw new Error("The outcome of the last delivery attempt is not known yet.");
    }
    if (found?.kind === "published") {
      await recordPublishedClaim(deps, claim, target.postId, found.providerPostId, found.publishedUrl);
      return "published";
    }
    if (found?.kind === "handed_over") {
      await saveClaimProviderPostId(deps, claim, found.providerPostId);
      providerPostId = found.providerPostId;
    }
  }
  if (providerPostId !== null) {
    const connection = await connectionFor(deps, target.connectionId, opened);
    // Without its connection there is nothing to withdraw with; the provider keeps what it has.
    if (connection) {
      const connector = connectorFor(connection.platform);
      const withdrawn = await connector.withdraw(deps, connection, providerPostId);
      const post = withdrawn ? undefined : await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, target.postId)).get();
      if (post && deps.clock.now() >= post.scheduledTime && connector.confirm) {
        // The provider no longer holds it after its time: it may have gone out; then it stays published.
        const outcome = await connector.confirm(deps, connection, providerPostId, await loadDeliveryContent(deps, post, connection.platform));
        if (outcome.state === "published") {
          await recordPublishedClaim(deps, claim, target.postId, outcome.providerPostId, outcome.publishedUrl);
          return "published";
        }
      }
    }
  }
  await withdrawClaim(deps, claim);
  return "withdrawn";
}

/** "The first part" / "The first 3 parts" of a post. */
function partsAlreadyOut(n: number): string {
  return n === 1 ? "The first part of this post" : `The first ${n} parts of this post`;
}

async function connectionFor(deps: Deps, connectionId: string | null, opened: Map<string, OpenConnection | null>): Promise<OpenConnection | null> {
  if (!connectionId) return null;
  if (!opened.has(connectionId)) {
    const row: ConnectionRow | undefined = await deps.store.db.select().from(connections).where(eq(connections.id, connectionId)).get();
    opened.set(connectionId, row ? openConnection(deps, row) : null);
  }
  return opened.get(connectionId) ?? null;
}
