/**
 * Opaque cursors of GET /seeds. Newest-first pages continue after (createdAt, seq) of the last row; ranked search
 * pages continue at an offset, bound to the search text so a cursor cannot be replayed against another search.
 */
import { invalidField } from "../../lib/errors";

export type SeedCursor = { kind: "newest"; createdAt: number; seq: number } | { kind: "search"; offset: number; search: string };

function hashSearch(search: string): string {
  return new Bun.CryptoHasher("sha256").update(search).digest("hex").slice(0, 16);
}

/** Encodes a cursor (base64url JSON; clients must treat it as opaque). */
export function encodeSeedCursor(cursor: SeedCursor): string {
  const data = cursor.kind === "newest" ? { t: cursor.createdAt, s: cursor.seq } : { o: cursor.offset, h: hashSearch(cursor.search) };
  return Buffer.from(JSON.stringify(data), "utf8").toString("base64url");
}

const refusal = () => invalidField("cursor", "is not a cursor this list returned for this search");

/** Decodes a cursor for a list with `search` (null: newest first); 400 invalid_request when it does not fit. */
export function decodeSeedCursor(raw: string, search: string | null): SeedCursor {
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
  } catch {
    throw refusal();
  }
  if (!data || typeof data !== "object") throw refusal();
  const d = data as Record<string, unknown>;
  if (search === null && Number.isSafeInteger(d.t) && Number.isSafeInteger(d.s)) {
    return { kind: "newest", createdAt: d.t as number, seq: d.s as number };
  }
  if (search !== null && Number.isSafeInteger(d.o) && (d.o as number) >= 0 && d.h === hashSearch(search)) {
    return { kind: "search", offset: d.o as number, search };
  }
  throw refusal();
}
