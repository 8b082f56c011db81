/**
 * The scheduling routes: GET /api/v1/schedule/targets (read), POST /api/v1/schedule (schedule),
 * PATCH and DELETE /api/v1/schedule/{id} (schedule), POST /api/v1/schedule/{id}/targets/{accountId}/resolve
 * (schedule: a person's answer for an unconfirmed target), GET /api/v1/schedule/posts and /posts/{id} (read).
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import {
  cancelResponse,
  listQuery,
  listResponse,
  postIdParams,
  postResponse,
  rescheduleBody,
  resolveBody,
  scheduleBody,
  targetParams,
  targetsResponse,
} from "./model";
import { resolveUnconfirmedTarget } from "./resolve";
import { cancelPost, getPost, listPosts, listTargets, reschedulePost, rescheduleInputOf } from "./service";
import { scheduleRequest, scheduleRequestOf } from "./request";

const TAGS = ["schedule"];

/** Mounts the scheduling routes. */
export function scheduleModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/schedule/targets", ({ request }) => listTargets(deps, authOf(request).accountId), {
      scope: "read",
      response: targetsResponse,
      detail: {
        summary: "List the connected accounts posts can go to",
        description: "Accounts needing attention are listed with readyToPost false and a blockedReason. Connections are managed at manageUrl.",
        tags: TAGS,
      },
    })
    .post(
      "/api/v1/schedule",
      ({ request, body }) => scheduleRequest(deps, authOf(request), scheduleRequestOf(body)),
      {
        parse: parseJsonBody,
        scope: "schedule",
        errors: ["scheduled_time_too_soon", "unknown_target", "ambiguous_target", "not_found", "target_not_ready", "not_schedulable", "no_free_slot"],
        body: scheduleBody,
        response: postResponse,
        detail: {
          summary: "Schedule a creation to connected accounts",
          description:
            "Free. scheduled_time at least 5 minutes ahead (400 scheduled_time_too_soon), or queue: true for the first free posting slot (409 no_free_slot when none in 90 days; post.queued true); repeat {every, interval?, count?, until?} makes it the first occurrence of a series (post.seriesId); targets are platforms or accountIds (400 unknown_target, ambiguous_target with accountIds); 409 target_not_ready with blockedReason; 409 not_schedulable with problems. A provider's refusal answers 200 with that target failed.",
          tags: TAGS,
        },
      },
    )
    .patch(
      "/api/v1/schedule/:id",
      ({ request, params, body }) => reschedulePost(deps, authOf(request).accountId, params.id, rescheduleInputOf(body), authOf(request)),
      {
        parse: parseJsonBody,
        scope: "schedule",
        errors: [
          "not_found",
          "scheduled_time_too_soon",
          "unknown_target",
          "ambiguous_target",
          "target_not_ready",
          "not_schedulable",
          "already_published",
          "not_reschedulable",
          "distribution_failed",
        ],
        params: postIdParams,
        body: rescheduleBody,
        response: postResponse,
        detail: {
          summary: "Change a post that has not started publishing: its time, its targets and/or its content",
          description:
            "content {caption?, alt_text?} changes what the post sends (its snapshot; the creation stays as it is); a caption written by hand may be up to 63,206 characters and is checked against each target's limit (409 not_schedulable). A content-only change keeps the time and needs no new lead. Same rules as POST /schedule: scheduled_time at least 5 minutes ahead (400 scheduled_time_too_soon), targets resolved the same way (400 unknown_target, ambiguous_target), 409 target_not_ready, 409 not_schedulable against the post's snapshot. Provider-held targets (Mastodon) are withdrawn and placed again. 409 already_published once the post went out, 409 not_reschedulable while it is publishing; 502 distribution_failed (retryable) when a provider cannot be reached, nothing changed.",
          tags: TAGS,
        },
      },
    )
    .delete("/api/v1/schedule/:id", ({ request, params }) => cancelPost(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["not_found", "already_published", "distribution_failed"],
      params: postIdParams,
      response: cancelResponse,
      detail: {
        summary: "Cancel a scheduled post",
        description:
          "Withdraws every pending target from its provider, then removes the post. 502 distribution_failed (retryable) when a provider cannot be reached: the post is kept. 409 already_published when a target was published, or is unconfirmed (it may be; answer it through /resolve first).",
        tags: TAGS,
      },
    })
    .post(
      "/api/v1/schedule/:id/targets/:accountId/resolve",
      ({ request, params, body }) =>
        resolveUnconfirmedTarget(deps, authOf(request).accountId, params.id, params.accountId, { outcome: body.outcome, publishedUrl: body.published_url }),
      {
        parse: parseJsonBody,
        scope: "schedule",
        errors: ["not_found", "not_unconfirmed"],
        params: targetParams,
        body: resolveBody,
        response: postResponse,
        detail: {
          summary: "Answer for an unconfirmed target: it was posted, or send it again",
          description:
            "A target is unconfirmed when its network could not tell whether it went out (Telegram; a Discord webhook that answered nothing); Seedcast never resends it on its own. outcome posted: the target becomes published (published_url, when given, becomes its publishedUrl). outcome send_again: one new attempt now, resuming after the parts (thread messages) already confirmed. accountId is the target's connection id. 409 not_unconfirmed when the target is not unconfirmed (already answered): nothing changed.",
          tags: TAGS,
        },
      },
    )
    .get("/api/v1/schedule/posts", ({ request, query }) => listPosts(deps, authOf(request).accountId, query), {
      scope: "read",
      query: listQuery,
      response: listResponse,
      detail: { summary: "List scheduled posts, newest first (from/to bound scheduledTime)", tags: TAGS },
    })
    .get("/api/v1/schedule/posts/:id", ({ request, params }) => getPost(deps, authOf(request).accountId, params.id), {
      scope: "read",
      errors: ["not_found"],
      params: postIdParams,
      response: postResponse,
      detail: { summary: "One scheduled post with its targets", tags: TAGS },
    });
}
