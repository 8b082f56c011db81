/**
 * `/mcp`: the Model Context Protocol endpoint (decisions.md §9), Streamable HTTP, stateless, served by the SDK's
 * web-standard handler (`createMcpHandler`: revision 2026-07-28, and 2025-era clients in their stateless form).
 *
 * Before the SDK sees a request, in this order:
 * 1. Origin: a browser page on another origin than base_url → 403 (a request without Origin is no browser's).
 * 2. Credential: an OAuth access token, resolved to its grant at every request (revoked, expired, removed member,
 *    disabled account: all refused) → else 401 with the resource-metadata challenge. API keys are refused.
 * 3. Size: a body over 1 MiB → 413 payload_too_large.
 * 4. Group: every `tools/call` in the body names a tool whose group the grant holds → else 403 insufficient_scope,
 *    nothing done.
 * 5. Batches (batch.ts): refused on revisions that dropped them (2025-06-18 and later) with a JSON-RPC error.
 * 6. Rate: the grant's bucket, as each API key has its own, one token per message (a batch costs its length) → else
 *    429 rate_limited with Retry-After.
 *
 * The SDK then answers: tools/list, tools/call (tool-server.ts), the 2026 `server/discover` and the 2025 `initialize`.
 * The request's idle timeout is lifted, so a quiet SSE stream (a long generation) is not cut by Bun after 10 s.
 */
import { type AuthInfo, createMcpHandler } from "@modelcontextprotocol/server";
import type { Deps } from "../../deps";
import { appErrorResponse } from "../../http/error-response";
import { MAX_JSON_BYTES } from "../../http/json-body";
import { requestState } from "../../http/request-context";
import { AppError } from "../../lib/errors";
import { readStreamCapped } from "../../lib/read-capped";
import { bearerToken } from "../../auth/authenticate";
import type { Scope } from "../../auth/scopes";
import { batchRefusal } from "./batch";
import { foreignOriginResponse, insufficientScopeResponse, unauthorizedResponse } from "./challenge";
import { authenticateAccessToken, takeGrantRequest } from "../oauth/access-token";
import type { McpPrincipal } from "./principal";
import { createToolServer } from "./tool-server";
import { TOOLS_BY_NAME } from "./tools";

export const MCP_PATH = "/mcp";

/** Carries the principal (and which tools the request calls) from the gate to the per-request server. */
interface PrincipalAuthInfo extends AuthInfo {
  extra: { principal: McpPrincipal; calls: ReadonlySet<string> | null };
}

/**
 * The tools `message` (one JSON-RPC message or a 2025-03 batch) calls, or null when it is anything but tool calls
 * (then the server gets every tool: tools/list must show them all).
 */
function calledTools(message: unknown): Set<string> | null {
  const messages = Array.isArray(message) ? message : [message];
  const names = new Set<string>();
  for (const one of messages) {
    if (one === null || typeof one !== "object") return null;
    const { method, params } = one as { method?: unknown; params?: { name?: unknown } };
    if (method !== "tools/call" || typeof params?.name !== "string") return null;
    names.add(params.name);
  }
  return names.size > 0 ? names : null;
}

/** The first tool call in `message` (one JSON-RPC message or a batch) whose group `scopes` lacks. */
function toolOutsideGrant(message: unknown, scopes: readonly Scope[]): { tool: string; group: Scope } | null {
  const messages = Array.isArray(message) ? message : [message];
  for (const one of messages) {
    if (one === null || typeof one !== "object") continue;
    const { method, params } = one as { method?: unknown; params?: { name?: unknown } };
    if (method !== "tools/call" || typeof params?.name !== "string") continue;
    const tool = TOOLS_BY_NAME.get(params.name);
    if (tool && !scopes.includes(tool.group)) return { tool: tool.name, group: tool.group };
  }
  return null;
}

function isJsonContentType(value: string | null): boolean {
  return value !== null && value.split(";")[0]?.trim().toLowerCase() === "application/json";
}

/** The body's text, or null when it is longer than MAX_JSON_BYTES. */
async function bodyText(request: Request): Promise<string | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > MAX_JSON_BYTES) return null;
    return request.text();
  }
  const bytes = await readStreamCapped(request.body, MAX_JSON_BYTES);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

/** The /mcp handler: the gate above, then the SDK. */
export function mcpEndpoint(deps: Deps): (request: Request) => Promise<Response> {
  const baseUrl = deps.config.baseUrl;
  const ownOrigin = new URL(baseUrl).origin;
  const resource = new URL(`${baseUrl}${MCP_PATH}`);
  const handler = createMcpHandler(
    ({ authInfo, era }) => {
      const { principal, calls } = (authInfo as PrincipalAuthInfo).extra;
      return createToolServer(deps, principal, authInfo?.token ?? "", calls, era);
    },
    {
      onerror: (error) => deps.log.debug("mcp request refused by the SDK", { error: error.message }),
    },
  );

  return async (request) => {
    requestState(request)?.server?.timeout?.(request, 0);

    const origin = request.headers.get("origin");
    if (origin !== null && origin !== ownOrigin) return foreignOriginResponse();

    const authorization = request.headers.get("authorization");
    if (authorization === null || authorization.trim() === "") return unauthorizedResponse(baseUrl, false);
    const token = bearerToken(authorization);
    const principal = token === null ? null : await authenticateAccessToken(deps, token);
    if (token === null || principal === null) return unauthorizedResponse(baseUrl, true);

    let forward = request;
    let parsedBody: unknown;
    if (request.method === "POST" && isJsonContentType(request.headers.get("content-type"))) {
      const text = await bodyText(request);
      if (text === null) {
        return appErrorResponse(new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`));
      }
      try {
        parsedBody = text === "" ? undefined : (JSON.parse(text) as unknown);
      } catch {
        parsedBody = undefined;
      }
      // Parsed, the SDK takes the body from `parsedBody` and reads only the request's headers, so the request goes on
      // as it is. Not JSON (or empty): nothing can call a tool, and the SDK answers the parse error itself from the
      // bytes as they came, on a request of its own (this one's body is spent).
      if (parsedBody === undefined) forward = new Request(request.url, { method: "POST", headers: request.headers, body: text });
      const outside = toolOutsideGrant(parsedBody, principal.scopes);
      if (outside) return insufficientScopeResponse(baseUrl, outside.group, outside.tool);
      if (Array.isArray(parsedBody)) {
        const refused = batchRefusal(request.headers.get("mcp-protocol-version"), parsedBody.length, deps.config.rateLimitPerMinute);
        if (refused) return refused;
      }
    }

    const messages = Array.isArray(parsedBody) ? Math.max(1, parsedBody.length) : 1;
    const wait = await takeGrantRequest(deps, principal.grantId, messages);
    if (wait > 0) {
      const limited = new AppError("rate_limited", `Too many requests for this connection; retry in ${wait} s.`, { retryAfterSeconds: wait });
      return appErrorResponse(limited, { "retry-after": String(wait) });
    }

    const authInfo: PrincipalAuthInfo = {
      token,
      clientId: principal.clientId,
      scopes: principal.scopes,
      resource,
      extra: { principal, calls: calledTools(parsedBody) },
    };
    return handler.fetch(forward, { authInfo, ...(parsedBody !== undefined ? { parsedBody } : {}) });
  };
}
