/**
 * The two hooks every route needs from inside Elysia: the JSON body parser (counting what arrives, so a chunked body
 * over 1 MiB answers 413 too) and the error envelope of decisions.md §1 for whatever a handler, Elysia's validation,
 * its parser or its router throws. Everything before the handler (credential, group, size, rate, idempotency) and the
 * log line after it live in pipeline.ts, around the app.
 */
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../lib/errors";
import { appErrorResponse, jsonResponse, validationToAppError } from "./error-response";
import { requestState } from "./request-context";
import { isApiPath, loggablePath } from "./paths";

/** JSON bodies under /api/v1 larger than this answer 413. */
export const MAX_JSON_BYTES = 1024 * 1024;

export function envelope(deps: Deps) {
  return new Elysia({ name: "seedcast.envelope" })
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // NB: a chunked body has no content-length; count what actually arrives before parsing it.
      if (!contentType?.startsWith("application/json")) return;
      const bytes = await request.arrayBuffer();
      if (bytes.byteLength > MAX_JSON_BYTES) {
        throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
      }
      if (bytes.byteLength === 0) return {};
      try {
        return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
      } catch {
        throw new AppError("invalid_request", "The body is not valid JSON.", {
          details: [{ field: "body", problem: "is not valid JSON" }],
        });
      }
    })
    .onError({ as: "global" }, ({ error, code, request, path }) => {
      const id = requestState(request)?.id ?? "";
      const headers = { "x-request-id": id };
      if (error instanceof AppError) return appErrorResponse(error, headers);
      if (code === "VALIDATION") {
        const where = (error as { type?: string }).type;
        return appErrorResponse(validationToAppError(error, where), headers);
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

