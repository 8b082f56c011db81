/**
 * The queue step of a `queue` feed: the creation made from a new item goes into the next free slot of the feed's
 * targets, as POST /schedule with `queue: true` would put it (the schedule module decides the slot).
 */
import type { Deps } from "../../deps";
import { AppError } from "../../lib/errors";

/** Queues `creationId` to `targets`; answers the post's id. Throws the schedule module's AppError refusals. */
export async function queueCreation(_deps: Deps, _accountId: string, _creationId: string, _targets: readonly string[]): Promise<string> {
  throw new AppError("not_schedulable", "Queueing is not available in this build yet.");
}
