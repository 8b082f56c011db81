/**
 * The whole connector as an AI assistant meets it, with the SDK's own OAuth clients against the served app: the 401
 * challenge → protected resource metadata (RFC 9728) → authorization server metadata (RFC 8414) → dynamic
 * registration (RFC 7591) → authorize (the dashboard's login and the consent form submitted like a browser, PKCE
 * S256, RFC 8707 resource, RFC 9207 iss) → token → tools/list → a call of every tool → refresh once the access token
 * has expired (clock-driven). Once with the v2 client on revision 2026-07-28, once with the v1 client (2025-era).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import sharp from "sharp";
import {
  Client as ClientV2,
  type OAuthClientProvider as ProviderV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from "@modelcontextprotocol/client";
import type { OAuthClientProvider as ProviderV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError as UnauthorizedV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { isoAt } from "../src/lib/clock";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { configureFeedFetch } from "../src/modules/feeds/fetch";
import { configureClientMetadataFetch } from "../src/modules/oauth/client-metadata";
import { addConnection } from "../src/modules/connections/service";
import { TOOLS } from "../src/modules/mcp/tools";
import { authenticateAccessToken } from "../src/modules/oauth/access-token";
import { type McpClient, callEveryTool } from "./helpers/mcp";
import { FormBrowser, type Person, locationOf, ownerWithAccount, reachConsent } from "./helpers/oauth";
import { type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { WEBHOOK_SECRET } from "./publishing-fixtures";

const REDIRECT = "http://127.0.0.1:53682/callback";

/**
 * The storage and browser hand-off an assistant keeps: what the SDK saves, it reads back. The same object serves the
 * v1 and v2 interfaces (v2 passes an issuer context to the client-information calls; v1 does not).
 */
class AssistantProvider {
  /** Set: the client identifies itself with this Client ID Metadata Document instead of registering. */
  constructor(readonly clientMetadataUrl?: string) {}
  readonly redirectUrl = REDIRECT;
  readonly clientMetadata = {
    client_name: "Test Assistant",
    redirect_uris: [REDIRECT],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
  info: unknown;
  saved: { access_token: string; refresh_token?: string; scope?: string }[] = [];
  verifier = "";
  lastState = "";
  authorizationUrl: URL | null = null;
  discovery: unknown;

  clientInformation() {
    return this.info as never;
  }
  saveClientInformation(info: unknown) {
    this.info = info;
  }
  tokens() {
    return this.saved.at(-1) as never;
  }
  saveTokens(tokens: { access_token: string; refresh_token?: string; scope?: string }) {
    this.saved.push(tokens);
  }
  state() {
    this.lastState = crypto.randomUUID();
    return this.lastState;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: unknown) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery as never;
  }
}

let world: World;
let server: Server<undefined>;
let base: string;
let source: TestHttpsServer;
let receiver: WebhookReceiver;
const ca = createTestCa();

