/**
 * Delivery metrics, recorded where a target's outcome is written (after the fenced write succeeded, so a delivery
 * whose lease was lost is never counted twice): `seedcast_deliveries_total{platform,outcome}` and, for targets this
 * service published itself, `seedcast_dispatch_lateness_seconds{platform}`.
 */
import type { Deps } from "../deps";

/** The outcomes counted in seedcast_deliveries_total. */
export const DELIVERY_OUTCOME = {
  published: "published",
  retry: "retry",
  failed: "failed",
  withdrawn: "withdrawn",
  /** The network could not tell whether it went out; a person decides (decisions.md §12). */
  unconfirmed: "unconfirmed",
} as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOME)[keyof typeof DELIVERY_OUTCOME];

const MS_PER_SECOND = 1000;

/**
 * Counts one target outcome. `lateness` (scheduled time and the time it was published) is observed only when this
 * service sent the post itself: for a post a provider held, the time we learn of it is not when it went out.
 */
export function recordDeliveryOutcome(
  deps: Pick<Deps, "metrics">,
  platform: string,
  outcome: DeliveryOutcome,
  lateness?: { scheduledTime: number; publishedAt: number },
): void {
  deps.metrics.deliveries.inc({ platform, outcome });
  if (outcome === DELIVERY_OUTCOME.published && lateness) {
    // A post sent a little early (clock skew between claim and send) counts as on time, never negative.
    const seconds = Math.max(0, lateness.publishedAt - lateness.scheduledTime) / MS_PER_SECOND;
    deps.metrics.dispatchLateness.observe({ platform }, seconds);
  }
}
