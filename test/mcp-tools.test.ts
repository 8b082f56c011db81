/**
 * Every MCP tool of decisions.md §9 through the SDK's own clients against the served app: the v2 client on revision
 * 2026-07-28, and the v1 client (a 2025-era client, served statelessly). Each tool's structuredContent is compared
 * with what the REST route answers for the same thing (an API key of the same account reads it back), credits are
 * charged exactly as over REST, refusals are isError results carrying the REST envelope, validation words are the
 * REST route's, and idempotency_key replays like the Idempotency-Key header.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createBuiltinGenerator } from "../src/generation/builtin";
import { type CaptionRequest, GenerationError, type Generator } from "../src/generation/generator";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { isoAt } from "../src/lib/clock";
import { MCP_CONNECTORS, type McpClient, type McpWorld, connectV2, grantFor, grantedAccount, refusalOf, restAs, startMcpWorld } from "./helpers/mcp";
import { type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import type { TestAccount, World } from "./helpers/world";

/** The builtin generator, with a switch to make the caption step fail. */
class SwitchableGenerator implements Generator {
  readonly name = "switchable-builtin";
  readonly inner = createBuiltinGenerator();
  failCaption = false;
  writeCaption(req: CaptionRequest, signal?: AbortSignal): Promise<string> {
    if (this.failCaption) return Promise.reject(new GenerationError("injected caption failure"));
    return this.inner.writeCaption(req, signal);
  }
  renderImage: Generator["renderImage"] = (req, signal) => this.inner.renderImage(req, signal);
  describeImage: Generator["describeImage"] = (req, signal) => this.inner.describeImage(req, signal);
}

const EXPECTED_TOOLS = [
  "get_slots",
  "set_slots",
  "end_series",
  "import_posts",
  "get_account",
  "update_account",
  "list_approvals",
  "approve_post",
  "reject_post",
  "list_seeds",
  "get_seed",
  "create_seed",
  "update_seed",
  "delete_seed",
  "generate_creation",
  "regenerate_creation",
  "list_creations",
  "get_creation",
  "ingest_image",
  "create_upload_link",
  "list_assets",
  "list_targets",
  "schedule_post",
  "list_posts",
  "get_post",
  "cancel_post",
  "get_credits",
  "get_voice",
  "set_voice",
  // decisions.md §10: a tool for every REST operation a key can call.
  "update_creation",
  "delete_creation",
  "delete_asset",
  "get_upload_link",
  "reschedule_post",
  "list_credit_ledger",
  "create_webhook",
  "list_webhooks",
  "delete_webhook",
  // decisions.md §15: a creation's earlier versions.
  "list_creation_versions",
  // decisions.md §13: posts written by hand.
  "create_creation",
  // decisions.md §12: a person's answer for a post a network could not confirm.
  "resolve_unconfirmed_target",
  // decisions.md §14: feeds.
  "add_feed",
  "list_feeds",
  "get_feed",
  "poll_feed",
  "delete_feed",
];

const generator = new SwitchableGenerator();
let m: McpWorld;
let world: World;
let mcpUrl: string;
let clientId: string;
let source: TestHttpsServer;
const ca = createTestCa();

