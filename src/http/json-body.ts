/**
 * The JSON body parser of every /api/v1 route that takes a body, given as the route's `parse` option
 * (`parse: parseJsonBody`). It counts what actually arrives, so a chunked body over 1 MiB answers 413 too, and answers
 * invalid JSON with the envelope's `invalid_request`. Other content types fall through to Elysia's own parsers, whose
 * refusals the envelope maps (envelope.ts).
 *
 * NB: per route, not a global onParse hook. Elysia compiles every route that has a parse hook, a GET included, into an
 * async handler; a global parser made every request pay for a promise it never needed.
 */
import { AppError } from "../lib/errors";

/** JSON bodies under /api/v1 larger than this answer 413. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** Parses a JSON body; undefined (Elysia's parsers go on) for any other content type. */
export async function parseJsonBody({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
  if (!contentType?.startsWith("application/json")) return undefined;
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > MAX_JSON_BYTES) {
    throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
  }
  if (bytes.byteLength === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.", {
      details: [{ field: "body", problem: "is not valid JSON" }],
    });
  }
  // Every body under /api/v1 is an object. NB: checked here because Elysia lets a string, number or array through a
  // schema whose properties are all optional (PATCH /seeds/{id} answered 200 to `"x"`).
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError("invalid_request", "body: must be a JSON object", { details: [{ field: "body", problem: "must be a JSON object" }] });
  }
  return parsed;
}
