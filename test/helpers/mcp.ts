/**
 * MCP test plumbing: the app served by a real Bun.serve on 127.0.0.1 (built as `seedcast serve` builds it: Bun's
 * router for the routes, `handle` for the rest, the server passed along), OAuth grants made through the OAuth
 * service, and the SDK's own clients (v2 `@modelcontextprotocol/client`, v1 `@modelcontextprotocol/sdk`) sending
 * the grant's access token. `startMcpWorld` and `grantedAccount` are the setup the MCP test files share.
 */
import type { Server } from "bun";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SCOPES, type Scope } from "../../src/auth/scopes";
import type { Generator } from "../../src/generation/generator";
import { addConnection } from "../../src/modules/connections/service";
import { registerClient } from "../../src/modules/oauth/clients";
import { createGrant, type TokenPair } from "../../src/modules/oauth/service";
import { type WebhookReceiver, startWebhookReceiver } from "../peers/webhook-receiver";
import { WEBHOOK_SECRET } from "../publishing-fixtures";
import { type CallResult, type TestAccount, type World, createWorld } from "./world";

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
export async function registerTestClient(world: World, name = "Test assistant"): Promise<string> {
  const registered = await registerClient(world.deps, {
    client_name: name,
    redirect_uris: ["http://127.0.0.1:9/callback"],
    token_endpoint_auth_method: "none",
  });
  return registered.client_id;
}

/** A grant of `scopes` for `userId` in `accountId`, with its first token pair. */
export async function grantFor(world: World, clientId: string, accountId: string, userId: string, scopes: readonly Scope[]): Promise<TokenPair> {
  return createGrant(world.deps, { clientId, accountId, userId, scopes });
}

/** What the MCP test files share: a world served on 127.0.0.1, a registered OAuth client and a webhook receiver. */
export interface McpWorld {
  world: World;
  served: Served;
  /** `<served.base>/mcp` */
  mcpUrl: string;
  /** The registered public OAuth client the grants are made for. */
  clientId: string;
  /** Signs with publishing-fixtures' WEBHOOK_SECRET; the accounts' webhook targets point here. */
  receiver: WebhookReceiver;
  /** Stops the receiver and the server, then closes the world. */
  close(): Promise<void>;
}

/** Creates a world (`options` as createWorld takes them), serves it, registers an OAuth client and starts a receiver. */
export async function startMcpWorld(options: Parameters<typeof createWorld>[0] = {}): Promise<McpWorld> {
  const world = await createWorld(options);
  const served = serveWorld(world);
  const clientId = await registerTestClient(world);
  const receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  return {
    world,
    served,
    mcpUrl: `${served.base}/mcp`,
    clientId,
    receiver,
    close: async () => {
      await receiver.stop();
      await served.stop();
      await world.close();
    },
  };
}

/**
 * A new account (`credits`, 100 by default) with a ready webhook target at `<receiver>/<hook>` (`hook` by default)
 * and a grant of `scopes` (every scope by default) to its owner. Answers the account and the grant's access token.
 */
export async function grantedAccount(
  m: McpWorld,
  options: { credits?: number; hook?: string; scopes?: readonly Scope[] } = {},
): Promise<{ account: TestAccount; token: string }> {
  const account = await m.world.createAccount({ credits: options.credits ?? 100 });
  await addConnection(m.world.deps, { accountId: account.accountId, platform: "webhook", url: `${m.receiver.url}/${options.hook ?? "hook"}`, secret: WEBHOOK_SECRET });
  const pair = await grantFor(m.world, m.clientId, account.accountId, account.userId, options.scopes ?? SCOPES);
  return { account, token: pair.accessToken };
}

/** `method path` over REST with the account's full API key (to read back what a tool did). */
export function restAs(world: World, account: TestAccount, method: string, path: string, body?: unknown): Promise<CallResult> {
  return world.call(method, path, { key: account.key, ...(body !== undefined ? { body } : {}) });
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
  /** The protocol era it is served in: `modern` (2026-07-28) or `legacy` (2025-era, stateless). */
  era: "modern" | "legacy";
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
  const era = client.getProtocolEra();
  return {
    label: `v2 client (${era})`,
    era: era === "modern" ? "modern" : "legacy",
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
    era: "legacy",
    callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as ToolResult,
    listTools: async () => (await client.listTools()).tools as Awaited<ReturnType<McpClient["listTools"]>>,
    close: () => client.close(),
  };
}

/** Both SDK clients, labelled: v2 negotiating revision 2026-07-28, and v1 served in the 2025-era stateless form. */
export const MCP_CONNECTORS: readonly (readonly [string, (url: string, token: string) => Promise<McpClient>])[] = [
  ["v2 client, revision 2026-07-28", (url, token) => connectV2(url, token, "auto")],
  ["v1 client, 2025-era stateless", (url, token) => connectV1(url, token)],
];

/**
 * The REST error envelope a refusal carries: its structuredContent for a client on 2026-07-28; for a 2025-era client
 * (whose SDK checks even a refusal's structuredContent against the success schema) the JSON of its second text block,
 * with no structuredContent at all. Throws when `result` is not a refusal of that shape.
 */
