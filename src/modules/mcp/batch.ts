/**
 * JSON-RPC batches at /mcp (decisions.md §10). Only revision 2025-03-26 had them: 2025-06-18 removed batching, and
 * 2026-07-28 is one message per request. A batch is let through only when the request's `MCP-Protocol-Version` names
 * an earlier revision or none (a 2025-03-26 client sends none); it then costs one rate-limit token per message, so a
 * batch is no way around the per-grant limit. A batch bigger than a whole minute's budget could never be let through,
 * so it is refused outright rather than told to wait.
 */

/** The first revision without JSON-RPC batching. */
export const BATCHLESS_SINCE = "2025-06-18";

const REVISION_RE = /^\d{4}-\d{2}-\d{2}$/;
const INVALID_REQUEST = -32600;

/** A JSON-RPC error answer (the shape the SDK's own refusals have). */
function jsonRpcRefusal(message: string): Response {
  const body = { jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message } };
  return new Response(JSON.stringify(body), { status: 400, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });
}

/**
 * The refusal of a batch of `size` messages sent with `protocolVersion` (the header, or null) to a grant allowed
 * `perMinute` requests a minute; null when the batch may go on (and be charged `size` tokens).
 */
export function batchRefusal(protocolVersion: string | null, size: number, perMinute: number): Response | null {
  const revision = protocolVersion?.trim() ?? "";
  if (REVISION_RE.test(revision) && revision >= BATCHLESS_SINCE) {
    return jsonRpcRefusal(
      `Invalid Request: protocol revision ${revision} has no JSON-RPC batches (they ended with ${BATCHLESS_SINCE}); send one message per request.`,
    );
  }
  if (size > perMinute) {
    return jsonRpcRefusal(`Invalid Request: a batch may hold at most ${perMinute} messages (this connection's requests per minute); send fewer at once.`);
  }
  return null;
}
