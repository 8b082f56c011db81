/**
 * Error codes → OpenAPI responses. Each code has its schema (a specific component where the code carries extra
 * fields, otherwise the Error envelope narrowed to the codes of that status) and an example body. Codes that share a
 * status on one operation share one response, with one named example each.
 */
import type { TSchema } from "elysia";
import {
  errorSchema,
  forbiddenSchema,
  insufficientCreditsSchema,
  invalidApiKeySchema,
  notPendingApprovalSchema,
  notSchedulableSchema,
  invalidRowsSchema,
  rateLimitedSchema,
  scheduledTimeTooSoonSchema,
  targetNotReadySchema,
  upstreamFailureSchema,
  validationErrorSchema,
} from "../../http/error-schemas";
import { ERROR_STATUS, type ErrorCode } from "../../lib/errors";
import type { Json, SchemaComponents } from "./json-schema";

interface CodeDoc {
  /** A specific component; the Error envelope otherwise. */
  schema?: TSchema;
  /** The example body (error is added). */
  example: Record<string, unknown>;
}

const SAMPLE_ID = "0192f1c4-7b2a-7c3e-9d4f-2a6b8c0d1e2f";

/** Every code's documentation. A code missing here is documented with the envelope and a generic sentence. */
export const ERROR_DOCS: Partial<Record<ErrorCode, CodeDoc>> = {
  invalid_request: {
    schema: validationErrorSchema,
    example: { message: "emoji: must be one of none, some, lots", details: [{ field: "emoji", problem: "must be one of none, some, lots" }] },
  },
  invalid_url: { example: { message: "url is not a valid URL." } },
  https_required: { example: { message: "Only https URLs are fetched." } },
  port_not_allowed: { example: { message: "Only port 443 is allowed." } },
  unsupported_encoding: { example: { message: "The server answered with an unsupported Content-Encoding." } },
  host_not_public: { example: { message: "The host resolves to a non-public address." } },
  host_unresolvable: { example: { message: "The host name does not resolve." } },
  fetch_failed: { example: { message: "The image could not be fetched." } },
  upstream_status: { example: { message: "The image server answered 404.", upstreamStatus: 404 } },
  too_many_redirects: { example: { message: "More than 5 redirects." } },
  unsupported_type: { example: { message: "Not a PNG, JPEG, GIF or WebP image." } },
  image_too_large: { example: { message: "The image is larger than 10485760 bytes.", maxBytes: 10485760 } },
  image_dimensions_too_large: { example: { message: "The image has more than 40 megapixels." } },
  empty_body: { example: { message: "The image is empty (0 bytes)." } },
  scheduled_time_too_soon: {
    schema: scheduledTimeTooSoonSchema,
    example: { message: "scheduled_time must be at least 5 minutes ahead.", earliestAllowed: "2026-11-22T10:05:00.000Z" },
  },
  unknown_target: { example: { message: 'No connected account matches "threads".', target: "threads" } },
  ambiguous_target: {
    example: { message: "More than one mastodon account is connected; name one by its accountId.", target: "mastodon", accountIds: [SAMPLE_ID] },
  },
  insufficient_credits: {
    schema: insufficientCreditsSchema,
    example: { message: "This needs 5 credits; the account has 2 available.", required: 5, available: 2 },
  },
  forbidden: {
    schema: forbiddenSchema,
    example: { message: "This key lacks the Content creation group (create).", requiredGroup: "create" },
  },
  not_found: { example: { message: "No seed with that id exists in this account." } },
  invalid_rows: {
    schema: invalidRowsSchema,
    example: {
      message: "One row cannot be imported; nothing was stored.",
      rows: [{ row: 2, field: "scheduled_time", problem: "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z" }],
    },
  },
  not_schedulable: {
    schema: notSchedulableSchema,
    example: {
      message: "The creation cannot be scheduled: the creation has no caption.",
      problems: [{ field: "caption", problem: "the creation has no caption" }],
    },
  },
  target_not_ready: {
    schema: targetNotReadySchema,
    example: {
      message: "Bluesky cannot post right now: the app password was revoked.",
      accountId: SAMPLE_ID,
      platform: "bluesky",
      blockedReason: "The app password was revoked.",
    },
  },
  already_published: { example: { message: "This post was already published; it can no longer be cancelled." } },
  asset_in_use: { example: { message: "A seed, creation or scheduled post still uses this asset; remove that first.", references: 1 } },
  idempotency_in_flight: { example: { message: "A request with this Idempotency-Key is still running; retry once it has answered." } },
  upload_link_used: { example: { message: "This upload link was already used; ask for a new one." } },
  upload_link_expired: { example: { message: "This upload link has expired; ask for a new one." } },
  payload_too_large: { example: { message: "Request bodies are limited to 1048576 bytes." } },
  unsupported_media_type: {
    example: {
      message: "Request bodies must be JSON (Content-Type: application/json), not text/plain.",
      details: [{ field: "Content-Type", problem: "must be application/json" }],
    },
  },
  creation_in_use: { example: { message: "A post scheduled from this creation has not gone out yet; cancel it first." } },
  no_free_slot: { example: { message: "No posting slot in the next 90 days has these targets and is free; add slots or pick a time." } },
  not_pending_approval: {
    schema: notPendingApprovalSchema,
    example: { message: "This post is not waiting for approval (it is failed: Not approved before its time.).", status: "failed" },
  },
  not_reschedulable: { example: { message: "This post is being published right now; it can no longer be rescheduled." } },
  not_a_feed: { example: { message: "The address answered, but not with an RSS, Atom or JSON Feed document." } },
  feed_exists: { example: { message: "This account already follows that feed.", feedId: SAMPLE_ID } },
  feed_busy: { example: { message: "This feed is being read right now; try again in a minute." } },
  too_many_webhooks: { example: { message: "An account can register at most 25 webhooks; delete one first." } },
  idempotency_key_reused: { example: { message: "This Idempotency-Key was already used with a different request; use a new key." } },
  rate_limited: { schema: rateLimitedSchema, example: { message: "Too many requests for this key; retry in 3 s.", retryAfterSeconds: 3 } },
  internal_error: { example: { message: "Something went wrong on our side; it was logged." } },
  generation_failed: {
    schema: upstreamFailureSchema,
    example: { message: "The caption could not be generated; nothing was charged or changed. Try again.", retryable: true },
  },
  distribution_failed: {
    schema: upstreamFailureSchema,
    example: { message: "Mastodon could not be reached; the post was kept. Try again.", retryable: true },
  },
};

