/**
 * The one closed list of error codes Seedcast answers with, and the one error type services throw.
 * Every non-2xx answer under /api/v1 is rendered from an AppError by the app's error handler:
 * `{"error": code, "message": ..., ...extra}`. The 401 body is the single exception (see auth).
 */

/** Stable error code → HTTP status. Adding a code means adding it here and nowhere else. */
export const ERROR_STATUS = {
  invalid_request: 400,
  // ingest refusals (decisions.md §4)
  invalid_url: 400,
  https_required: 400,
  port_not_allowed: 400,
  unsupported_encoding: 400,
  host_not_public: 400,
  host_unresolvable: 400,
  fetch_failed: 400,
  upstream_status: 400,
  too_many_redirects: 400,
  unsupported_type: 400,
  image_too_large: 400,
  image_dimensions_too_large: 400,
  empty_body: 400,
  // feeds (decisions.md §14): the URL answered, but not with RSS, Atom or JSON Feed
  not_a_feed: 400,
  // scheduling refusals (decisions.md §7)
  scheduled_time_too_soon: 400,
  unknown_target: 400,
  ambiguous_target: 400,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_schedulable: 409,
  target_not_ready: 409,
  already_published: 409,
  asset_in_use: 409,
  creation_in_use: 409,
  not_reschedulable: 409,
  not_unconfirmed: 409,
  // the queue (decisions.md §14)
  no_free_slot: 409,
  // the bulk import (decisions.md §14): every bad row named in `rows`
  invalid_rows: 400,
  // approval (decisions.md §14)
  not_pending_approval: 409,
  too_many_webhooks: 409,
  feed_exists: 409,
  feed_busy: 409,
  idempotency_in_flight: 409,
  upload_link_used: 410,
  upload_link_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  generation_failed: 502,
  distribution_failed: 502,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Extra fields carried in the envelope next to error and message (e.g. requiredGroup, retryable). */
export type ErrorExtra = Record<string, unknown>;

/** The one error type services throw. The handler renders it; nothing else builds error bodies. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: ErrorExtra;

  constructor(code: ErrorCode, message: string, extra: ErrorExtra = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
  }

  /** The JSON envelope of decisions.md §1. */
  toBody(): Record<string, unknown> {
    return { error: this.code, message: this.message, ...this.extra };
  }
}

/** Shorthand for the 404 every module answers for missing or unowned ids. */
export function notFound(what: string): AppError {
  return new AppError("not_found", `No ${what} with that id exists in this account.`);
}

/** Shorthand for a validation refusal naming one field. */
export function invalidField(field: string, problem: string): AppError {
  return new AppError("invalid_request", `${field}: ${problem}`, { details: [{ field, problem }] });
}
