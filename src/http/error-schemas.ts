/**
 * The error envelope of decisions.md §1 as schemas, for the OpenAPI document (components Error, InvalidApiKey,
 * ValidationError, ...). error-response.ts renders these bodies; this file only describes them. A schema's `title`
 * is its component name.
 */
import { t } from "elysia";
import { integer, timestamp, uuid } from "../lib/schema";
import { SCOPES } from "../auth/scopes";

const message = t.String({ description: "One sentence for a person." });

/** Every non-2xx answer under /api/v1 except 401: a stable code and a sentence, plus the fields a code names. */
export const errorSchema = t.Object(
  { error: t.String({ description: "Stable error code (see the list in the API description)." }), message },
  { title: "Error", description: "The error envelope: a stable code, a sentence, and the extra fields the code names." },
);

/** The one exception to the envelope: exactly `{"error":"Invalid API key"}`. */
export const invalidApiKeySchema = t.Object(
  { error: t.Literal("Invalid API key") },
  { title: "InvalidApiKey", description: "Missing, malformed, unknown, revoked or expired key." },
);

export const validationErrorSchema = t.Object(
  {
    error: t.Literal("invalid_request"),
    message,
    details: t.Array(
      t.Object({
        field: t.String({ description: "The field, dotted (`targets.0`), or body / query / Idempotency-Key." }),
        problem: t.String({ description: "What the field accepts, in words." }),
      }),
      { minItems: 1 },
    ),
  },
  { title: "ValidationError" },
);

export const forbiddenSchema = t.Object(
  {
    error: t.Literal("forbidden"),
    message,
    requiredGroup: t.Optional(t.Union(SCOPES.map((s) => t.Literal(s)), { description: "The group the key lacks." })),
    requiredRole: t.Optional(t.Literal("owner", { description: "The role the operation needs (decisions.md §14: owners change account settings)." })),
  },
  { title: "Forbidden" },
);

export const insufficientCreditsSchema = t.Object(
  {
    error: t.Literal("insufficient_credits"),
    message,
    required: integer({ minimum: 0, description: "Credits the operation costs." }),
    available: integer({ minimum: 0, description: "Spendable credits now." }),
  },
  { title: "InsufficientCredits" },
);

export const rateLimitedSchema = t.Object(
  {
    error: t.Literal("rate_limited"),
    message,
    retryAfterSeconds: integer({ minimum: 1, description: "Same as the Retry-After header." }),
  },
  { title: "RateLimited" },
);

export const upstreamFailureSchema = t.Object(
  {
    error: t.Union([t.Literal("generation_failed"), t.Literal("distribution_failed")]),
    message,
    retryable: t.Literal(true),
  },
  { title: "UpstreamFailure", description: "A model or a platform failed; nothing was charged or changed. Retry." },
);

/** 400 invalid_rows of the CSV import: every bad row, field and problem (row 0 is the header). */
export const invalidRowsSchema = t.Object(
  {
    error: t.Literal("invalid_rows"),
    message,
    rows: t.Array(
      t.Object({
        row: t.Integer({ minimum: 0, description: "The data row (1 = the first after the header; 0 = the header row)" }),
        field: t.String({ description: "The column, or csv for the file's own form" }),
        problem: t.String(),
      }),
    ),
  },
  { title: "InvalidRows" },
);

export const notSchedulableSchema = t.Object(
  {
    error: t.Literal("not_schedulable"),
    message,
    problems: t.Array(
      t.Object({
        accountId: t.Optional(uuid()),
        platform: t.Optional(t.String()),
        field: t.String(),
        problem: t.String(),
      }),
    ),
  },
  { title: "NotSchedulable" },
);

export const targetNotReadySchema = t.Object(
  { error: t.Literal("target_not_ready"), message, accountId: uuid(), platform: t.String(), blockedReason: t.String() },
  { title: "TargetNotReady" },
);

export const scheduledTimeTooSoonSchema = t.Object(
  { error: t.Literal("scheduled_time_too_soon"), message, earliestAllowed: timestamp() },
  { title: "ScheduledTimeTooSoon" },
);

export const notPendingApprovalSchema = t.Object(
  {
    error: t.Literal("not_pending_approval"),
    message,
    status: t.String({ description: "The post's status now (scheduled once approved; failed once rejected or not approved before its time)." }),
  },
  { title: "NotPendingApproval" },
);
