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
import { readStreamCapped } from "../lib/read-capped";

/**
 * `\u0000` written as a JSON escape (an odd run of backslashes before `u0000`; a raw NUL is invalid JSON already).
 * No text field takes NUL: SQLite's length() stops at it (a seed title starting with one failed a CHECK, a 500).
 */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/i;

/** JSON bodies under /api/v1 larger than this answer 413. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** Parses a JSON body; undefined (Elysia's parsers go on) for any other content type. */
export async function parseJsonBody({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
  if (!contentType?.startsWith("application/json")) return undefined;
  // Counted as it streams: a chunked body (no Content-Length for the pipeline to check) stops at the cap.
  const bytes = await readStreamCapped(request.body, MAX_JSON_BYTES);
  if (bytes === null) {
    throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
  }
  if (bytes.byteLength === 0) return {};
  const text = new TextDecoder().decode(bytes);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw new AppError("invalid_request", "The body is not valid JSON.", {
      details: [{ field: "body", problem: "is not valid JSON" }],
    });
  }
  if (text.includes("\\u") && ESCAPED_NUL.test(text)) {
    throw new AppError("invalid_request", "The body holds a NUL character (\\u0000), which no field accepts.", {
      details: [{ field: "body", problem: "must not contain NUL characters" }],
    });
  }
  return parsed;
}
