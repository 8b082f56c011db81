/**
 * /mcp's security rules (decisions.md §9) against the served app: OAuth access tokens only (an API key, nothing, or a
 * bad token → 401 with the resource-metadata challenge), a tool outside the grant → 403 insufficient_scope with
 * nothing done, a removed member / disabled account / revoked grant / expired token → 401, account isolation through
 * every tool, the Origin check, the body cap, the per-grant rate limit, and a slow tool outliving Bun's idle timeout.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBuiltinGenerator } from "../src/generation/builtin";
import type { CaptionRequest, Generator } from "../src/generation/generator";
import { isoAt } from "../src/lib/clock";
import { removeMember, setAccountDisabled } from "../src/modules/accounts/service";
import { TOOLS } from "../src/modules/mcp/tools";
import { revokeAccountGrant } from "../src/modules/oauth/service";
import {
  type McpClient,
  type McpWorld,
  connectV1,
  connectV2,
  grantFor,
  grantedAccount,
  rawMcpPost,
  refusalOf,
  registerTestClient,
  serveWorld,
  startMcpWorld,
  toolsCall,
} from "./helpers/mcp";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import type { WebhookReceiver } from "./peers/webhook-receiver";
import { makeCreation } from "./publishing-fixtures";

const METADATA = `resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`;
const NO_TOKEN_CHALLENGE = `Bearer ${METADATA}`;
const BAD_TOKEN_CHALLENGE = `Bearer error="invalid_token", ${METADATA}`;

let m: McpWorld;
let world: World;
let mcpUrl: string;
let clientId: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  m = await startMcpWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  ({ world, mcpUrl, clientId, receiver } = m);
});

afterAll(() => m.close());

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

describe("credentials: OAuth access tokens only", () => {
  test("no token → 401 whose challenge names the resource metadata, without an error code", async () => {
    const res = await rawMcpPost(mcpUrl, toolsCall("get_credits"));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(NO_TOKEN_CHALLENGE);
    // GET (the 2025 stream) is refused the same way.
    const get = await fetch(mcpUrl, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(401);
    expect(get.headers.get("www-authenticate")).toBe(NO_TOKEN_CHALLENGE);
  });

  test("an API key, a made-up token, a refresh token or another scheme → 401 invalid_token", async () => {
    const account = await world.createAccount();
    const pair = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    const sent = [
      auth(account.key),
      auth(`sco_${"A".repeat(49)}`),
      auth(pair.refreshToken),
      { authorization: `Basic ${btoa("user:pass")}` },
      { authorization: "Bearer" },
    ];
    for (const headers of sent) {
      const res = await rawMcpPost(mcpUrl, toolsCall("get_credits"), headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(BAD_TOKEN_CHALLENGE);
      expect(JSON.parse(res.text).error).toBe("invalid_token");
      expect(res.text).not.toContain(account.key);
    }
    // The same grant's access token works, and it is refused under /api/v1 (the one 401 body).
    expect((await rawMcpPost(mcpUrl, toolsCall("get_credits"), auth(pair.accessToken))).status).toBe(200);
    const api = await world.call("GET", "/api/v1/credits", { key: pair.accessToken });
    expect(api.status).toBe(401);
    expect(api.text).toBe('{"error":"Invalid API key"}');
  });

  test("the SDK client surfaces the 401 (it would start the OAuth flow from the challenge)", async () => {
    const account = await world.createAccount();
    await expect(connectV2(mcpUrl, account.key)).rejects.toThrow();
    await expect(connectV1(mcpUrl, account.key)).rejects.toThrow();
  });

  test("an expired access token, a revoked grant, a removed member and a disabled account → 401 at the next request", async () => {
    const account = await world.createAccount();
    const call = (token: string) => rawMcpPost(mcpUrl, toolsCall("get_credits"), auth(token));

    const expiring = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    expect((await call(expiring.accessToken)).status).toBe(200);
    world.clock.advance(3600 * 1000);
    const expired = await call(expiring.accessToken);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toBe(BAD_TOKEN_CHALLENGE);

    const revoked = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    expect((await call(revoked.accessToken)).status).toBe(200);
    await revokeAccountGrant(world.deps, account.accountId, revoked.grantId);
    expect((await call(revoked.accessToken)).status).toBe(401);

    const editor = await account.addMember("editor");
    const members = await grantFor(world, clientId, account.accountId, editor, ["read", "create"]);
    expect((await call(members.accessToken)).status).toBe(200);
    await removeMember(world.deps, account.accountId, editor);
    expect((await call(members.accessToken)).status).toBe(401);

    const owners = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    expect((await call(owners.accessToken)).status).toBe(200);
    await setAccountDisabled(world.deps, account.accountId, true);
    expect((await call(owners.accessToken)).status).toBe(401);
  });

  test("a revocation written by another process applies at the next request (the token lookup cache follows commits)", async () => {
    const account = await world.createAccount();
    const pair = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    const call = () => rawMcpPost(mcpUrl, toolsCall("get_credits"), auth(pair.accessToken));
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    // Another connection to the same database (world.sql has its own), as the CLI or another replica would hold.
    await world.sql("UPDATE oauth_grants SET revoked_at = ? WHERE id = ?", world.clock.now(), pair.grantId);
    expect((await call()).status).toBe(401);
  });
});

describe("a tool outside the grant → 403 insufficient_scope, nothing done", () => {
  test("each group's tools are refused with the step-up challenge naming that group, and nothing is written or charged", async () => {
    const { account, token: readerToken } = await grantedAccount(m, { credits: 50, scopes: ["read"] });
    const seed = (await world.call("POST", "/api/v1/seeds", { key: account.key, body: { title: "Kept", content: "Nothing may change this." } })).json;
    const creation = await makeCreation(world.deps, account.accountId, { caption: "A caption." });
    const before = {
      seeds: (await world.call("GET", "/api/v1/seeds", { key: account.key })).text,
      creations: (await world.call("GET", "/api/v1/creations", { key: account.key })).text,
      credits: (await world.call("GET", "/api/v1/credits", { key: account.key })).text,
      voice: (await world.call("GET", "/api/v1/voice", { key: account.key })).text,
      posts: (await world.call("GET", "/api/v1/schedule/posts", { key: account.key })).text,
      links: Number((await world.sql("SELECT count(*) AS n FROM upload_links"))[0]?.n),
    };
    const refused: [string, Record<string, unknown>, string][] = [
      ["create_seed", { title: "New", content: "Must not be saved." }, "create"],
      ["update_seed", { id: seed.id, title: "Changed" }, "create"],
      ["delete_seed", { id: seed.id }, "create"],
      ["generate_creation", { seed_id: seed.id }, "create"],
      ["regenerate_creation", { creation_id: creation.id }, "create"],
      ["ingest_image", { url: "https://example.com/a.png" }, "create"],
      ["create_upload_link", {}, "create"],
      ["schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 3_600_000), targets: ["webhook"] }, "schedule"],
      ["cancel_post", { post_id: "01900000-0000-7000-8000-000000000000" }, "schedule"],
      ["update_creation", { id: creation.id, caption: "Changed" }, "create"],
      ["delete_creation", { id: creation.id }, "create"],
      ["delete_asset", { id: "01900000-0000-7000-8000-000000000000" }, "create"],
      ["reschedule_post", { id: "01900000-0000-7000-8000-000000000000", scheduled_time: isoAt(world.clock.now() + 7_200_000) }, "schedule"],
      ["create_webhook", { url: "https://example.com/hook", events: ["post.failed"] }, "schedule"],
      ["delete_webhook", { id: "01900000-0000-7000-8000-000000000000" }, "schedule"],
      ["get_voice", {}, "voice"],
      ["set_voice", { tone: "shouty" }, "voice"],
    ];
    for (const [tool, args, group] of refused) {
      const res = await rawMcpPost(mcpUrl, toolsCall(tool, args), auth(readerToken));
      expect(res.status, tool).toBe(403);
      expect(res.headers.get("www-authenticate")).toBe(`Bearer error="insufficient_scope", scope="${group}", ${METADATA}`);
      expect(JSON.parse(res.text)).toMatchObject({ error: "insufficient_scope", scope: group });
    }
    // One forbidden call hidden in a batch refuses the whole batch.
    const batch = await rawMcpPost(mcpUrl, [toolsCall("get_credits", {}, 1), toolsCall("create_seed", { title: "x", content: "y" }, 2)], auth(readerToken));
    expect(batch.status).toBe(403);

    expect((await world.call("GET", "/api/v1/seeds", { key: account.key })).text).toBe(before.seeds);
    expect((await world.call("GET", "/api/v1/creations", { key: account.key })).text).toBe(before.creations);
    expect((await world.call("GET", "/api/v1/credits", { key: account.key })).text).toBe(before.credits);
    expect((await world.call("GET", "/api/v1/voice", { key: account.key })).text).toBe(before.voice);
    expect((await world.call("GET", "/api/v1/schedule/posts", { key: account.key })).text).toBe(before.posts);
    expect(Number((await world.sql("SELECT count(*) AS n FROM upload_links"))[0]?.n)).toBe(before.links);
    expect(receiver.deliveries.filter((d) => d.event !== "ping")).toHaveLength(0);

    // Reads of the grant's group still work, and tools/list shows every tool (so a client can step up).
    const client = await connectV2(mcpUrl, readerToken);
    try {
      expect((await client.callTool("get_seed", { id: seed.id })).structuredContent.title).toBe("Kept");
      expect((await client.listTools()).length).toBe(TOOLS.length);
      // The SDK client sees the challenge as its typed step-up error.
      await expect(client.callTool("create_seed", { title: "x", content: "y" })).rejects.toThrow(/insufficient scope/i);
    } finally {
      await client.close();
    }
  });

  test("a viewer's grant never holds more than read, and a role change applies at the next request", async () => {
    const account = await world.createAccount();
    const viewer = await account.addMember("viewer");
    const pair = await grantFor(world, clientId, account.accountId, viewer, ["read", "create", "schedule", "voice"]);
    expect((await rawMcpPost(mcpUrl, toolsCall("get_credits"), auth(pair.accessToken))).status).toBe(200);
    expect((await rawMcpPost(mcpUrl, toolsCall("create_seed", { title: "a", content: "b" }), auth(pair.accessToken))).status).toBe(403);
    expect((await rawMcpPost(mcpUrl, toolsCall("set_voice", { tone: "x" }), auth(pair.accessToken))).status).toBe(403);

    const editor = await account.addMember("editor");
    const full = await grantFor(world, clientId, account.accountId, editor, ["read", "create"]);
    expect((await rawMcpPost(mcpUrl, toolsCall("create_seed", { title: "a", content: "b" }), auth(full.accessToken))).status).toBe(200);
    await world.sql("UPDATE members SET role = 'viewer' WHERE account_id = ? AND user_id = ?", account.accountId, editor);
    expect((await rawMcpPost(mcpUrl, toolsCall("create_seed", { title: "c", content: "d" }), auth(full.accessToken))).status).toBe(403);
  });
});

describe("account isolation through every tool", () => {
  test("another account's ids are not_found for every tool that takes one, and lists never show them", async () => {
    const { account: a, token: tokenA } = await grantedAccount(m, { hook: "a" });
    const { account: b, token: tokenB } = await grantedAccount(m, { hook: "b" });
    const clientA = await connectV2(mcpUrl, tokenA);
    const clientB = await connectV1(mcpUrl, tokenB);
    try {
      const seed = (await clientA.callTool("create_seed", { title: "Private", content: "Only account A may see this seed." })).structuredContent;
      const creation = (await clientA.callTool("generate_creation", { seed_id: seed.id, include_visual: true })).structuredContent.creation;
      const assetId = creation.imageAssetId as string;
      const post = (
        await clientA.callTool("schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 3_600_000), targets: ["webhook"] })
      ).structuredContent.post;
      await clientA.callTool("set_voice", { tone: "private tone of A" });
      const creditsA = (await clientA.callTool("get_credits")).structuredContent;
      const link = (await clientA.callTool("create_upload_link")).structuredContent;
      const hook = (await clientA.callTool("create_webhook", { url: "https://127.0.0.1/a-events", events: ["post.failed"] })).structuredContent;
      expect(hook.webhook?.id).toBeString();

      const foreign: [string, Record<string, unknown>][] = [
        ["get_seed", { id: seed.id }],
        ["update_seed", { id: seed.id, title: "Taken" }],
        ["delete_seed", { id: seed.id }],
        ["generate_creation", { seed_id: seed.id }],
        ["regenerate_creation", { creation_id: creation.id }],
        ["get_creation", { id: creation.id }],
        ["create_seed", { title: "Borrow", content: "Uses A's image.", image_asset_id: assetId }],
        ["schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 3_600_000), targets: ["webhook"] }],
        ["get_post", { id: post.id }],
        ["cancel_post", { post_id: post.id }],
        ["reschedule_post", { id: post.id, scheduled_time: isoAt(world.clock.now() + 7_200_000) }],
        ["update_creation", { id: creation.id, caption: "Taken" }],
        ["delete_creation", { id: creation.id }],
        ["delete_asset", { id: assetId }],
        ["get_upload_link", { id: link.id }],
        ["delete_webhook", { id: hook.webhook.id }],
      ];
      for (const [tool, args] of foreign) {
        const result = await clientB.callTool(tool, args);
        expect(result.isError, tool).toBe(true);
        expect(refusalOf(clientB, result).error, tool).toBe("not_found");
      }
      // B's own seed with A's asset: still not found.
      const own = (await clientB.callTool("create_seed", { title: "Own", content: "B's own seed." })).structuredContent;
      expect(refusalOf(clientB, await clientB.callTool("generate_creation", { seed_id: own.id, image_asset_id: assetId })).error).toBe("not_found");

      expect((await clientB.callTool("list_seeds")).structuredContent.seeds.map((s: { id: string }) => s.id)).toEqual([own.id]);
      expect((await clientB.callTool("list_seeds", { search: "private" })).structuredContent.seeds).toEqual([]);
      expect((await clientB.callTool("list_creations")).structuredContent.creations).toEqual([]);
      expect((await clientB.callTool("list_creations", { seed_id: seed.id })).structuredContent.creations).toEqual([]);
      expect((await clientB.callTool("list_assets")).structuredContent.assets).toEqual([]);
      expect((await clientB.callTool("list_posts")).structuredContent.posts).toEqual([]);
      expect((await clientB.callTool("list_webhooks")).structuredContent.webhooks).toEqual([]);
      expect((await clientB.callTool("list_credit_ledger")).structuredContent.entries.map((e: { kind: string }) => e.kind)).toEqual(["grant"]);
      const targetsB = (await clientB.callTool("list_targets")).structuredContent.targets;
      expect(targetsB).toHaveLength(1);
      expect(targetsB[0].label).toBe(new URL(receiver.url).host);
      expect((await clientB.callTool("get_voice")).structuredContent.tone).not.toBe("private tone of A");
      expect((await clientB.callTool("get_credits")).structuredContent).toEqual({ balance: 100, reserved: 0 });

      // A's things are untouched.
      expect((await clientA.callTool("get_seed", { id: seed.id })).structuredContent).toEqual(seed);
      expect((await clientA.callTool("get_post", { id: post.id })).structuredContent.post.status).toBe("scheduled");
      expect((await clientA.callTool("get_credits")).structuredContent).toEqual(creditsA);
      expect((await clientA.callTool("get_creation", { id: creation.id })).structuredContent.creation).toEqual(creation);
      expect((await clientA.callTool("list_webhooks")).structuredContent.webhooks).toEqual([hook.webhook]);
      expect((await clientA.callTool("get_upload_link", { id: link.id })).structuredContent.status).toBe("valid");
    } finally {
      await clientA.close();
      await clientB.close();
    }
  });
});

describe("the HTTP gate", () => {
  test("a browser Origin other than base_url → 403 before anything else; base_url's own origin passes", async () => {
    const account = await world.createAccount();
    const pair = await grantFor(world, clientId, account.accountId, account.userId, ["read"]);
    const evil = await rawMcpPost(mcpUrl, toolsCall("get_credits"), { ...auth(pair.accessToken), origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    const lookalike = await rawMcpPost(mcpUrl, toolsCall("get_credits"), { ...auth(pair.accessToken), origin: `${BASE}:8443` });
    expect(lookalike.status).toBe(403);
    const opaque = await rawMcpPost(mcpUrl, toolsCall("get_credits"), { ...auth(pair.accessToken), origin: "null" });
    expect(opaque.status).toBe(403);
    const noToken = await rawMcpPost(mcpUrl, toolsCall("get_credits"), { origin: "https://evil.example" });
    expect(noToken.status).toBe(403);
    const own = await rawMcpPost(mcpUrl, toolsCall("get_credits"), { ...auth(pair.accessToken), origin: BASE });
    expect(own.status).toBe(200);
  });

  test("a body over 1 MiB → 413 payload_too_large; a body that is not JSON is the SDK's parse error", async () => {
    const account = await world.createAccount();
    const pair = await grantFor(world, clientId, account.accountId, account.userId, ["read", "create"]);
    const big = await rawMcpPost(mcpUrl, toolsCall("create_seed", { title: "big", content: "x".repeat(1024 * 1024) }), auth(pair.accessToken));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.text).error).toBe("payload_too_large");
    expect((await world.call("GET", "/api/v1/seeds", { key: account.key })).json.seeds).toEqual([]);
    const broken = await rawMcpPost(mcpUrl, "{not json", auth(pair.accessToken));
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.text).error.code).toBe(-32700);
  });
});

describe("per-grant rate limit", () => {
  test("a grant's requests beyond RATE_LIMIT_PER_MINUTE → 429 rate_limited with Retry-After; another grant is unaffected", async () => {
    const limited = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: "3" } });
    const server = serveWorld(limited);
    try {
      const url = `${server.base}/mcp`;
      const id = await registerTestClient(limited);
      const account = await limited.createAccount();
      const one = await grantFor(limited, id, account.accountId, account.userId, ["read"]);
      const two = await grantFor(limited, id, account.accountId, account.userId, ["read"]);
      for (let i = 0; i < 3; i++) expect((await rawMcpPost(url, toolsCall("get_credits"), auth(one.accessToken))).status).toBe(200);
      const refused = await rawMcpPost(url, toolsCall("get_credits"), auth(one.accessToken));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(JSON.parse(refused.text).error).toBe("rate_limited");
      expect((await rawMcpPost(url, toolsCall("get_credits"), auth(two.accessToken))).status).toBe(200);
      limited.clock.advance(60_000);
      expect((await rawMcpPost(url, toolsCall("get_credits"), auth(one.accessToken))).status).toBe(200);
    } finally {
      await server.stop();
      await limited.close();
    }
  });
});

/** The builtin generator, taking `delayMs` of real time to write each caption (a slow model). */
class SlowGenerator implements Generator {
  readonly name = "slow-builtin";
  readonly inner = createBuiltinGenerator();
  constructor(private readonly delayMs: number) {}
  async writeCaption(req: CaptionRequest, signal?: AbortSignal): Promise<string> {
    await Bun.sleep(this.delayMs);
    return this.inner.writeCaption(req, signal);
  }
  renderImage: Generator["renderImage"] = (req, signal) => this.inner.renderImage(req, signal);
  describeImage: Generator["describeImage"] = (req, signal) => this.inner.describeImage(req, signal);
}

describe("quiet streams", () => {
  test("a tool call quieter than the server's idle timeout is answered, not cut (v2 and v1 clients)", async () => {
    const slow = await createWorld({ generator: new SlowGenerator(2_500) });
    // One second of idle timeout: without lifting it for /mcp, Bun closes the connection mid-call.
    const server = serveWorld(slow, { idleTimeout: 1 });
    const clients: McpClient[] = [];
    try {
      const id = await registerTestClient(slow);
      const account: TestAccount = await slow.createAccount();
      const token = (await grantFor(slow, id, account.accountId, account.userId, ["read", "create"])).accessToken;
      clients.push(await connectV2(`${server.base}/mcp`, token), await connectV1(`${server.base}/mcp`, token));
      for (const client of clients) {
        const seed = (await client.callTool("create_seed", { title: "Slow", content: "A caption that takes a while to write." })).structuredContent;
        const generated = await client.callTool("generate_creation", { seed_id: seed.id });
        expect(generated.isError, client.label).toBeFalsy();
        expect(generated.structuredContent.creditsCharged).toBe(5);
      }
    } finally {
      for (const client of clients) await client.close();
      await server.stop();
      await slow.close();
    }
  }, 30_000);
});
