/**
 * The posting schedule and repeat routes (decisions.md §14): GET /api/v1/schedule/slots (read), PUT (schedule; a new
 * timeZone needs an owner), DELETE /api/v1/schedule/series/{id} (schedule; the id is a post's seriesId). `queue` and `repeat` on POST
 * /schedule are in ./index.ts.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { seriesEndedResponse, seriesIdParams, slotsSchema } from "./queue-model";
import { endSeries } from "./repeat";
import { getSlots, putSlots } from "./slots";

const TAGS = ["schedule"];

/** Mounts the slots and series routes. */
export function queueModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/schedule/slots", ({ request }) => getSlots(deps, authOf(request).accountId), {
      scope: "read",
      response: slotsSchema,
      detail: {
        summary: "The posting schedule: the slots queued posts take",
        description: "Slots are weekdays × a wall-clock time in the account's time zone × connections. POST /schedule with queue: true takes the first free one.",
        tags: TAGS,
      },
    })
    .put("/api/v1/schedule/slots", ({ request, body }) => putSlots(deps, authOf(request), body), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["unknown_target", "forbidden"],
      body: slotsSchema,
      response: slotsSchema,
      detail: {
        summary: "Replace the posting schedule",
        description:
          "Takes the object GET answers. targets are accountIds (400 unknown_target). A timeZone other than the account's changes the account's zone, which needs an owner (403 forbidden, requiredRole owner; nothing changed). Posts already queued keep their times.",
        tags: TAGS,
      },
    })
    .delete("/api/v1/schedule/series/:id", ({ request, params }) => endSeries(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["not_found", "already_published", "distribution_failed"],
      params: seriesIdParams,
      response: seriesEndedResponse,
      detail: {
        summary: "End a repeating series",
        description:
          "No further occurrence is scheduled, and the pending one is cancelled as DELETE /schedule/{id} would (502 distribution_failed, retryable, when its provider cannot be reached: the series stays ended, the post kept; call again).",
        tags: TAGS,
      },
    });
}