beforeAll(async () => {
  m = await startMcpWorld({ generator, env: { ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1" } });
  ({ world, mcpUrl, clientId } = m);
  const png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#3a7" } }).png().toBuffer());
  source = startHttpsServer((request) => (new URL(request.url).pathname === "/photo.png" ? new Response(png) : new Response("no", { status: 404 })), { ca });
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
});

afterAll(async () => {
  await source.stop();
  ca.dispose();
  await m.close();
});

/** REST with the account's key, to read back what a tool did. */
const rest = (account: TestAccount, method: string, path: string, body?: unknown) => restAs(world, account, method, path, body);

async function balance(account: TestAccount): Promise<number> {
  return (await rest(account, "GET", "/api/v1/credits")).json.balance;
}

for (const [label, connect] of MCP_CONNECTORS) {
  describe(`every tool through the ${label}`, () => {
    let account: TestAccount;
    let client: McpClient;

    beforeAll(async () => {
      const made = await grantedAccount(m);
      account = made.account;
      client = await connect(mcpUrl, made.token);
    });
    afterAll(() => client.close());

    test("tools/list names exactly the tools of §9 and §10 with input and output schemas and annotations", async () => {
      const tools = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...EXPECTED_TOOLS].sort());
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const tool of tools) {
        // Closed: an undeclared argument is refused.
        expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
        // The REST success answer only: no branch for a refusal.
        expect(tool.outputSchema).toMatchObject({ type: "object" });
        // (a nullable object inside the answer, such as a feed poll's `failure`, is part of the success answer)
        expect((tool.outputSchema as { anyOf?: unknown }).anyOf).toBeUndefined();
        expect((tool.outputSchema as { required?: string[] }).required ?? []).not.toContain("error");
      }
      const reads = ["list_seeds", "get_seed", "list_creations", "get_creation", "list_creation_versions", "list_assets", "get_upload_link", "list_targets", "list_posts", "get_post"];
      for (const read of [...reads, "get_credits", "list_credit_ledger", "get_voice", "list_webhooks", "get_slots", "get_account", "list_approvals"]) {
        expect(byName.get(read)?.annotations, read).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      }
      for (const destructive of ["delete_seed", "cancel_post", "delete_creation", "delete_asset", "delete_webhook", "end_series", "reject_post"]) {
        expect(byName.get(destructive)?.annotations, destructive).toMatchObject({ readOnlyHint: false, destructiveHint: true });
      }
      for (const open of ["ingest_image", "schedule_post", "reschedule_post", "create_webhook", "approve_post", "import_posts"]) {
        expect(byName.get(open)?.annotations, open).toMatchObject({ openWorldHint: true });
      }
      expect(byName.get("create_seed")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: false });
      // The creating tools, and only those, take idempotency_key.
      const creating = tools.filter((t) => "idempotency_key" in ((t.inputSchema as { properties?: object }).properties ?? {})).map((t) => t.name);
      expect(creating.sort()).toEqual(["add_feed", "create_creation", "create_seed", "create_upload_link", "create_webhook", "generate_creation", "import_posts", "ingest_image", "poll_feed", "regenerate_creation", "schedule_post"]);
    });

    test("seeds: create, get, list, update, delete answer what REST answers", async () => {
      const created = await client.callTool("create_seed", { title: "Spring launch", content: "We launch the spring menu on Monday with three new dishes.", category: "news" });
      expect(created.isError).toBeFalsy();
      const seed = created.structuredContent;
      expect(created.content[0]?.text).toContain("Spring launch");
      expect((await rest(account, "GET", `/api/v1/seeds/${seed.id}`)).json).toEqual(seed);

      expect((await client.callTool("get_seed", { id: seed.id })).structuredContent).toEqual(seed);
      const listed = await client.callTool("list_seeds", { search: "spri" });
      expect(listed.structuredContent).toEqual((await rest(account, "GET", "/api/v1/seeds?search=spri")).json);
      expect(listed.structuredContent.seeds.map((s: { id: string }) => s.id)).toEqual([seed.id]);

      const updated = await client.callTool("update_seed", { id: seed.id, title: "Spring menu launch", category: null });
      expect(updated.structuredContent).toMatchObject({ id: seed.id, title: "Spring menu launch", category: null });
      expect((await rest(account, "GET", `/api/v1/seeds/${seed.id}`)).json).toEqual(updated.structuredContent);

      const doomed = (await client.callTool("create_seed", { title: "Doomed", content: "To be deleted." })).structuredContent;
      expect((await client.callTool("delete_seed", { id: doomed.id })).structuredContent).toEqual({ id: doomed.id, deleted: true });
      expect((await rest(account, "GET", `/api/v1/seeds/${doomed.id}`)).status).toBe(404);
      const again = await client.callTool("delete_seed", { id: doomed.id });
      expect(again.isError).toBe(true);
      expect(refusalOf(client, again)).toEqual((await rest(account, "DELETE", `/api/v1/seeds/${doomed.id}`)).json);
    });

    test("creations: generate and regenerate charge exactly the REST prices; list and get answer what REST answers", async () => {
      const seed = (await client.callTool("create_seed", { title: "Bakery news", content: "Our sourdough is back every Saturday morning from eight." })).structuredContent;
      const before = await balance(account);
      const generated = await client.callTool("generate_creation", { seed_id: seed.id, include_visual: true, aspect_ratio: "portrait" });
      expect(generated.isError).toBeFalsy();
      expect(generated.structuredContent.creditsCharged).toBe(world.deps.config.prices.generateSocialPost);
      expect(await balance(account)).toBe(before - world.deps.config.prices.generateSocialPost);
      const creation = generated.structuredContent.creation;
      expect(creation).toMatchObject({ seedId: seed.id, aspectRatio: "portrait", mediaStyle: "minimal" });
      expect(creation.body.imageUrl).toStartWith("http://localhost/media/");
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).json).toEqual({ creation });

      const regenerated = await client.callTool("regenerate_creation", { id: creation.id, parts: "caption", change_instructions: "shorter" });
      expect(regenerated.structuredContent.creditsCharged).toBe(world.deps.config.prices.regenerateCaption);
      expect(regenerated.structuredContent.creation.body.caption).not.toBe(creation.body.caption);
      expect(await balance(account)).toBe(before - world.deps.config.prices.generateSocialPost - world.deps.config.prices.regenerateCaption);

      expect((await client.callTool("get_creation", { id: creation.id })).structuredContent).toEqual((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).json);
      const listed = await client.callTool("list_creations", { seed_id: seed.id, limit: 5 });
      expect(listed.structuredContent).toEqual((await rest(account, "GET", `/api/v1/creations?seed_id=${seed.id}&limit=5`)).json);
      expect(listed.structuredContent.creations).toHaveLength(1);
    });

    test("a post written by hand: create_creation with images, a thread, a first comment and a version, then update_creation; free, as REST answers", async () => {
      const asset = (await client.callTool("ingest_image", { url: `${source.url}/photo.png`, label: "Shop" })).structuredContent.asset;
      const before = await balance(account);
      const created = await client.callTool("create_creation", {
        caption: "Written by hand through MCP",
        images: [{ asset_id: asset.id, alt_text: "The shop front" }],
        thread: [{ caption: "And a second part", images: [{ asset_id: asset.id }] }],
        first_comment: "Details: https://example.com/shop",
        variants: { bluesky: { caption: "Short for Bluesky", first_comment: "" } },
        idempotency_key: `by-hand-${label}`,
      });
      expect(created.isError).toBeFalsy();
      expect(created.content[0]?.text).toContain("Written by hand through MCP");
      const creation = created.structuredContent.creation;
      expect(created.structuredContent.creditsCharged).toBe(0);
      expect(creation.body).toMatchObject({
        caption: "Written by hand through MCP",
        altText: "The shop front",
        imageUrl: asset.url,
        images: [{ assetId: asset.id, url: asset.url, altText: "The shop front" }],
        thread: [{ caption: "And a second part", images: [{ assetId: asset.id, altText: "" }] }],
        firstComment: "Details: https://example.com/shop",
        variants: { bluesky: { caption: "Short for Bluesky", firstComment: "" } },
      });
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).json).toEqual({ creation });

      const updated = await client.callTool("update_creation", { id: creation.id, images: null, thread: [{ caption: "Only part" }], first_comment: null, variants: null });
      expect(updated.isError).toBeFalsy();
      expect(updated.structuredContent.creation.body).toMatchObject({ images: [], imageUrl: null, thread: [{ caption: "Only part", images: [] }], firstComment: null, variants: {} });
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).json).toEqual(updated.structuredContent);
      expect(await balance(account)).toBe(before);

      // REST's refusals, word for word: another account's or an unknown asset is 404.
      const unknown = await client.callTool("create_creation", { caption: "x", images: [{ asset_id: "0190a0a0-0000-7000-8000-000000000000" }] });
      expect(unknown.isError).toBe(true);
      expect(refusalOf(client, unknown)).toEqual(
        (await rest(account, "POST", "/api/v1/creations", { caption: "x", images: [{ asset_id: "0190a0a0-0000-7000-8000-000000000000" }] })).json,
      );
    });

    test("a generator failure is an isError result with 502's envelope (retryable), nothing charged", async () => {
      const seed = (await client.callTool("create_seed", { title: "Fails", content: "This generation fails on purpose." })).structuredContent;
      const before = await balance(account);
      generator.failCaption = true;
      try {
        const failed = await client.callTool("generate_creation", { seed_id: seed.id });
        expect(failed.isError).toBe(true);
        expect(refusalOf(client, failed)).toMatchObject({ error: "generation_failed", retryable: true });
      } finally {
        generator.failCaption = false;
      }
      expect(await balance(account)).toBe(before);
    });

    test("images: ingest from an https URL, an upload link, and the library list answer what REST answers", async () => {
      const ingested = await client.callTool("ingest_image", { url: `${source.url}/photo.png`, label: "Storefront" });
      expect(ingested.isError).toBeFalsy();
      expect(ingested.structuredContent).toMatchObject({ creditsCharged: 0, asset: { fileName: "Storefront.png", mimeType: "image/png" } });
      const listed = await client.callTool("list_assets", {});
      expect(listed.structuredContent).toEqual((await rest(account, "GET", "/api/v1/assets")).json);
      expect(listed.structuredContent.assets.map((a: { id: string }) => a.id)).toContain(ingested.structuredContent.asset.id);

      const refused = await client.callTool("ingest_image", { url: "http://example.com/a.png" });
      expect(refused.isError).toBe(true);
      expect(refusalOf(client, refused)).toEqual((await rest(account, "POST", "/api/v1/assets/ingest-url", { url: "http://example.com/a.png" })).json);
      expect(refusalOf(client, refused).error).toBe("https_required");

      const link = await client.callTool("create_upload_link", {});
      expect(link.structuredContent).toMatchObject({ expiresInSeconds: 900, creditsCharged: 0 });
      expect(link.structuredContent.uploadUrl).toStartWith("http://localhost/upload/");
      const status = await rest(account, "GET", `/api/v1/assets/upload-links/${link.structuredContent.id}`);
      expect(status.json).toMatchObject({ id: link.structuredContent.id, status: "valid", assetId: null });

      // A longer lifetime, as REST's expires_in_seconds gives it; out of bounds, REST's own refusal.
      const week = await client.callTool("create_upload_link", { expires_in_seconds: 604_800 });
      expect(week.structuredContent.expiresInSeconds).toBe(604_800);
      expect(Date.parse(week.structuredContent.expiresAt) - world.clock.now()).toBe(604_800_000);
      const tooShort = await client.callTool("create_upload_link", { expires_in_seconds: 299 });
      expect(refusalOf(client, tooShort)).toEqual((await rest(account, "POST", "/api/v1/assets/upload-link", { expires_in_seconds: 299 })).json);
      expect(refusalOf(client, tooShort).details[0].field).toBe("expires_in_seconds");
    });

    test("scheduling: targets, schedule, list, get and cancel answer what REST answers", async () => {
      const targets = await client.callTool("list_targets", {});
      expect(targets.structuredContent).toEqual((await rest(account, "GET", "/api/v1/schedule/targets")).json);
      expect(targets.structuredContent.targets).toHaveLength(1);

      const seed = (await client.callTool("create_seed", { title: "Opening hours", content: "We now open at seven every weekday." })).structuredContent;
      const creation = (await client.callTool("generate_creation", { seed_id: seed.id })).structuredContent.creation;
      const when = isoAt(world.clock.now() + 60 * 60 * 1000);
      const scheduled = await client.callTool("schedule_post", { creation_id: creation.id, scheduled_time: when, targets: ["webhook"] });
      expect(scheduled.isError).toBeFalsy();
      const post = scheduled.structuredContent.post;
      expect(post).toMatchObject({ creationId: creation.id, scheduledTime: when, status: "scheduled" });
      expect((await client.callTool("get_post", { id: post.id })).structuredContent).toEqual((await rest(account, "GET", `/api/v1/schedule/posts/${post.id}`)).json);
      const listed = await client.callTool("list_posts", { status: "scheduled" });
      expect(listed.structuredContent).toEqual((await rest(account, "GET", "/api/v1/schedule/posts?status=scheduled")).json);

      const tooSoon = await client.callTool("schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 60_000), targets: ["webhook"] });
      expect(tooSoon.isError).toBe(true);
      expect(refusalOf(client, tooSoon).error).toBe("scheduled_time_too_soon");

      const cancelled = await client.callTool("cancel_post", { id: post.id });
      // A webhook target is held by Seedcast's own dispatcher: nothing to withdraw from a provider.
      expect(cancelled.structuredContent).toEqual({ id: post.id, cancelled: true, providerPostWithdrawn: false });
      expect((await rest(account, "GET", `/api/v1/schedule/posts/${post.id}`)).status).toBe(404);
    });

    test("credits and brand voice answer what REST answers", async () => {
      expect((await client.callTool("get_credits", {})).structuredContent).toEqual((await rest(account, "GET", "/api/v1/credits")).json);
      const set = await client.callTool("set_voice", { tone: "warm", emoji: "none", hashtags: ["bakery"] });
      expect(set.structuredContent).toMatchObject({ tone: "warm", emoji: "none", hashtags: ["#bakery"] });
      expect((await client.callTool("get_voice", {})).structuredContent).toEqual((await rest(account, "GET", "/api/v1/voice")).json);
      expect((await rest(account, "GET", "/api/v1/voice")).json).toEqual(set.structuredContent);
    });
  });
}

