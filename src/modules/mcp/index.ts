/** The MCP endpoint's routes: POST, GET and DELETE /mcp all go to the one handler (endpoint.ts). */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { MCP_PATH, mcpEndpoint } from "./endpoint";
import { TOOLS } from "./tools";

/** Stands in for the parsed body: the endpoint reads the request itself, under its own cap. */
const DEFERRED_BODY = Object.freeze({ deferred: true });

const DESCRIPTION =
  "Model Context Protocol (Streamable HTTP, stateless; revision 2026-07-28 and 2025-era clients) for AI assistants. " +
  "Takes an OAuth access token from Seedcast's own sign-in (`Authorization: Bearer sco_…`), never an API key; without one " +
  "it answers 401 with `WWW-Authenticate: Bearer resource_metadata=\"{base_url}/.well-known/oauth-protected-resource/mcp\"`. " +
  "A tool outside the granted groups answers 403 with `error=\"insufficient_scope\"` and the group needed. Tools: " +
  TOOLS.map((tool) => `\`${tool.name}\` (${tool.group})`).join(", ") +
  ".";

/** The JSON-RPC error object the SDK (and the Origin check) answers with. */
const jsonRpcError = {
  type: "object",
  required: ["jsonrpc", "error"],
  properties: {
    jsonrpc: { type: "string", enum: ["2.0"] },
    id: { type: ["string", "integer", "null"] },
    error: { type: "object", required: ["code", "message"], properties: { code: { type: "integer" }, message: { type: "string" } } },
  },
} as const;
/** The OAuth refusals (RFC 6750 §3.1) of the credential and group checks. */
const bearerError = {
  type: "object",
  required: ["error", "error_description"],
  properties: {
    error: { type: "string", enum: ["unauthorized", "invalid_token", "insufficient_scope"] },
    error_description: { type: "string" },
    scope: { type: "string", description: "insufficient_scope: the group the tool needs" },
  },
} as const;
const challenge = { "WWW-Authenticate": { description: "Bearer challenge with resource_metadata (and error, scope)", schema: { type: "string" as const } } };
const envelope = { $ref: "#/components/schemas/Error" };

/** Every answer of POST /mcp, for the OpenAPI document. */
const MCP_RESPONSES = {
  200: {
    description: "The JSON-RPC answer: a server-sent event stream, or JSON when the client asked for JSON only",
    content: {
      "text/event-stream": { schema: { type: "string" as const } },
      "application/json": { schema: { type: "object" as const, required: ["jsonrpc"], properties: { jsonrpc: { type: "string" as const, enum: ["2.0"] } } } },
    },
  },
  202: { description: "A notification or response was accepted (nothing to answer)" },
  400: {
    description:
      "Not a JSON-RPC message (parse error -32700), or a batch the request may not send (-32600: MCP-Protocol-Version 2025-06-18 or later, or more messages than a minute's rate limit)",
    content: { "application/json": { schema: jsonRpcError } },
  },
  401: { description: "No OAuth access token, or not a valid one (API keys are refused here)", headers: challenge, content: { "application/json": { schema: bearerError } } },
  403: {
    description: "insufficient_scope (a tool outside the granted groups; nothing done), or a browser page on another origin",
    headers: challenge,
    content: { "application/json": { schema: { anyOf: [bearerError, jsonRpcError] } } },
  },
  406: { description: "Accept must name both application/json and text/event-stream", content: { "application/json": { schema: jsonRpcError } } },
  413: { description: "payload_too_large: the body is over 1 MiB", content: { "application/json": { schema: envelope } } },
  429: {
    description: "rate_limited: too many requests for this connection",
    headers: { "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" as const, minimum: 1 } } },
    content: { "application/json": { schema: { $ref: "#/components/schemas/RateLimited" } } },
  },
};

// Typed as a plain object: the plugin's detail type is OpenAPI 3.0's, which has no type arrays.
const MCP_DOC: object = {
  requestBody: {
    required: true,
    content: { "application/json": { schema: { type: "object", description: "One JSON-RPC 2.0 message (MCP)." } } },
  },
  responses: MCP_RESPONSES,
};

/** Mounts /mcp. */
export function mcpModule(deps: Deps) {
  const endpoint = mcpEndpoint(deps);
  const hidden = { detail: { hide: true } };
  return new Elysia()
    .post(MCP_PATH, ({ request }) => endpoint(request), {
      parse: () => DEFERRED_BODY,
      detail: {
        summary: "MCP endpoint for AI assistants (OAuth sign-in, no key)",
        description: DESCRIPTION,
        tags: ["mcp"],
        security: [{ oauth2: [] }],
        ...MCP_DOC,
      },
    })
    .get(MCP_PATH, ({ request }) => endpoint(request), hidden)
    .delete(MCP_PATH, ({ request }) => endpoint(request), { ...hidden, parse: () => DEFERRED_BODY });
}