beforeAll(async () => {
  // BASE_URL must be the served address (the issuer and the resource); the port is known once listening.
  let app: World | null = null;
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("starting", { status: 503 }) });
  base = `http://127.0.0.1:${server.port}`;
  app = await createWorld({ env: { BASE_URL: base, ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1" } });
  world = app;
  server.reload({ routes: world.app.servedRoutes(), fetch: (request, srv) => world.app.handle(request, srv) });
  const png = new Uint8Array(await sharp({ create: { width: 40, height: 30, channels: 3, background: "#c63" } }).png().toBuffer());
  // One HTTPS server on localhost with the test CA: the image to ingest, and the assistants' metadata documents.
  source = startHttpsServer((request) => {
    const path = new URL(request.url).pathname;
    // A blog's JSON Feed for the feed tools (test/fixtures/feeds/).
    if (path === "/feed.json") return new Response(Bun.file(`${import.meta.dir}/fixtures/feeds/json-feed.json`), { headers: { "content-type": "application/feed+json" } });
    if (!path.startsWith("/clients/")) return new Response(png);
    return Response.json({
      client_id: `${source.url}${path}`,
      client_name: "Test Assistant",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
  }, { ca });
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  configureFeedFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  configureClientMetadataFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await source.stop();
  await server.stop(true);
  ca.dispose();
  await world.close();
});

/** Signs `person` in at the authorization URL the SDK produced, ticks the consent as given, and answers the callback. */
async function consentInBrowser(provider: AssistantProvider, person: Person, checked?: string[]): Promise<URL> {
  const url = provider.authorizationUrl;
  if (!url) throw new Error("the SDK did not send the person to the authorization server");
  expect(url.origin + url.pathname).toBe(`${base}/oauth/authorize`);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(url.searchParams.get("resource")).toBe(`${base}/mcp`);
  const browser = new FormBrowser(base);
  const { page, consent } = await reachConsent(browser, url.href, person);
  expect(page).toContain("Test Assistant");
  const answer = await browser.submit(consent, { button: ["decision", "allow"], ...(checked ? { checked } : {}) });
  expect(answer.status).toBe(303);
  const callback = new URL(locationOf(answer, base));
  expect(callback.origin + callback.pathname).toBe(REDIRECT);
  expect(callback.searchParams.get("state")).toBe(provider.lastState);
  expect(callback.searchParams.get("iss")).toBe(base);
  return callback;
}

interface Flow {
  /** Connects; the first time this ends in the SDK's UnauthorizedError after sending the person to sign in. */
  connect(provider: AssistantProvider): Promise<McpClient>;
  finishAuth(provider: AssistantProvider, callback: URL): Promise<void>;
  unauthorized: new (...args: never[]) => Error;
}

const flows: [string, Flow][] = [
  [
    "v2 client (@modelcontextprotocol/client), revision 2026-07-28",
    (() => {
      let transport: TransportV2 | null = null;
      return {
        unauthorized: UnauthorizedV2,
        async connect(provider) {
          const client = new ClientV2({ name: "assistant-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
          transport = new TransportV2(new URL(`${base}/mcp`), { authProvider: provider as unknown as ProviderV2 });
          await client.connect(transport);
          return {
            label: `v2 (${client.getProtocolEra()})`,
            era: client.getProtocolEra() === "modern" ? "modern" : "legacy",
            callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as never,
            listTools: async () => (await client.listTools()).tools as never,
            close: () => client.close(),
          };
        },
        async finishAuth(_provider, callback) {
          await transport?.finishAuth(callback.searchParams);
        },
      };
    })(),
  ],
  [
    "v1 client (@modelcontextprotocol/sdk), 2025-era",
    (() => {
      let transport: TransportV1 | null = null;
      return {
        unauthorized: UnauthorizedV1,
        async connect(provider) {
          const client = new ClientV1({ name: "assistant-v1", version: "1.0.0" });
          transport = new TransportV1(new URL(`${base}/mcp`), { authProvider: provider as unknown as ProviderV1 });
          await client.connect(transport);
          return {
            label: "v1",
            era: "legacy",
            callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as never,
            listTools: async () => (await client.listTools()).tools as never,
            close: () => client.close(),
          };
        },
        async finishAuth(_provider, callback) {
          await transport?.finishAuth(callback.searchParams.get("code") as string);
        },
      };
    })(),
  ],
];

/**
 * The whole flow for one client: the 401 sends the SDK through discovery to registration (or to its metadata
 * document), the person signs in and consents in the "browser", the code is exchanged, then tools/list, every tool,
 * and a refresh once the access token has expired.
 */
async function wholeFlow(flow: Flow, provider: AssistantProvider): Promise<void> {
  const person = await ownerWithAccount(world, "Corner Bakery");
  await addConnection(world.deps, { accountId: person.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });

  await expect(flow.connect(provider)).rejects.toBeInstanceOf(flow.unauthorized);
  const clientId = (provider.info as { client_id?: string } | undefined)?.client_id ?? provider.clientMetadataUrl;
  expect(clientId).toBeString();
  expect(provider.authorizationUrl?.searchParams.get("client_id")).toBe(clientId as string);
  const callback = await consentInBrowser(provider, person);
  await flow.finishAuth(provider, callback);
  expect(provider.saved).toHaveLength(1);
  const first = provider.saved[0];
  expect(first?.access_token).toStartWith("sco_");
  expect(first?.refresh_token).toStartWith("scr_");
  expect(first?.scope).toBe("read create schedule voice");
  const principal = await authenticateAccessToken(world.deps, first?.access_token as string);
  expect(principal).toMatchObject({ accountId: person.accountId, userId: person.userId, clientId, scopes: ["read", "create", "schedule", "voice"] });

  const client = await flow.connect(provider);
  try {
    expect((await client.listTools()).length).toBe(TOOLS.length);
    const results = await callEveryTool(client, {
      imageUrl: `${source.url}/shop.png`,
      scheduledTime: isoAt(world.clock.now() + 3_600_000),
      markUnconfirmed: async (postId) => {
        await world.sql("UPDATE scheduled_post_targets SET status = 'unconfirmed', next_attempt_at = NULL WHERE post_id = ?", postId);
        await world.sql("UPDATE scheduled_posts SET status = 'unconfirmed' WHERE id = ?", postId);
      },
      markPendingApproval: async (postId) => {
        await world.sql("UPDATE scheduled_post_targets SET status = 'pending_approval', next_attempt_at = NULL WHERE post_id = ?", postId);
        await world.sql("UPDATE scheduled_posts SET status = 'pending_approval' WHERE id = ?", postId);
      },
    });
    expect(results.size).toBe(TOOLS.length);
    expect(results.get("get_credits")?.structuredContent).toEqual({ balance: 100, reserved: 0 });
    expect(results.get("generate_creation")?.structuredContent.creditsCharged).toBe(5);

    // An hour later the access token has expired: the next call is refused with 401, the SDK refreshes (the
    // refresh token rotates) and retries, and the call goes through.
    world.clock.advance(3600 * 1000);
    expect(await authenticateAccessToken(world.deps, first?.access_token as string)).toBeNull();
    const credits = await client.callTool("get_credits");
    expect(credits.structuredContent).toEqual({ balance: 100 - 5 - 1, reserved: 0 });
    expect(provider.saved).toHaveLength(2);
    const second = provider.saved[1];
    expect(second?.access_token).not.toBe(first?.access_token);
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    // Same grant, new pair.
    expect((await authenticateAccessToken(world.deps, second?.access_token as string))?.grantId).toBe(principal?.grantId as string);
  } finally {
    await client.close();
  }
}

for (const [label, flow] of flows) {
  describe(label, () => {
    test("discovery → registration → login and consent → token → tools/list → every tool → refresh", async () => {
      await wholeFlow(flow, new AssistantProvider());
    });

    test("the same with a Client ID Metadata Document served over HTTPS on localhost (test CA) instead of registering", async () => {
      const url = `${source.url}/clients/${label.startsWith("v2") ? "v2" : "v1"}.json`;
      const registeredCount = async () => Number((await world.sql("SELECT count(*) AS n FROM oauth_clients WHERE kind = 'registered'"))[0]?.n);
      const registered = await registeredCount();
      await wholeFlow(flow, new AssistantProvider(url));
      // No registration happened: the document's URL is the client.
      expect(await registeredCount()).toBe(registered);
      expect(await world.sql("SELECT kind FROM oauth_clients WHERE id = ?", url)).toEqual([{ kind: "metadata_document" }]);
    });
  });
}

describe("consent decides what the assistant can do", () => {
  test("a person who grants only read gets 403 insufficient_scope on a write, and the v2 client's step-up asks again", async () => {
    const person = await ownerWithAccount(world, "Read-only Shop");
    const provider = new AssistantProvider();
    const [, flow] = flows[0] as [string, Flow];
    await expect(flow.connect(provider)).rejects.toBeInstanceOf(flow.unauthorized);
    await flow.finishAuth(provider, await consentInBrowser(provider, person, ["read"]));
    expect(provider.saved.at(-1)?.scope).toBe("read");
    const client = await flow.connect(provider);
    try {
      expect((await client.callTool("list_seeds")).isError).toBeFalsy();
      provider.authorizationUrl = null;
      // The step-up: the SDK sees `error="insufficient_scope", scope="create"` and sends the person to consent again,
      // asking for the create group; nothing was written.
      await expect(client.callTool("create_seed", { title: "No", content: "Not allowed." })).rejects.toThrow();
      expect(provider.authorizationUrl).not.toBeNull();
      const again = provider.authorizationUrl as URL | null;
      expect(again?.searchParams.get("scope")?.split(" ")).toContain("create");
      const seeds = await world.sql("SELECT count(*) AS n FROM seeds WHERE account_id = ?", person.accountId);
      expect(Number(seeds[0]?.n)).toBe(0);
    } finally {
      await client.close();
    }
  });
});