/** The status a code answers with; throws for a code errors.ts does not know (a typo in a route's `errors`). */
export function statusOf(code: string): number {
  const status = (ERROR_STATUS as Record<string, number>)[code];
  if (status === undefined) throw new Error(`OpenAPI: unknown error code "${code}"`);
  return status;
}

const REASONS: Record<number, string> = {
  400: "The request is not valid",
  401: "Missing or invalid API key",
  402: "Not enough credits; nothing was charged",
  403: "The key lacks the group this operation needs",
  404: "Not found (or not this account's)",
  409: "The resource is not in a state that allows this",
  410: "Gone",
  413: "The body is over 1 MiB",
  415: "The body is not JSON",
  422: "The Idempotency-Key was used with a different request",
  429: "Too many requests for this key",
  500: "Internal error",
  502: "A model or platform failed; retryable",
};

/** The 401 of every /api/v1 operation: exactly `{"error":"Invalid API key"}`. */
export function invalidKeyResponse(components: SchemaComponents): Json {
  return {
    description: REASONS[401],
    headers: { "WWW-Authenticate": { description: 'Always `Bearer realm="seedcast"`.', schema: { type: "string" } } },
    content: { "application/json": { schema: components.register(invalidApiKeySchema as unknown as Json), example: { error: "Invalid API key" } } },
  };
}

/** One response per status for `codes` (each code once), keyed by status. */
export function errorResponses(
  codes: readonly string[],
  components: SchemaComponents,
  overrides: Partial<Record<string, Record<string, unknown>>> = {},
): Record<string, Json> {
  const byStatus = new Map<number, string[]>();
  for (const code of new Set(codes)) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  for (const [status, list] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    const specific: Json[] = [];
    const generic: string[] = [];
    const examples: Record<string, Json> = {};
    for (const code of list) {
      const doc = ERROR_DOCS[code as ErrorCode];
      if (doc?.schema) {
        const ref = components.register(doc.schema as unknown as Json);
        if (!specific.some((s) => s.$ref === ref.$ref)) specific.push(ref);
      } else generic.push(code);
      const message = `Refused: ${code.replace(/_/g, " ")}.`;
      examples[code] = { summary: code, value: { error: code, ...(overrides[code] ?? doc?.example ?? { message }) } };
    }
    const schemas = [...specific];
    if (generic.length > 0) {
      schemas.push({
        allOf: [
          components.register(errorSchema as unknown as Json),
          { type: "object", properties: { error: { type: "string", enum: generic } } },
        ],
      });
    }
    const schema = schemas.length === 1 ? schemas[0]! : { anyOf: schemas };
    const response: Json = {
      description: `${REASONS[status] ?? "Refused"}: ${list.join(", ")}`,
      content: { "application/json": { schema, examples } },
    };
    if (status === 429) {
      response.headers = { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 1 } } };
    }
    responses[String(status)] = response;
  }
  return responses;
}
