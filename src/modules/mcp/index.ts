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
        requestBody: {
          required: true,
          content: { "application/json": { schema: { type: "object", description: "One JSON-RPC 2.0 message (MCP)." } } },
        },
        responses: {
          200: { description: "The JSON-RPC answer, as application/json or a text/event-stream of messages." },
          202: { description: "A notification or response was accepted." },
          401: { description: "No working OAuth access token; `WWW-Authenticate` names the resource metadata." },
          403: { description: "A browser Origin other than the server's, or a tool outside the grant (`insufficient_scope`)." },
          413: { description: "The body is over 1 MiB (`payload_too_large`)." },
          429: { description: "Too many requests for this connection (`rate_limited`, `Retry-After`)." },
        },
      },
    })
    .get(MCP_PATH, ({ request }) => endpoint(request), hidden)
    .delete(MCP_PATH, ({ request }) => endpoint(request), { ...hidden, parse: () => DEFERRED_BODY });
}
