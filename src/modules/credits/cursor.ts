/** Opaque list cursors for the ledger: the last id seen, base64url-encoded so clients do not parse it. */
import { invalidField } from "../../lib/errors";
import { isUuid } from "../../lib/ids";

/** Encodes the id of the last row of a page. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, "utf8").toString("base64url");
}

/** Decodes a cursor from `encodeCursor`; 400 invalid_request for anything else. */
export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!isUuid(id)) throw invalidField("cursor", "is not a cursor this API returned");
  return id;
}
