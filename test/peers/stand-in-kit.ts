/**
 * Small pieces every network stand-in under test/peers uses: HTML escaping for their authorization pages, the answer
 * cut off mid-body (how a network's success is lost on the wire: stored on its side, never read on ours), Meta's Graph
 * API error envelope and its numeric ids (Facebook, Instagram and Threads share the Graph API's shapes).
 */
import { randomBytes } from "node:crypto";

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };

/** Text made safe inside HTML text and double-quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c] ?? c);
}

/**
 * An answer whose body ends long before the length it announced: the client never gets the whole answer. `start` is
 * the JSON the network would have begun with (`{"id":`, X's `{"data":`); `status` its success status.
 */
export function cutOffAnswer(status: number, start = '{"id":'): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(start));
      controller.close();
    },
  });
  return new Response(body, { status, headers: { "content-type": "application/json", "content-length": "4096" } });
}

/**
 * A Graph API error (developers.facebook.com/docs/graph-api/guides/error-handling): `{error: {message, type, code,
 * error_subcode?, fbtrace_id}}`. Code 190 (an invalid token) is an OAuthException on every Meta API; other errors carry
 * the API's own type (`apiType`: GraphMethodException, IGApiException, THApiException).
 */
export function graphError(apiType: string, status: number, message: string, code: number, subcode?: number): Response {
  const error: Record<string, unknown> = { message, type: code === 190 ? "OAuthException" : apiType, code, fbtrace_id: `A${randomBytes(8).toString("hex")}` };
  if (subcode !== undefined) error.error_subcode = subcode;
  return Response.json({ error }, { status });
}

/** Numeric ids as a Graph API hands them out (decimal strings, rising, with gaps), starting after `first`. */
export function graphIds(first: bigint): () => string {
  let seq = first;
  return () => {
    seq += BigInt(1 + Math.floor(Math.random() * 1000));
    return String(seq);
  };
}
