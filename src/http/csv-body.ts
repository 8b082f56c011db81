/**
 * The body parser of the one /api/v1 route that takes CSV (POST /api/v1/schedule/import, decisions.md §14), given as
 * that route's `parse` option. Only `text/csv` is taken there (415 unsupported_media_type otherwise, before a byte is
 * read); the body is read under MAX_CSV_BYTES as it arrives (413 past it, a chunked body too), must be UTF-8 (a BOM
 * is dropped) and hold no NUL. Every other route keeps parseJsonBody and refuses CSV with 415.
 */
import { AppError, invalidField } from "../lib/errors";
import { readStreamCapped } from "../lib/read-capped";

/** CSV bodies larger than this answer 413: 10,000 rows of 1 KiB each fit. */
export const MAX_CSV_BYTES = 10 * 1024 * 1024;

/** The routes (method and path) whose body is CSV: their Idempotency-Key fingerprints read up to MAX_CSV_BYTES. */
export const CSV_BODY_ROUTES: ReadonlySet<string> = new Set(["POST /api/v1/schedule/import"]);

const CSV_TYPE_RE = /^text\/csv\s*(?:;|$)/i;

/** True when `contentType` names CSV. */
export function isCsvContentType(contentType: string): boolean {
  return CSV_TYPE_RE.test(contentType.trim());
}

/** Parses a CSV body to its text. */
export async function parseCsvBody({ request, contentType }: { request: Request; contentType: string }): Promise<string> {
  const type = (contentType ?? "").trim();
  if (!isCsvContentType(type)) {
    throw new AppError("unsupported_media_type", `This route takes CSV (Content-Type: text/csv)${type === "" ? "" : `, not ${type.slice(0, 100)}`}.`, {
      details: [{ field: "Content-Type", problem: "must be text/csv" }],
    });
  }
  const bytes = await readStreamCapped(request.body, MAX_CSV_BYTES);
  if (bytes === null) throw new AppError("payload_too_large", `CSV bodies are limited to ${MAX_CSV_BYTES} bytes.`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalidField("body", "must be UTF-8 text");
  }
  if (text.includes("\u0000")) throw invalidField("body", "must not contain NUL characters");
  return text;
}
