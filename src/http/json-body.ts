/**
 * The JSON body parser of every /api/v1 route that takes a body, given as the route's `parse` option
 * (`parse: parseJsonBody`). Request bodies under /api/v1 are JSON only (decisions.md §10): any other Content-Type
 * answers 415 unsupported_media_type before a byte of the body is read, so a multipart or urlencoded body can no
 * longer slip past the 1 MiB cap. The JSON body is read under that cap as it arrives (a chunked body over 1 MiB
 * answers 413 too), and invalid JSON answers the envelope's `invalid_request`.
 *
 * NB: per route, not a global onParse hook. Elysia compiles every route that has a parse hook, a GET included, into an
 * async handler; a global parser made every request pay for a promise it never needed.
 */
import { AppError, invalidField } from "../lib/errors";
import { readStreamCapped } from "../lib/read-capped";
import { loneSurrogateField, mayHoldLoneSurrogate } from "../lib/unicode-text";

/**
 * `\u0000` written as a JSON escape (an odd run of backslashes before `u0000`; a raw NUL is invalid JSON already).
 * No text field takes NUL: SQLite's length() stops at it (a seed title starting with one failed a CHECK, a 500).
 */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/i;

/** JSON bodies under /api/v1 larger than this answer 413. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** `application/json` and structured `+json` types (`application/merge-patch+json`), with any parameters. */
const JSON_TYPE_RE = /^application\/(?:[a-z0-9!#$&^_.-]+\+)?json\s*(?:;|$)/i;

/** True when `contentType` names JSON. */
export function isJsonContentType(contentType: string): boolean {
  return JSON_TYPE_RE.test(contentType.trim());
}

function unsupported(contentType: string | null): AppError {
  const message =
    contentType === null
      ? "Request bodies must be JSON; send the body with Content-Type: application/json."
      : `Request bodies must be JSON (Content-Type: application/json), not ${contentType.trim().slice(0, 100)}.`;
  return new AppError("unsupported_media_type", message, {
    details: [{ field: "Content-Type", problem: "must be application/json" }],
  });
}

function tooLarge(): AppError {
  return new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
}

/**
 * Parses a JSON body. A body without a Content-Type is refused like any other non-JSON one; a request with neither
 * (a POST with nothing to send, a DELETE) parses to undefined. A DELETE that names another type but sends nothing is
 * let through: it has no body to refuse.
 */
export async function parseJsonBody({ request, contentType }: { request: Request; contentType: string }): Promise<unknown> {
  const type = (contentType ?? "").trim();
  if (type !== "" && !isJsonContentType(type)) {
    const bodyless = request.method === "DELETE" && (request.headers.get("content-length") ?? "0") === "0" && !request.headers.has("transfer-encoding");
    if (!bodyless) throw unsupported(type);
    return undefined;
  }
  // Counted as it streams: a chunked body (no Content-Length for the pipeline to check) stops at the cap.
  const bytes = await readStreamCapped(request.body, MAX_JSON_BYTES);
  if (bytes === null) throw tooLarge();
  if (type === "") {
    if (bytes.byteLength === 0) return undefined;
    throw unsupported(null);
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
  // Every body under /api/v1 is an object. NB: checked here because Elysia lets a string, number or array through a
  // schema whose properties are all optional (PATCH /seeds/{id} answered 200 to `"x"`).
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new AppError("invalid_request", "body: must be a JSON object", { details: [{ field: "body", problem: "must be a JSON object" }] });
  }
  if (text.includes("\\u") && ESCAPED_NUL.test(text)) {
    throw new AppError("invalid_request", "The body holds a NUL character (\\u0000), which no field accepts.", {
      details: [{ field: "body", problem: "must not contain NUL characters" }],
    });
  }
  // A lone surrogate (`"\uD800"` without its pair) parses to text no UTF-8 store keeps as sent: refused by name.
  const unpaired = mayHoldLoneSurrogate(text) ? loneSurrogateField(parsed) : null;
  if (unpaired) throw invalidField(unpaired.field, unpaired.problem);
  return parsed;
}
