/**
 * POST /schedule as a request states it (REST and the schedule_post tool): a scheduled_time, or `queue: true` (the
 * first free posting slot, queue.ts), optionally with a `repeat` (repeat.ts). Picks the placement and schedules.
 */
import type { Deps } from "../../deps";
import { AppError } from "../../lib/errors";
import { type ApprovalCaller, approvalPlacement } from "./approval";
import { queuePlacement } from "./queue";
import { checkRepeat, type RepeatInput, repeatPlacement } from "./repeat";
import { atTime, type PostApi, schedulePost, scheduledTimeOf } from "./service";

/** A POST /schedule body as the services take it. */
export interface ScheduleRequest {
  creationId: string;
  scheduledTime?: string;
  targets: readonly string[];
  queue?: boolean;
  repeat?: RepeatInput;
}

/** A POST /schedule body (or schedule_post's arguments) in the services' names. */
export function scheduleRequestOf(body: {
  creation_id: string;
  scheduled_time?: string;
  targets: string[];
  queue?: boolean;
  repeat?: RepeatInput;
}): ScheduleRequest {
  return {
    creationId: body.creation_id,
    targets: body.targets,
    ...(body.scheduled_time !== undefined ? { scheduledTime: body.scheduled_time } : {}),
    ...(body.queue !== undefined ? { queue: body.queue } : {}),
    ...(body.repeat !== undefined ? { repeat: body.repeat } : {}),
  };
}

function invalidTiming(problem: string): AppError {
  return new AppError("invalid_request", `scheduled_time: ${problem}`, { details: [{ field: "scheduled_time", problem }] });
}

/**
 * POST /schedule: exactly one of scheduled_time and `queue: true` (400 invalid_request otherwise), then the checks and
 * the write of schedulePost at the placement they name. `caller`'s role decides whether the post waits for an owner's
 * approval (approval.ts).
 */
export async function scheduleRequest(deps: Deps, caller: ApprovalCaller, request: ScheduleRequest): Promise<{ post: PostApi }> {
  const { accountId } = caller;
  const now = deps.clock.now();
  const queued = request.queue === true;
  if (queued && request.scheduledTime !== undefined) throw invalidTiming("send either scheduled_time or queue: true, not both");
  if (!queued && request.scheduledTime === undefined) throw invalidTiming("required unless queue is true");
  const rule = request.repeat === undefined ? null : checkRepeat(request.repeat);
  const base = queued ? queuePlacement(deps, accountId) : atTime(scheduledTimeOf(request.scheduledTime ?? "", now), now);
  const placement = rule === null ? base : repeatPlacement(deps, accountId, base, rule);
  return schedulePost(deps, accountId, { creationId: request.creationId, targets: request.targets }, approvalPlacement(deps, caller, placement));
}