describe("refusals are isError results with the REST envelope", () => {
  let account: TestAccount;
  let client: McpClient;
  beforeAll(async () => {
    const made = await grantedAccount(m);
    account = made.account;
    client = await connectV2(mcpUrl, made.token);
  });
  afterAll(() => client.close());

  test("validation names the fields in the REST route's words", async () => {
    const cases: [string, Record<string, unknown>, string, unknown][] = [
      ["create_seed", { title: "", content: 5 }, "/api/v1/seeds", { title: "", content: 5 }],
      ["generate_creation", { seed_id: "x", aspect_ratio: "round", media_style: "loud" }, "/api/v1/creations/generate", { seed_id: "x", aspect_ratio: "round", media_style: "loud" }],
      ["regenerate_creation", { creation_id: "x", parts: "all" }, "/api/v1/creations/regenerate", { creation_id: "x", parts: "all" }],
      ["schedule_post", { creation_id: "x", scheduled_time: "tomorrow", targets: [] }, "/api/v1/schedule", { type: "social_post", creation_id: "x", scheduled_time: "tomorrow", targets: [] }],
    ];
    for (const [tool, args, path, body] of cases) {
      const result = await client.callTool(tool, args);
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toBe("invalid_request");
      expect(result.structuredContent).toEqual((await rest(account, "POST", path, body)).json);
    }
    const voice = await client.callTool("set_voice", { emoji: "many" });
    expect(voice.structuredContent).toEqual((await rest(account, "PUT", "/api/v1/voice", { emoji: "many" })).json);
    const list = await client.callTool("list_seeds", { limit: 500 });
    expect(list.structuredContent).toMatchObject({ error: "invalid_request", details: [{ field: "limit", problem: "must be a whole number from 1 to 200" }] });
  });

  test("a tool that does not exist is the SDK's own error, whatever the server registers for a call", async () => {
    await expect(client.callTool("no_such_tool", {})).rejects.toThrow(/no_such_tool not found/);
  });

  test("unknown and foreign ids are not_found; state refusals keep their codes", async () => {
    const missing = await client.callTool("get_seed", { id: "01900000-0000-7000-8000-000000000000" });
    expect(missing).toMatchObject({ isError: true, structuredContent: { error: "not_found" } });
    expect(missing.content[0]?.text).toContain("No seed with that id");
    const seed = (await client.callTool("create_seed", { title: "Poor", content: "Not enough credits for this." })).structuredContent;
    const poor = await world.createAccount({ credits: 0 });
    const poorGrant = await grantFor(world, clientId, poor.accountId, poor.userId, ["read", "create"]);
    const poorClient = await connectV2(mcpUrl, poorGrant.accessToken);
    try {
      const ownSeed = (await poorClient.callTool("create_seed", { title: "Mine", content: "A seed of the poor account." })).structuredContent;
      const refused = await poorClient.callTool("generate_creation", { seed_id: ownSeed.id });
      expect(refused).toMatchObject({ isError: true, structuredContent: { error: "insufficient_credits", required: 5, available: 0 } });
      // Another account's seed is not found, never generated from.
      expect((await poorClient.callTool("generate_creation", { seed_id: seed.id })).structuredContent.error).toBe("not_found");
    } finally {
      await poorClient.close();
    }
  });
});

