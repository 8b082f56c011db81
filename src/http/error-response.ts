/**
 * The one place failures become responses: AppError → its envelope; Elysia's validation, parse and not-found errors →
 * the same envelope with their stable codes; anything else → 500 internal_error (logged, never a stack trace out).
 */
import { AppError } from "../lib/errors";
import { describeValidationError } from "./validation-message";

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/** A JSON response with the given status. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** Renders an AppError in the envelope of decisions.md §1. */
export function appErrorResponse(error: AppError, headers: Record<string, string> = {}): Response {
  return jsonResponse(error.status, error.toBody(), headers);
}

/** Turns an Elysia validation error into `invalid_request` with `details: [{field, problem}]` (no values echoed). */
export function validationToAppError(error: unknown, where: string | undefined): AppError {
  const details = describeValidationError(error, where ?? "body");
  const first = details[0];
  return new AppError("invalid_request", `${first?.field}: ${first?.problem}`, { details });
}
