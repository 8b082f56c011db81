/**
 * Meta container polling (src/publishing/networks/meta/polling.ts) on a moved timer: the first look at once, a
 * backoff from 300 ms doubling to 2 s, the three ends (FINISHED, ERROR, still IN_PROGRESS at the limit), and a
 * short lease that shortens the last wait so no look falls after the budget.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { DeliveryError } from "../src/publishing/connector";
import { type LookedStatus, awaitContainer, containerPolling, pollingBudget } from "../src/publishing/networks/meta/polling";
import { type MovedPollingTimer, movePollingTimer, restorePollingTimer } from "./helpers/polling-timer";

let timer: MovedPollingTimer;
beforeEach(() => {
  timer = movePollingTimer();
});
afterAll(restorePollingTimer);

/** A container that answers `codes` in order, then keeps answering the last; records when it was looked at. */
function container(...codes: string[]): { look: () => Promise<LookedStatus>; lookedAt: number[] } {
  const lookedAt: number[] = [];
  return {
    lookedAt,
    look: async () => {
      lookedAt.push(timer.now());
      const code = codes[Math.min(lookedAt.length - 1, codes.length - 1)] ?? "IN_PROGRESS";
      return { code, words: code === "ERROR" ? "Error: Media upload has failed with error code 2207003" : null };
    },
  };
}

const lease = (leaseMs: number) => pollingBudget({ config: { dispatch: { leaseMs } } } as Parameters<typeof pollingBudget>[0]);

describe("container polling", () => {
  test("a container FINISHED at the first look: one look, no wait", async () => {
    const c = container("FINISHED");
    await awaitContainer("Instagram", c.look, lease(120_000));
    expect(c.lookedAt).toEqual([0]);
    expect(timer.waits).toEqual([]);
  });

  test("IN_PROGRESS twice then FINISHED: looked at 0, 300 and 900 ms", async () => {
    const c = container("IN_PROGRESS", "IN_PROGRESS", "FINISHED");
    await awaitContainer("Threads", c.look, lease(120_000));
    expect(c.lookedAt).toEqual([0, 300, 900]);
  });

  test("ERROR: a permanent DeliveryError in the network's words", async () => {
    const c = container("IN_PROGRESS", "ERROR");
    const error = await awaitContainer("Instagram", c.look, lease(120_000)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe("permanent");
    expect((error as DeliveryError).message).toBe("Instagram could not prepare the post: Error: Media upload has failed with error code 2207003");
  });

  test("still IN_PROGRESS at the look limit: a transient DeliveryError saying how long it waited", async () => {
    const c = container("IN_PROGRESS");
    const error = await awaitContainer("Instagram", c.look, lease(120_000)).catch((e: unknown) => e);
    expect(c.lookedAt).toHaveLength(containerPolling.attempts);
    expect(timer.waits.slice(0, 6)).toEqual([300, 600, 1200, 2000, 2000, 2000]);
    expect(timer.now()).toBe(300 + 600 + 1200 + 2000 * (containerPolling.attempts - 4));
    expect((error as DeliveryError).kind).toBe("transient");
    expect((error as DeliveryError).message).toBe("Instagram was still preparing the images after 54 seconds (status IN_PROGRESS); nothing was published, and it is tried again later.");
  });

  test("a short lease: the waits stop at half of it, the last one shortened to end there", async () => {
    const c = container("IN_PROGRESS");
    const error = await awaitContainer("Threads", c.look, lease(5_000)).catch((e: unknown) => e);
    expect(timer.waits).toEqual([300, 600, 1200, 400]);
    expect(c.lookedAt.at(-1)).toBe(2_500);
    expect((error as DeliveryError).message).toContain("Threads was still preparing the images after 3 seconds");
  });
});