describe("idempotency_key replays like the REST Idempotency-Key", () => {
  let account: TestAccount;
  let client: McpClient;
  beforeAll(async () => {
    const made = await grantedAccount(m);
    account = made.account;
    client = await connectV2(mcpUrl, made.token);
  });
  afterAll(() => client.close());

  test("the same key and arguments replay the first answer: no second seed, no second charge", async () => {
    const args = { title: "Once", content: "Created once, however often it is sent.", idempotency_key: "seed-once" };
    const first = await client.callTool("create_seed", args);
    const second = await client.callTool("create_seed", { content: args.content, idempotency_key: "seed-once", title: "Once" });
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second.content[0]?.text).toContain("Replayed");
    const seeds = (await rest(account, "GET", "/api/v1/seeds")).json.seeds.filter((s: { title: string }) => s.title === "Once");
    expect(seeds).toHaveLength(1);

    const before = await balance(account);
    const gen1 = await client.callTool("generate_creation", { seed_id: first.structuredContent.id, idempotency_key: "gen-1" });
    const gen2 = await client.callTool("generate_creation", { seed_id: first.structuredContent.id, idempotency_key: "gen-1" });
    expect(gen2.structuredContent).toEqual(gen1.structuredContent);
    expect(await balance(account)).toBe(before - world.deps.config.prices.generateSocialPost);
    expect((await rest(account, "GET", "/api/v1/creations")).json.creations).toHaveLength(1);
  });

  test("the same key with other arguments is 422 idempotency_key_reused, and a blank key is refused like a blank header", async () => {
    await client.callTool("create_seed", { title: "A", content: "First body.", idempotency_key: "k-reused" });
    const reused = await client.callTool("create_seed", { title: "B", content: "Another body.", idempotency_key: "k-reused" });
    expect(reused).toMatchObject({ isError: true, structuredContent: { error: "idempotency_key_reused" } });
    expect((await rest(account, "GET", "/api/v1/seeds?search=another")).json.seeds).toHaveLength(0);
    const blank = await client.callTool("create_seed", { title: "C", content: "Blank key.", idempotency_key: "   " });
    expect(blank).toMatchObject({ isError: true, structuredContent: { error: "invalid_request", details: [{ field: "idempotency_key", problem: "must not be empty" }] } });
  });

  test("keys are scoped per tool: REST's Idempotency-Key and the tool's argument do not collide", async () => {
    const viaRest = await world.call("POST", "/api/v1/seeds", { key: account.key, headers: { "idempotency-key": "shared-key" }, body: { title: "R", content: "Over REST." } });
    const viaTool = await client.callTool("create_seed", { title: "T", content: "Over MCP.", idempotency_key: "shared-key" });
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent.id).not.toBe(viaRest.json.id);
  });

  test("create_upload_link's replay holds no upload URL at rest, and only the same token replays it (hardening finding 3)", async () => {
    const first = await client.callTool("create_upload_link", { idempotency_key: "link-once" });
    const url: string = first.structuredContent.uploadUrl;
    const token = url.slice(url.lastIndexOf("/") + 1);
    expect(token.length).toBeGreaterThan(10);
    const again = await client.callTool("create_upload_link", { idempotency_key: "link-once" });
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(again.content[0]?.text).toContain("Replayed");
    const stored = (await world.sql<{ body: string }>("SELECT body FROM idempotency_keys WHERE key = ?", "link-once")).map((row) => row.body).join("\n");
    expect(stored).not.toBe("");
    expect(stored).not.toContain(token);
    // Another token of the same account (a second grant) cannot open it: refused, no second link.
    const other = await grantFor(world, clientId, account.accountId, account.userId, ["read", "create"]);
    const otherClient = await connectV2(mcpUrl, other.accessToken);
    try {
      const refused = await otherClient.callTool("create_upload_link", { idempotency_key: "link-once" });
      expect(refused).toMatchObject({ isError: true, structuredContent: { error: "idempotency_key_reused" } });
    } finally {
      await otherClient.close();
    }
  });

  test("a refusal is stored and replayed too; a 5xx is not, so a retry runs again", async () => {
    const missing = { seed_id: "01900000-0000-7000-8000-000000000000", idempotency_key: "gen-missing" };
    const first = await client.callTool("generate_creation", missing);
    expect(first.structuredContent.error).toBe("not_found");
    expect((await client.callTool("generate_creation", missing)).content[0]?.text).toContain("not_found");

    const seed = (await client.callTool("create_seed", { title: "Retry", content: "A generation that fails once, then works." })).structuredContent;
    const args = { seed_id: seed.id, idempotency_key: "gen-retry" };
    generator.failCaption = true;
    try {
      expect((await client.callTool("generate_creation", args)).structuredContent.error).toBe("generation_failed");
    } finally {
      generator.failCaption = false;
    }
    const retried = await client.callTool("generate_creation", args);
    expect(retried.isError).toBeFalsy();
    expect(retried.structuredContent.creditsCharged).toBe(world.deps.config.prices.generateSocialPost);
  });
});
