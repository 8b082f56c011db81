/**
 * The opaque list cursor: the (createdAt, id) of the last row of a page, base64url-encoded. Clients only hand it back.
 */
import { invalidField } from "../../lib/errors";
import { isUuid } from "../../lib/ids";

export interface CursorPosition {
  createdAt: number;
  id: string;
}

/** Encodes the position after which the next page starts. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url");
}

/** Decodes a cursor, or throws 400 invalid_request naming `cursor`. */
export function decodeCursor(cursor: string): CursorPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && isUuid(value[1])) {
      return { createdAt: value[0] as number, id: value[1] as string };
    }
  } catch {
    // fall through to the refusal below
  }
  throw invalidField("cursor", "is not a cursor this API returned");
}
