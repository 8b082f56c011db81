/**
 * The one place failures become responses: AppError → its envelope; Elysia's validation, parse and not-found errors →
 * the same envelope with their stable codes; anything else → 500 internal_error (logged, never a stack trace out).
 */
import { AppError } from "../lib/errors";

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" } as const;

/** A JSON response with the given status. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...headers } });
}

/** Renders an AppError in the envelope of decisions.md §1. */
export function appErrorResponse(error: AppError, headers: Record<string, string> = {}): Response {
  return jsonResponse(error.status, error.toBody(), headers);
}

interface ValidationIssue {
  path?: string;
  message?: string;
  summary?: string;
  schema?: { error?: unknown };
}

/** Turns an Elysia validation error into `invalid_request` with `details: [{field, problem}]` (no values echoed). */
export function validationToAppError(error: unknown, where: string | undefined): AppError {
  const issues: ValidationIssue[] = (() => {
    try {
      const all = (error as { all?: ValidationIssue[] }).all;
      return Array.isArray(all) ? all : [];
    } catch {
      return [];
    }
  })();
  const details = issues.slice(0, 20).map((issue) => {
    const field = (issue.path ?? "").replace(/^\//, "").replace(/\//g, ".") || where || "body";
    const custom = issue.schema?.error;
    const problem = typeof custom === "string" ? custom : (issue.summary ?? issue.message ?? "is invalid");
    return { field, problem: problem.replace(/^Property '[^']*' /, "").replace(/^Expected /, "expected ") };
  });
  if (details.length === 0) details.push({ field: where ?? "body", problem: "is invalid" });
  const first = details[0];
  return new AppError("invalid_request", `${first?.field}: ${first?.problem}`, { details });
}
