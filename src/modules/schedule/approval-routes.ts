/**
 * The approval routes (decisions.md §14): GET /api/v1/schedule/approvals (read: the posts waiting for an owner),
 * POST /api/v1/schedule/{id}/approve and /reject `{note?}` (schedule group and an owner's key or grant, else 403
 * forbidden with requiredRole owner). The service is ./approval.ts.
 */
import { Elysia, t } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { approvePost, rejectPost } from "./approval";
import { approvalsQuery, rejectBody } from "./approval-model";
import { listResponse, postIdParams, postResponse } from "./model";
import { listPosts } from "./service";

const TAGS = ["schedule"];

/** Mounts the approval routes. */
export function approvalModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/schedule/approvals", ({ request, query }) => listPosts(deps, authOf(request).accountId, { ...query, status: "pending_approval" }), {
      scope: "read",
      query: approvalsQuery,
      response: listResponse,
      detail: {
        summary: "List the posts waiting for an owner's approval (status pending_approval), newest first",
        description:
          "When the account's approvalRequired is on, a post an editor schedules (key, MCP grant or dashboard) is stored pending_approval and does not publish until an owner approves it.",
        tags: TAGS,
      },
    })
    .post("/api/v1/schedule/:id/approve", ({ request, params }) => approvePost(deps, authOf(request), params.id), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["forbidden", "not_found", "not_pending_approval"],
      params: postIdParams,
      response: postResponse,
      detail: {
        summary: "Approve a post waiting for approval (owners)",
        description:
          "The post becomes scheduled and goes out at its time. Needs an owner's key or grant: otherwise 403 forbidden with requiredRole owner, nothing changed. 409 not_pending_approval (with status) for a post not waiting; a post whose time passed while it waited is failed first (\"Not approved before its time.\") and answers that 409.",
        tags: TAGS,
      },
    })
    .post("/api/v1/schedule/:id/reject", ({ request, params, body }) => rejectPost(deps, authOf(request), params.id, body ?? {}), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["forbidden", "not_found", "not_pending_approval"],
      params: postIdParams,
      body: t.Optional(rejectBody),
      response: postResponse,
      detail: {
        summary: "Reject a post waiting for approval (owners)",
        description:
          'The post becomes failed with errorMessage "Rejected: <note>" ("Rejected: no note given." without a note) and never publishes; a repeating series ends with it. Needs an owner\'s key or grant: otherwise 403 forbidden with requiredRole owner. 409 not_pending_approval for a post not waiting.',
        tags: TAGS,
      },
    });
}
