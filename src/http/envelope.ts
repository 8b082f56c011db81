/**
 * The hook every route needs from inside Elysia: the error envelope of decisions.md §1 for whatever a handler,
 * Elysia's validation, a parser or its router throws. The JSON parser is each body route's own (json-body.ts).
 * Everything before the handler (credential, group, size, rate, idempotency) and the log line after it live in
 * pipeline.ts, around the app.
 */
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../lib/errors";
import { appErrorResponse, jsonResponse, validationToAppError } from "./error-response";
import { requestState } from "./request-context";
import { isApiPath, loggablePath } from "./paths";

/**
 * The query parameter a coerced-query error is about, else "query". Elysia checks a query value it turned into a
 * number against that property's schema alone (`validator`), and the error names no field: the parameter is the one
 * whose number that schema refuses.
 */
function coercedQueryField(error: unknown, url: string): string {
  const schema = (error as { validator?: Record<string, unknown> }).validator;
  const search = url.indexOf("?");
  if (!schema || search === -1) return "query";
  const refuses = (n: number) =>
    (schema.type === "integer" && !Number.isInteger(n)) ||
    (typeof schema.minimum === "number" && n < schema.minimum) ||
    (typeof schema.maximum === "number" && n > schema.maximum) ||
    (typeof schema.exclusiveMinimum === "number" && n <= schema.exclusiveMinimum) ||
    (typeof schema.exclusiveMaximum === "number" && n >= schema.exclusiveMaximum) ||
    (typeof schema.multipleOf === "number" && n % schema.multipleOf !== 0);
  for (const [name, value] of new URLSearchParams(url.slice(search + 1))) {
    const n = value.trim() === "" ? Number.NaN : Number(value);
    if (!Number.isNaN(n) && refuses(n)) return name;
  }
  return "query";
}

export function envelope(deps: Deps) {
  return new Elysia({ name: "seedcast.envelope" })
    .onError({ as: "global" }, ({ error, code, request, path }) => {
      const id = requestState(request)?.id ?? "";
      const headers = { "x-request-id": id };
      if (error instanceof AppError) return appErrorResponse(error, headers);
      if (code === "VALIDATION") {
        const where = (error as { type?: string }).type;
        // A query value Elysia coerced (a number) is checked on its own, and the error no longer names it.
        const field = where === "property" ? coercedQueryField(error, request.url) : where;
        return appErrorResponse(validationToAppError(error, field), headers);
      }
      if (code === "PARSE") {
        // Elysia wraps what a parser throws; our parser's refusals (413, invalid JSON) travel as the cause.
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof AppError) return appErrorResponse(cause, headers);
        return appErrorResponse(new AppError("invalid_request", "The body could not be parsed."), headers);
      }
      if (code === "NOT_FOUND") {
        if (isApiPath(path)) return appErrorResponse(new AppError("not_found", "No such route."), headers);
        return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
      }
      deps.log.error("unhandled error", {
        reqId: id,
        path: loggablePath(path),
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      return jsonResponse(500, { error: "internal_error", message: "Something went wrong on our side; it was logged." }, headers);
    });
}

