/**
 * Waiting for a Meta media container (Instagram, Threads) to be ready to publish: its status is looked at until
 * FINISHED, and every other end is a clear DeliveryError: ERROR with the network's words (permanent: the same media
 * would fail again), EXPIRED (transient: prepared again), still IN_PROGRESS after the limit (transient: nothing was
 * published, so a retry starts over safely).
 *
 * The looks back off: the first at once, then 300 ms later, then doubling up to one every 2 s (docs/choices.md,
 * "walks26": image containers are usually FINISHED within a second, and Meta's "once per minute for no more than
 * 5 minutes" is written for video, which Seedcast does not send).
 *
 * All the polling of one delivery shares one budget: half the dispatcher's lease (DISPATCH_LEASE_MS), so a delivery
 * never outlives its lease while it waits (another worker would take the target over and publish it a second time).
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";

/** How waiting is measured and done; tests put a timer whose sleep moves its own time instead of sleeping. */
export interface PollingTimer {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  /** Resolves after `ms` milliseconds (of this timer's time). */
  sleep(ms: number): Promise<void>;
}

/** Real time: performance.now() and setTimeout. */
export const realPollingTimer: PollingTimer = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * How polling waits: at most `attempts` looks per container; the wait before the second look is `firstWaitMs`, each
 * later wait doubles up to `maxWaitMs`. Tests swap `timer`.
 */
export const containerPolling: { attempts: number; firstWaitMs: number; maxWaitMs: number; timer: PollingTimer } = {
  attempts: 30,
  firstWaitMs: 300,
  maxWaitMs: 2_000,
  timer: realPollingTimer,
};

/** A container's status as a network answers it. */
export interface LookedStatus {
  /** IN_PROGRESS, FINISHED, ERROR, EXPIRED, PUBLISHED. */
  code: string;
  /** The network's words with ERROR. */
  words: string | null;
}

/** The polling budget of one delivery: when its waiting must end (on containerPolling.timer's scale). */
export interface PollingBudget {
  deadline: number;
}

/** The budget of a delivery starting now: half the dispatcher's lease. */
export function pollingBudget(deps: Pick<Deps, "config">): PollingBudget {
  return { deadline: containerPolling.timer.now() + deps.config.dispatch.leaseMs / 2 };
}

/** The wait before look number `look` (1 = the second look): firstWaitMs doubled `look - 1` times, capped at maxWaitMs. */
export function waitBeforeLook(look: number): number {
  return Math.min(containerPolling.maxWaitMs, containerPolling.firstWaitMs * 2 ** (look - 1));
}

/**
 * Looks at a container (`look`) until it is FINISHED (or PUBLISHED); throws a clear DeliveryError otherwise. The
 * looks back off (waitBeforeLook); the last wait is shortened so no look falls after the budget's deadline.
 */
export async function awaitContainer(network: string, look: () => Promise<LookedStatus>, budget: PollingBudget): Promise<void> {
  const timer = containerPolling.timer;
  const started = timer.now();
  let last: LookedStatus = { code: "IN_PROGRESS", words: null };
  for (let attempt = 0; attempt < containerPolling.attempts; attempt++) {
    if (attempt > 0) {
      const wait = Math.min(waitBeforeLook(attempt), budget.deadline - timer.now());
      if (wait <= 0) break;
      await timer.sleep(wait);
    }
    last = await look();
    if (last.code === "FINISHED" || last.code === "PUBLISHED") return;
    if (last.code === "ERROR") throw new DeliveryError("permanent", `${network} could not prepare the post: ${last.words ?? "its container ended in ERROR"}`);
    if (last.code === "EXPIRED") throw new DeliveryError("transient", `${network} let the prepared post expire before it was published; it is prepared again.`);
  }
  const waited = Math.round((timer.now() - started) / 1000);
  throw new DeliveryError("transient", `${network} was still preparing the images after ${waited} seconds (status ${last.code}); nothing was published, and it is tried again later.`);
}