// biome-ignore lint: tests read arbitrary JSON shapes.
export function refusalOf(client: Pick<McpClient, "era">, result: ToolResult): any {
  if (result.isError !== true) throw new Error(`not a refusal: ${JSON.stringify(result)}`);
  if (client.era === "modern") return result.structuredContent;
  if (result.structuredContent !== undefined) throw new Error("a 2025-era refusal carries no structuredContent");
  const envelope = result.content[1]?.text;
  if (envelope === undefined) throw new Error(`a 2025-era refusal carries its envelope as a second text block: ${JSON.stringify(result)}`);
  return JSON.parse(envelope);
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

/**
 * Calls every tool once (§9, §10 and §15's list_creation_versions), in an order where each finds what it needs (a seed to generate from, a creation
 * to schedule, a post to move and cancel). The account must have a ready target named `webhook` and credits for one
 * generation and one caption regeneration; `imageUrl` is an https image the server may fetch (its origin also takes
 * the event webhook). Throws naming the first tool whose result is a refusal. Answers every result by tool name.
 */
export async function callEveryTool(
  client: McpClient,
  opts: {
    imageUrl: string;
    scheduledTime: string;
    markUnconfirmed: (postId: string) => Promise<void>;
    /** Puts a post in the state an editor's post has when the account requires approval (the test's grant is an owner's). */
    markPendingApproval: (postId: string) => Promise<void>;
  },
): Promise<Map<string, ToolResult>> {
  const results = new Map<string, ToolResult>();
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool(name, args);
    if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
    results.set(name, result);
    return result.structuredContent;
  };
  await call("get_credits");
  await call("list_credit_ledger", { limit: 5 });
  await call("set_voice", { tone: "friendly", emoji: "some" });
  await call("get_voice");
  const seed = await call("create_seed", { title: "Autumn opening hours", content: "From October we open at eight and close at six, Monday to Saturday.", idempotency_key: crypto.randomUUID() });
  await call("list_seeds", { search: "autumn" });
  await call("get_seed", { id: seed.id });
  await call("update_seed", { id: seed.id, category: "news" });
  const asset = (await call("ingest_image", { url: opts.imageUrl, label: "Shop front" })).asset;
  await call("list_assets", { limit: 10 });
  const link = await call("create_upload_link");
  await call("get_upload_link", { id: link.id });
  const creation = (await call("generate_creation", { seed_id: seed.id, image_asset_id: asset.id })).creation;
  await call("regenerate_creation", { id: creation.id, parts: "caption", change_instructions: "shorter" });
  await call("list_creations", { seed_id: seed.id });
  await call("get_creation", { id: creation.id });
  await call("update_creation", { id: creation.id, caption: "From October: open eight to six, Monday to Saturday." });
  await call("list_creation_versions", { id: creation.id });
  const targets = (await call("list_targets")).targets as { accountId: string; platform: string }[];
  // A post written by hand, whose delivery the network could not confirm (as Telegram's would be): answered "posted".
  const byHand = (await call("create_creation", { caption: "Open on Sundays too from November.", idempotency_key: crypto.randomUUID() })).creation;
  const unsure = (await call("schedule_post", { creation_id: byHand.id, scheduled_time: opts.scheduledTime, targets: ["webhook"] })).post;
  await opts.markUnconfirmed(unsure.id);
  await call("resolve_unconfirmed_target", { id: unsure.id, account_id: targets.find((t) => t.platform === "webhook")?.accountId, outcome: "posted" });
  const post = (await call("schedule_post", { creation_id: creation.id, scheduled_time: opts.scheduledTime, targets: ["webhook"] })).post;
  await call("list_posts", { status: "scheduled" });
  await call("get_post", { id: post.id });
  await call("reschedule_post", {
    id: post.id,
    scheduled_time: new Date(Date.parse(opts.scheduledTime) + 3_600_000).toISOString(),
    content: { caption: "From October we open eight to six, Monday to Saturday." },
  });
  await call("cancel_post", { id: post.id });
  await call("delete_creation", { id: creation.id });
  await call("delete_asset", { id: asset.id });
  const hook = await call("create_webhook", { url: `${new URL(opts.imageUrl).origin}/events`, events: ["post.published"] });
  await call("list_webhooks");
  await call("delete_webhook", { id: hook.webhook.id });
  const feed = (await call("add_feed", { url: `${new URL(opts.imageUrl).origin}/feed.json`, mode: "seed", idempotency_key: crypto.randomUUID() })).feed;
  await call("list_feeds");
  await call("get_feed", { id: feed.id });
  await call("poll_feed", { id: feed.id });
  await call("delete_feed", { feed_id: feed.id });
  // The account's settings, its posting schedule, a repeating post, and approval.
  await call("get_account");
  await call("update_account", { time_zone: "Europe/Berlin" });
  const webhookId = targets.find((t) => t.platform === "webhook")?.accountId;
  await call("get_slots");
  await call("set_slots", { timeZone: "Europe/Berlin", slots: [{ days: ["mon", "thu"], time: "09:00", targets: [webhookId] }] });
  const weekly = (await call("create_creation", { caption: "Fresh pretzels every Thursday.", idempotency_key: crypto.randomUUID() })).creation;
  const repeating = (await call("schedule_post", { creation_id: weekly.id, queue: true, targets: ["webhook"], repeat: { every: "week", count: 4 } })).post;
  await call("end_series", { id: repeating.seriesId });
  const waiting = [];
  for (const caption of ["Closed on the 24th.", "Half price on the 2nd."]) {
    const made = (await call("create_creation", { caption, idempotency_key: crypto.randomUUID() })).creation;
    const scheduled = (await call("schedule_post", { creation_id: made.id, scheduled_time: opts.scheduledTime, targets: ["webhook"] })).post;
    await opts.markPendingApproval(scheduled.id);
    waiting.push(scheduled.id);
  }
  await call("list_approvals");
  await call("approve_post", { id: waiting[0] });
  await call("reject_post", { id: waiting[1], note: "Not this week." });
  const csv = `caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment\n"Market day, 8–12.",,,${opts.scheduledTime},,webhook,\n`;
  await call("import_posts", { csv });
  await call("delete_seed", { id: seed.id });
  return results;
}
