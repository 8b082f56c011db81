/**
 * Waiting for a Meta media container (Instagram, Threads) to be ready to publish: its status is looked at until
 * FINISHED, and every other end is a clear DeliveryError: ERROR with the network's words (permanent: the same media
 * would fail again), EXPIRED (transient: prepared again), still IN_PROGRESS after the limit (transient: nothing was
 * published, so a retry starts over safely).
 */
import { DeliveryError } from "../../connector";

/**
 * How polling waits: `attempts` looks, `intervalMs` apart (real time: Meta asks for gentle polling, and images are
 * usually ready within seconds). Tests shorten it.
 */
export const containerPolling = { attempts: 30, intervalMs: 2_000 };

/** A container's status as a network answers it. */
export interface LookedStatus {
  /** IN_PROGRESS, FINISHED, ERROR, EXPIRED, PUBLISHED. */
  code: string;
  /** The network's words with ERROR. */
  words: string | null;
}

/** Looks at a container (`look`) until it is FINISHED (or PUBLISHED); throws a clear DeliveryError otherwise. */
export async function awaitContainer(network: string, look: () => Promise<LookedStatus>): Promise<void> {
  let last: LookedStatus = { code: "IN_PROGRESS", words: null };
  for (let attempt = 0; attempt < containerPolling.attempts; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, containerPolling.intervalMs));
    last = await look();
    if (last.code === "FINISHED" || last.code === "PUBLISHED") return;
    if (last.code === "ERROR") throw new DeliveryError("permanent", `${network} could not prepare the post: ${last.words ?? "its container ended in ERROR"}`);
    if (last.code === "EXPIRED") throw new DeliveryError("transient", `${network} let the prepared post expire before it was published; it is prepared again.`);
  }
  const waited = Math.round(((containerPolling.attempts - 1) * containerPolling.intervalMs) / 1000);
  throw new DeliveryError("transient", `${network} was still preparing the images after ${waited} seconds (status ${last.code}); nothing was published, and it is tried again later.`);
}
