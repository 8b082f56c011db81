/**
 * Event webhook routes (decisions.md §10): POST /api/v1/webhooks and DELETE /api/v1/webhooks/{id} (Scheduling group),
 * GET /api/v1/webhooks (Read access).
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { withholdFromReplay } from "../../http/idempotency";
import { parseJsonBody } from "../../http/json-body";
import { authOf } from "../../http/request-context";
import { scopePlugin } from "../../http/scope";
import { createWebhookBody, createWebhookResponse, webhookDeletedResponse, webhookIdParams, webhookListResponse } from "./model";
import { createWebhook, deleteWebhook, listWebhooks } from "./service";

const TAGS = ["webhooks"];

/** Mounts the event webhook routes. */
export function webhooksModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/webhooks",
      async ({ request, body, set }) => {
        const created = await createWebhook(deps, authOf(request).accountId, body);
        // The secret is shown once: an Idempotency-Key replay answers the webhook with secret null.
        withholdFromReplay(request, ["secret"]);
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return created;
      },
      {
        parse: parseJsonBody,
        scope: "schedule",
        errors: ["invalid_url", "https_required", "port_not_allowed", "host_not_public", "host_unresolvable", "too_many_webhooks"],
        created: { path: "/api/v1/webhooks/{id}", idAt: "webhook.id" },
        body: createWebhookBody,
        response: { 201: createWebhookResponse },
        detail: {
          summary: "Register an event webhook (the signing secret is shown once)",
          description:
            "Events: post.published, post.failed, post.partially_failed, post.unconfirmed (nobody can tell whether it went out; a person answers), post.cancelled, post.needs_approval, post.approved, post.rejected, creation.generated, credits.low (balance under 10), connection.needs_attention (a connection stopped being ready). " +
            "Each delivery is a POST of {id, type, createdAt, data} (the document's `webhooks` section describes each) with X-Seedcast-Timestamp, " +
            "X-Seedcast-Signature (sha256=<hex HMAC-SHA256 of the raw body under the secret>), the Standard Webhooks headers (webhook-id, webhook-timestamp, " +
            "webhook-signature: v1,<base64 HMAC-SHA256 of \"id.timestamp.body\" under the secret's base64-decoded bytes>: any Standard Webhooks library verifies it with the secret as shown) " +
            "and Idempotency-Key = webhook-id = the event id; at least once, retried with backoff (5 attempts) until the receiver answers 2xx. " +
            "400 invalid_url / https_required / port_not_allowed / host_not_public / host_unresolvable for a URL the outbound rule refuses.",
          tags: TAGS,
        },
      },
    )
    .get("/api/v1/webhooks", ({ request }) => listWebhooks(deps, authOf(request).accountId), {
      scope: "read",
      response: { 200: webhookListResponse },
      detail: { summary: "List the account's event webhooks, newest first (secrets are never shown again)", tags: TAGS },
    })
    .delete("/api/v1/webhooks/:id", ({ request, params }) => deleteWebhook(deps, authOf(request).accountId, params.id), {
      parse: parseJsonBody,
      scope: "schedule",
      errors: ["not_found"],
      params: webhookIdParams,
      response: { 200: webhookDeletedResponse },
      detail: { summary: "Delete an event webhook; nothing is delivered to it afterwards", tags: TAGS },
    });
}
