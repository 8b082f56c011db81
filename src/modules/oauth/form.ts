/**
 * Reading the OAuth endpoints' request bodies: application/x-www-form-urlencoded (RFC 6749 §3.2) with each parameter
 * at most once, capped in size. The routes hand over the raw text (their `parse` hook) so nothing is parsed twice.
 */
import { OAuthError } from "./errors";

/** Bodies larger than this are refused (a token request is a few hundred bytes). */
export const MAX_OAUTH_BODY_BYTES = 64 * 1024;

/** The raw body as the routes' parse hook keeps it. */
export interface RawBody {
  raw: string;
}

/** Elysia `parse` hook: keeps the body as text (capped), whatever its type. */
export async function keepRawBody({ request }: { request: Request }): Promise<RawBody> {
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > MAX_OAUTH_BODY_BYTES) return { raw: "\u0000too-large" };
  return { raw: new TextDecoder().decode(bytes) };
}

/** The text of a body kept by keepRawBody; OAuthError invalid_request when too large. */
export function rawText(body: unknown): string {
  const raw = (body as RawBody | undefined)?.raw ?? "";
  if (raw === "\u0000too-large") throw new OAuthError("invalid_request", `The request body is larger than ${MAX_OAUTH_BODY_BYTES} bytes.`);
  return raw;
}

/** Parses a form body; a repeated parameter or another content type is invalid_request. */
export function parseForm(request: Request, body: unknown): Map<string, string> {
  const type = (request.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    throw new OAuthError("invalid_request", "The body must be application/x-www-form-urlencoded.");
  }
  const out = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(rawText(body))) {
    if (out.has(name)) throw new OAuthError("invalid_request", `The parameter ${name} was sent more than once.`);
    out.set(name, value);
  }
  return out;
}
