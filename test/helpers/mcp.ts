/**
 * MCP test plumbing: the app served by a real Bun.serve on 127.0.0.1 (built as `seedcast serve` builds it: Bun's
 * router for the routes, `handle` for the rest, the server passed along), OAuth grants made through the OAuth
 * service, and the SDK's own clients (v2 `@modelcontextprotocol/client`, v1 `@modelcontextprotocol/sdk`) sending
 * the grant's access token.
 */
import type { Server } from "bun";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Scope } from "../../src/modules/auth/scopes";
import { registerClient } from "../../src/modules/oauth/clients";
import { createGrant, type TokenPair } from "../../src/modules/oauth/service";
import type { World } from "./world";

export interface Served {
  server: Server<undefined>;
  /** `http://127.0.0.1:PORT` */
  base: string;
  stop(): Promise<void>;
}

/** Serves `world.app` on 127.0.0.1 and a free port, the way `seedcast serve` does. */
export function serveWorld(world: World, options: { idleTimeout?: number } = {}): Served {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    ...(options.idleTimeout !== undefined ? { idleTimeout: options.idleTimeout } : {}),
    routes: world.app.servedRoutes(),
    fetch: (request, srv) => world.app.handle(request, srv),
  });
  return { server, base: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** Registers a public OAuth client (as dynamic registration would) and answers its id. */
export function registerTestClient(world: World, name = "Test assistant"): string {
  return registerClient(world.deps, {
    client_name: name,
    redirect_uris: ["http://127.0.0.1:9/callback"],
    token_endpoint_auth_method: "none",
  }).client_id;
}

/** A grant of `scopes` for `userId` in `accountId`, with its first token pair. */
export function grantFor(world: World, clientId: string, accountId: string, userId: string, scopes: readonly Scope[]): TokenPair {
  return createGrant(world.deps, { clientId, accountId, userId, scopes });
}

/** The parts of a tool result the tests read, whichever client produced it. */
export interface ToolResult {
  isError?: boolean;
  // biome-ignore lint: tests read arbitrary JSON shapes.
  structuredContent?: any;
  content: { type: string; text?: string }[];
}

/** What the tests need of a connected client, v1 or v2. */
export interface McpClient {
  label: string;
  callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  listTools(): Promise<{ name: string; annotations?: Record<string, unknown>; inputSchema: unknown; outputSchema?: unknown }[]>;
  close(): Promise<void>;
}

function bearer(token: string): RequestInit {
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The v2 client, negotiating the era (`auto` finds 2026-07-28 here) or in its default 2025 handshake. */
export async function connectV2(url: string, token: string, mode: "auto" | "legacy" = "auto"): Promise<McpClient> {
  const client = new ClientV2({ name: "seedcast-test-v2", version: "1.0.0" }, mode === "auto" ? { versionNegotiation: { mode: "auto" } } : {});
  await client.connect(new TransportV2(new URL(url), { requestInit: bearer(token) }));
  return {
    label: `v2 client (${client.getProtocolEra()})`,
    callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
    listTools: async () => (await client.listTools()).tools as Awaited<ReturnType<McpClient["listTools"]>>,
    close: () => client.close(),
  };
}

/** The v1 client (`@modelcontextprotocol/sdk`), a 2025-era client served in its stateless form. */
export async function connectV1(url: string, token: string): Promise<McpClient> {
  const client = new ClientV1({ name: "seedcast-test-v1", version: "1.0.0" });
  await client.connect(new TransportV1(new URL(url), { requestInit: bearer(token) }));
  return {
    label: "v1 client (legacy)",
    callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
    listTools: async () => (await client.listTools()).tools as Awaited<ReturnType<McpClient["listTools"]>>,
    close: () => client.close(),
  };
}

/** A raw JSON-RPC POST to /mcp (for the HTTP-level answers the clients turn into exceptions). */
export async function rawMcpPost(
  url: string,
  message: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: typeof message === "string" ? message : JSON.stringify(message),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** A 2025-era `tools/call` message (the legacy stateless form needs no handshake before it). */
export function toolsCall(name: string, args: Record<string, unknown> = {}, id = 1): unknown {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}
