/**
 * Waiting for a Meta media container (Instagram, Threads) to be ready to publish: its status is looked at until
 * FINISHED, and every other end is a clear DeliveryError: ERROR with the network's words (permanent: the same media
 * would fail again), EXPIRED (transient: prepared again), still IN_PROGRESS after the limit (transient: nothing was
 * published, so a retry starts over safely).
 *
 * All the polling of one delivery shares one budget: half the dispatcher's lease (DISPATCH_LEASE_MS), so a delivery
 * never outlives its lease while it waits (another worker would take the target over and publish it a second time).
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";

/**
 * How polling waits at most: `attempts` looks per container, `intervalMs` apart (real time: Meta asks for gentle
 * polling, and images are usually ready within seconds); the looks come closer when the lease is short. Tests shorten it.
 */
export const containerPolling = { attempts: 30, intervalMs: 2_000 };

/** A container's status as a network answers it. */
export interface LookedStatus {
  /** IN_PROGRESS, FINISHED, ERROR, EXPIRED, PUBLISHED. */
  code: string;
  /** The network's words with ERROR. */
  words: string | null;
}

/** The polling budget of one delivery: when its waiting must end (performance.now() time). */
export interface PollingBudget {
  deadline: number;
  intervalMs: number;
}

/** The budget of a delivery starting now: half the dispatcher's lease. */
export function pollingBudget(deps: Pick<Deps, "config">): PollingBudget {
  const budgetMs = deps.config.dispatch.leaseMs / 2;
  return { deadline: performance.now() + budgetMs, intervalMs: Math.min(containerPolling.intervalMs, budgetMs / containerPolling.attempts) };
}

/** Looks at a container (`look`) until it is FINISHED (or PUBLISHED); throws a clear DeliveryError otherwise. */
export async function awaitContainer(network: string, look: () => Promise<LookedStatus>, budget: PollingBudget): Promise<void> {
  const started = performance.now();
  let last: LookedStatus = { code: "IN_PROGRESS", words: null };
  for (let attempt = 0; attempt < containerPolling.attempts; attempt++) {
    if (attempt > 0) {
      if (performance.now() + budget.intervalMs > budget.deadline) break;
      await new Promise((resolve) => setTimeout(resolve, budget.intervalMs));
    }
    last = await look();
    if (last.code === "FINISHED" || last.code === "PUBLISHED") return;
    if (last.code === "ERROR") throw new DeliveryError("permanent", `${network} could not prepare the post: ${last.words ?? "its container ended in ERROR"}`);
    if (last.code === "EXPIRED") throw new DeliveryError("transient", `${network} let the prepared post expire before it was published; it is prepared again.`);
  }
  const waited = Math.round((performance.now() - started) / 1000);
  throw new DeliveryError("transient", `${network} was still preparing the images after ${waited} seconds (status ${last.code}); nothing was published, and it is tried again later.`);
}
