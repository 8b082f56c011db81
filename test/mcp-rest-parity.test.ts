/**
 * MCP has a tool for every REST operation an API key can call (decisions.md §10), and each new tool behaves as its
 * REST twin: same group, same credits (none: every new tool is free), same answer. The route table and the OpenAPI
 * document are enumerated, so a later key route without a tool fails here. Every tool's advertised schemas compile
 * under Ajv's strict mode (standard JSON Schema keywords and formats only), and each success of a new tool, through
 * the SDK's v2 client (2026-07-28) and its v1 client (2025-era), is validated by Ajv against that tool's output schema
 * as tools/list advertised it. Undeclared arguments are refused; the older names of `id` are accepted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { TSchema } from "elysia";
import sharp from "sharp";
import { declaredGroup } from "../src/http/route-table";
import { isoAt } from "../src/lib/clock";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { configureFeedFetch } from "../src/modules/feeds/fetch";
import { MAX_HAND_CAPTION_GRAPHEMES } from "../src/modules/creations/model";
import { addConnection } from "../src/modules/connections/service";
import { advertisedJsonSchema } from "../src/modules/mcp/tool-schema";
import { TOOLS } from "../src/modules/mcp/tools";
import { runDueOnce } from "../src/publishing/dispatcher";
import {
  type McpClient,
  type Served,
  type ToolResult,
  connectV1,
  connectV2,
  grantFor,
  rawMcpPost,
  refusalOf,
  registerTestClient,
  serveWorld,
  toolsCall,
} from "./helpers/mcp";
import { type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { WEBHOOK_SECRET } from "./publishing-fixtures";

/** Key routes with no tool, and why. Adding a route here is a decision to be written down in decisions.md. */
const WITHOUT_TOOL: Readonly<Record<string, string>> = {
  "GET /api/v1/health": "echoes the calling API key (keyId); /mcp takes no key, only an OAuth access token",
  // docs/choices.md "csv": the export is a text/csv file download with no JSON answer for a tool's output schema to
  // equal; list_posts answers the same posts as JSON, and import_posts takes CSV text.
  "GET /api/v1/schedule/posts.csv": "a text/csv file download; list_posts answers the same posts as JSON",
};

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
let world: World;
let served: Served;
let mcpUrl: string;
let clientId: string;
let source: TestHttpsServer;
let receiver: WebhookReceiver;
const ca = createTestCa();

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1" } });
  served = serveWorld(world);
  mcpUrl = `${served.base}/mcp`;
  clientId = await registerTestClient(world);
  const png = new Uint8Array(await sharp({ create: { width: 40, height: 30, channels: 3, background: "#a37" } }).png().toBuffer());
  source = startHttpsServer((request) => {
    const path = new URL(request.url).pathname;
    if (path === "/photo.png") return new Response(png);
    // Two copies of a blog's JSON Feed (test/fixtures/feeds/), one per client below (a URL is followed once per account).
    if (path.endsWith("/feed.json")) return new Response(Bun.file(`${import.meta.dir}/fixtures/feeds/json-feed.json`), { headers: { "content-type": "application/feed+json" } });
    return new Response("ok");
  }, { ca });
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  configureFeedFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await source.stop();
  await served.stop();
  ca.dispose();
  await world.close();
});

/** `GET /api/v1/seeds/:id` of an Elysia route. */
function routeName(route: { method: string; path: string }): string {
  return `${route.method.toUpperCase()} ${route.path}`;
}

/** The routes an API key can call: those that declare a group. */
function keyRoutes(): { name: string; group: string }[] {
  return world.app.routes.flatMap((route) => {
    const group = declaredGroup(route);
    return group === null ? [] : [{ name: routeName(route), group }];
  });
}

describe("a tool for every REST operation a key can call", () => {
  test("every key route of the route table has exactly one tool, under the same group", () => {
    const routes = keyRoutes();
    expect(routes.length).toBeGreaterThan(25);
    const missing: string[] = [];
    for (const route of routes) {
      if (route.name in WITHOUT_TOOL) continue;
      const twins = TOOLS.filter((tool) => tool.rest === route.name);
      if (twins.length !== 1) missing.push(`${route.name}: ${twins.length} tools`);
      else expect(twins[0]?.group, route.name).toBe(route.group as (typeof TOOLS)[number]["group"]);
    }
    expect(missing).toEqual([]);
    // And every tool names a key route that exists.
    const names = new Set(routes.map((route) => route.name));
    for (const tool of TOOLS) expect(names.has(tool.rest), `${tool.name} → ${tool.rest}`).toBe(true);
    for (const name of Object.keys(WITHOUT_TOOL)) expect(names.has(name), name).toBe(true);
  });

  test("every operation of the OpenAPI document that takes an API key has its tool", async () => {
    const doc = (await world.call("GET", "/openapi.json")).json as {
      paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>>;
    };
    const withKey: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation?.security?.some((requirement) => "apiKey" in requirement)) continue;
        withKey.push(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`);
      }
    }
    expect(withKey.length).toBeGreaterThan(25);
    const covered = new Set([...TOOLS.map((tool) => tool.rest), ...Object.keys(WITHOUT_TOOL)]);
    expect(withKey.filter((name) => !covered.has(name))).toEqual([]);
  });
});

/** Ajv in strict mode: an unknown keyword or format in a schema is an error, not something ignored. */
function strictAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

/** The keywords of JSON Schema 2020-12 a tool's schema may use (validation, applicators, metadata). */
const STANDARD_KEYWORDS = new Set([
  "type", "enum", "const", "properties", "required", "additionalProperties", "items", "prefixItems", "minItems", "maxItems",
  "uniqueItems", "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
  "multipleOf", "anyOf", "oneOf", "allOf", "not", "title", "description", "default", "deprecated", "examples", "$ref", "$defs",
]);
/** The formats every JSON Schema validator knows (the spec's own list, as far as Seedcast could use them). */
const STANDARD_FORMATS = new Set(["date-time", "date", "time", "duration", "email", "uri", "uri-reference", "uuid", "hostname", "ipv4", "ipv6"]);

/** Every non-standard keyword or format in `schema`, as `path: keyword` (property names are not keywords). */
function nonStandard(schema: unknown, path = "#"): string[] {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return [];
  const found: string[] = [];
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!STANDARD_KEYWORDS.has(key)) found.push(`${path}: ${key}`);
    if (key === "format" && !STANDARD_FORMATS.has(String(value))) found.push(`${path}: format ${String(value)}`);
    if (key === "const" || key === "enum" || key === "default" || key === "examples") continue;
    if (key === "properties" || key === "$defs") {
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) found.push(...nonStandard(child, `${path}/${name}`));
    } else if (Array.isArray(value)) {
      value.forEach((child, i) => found.push(...nonStandard(child, `${path}/${key}/${i}`)));
    } else if (typeof value === "object") {
      found.push(...nonStandard(value, `${path}/${key}`));
    }
  }
  return found;
}

describe("advertised schemas", () => {
  let client: McpClient;
  let tools: Awaited<ReturnType<McpClient["listTools"]>>;
  beforeAll(async () => {
    const account = await world.createAccount();
    client = await connectV2(mcpUrl, (await grantFor(world, clientId, account.accountId, account.userId, ["read"])).accessToken);
    tools = await client.listTools();
  });
  afterAll(() => client.close());

  test("every input and output schema is standard JSON Schema: Ajv's strict mode compiles each", () => {
    expect(tools.length).toBe(TOOLS.length);
    const ajv = strictAjv();
    for (const tool of tools) {
      expect(() => ajv.compile(tool.inputSchema as object), `${tool.name} input`).not.toThrow();
      expect(() => ajv.compile(tool.outputSchema as object), `${tool.name} output`).not.toThrow();
      expect(nonStandard(tool.inputSchema), `${tool.name} input`).toEqual([]);
      expect(nonStandard(tool.outputSchema), `${tool.name} output`).toEqual([]);
    }
  });

  test("every tool's output schema and its arguments from a JSON body are the REST route's own schemas", () => {
    const withoutClosure = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema, (key, value) => (key === "additionalProperties" ? undefined : value)));
    const bodies: string[] = [];
    for (const tool of tools) {
      const definition = TOOLS.find((t) => t.name === tool.name);
      const route = world.app.routes.find((r) => routeName(r) === definition?.rest);
      if (!definition || !route) throw new Error(`${tool.name}: no REST route ${definition?.rest}`);
      const hooks = route.hooks as { body?: TSchema; response?: TSchema | Record<number, TSchema> };
      const response = hooks.response as Record<number, TSchema> | TSchema;
      const success = (typeof response === "object" && definition.status in response ? (response as Record<number, TSchema>)[definition.status] : response) as TSchema;
      // Elysia closes a response schema in place when it first compiles it; closure is not what this compares.
      expect(withoutClosure(tool.outputSchema), `${tool.name} output`).toEqual(withoutClosure(advertisedJsonSchema(success)));
      if (!hooks.body) continue;
      bodies.push(tool.name);
      const advertised = (tool.inputSchema as { properties: Record<string, unknown> }).properties;
      const body = advertisedJsonSchema(hooks.body) as { properties: Record<string, unknown> };
      for (const [field, schema] of Object.entries(body.properties)) {
        if (field === "type") continue; // only social_post exists; §9 leaves it out of the tools
        const argument = field === "creation_id" && definition.formerId === "creation_id" ? "id" : field;
        expect(advertised[argument], `${tool.name}: ${field}`).toEqual(schema);
      }
    }
    expect(bodies).toEqual(expect.arrayContaining(["update_creation", "reschedule_post", "schedule_post", "generate_creation"]));
    // The caption written by hand: 63,206 characters (decisions.md §13), in the tool as in the REST body.
    const caption = (name: string) => (tools.find((t) => t.name === name)?.inputSchema as { properties: Record<string, { maxLength?: number; properties?: Record<string, { maxLength?: number }> }> }).properties;
    expect(caption("update_creation").caption?.maxLength).toBeGreaterThanOrEqual(MAX_HAND_CAPTION_GRAPHEMES);
    expect(caption("reschedule_post").content?.properties?.caption?.maxLength).toBeGreaterThanOrEqual(MAX_HAND_CAPTION_GRAPHEMES);
  });

  test("id is the resource argument; its other name is declared optional and deprecated, never required", () => {
    for (const tool of tools) {
      const schema = tool.inputSchema as { properties: Record<string, { deprecated?: boolean }>; required?: string[] };
      const deprecated = Object.entries(schema.properties).filter(([, property]) => property.deprecated === true).map(([name]) => name);
      if (!("id" in schema.properties)) {
        expect(deprecated, tool.name).toEqual([]);
        continue;
      }
      expect(schema.required, tool.name).toContain("id");
      expect(deprecated, tool.name).toHaveLength(1);
      expect(deprecated[0], tool.name).toMatch(/_id$/);
      expect(schema.required, tool.name).not.toContain(deprecated[0]);
    }
    const formerOf = (name: string) =>
      Object.entries((tools.find((tool) => tool.name === name)?.inputSchema as { properties: Record<string, { deprecated?: boolean }> }).properties)
        .filter(([, property]) => property.deprecated)
        .map(([key]) => key)[0];
    // The two names agents used before §10.
    expect(formerOf("regenerate_creation")).toBe("creation_id");
    expect(formerOf("cancel_post")).toBe("post_id");
  });
});

/** An account with a full grant, a REST key to read back with, and a ready webhook target. */
async function setUp(): Promise<{ account: TestAccount; token: string }> {
  const account = await world.createAccount({ credits: 100 });
  await addConnection(world.deps, { accountId: account.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
  const pair = await grantFor(world, clientId, account.accountId, account.userId, ["read", "create", "schedule", "voice"]);
  return { account, token: pair.accessToken };
}

async function rest(account: TestAccount, method: string, path: string, body?: unknown) {
  return world.call(method, path, { key: account.key, ...(body !== undefined ? { body } : {}) });
}

async function ledgerRows(account: TestAccount): Promise<number> {
  return Number((await world.sql("SELECT count(*) AS n FROM credit_ledger WHERE account_id = ?", account.accountId))[0]?.n);
}

const connectors: [string, (url: string, token: string) => Promise<McpClient>][] = [
  ["v2 client, revision 2026-07-28", (url, token) => connectV2(url, token, "auto")],
  ["v1 client, 2025-era stateless", (url, token) => connectV1(url, token)],
];

for (const [label, connect] of connectors) {
  describe(`the new tools through the ${label}`, () => {
    let account: TestAccount;
    let client: McpClient;
    const validators = new Map<string, ValidateFunction>();

    beforeAll(async () => {
      const made = await setUp();
      account = made.account;
      client = await connect(mcpUrl, made.token);
      const ajv = strictAjv();
      for (const tool of await client.listTools()) validators.set(tool.name, ajv.compile(tool.outputSchema as object));
    });
    afterAll(() => client.close());

    /** Calls `name`, expects a success, and checks it against the output schema tools/list advertised. */
    async function ok(name: string, args: Record<string, unknown> = {}) {
      const result: ToolResult = await client.callTool(name, args);
      if (result.isError) throw new Error(`${name} was refused: ${JSON.stringify(result.content)}`);
      const validate = validators.get(name);
      if (!validate) throw new Error(`${name} is not listed`);
      expect(validate(result.structuredContent), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(result.content[0]?.text?.length ?? 0, name).toBeGreaterThan(0);
      return result.structuredContent;
    }

    test("update_creation, reschedule_post, delete_creation answer what REST answers, charge nothing, and take their old id names", async () => {
      const seed = await ok("create_seed", { title: "Market day", content: "The farmers market is on the square every Thursday." });
      const creation = (await ok("generate_creation", { seed_id: seed.id, include_visual: true })).creation;
      const rows = await ledgerRows(account);
      const balance = (await rest(account, "GET", "/api/v1/credits")).json;

      const edited = await ok("update_creation", { id: creation.id, caption: "The farmers market is on the square every Thursday!" });
      expect(edited.creation.body.caption).toBe("The farmers market is on the square every Thursday!");
      expect(edited.creation.body.imageUrl).toBe(creation.body.imageUrl);
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).json).toEqual(edited);
      const viaOldName = await ok("update_creation", { creation_id: creation.id, altText: "A market stall with apples." });
      expect(viaOldName.creation.body.altText).toBe("A market stall with apples.");
      // The REST twin's own refusal words, for the same bad edit.
      const empty = await client.callTool("update_creation", { id: creation.id, caption: "" });
      expect(refusalOf(client, empty)).toEqual((await rest(account, "PATCH", `/api/v1/creations/${creation.id}`, { caption: "" })).json);

      const when = isoAt(world.clock.now() + HOUR);
      const post = (await ok("schedule_post", { creation_id: creation.id, scheduled_time: when, targets: ["webhook"] })).post;
      const later = isoAt(world.clock.now() + 3 * HOUR);
      const moved = await ok("reschedule_post", { id: post.id, scheduled_time: later });
      expect(moved.post).toMatchObject({ id: post.id, scheduledTime: later, status: "scheduled" });
      expect((await rest(account, "GET", `/api/v1/schedule/posts/${post.id}`)).json).toEqual(moved);
      const evenLater = isoAt(world.clock.now() + 4 * HOUR);
      expect((await ok("reschedule_post", { post_id: post.id, scheduled_time: evenLater })).post.scheduledTime).toBe(evenLater);
      const tooSoon = await client.callTool("reschedule_post", { id: post.id, scheduled_time: isoAt(world.clock.now() + 60_000) });
      expect(refusalOf(client, tooSoon)).toEqual(
        (await rest(account, "PATCH", `/api/v1/schedule/${post.id}`, { scheduled_time: isoAt(world.clock.now() + 60_000) })).json,
      );
      expect(refusalOf(client, tooSoon).error).toBe("scheduled_time_too_soon");

      // In use by the pending post: refused as REST refuses it, nothing deleted.
      const inUse = await client.callTool("delete_creation", { id: creation.id });
      expect(refusalOf(client, inUse)).toEqual((await rest(account, "DELETE", `/api/v1/creations/${creation.id}`)).json);
      expect(refusalOf(client, inUse).error).toBe("creation_in_use");
      await ok("cancel_post", { id: post.id });
      expect(await ok("delete_creation", { id: creation.id })).toEqual({ id: creation.id, deleted: true });
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).status).toBe(404);
      const gone = await client.callTool("delete_creation", { creation_id: creation.id });
      expect(refusalOf(client, gone)).toEqual((await rest(account, "DELETE", `/api/v1/creations/${creation.id}`)).json);

      // Free, as over REST: not one ledger movement, the balance as it was.
      expect(await ledgerRows(account)).toBe(rows);
      expect((await rest(account, "GET", `/api/v1/credits`)).json).toEqual(balance);
    });

    test("list_creation_versions answers what REST answers, under either name of id, and refuses as REST refuses", async () => {
      const seed = await ok("create_seed", { title: "Bakery hours", content: "The bakery opens at seven from Monday." });
      const creation = (await ok("generate_creation", { seed_id: seed.id, include_visual: true })).creation;
      const none = await ok("list_creation_versions", { id: creation.id });
      expect(none).toEqual({ versions: [] });
      expect(none).toEqual((await rest(account, "GET", `/api/v1/creations/${creation.id}/versions`)).json);

      await ok("update_creation", { id: creation.id, caption: "The bakery opens at seven, from Monday on." });
      await ok("update_creation", { id: creation.id, altText: "A tray of fresh rolls." });
      const listed = await ok("list_creation_versions", { id: creation.id });
      expect(listed).toEqual((await rest(account, "GET", `/api/v1/creations/${creation.id}/versions`)).json);
      // Newest first: the content the alt-text edit replaced, then the generated original.
      expect(listed.versions.map((v: { caption: string }) => v.caption)).toEqual([
        "The bakery opens at seven, from Monday on.",
        creation.body.caption,
      ]);
      expect(listed.versions[0].editedByHand).toEqual({ caption: true, altText: false });
      expect(listed.versions[1]).toMatchObject({ altText: creation.body.altText, imageUrl: creation.body.imageUrl, editedByHand: { caption: false, altText: false } });
      expect(await ok("list_creation_versions", { creation_id: creation.id })).toEqual(listed);

      const unknown = "01900000-0000-7000-8000-0000000000ff";
      const missing = await client.callTool("list_creation_versions", { id: unknown });
      expect(refusalOf(client, missing)).toEqual((await rest(account, "GET", `/api/v1/creations/${unknown}/versions`)).json);
      expect(refusalOf(client, missing).error).toBe("not_found");
    });

    test("reschedule_post with content changes what the post sends (get_post, then the delivery), as PATCH does; the creation keeps its own", async () => {
      const seed = await ok("create_seed", { title: "Open day", content: "Our workshop has an open day on Saturday." });
      const creation = (await ok("generate_creation", { seed_id: seed.id, include_visual: true })).creation;
      const when = isoAt(world.clock.now() + HOUR);
      const post = (await ok("schedule_post", { creation_id: creation.id, scheduled_time: when, targets: ["webhook"] })).post;
      expect(post.content).toEqual({
        caption: creation.body.caption,
        altText: creation.body.altText,
        images: [{ assetId: creation.imageAssetId, altText: creation.body.altText }],
        thread: [],
        firstComment: null,
        variants: {},
      });

      // Content only: the time stays, the snapshot changes.
      const caption = `Open day at the workshop this Saturday (${client.era}).`;
      const edited = await ok("reschedule_post", { id: post.id, content: { caption, alt_text: "The workshop's front door." } });
      expect(edited.post).toMatchObject({ id: post.id, scheduledTime: when, status: "scheduled", content: { caption, altText: "The workshop's front door." } });
      const read = await ok("get_post", { id: post.id });
      expect(read).toEqual(edited);
      expect(read).toEqual((await rest(account, "GET", `/api/v1/schedule/posts/${post.id}`)).json);
      // altText, the spelling of update_creation, under the old name of id, with a new time.
      const later = isoAt(world.clock.now() + 2 * HOUR);
      const moved = await ok("reschedule_post", { post_id: post.id, scheduled_time: later, content: { altText: "An open workshop door." } });
      expect(moved.post).toMatchObject({ scheduledTime: later, content: { caption, altText: "An open workshop door." } });
      expect((await ok("get_post", { id: post.id })).post.content).toMatchObject({
        caption,
        altText: "An open workshop door.",
        images: [{ assetId: creation.imageAssetId, altText: "An open workshop door." }],
      });
      // The creation it was scheduled from is unchanged.
      expect((await ok("get_creation", { id: creation.id })).creation.body).toMatchObject({ caption: creation.body.caption, altText: creation.body.altText });

      // The REST twin's refusals, word for word; nothing changed.
      for (const content of [{ caption: "   " }, {}, { images: [] }]) {
        const refused = await client.callTool("reschedule_post", { id: post.id, content });
        expect(refusalOf(client, refused), JSON.stringify(content)).toEqual((await rest(account, "PATCH", `/api/v1/schedule/${post.id}`, { content })).json);
        expect(refusalOf(client, refused).error).toBe("invalid_request");
      }
      expect((await ok("get_post", { id: post.id })).post.content).toMatchObject({
        caption,
        altText: "An open workshop door.",
        images: [{ assetId: creation.imageAssetId, altText: "An open workshop door." }],
      });

      await ok("cancel_post", { id: post.id });

      // What the target is sent at the post's time is the edited content. A post 6 minutes ahead, so the clock moves
      // less than the access token's hour.
      const soon = (await ok("schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 6 * MINUTE), targets: ["webhook"] })).post;
      const sentCaption = `Doors open at ten on Saturday (${client.era}).`;
      await ok("reschedule_post", { id: soon.id, content: { caption: sentCaption } });
      world.clock.advance(7 * MINUTE);
      await runDueOnce(world.deps);
      const sent = receiver.deliveries.filter((d) => (d.body as { post?: { id?: string } }).post?.id === soon.id);
      expect(sent.map((d) => (d.body as { post: { caption: string } }).post.caption)).toEqual([sentCaption]);
      expect((await ok("get_post", { id: soon.id })).post).toMatchObject({ status: "published", content: { caption: sentCaption } });
    });

    test("a caption written by hand may be 63,206 characters in update_creation and reschedule_post, as over REST, and not one more", async () => {
      const seed = await ok("create_seed", { title: "Long read", content: "A long text about the history of the market square." });
      const creation = (await ok("generate_creation", { seed_id: seed.id })).creation;
      const longest = "m".repeat(MAX_HAND_CAPTION_GRAPHEMES);
      const edited = await ok("update_creation", { id: creation.id, caption: longest });
      expect(edited.creation.body.caption).toHaveLength(MAX_HAND_CAPTION_GRAPHEMES);
      const tooLong = await client.callTool("update_creation", { id: creation.id, caption: `${longest}m` });
      expect(refusalOf(client, tooLong)).toEqual((await rest(account, "PATCH", `/api/v1/creations/${creation.id}`, { caption: `${longest}m` })).json);
      expect(refusalOf(client, tooLong).details).toEqual([{ field: "caption", problem: `must be at most ${MAX_HAND_CAPTION_GRAPHEMES} characters (this one has ${MAX_HAND_CAPTION_GRAPHEMES + 1})` }]);

      const post = (await ok("schedule_post", { creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: ["webhook"] })).post;
      const longer = "n".repeat(MAX_HAND_CAPTION_GRAPHEMES);
      expect((await ok("reschedule_post", { id: post.id, content: { caption: longer } })).post.content.caption).toBe(longer);
      const over = await client.callTool("reschedule_post", { id: post.id, content: { caption: `${longer}n` } });
      expect(refusalOf(client, over)).toEqual((await rest(account, "PATCH", `/api/v1/schedule/${post.id}`, { content: { caption: `${longer}n` } })).json);
      expect(refusalOf(client, over).details[0].field).toBe("content.caption");
      await ok("cancel_post", { id: post.id });
    });

    test("delete_asset, get_upload_link and list_credit_ledger answer what REST answers", async () => {
      const asset = (await ok("ingest_image", { url: `${source.url}/photo.png`, label: "Stall" })).asset;
      const seed = await ok("create_seed", { title: "Uses it", content: "A seed with the stall image.", image_asset_id: asset.id });
      const busy = await client.callTool("delete_asset", { id: asset.id });
      expect(refusalOf(client, busy)).toEqual((await rest(account, "DELETE", `/api/v1/assets/${asset.id}`)).json);
      expect(refusalOf(client, busy).error).toBe("asset_in_use");
      await ok("delete_seed", { id: seed.id });
      expect(await ok("delete_asset", { asset_id: asset.id })).toEqual({ id: asset.id, deleted: true });
      expect((await rest(account, "GET", "/api/v1/assets")).json.assets.map((a: { id: string }) => a.id)).not.toContain(asset.id);

      const link = await ok("create_upload_link");
      const status = await ok("get_upload_link", { id: link.id });
      expect(status).toEqual((await rest(account, "GET", `/api/v1/assets/upload-links/${link.id}`)).json);
      expect(status).toMatchObject({ id: link.id, status: "valid", assetId: null });
      const unknown = await client.callTool("get_upload_link", { id: "01900000-0000-7000-8000-000000000000" });
      expect(refusalOf(client, unknown).error).toBe("not_found");

      const ledger = await ok("list_credit_ledger");
      expect(ledger).toEqual((await rest(account, "GET", "/api/v1/credits/ledger")).json);
      expect(ledger.entries.map((e: { kind: string }) => e.kind)).toContain("grant");
      const page = await ok("list_credit_ledger", { limit: 1 });
      expect(page).toEqual((await rest(account, "GET", "/api/v1/credits/ledger?limit=1")).json);
      expect(page.entries).toHaveLength(1);
      expect(await ok("list_credit_ledger", { cursor: page.nextCursor, limit: 1 })).toEqual(
        (await rest(account, "GET", `/api/v1/credits/ledger?limit=1&cursor=${encodeURIComponent(page.nextCursor)}`)).json,
      );
    });

    test("create_webhook, list_webhooks and delete_webhook answer what REST answers; a replay never shows the secret again", async () => {
      const url = `${source.url}/events`;
      const created = await ok("create_webhook", { url, events: ["post.published", "credits.low"], idempotency_key: `hook-${client.era}` });
      expect(created.webhook).toMatchObject({ url, events: ["post.published", "credits.low"] });
      expect(created.secret).toStartWith("whsec_");
      const listed = await ok("list_webhooks");
      expect(listed).toEqual((await rest(account, "GET", "/api/v1/webhooks")).json);
      expect(listed.webhooks.map((w: { id: string }) => w.id)).toEqual([created.webhook.id]);
      expect(JSON.stringify(listed)).not.toContain(created.secret);

      const replay = await ok("create_webhook", { url, events: ["post.published", "credits.low"], idempotency_key: `hook-${client.era}` });
      expect(replay).toEqual({ webhook: created.webhook, secret: null });
      const stored = (await world.sql<{ body: string }>("SELECT body FROM idempotency_keys WHERE key = ?", `hook-${client.era}`)).map((r) => r.body).join();
      expect(stored).toContain(created.webhook.id);
      expect(stored).not.toContain(created.secret);
      expect((await ok("list_webhooks")).webhooks).toHaveLength(1);

      const refused = await client.callTool("create_webhook", { url: "http://example.com/hook", events: ["post.failed"] });
      expect(refusalOf(client, refused)).toEqual((await rest(account, "POST", "/api/v1/webhooks", { url: "http://example.com/hook", events: ["post.failed"] })).json);

      expect(await ok("delete_webhook", { id: created.webhook.id })).toEqual({ id: created.webhook.id, deleted: true });
      expect((await rest(account, "GET", "/api/v1/webhooks")).json.webhooks).toEqual([]);
      const again = await client.callTool("delete_webhook", { webhook_id: created.webhook.id });
      expect(refusalOf(client, again)).toEqual((await rest(account, "DELETE", `/api/v1/webhooks/${created.webhook.id}`)).json);
    });

    test("add_feed, list_feeds, get_feed, poll_feed and delete_feed answer what REST answers, and refuse as REST refuses", async () => {
      const url = `${source.url}/${label.startsWith("v2") ? "v2" : "v1"}/feed.json`;
      const added = await ok("add_feed", { url, mode: "seed" });
      expect(added.feed).toMatchObject({ url, mode: "seed", title: "Field Notes", state: "active", itemsSeen: 2 });
      expect(added.poll).toMatchObject({ outcome: "read", newItems: 2 });
      for (const id of added.poll.seedIds as string[]) expect((await rest(account, "GET", `/api/v1/seeds/${id}`)).status).toBe(200);
      const again = await client.callTool("add_feed", { url, mode: "seed" });
      expect(refusalOf(client, again)).toEqual((await rest(account, "POST", "/api/v1/feeds", { url, mode: "seed" })).json);
      expect(refusalOf(client, again).error).toBe("feed_exists");

      expect(await ok("get_feed", { id: added.feed.id })).toEqual((await rest(account, "GET", `/api/v1/feeds/${added.feed.id}`)).json);
      expect(await ok("list_feeds")).toEqual((await rest(account, "GET", "/api/v1/feeds")).json);
      const read = await ok("poll_feed", { feed_id: added.feed.id });
      expect(read.poll).toMatchObject({ outcome: "read", newItems: 0, seedIds: [] });
      expect(read.feed).toEqual((await rest(account, "GET", `/api/v1/feeds/${added.feed.id}`)).json.feed);
      expect(await ok("delete_feed", { id: added.feed.id })).toEqual({ id: added.feed.id, deleted: true });
      const gone = await client.callTool("get_feed", { id: added.feed.id });
      expect(refusalOf(client, gone)).toEqual((await rest(account, "GET", `/api/v1/feeds/${added.feed.id}`)).json);
      expect(refusalOf(client, gone).error).toBe("not_found");
    });

    test("an undeclared argument is refused by name and nothing is done; id and its old name may not disagree", async () => {
      const before = (await rest(account, "GET", "/api/v1/seeds")).json;
      const extra = await client.callTool("create_seed", { title: "Tagged", content: "With an argument no tool has.", tags: ["x"] });
      const envelope = refusalOf(client, extra);
      expect(envelope).toMatchObject({ error: "invalid_request", details: [{ field: "tags", problem: "is not an argument of this tool" }] });
      expect(envelope.message).toContain("`tags`");
      expect(envelope.message).toContain("title, content");
      expect((await rest(account, "GET", "/api/v1/seeds")).json).toEqual(before);

      const seed = await ok("create_seed", { title: "Keep", content: "A creation that must survive." });
      const creation = (await ok("generate_creation", { seed_id: seed.id })).creation;
      const force = await client.callTool("delete_creation", { id: creation.id, force: true });
      expect(refusalOf(client, force)).toMatchObject({ error: "invalid_request", details: [{ field: "force" }] });
      // The other name of id is accepted, not advertised: the message names id alone.
      expect(refusalOf(client, force).message).toBe("delete_creation has no argument `force`; it takes: id.");
      // REST's body field `type` is not an argument of the tools either.
      const typed = await client.callTool("regenerate_creation", { id: creation.id, type: "social_post" });
      expect(refusalOf(client, typed).details).toEqual([{ field: "type", problem: "is not an argument of this tool" }]);
      const clash = await client.callTool("delete_creation", { id: creation.id, creation_id: "01900000-0000-7000-8000-000000000000" });
      expect(refusalOf(client, clash)).toMatchObject({ error: "invalid_request", details: [{ field: "id" }] });
      expect((await rest(account, "GET", `/api/v1/creations/${creation.id}`)).status).toBe(200);
      // The same value under both names is one id.
      expect(await ok("delete_creation", { id: creation.id, creation_id: creation.id })).toEqual({ id: creation.id, deleted: true });
    });
  });
}

describe("each new tool needs its REST twin's group", () => {
  test("outside the grant: 403 insufficient_scope naming the group, as REST answers 403 to a key without it; nothing done", async () => {
    const account = await world.createAccount({ credits: 100 });
    const creationId = "01900000-0000-7000-8000-00000000000a";
    const calls: [string, Record<string, unknown>, string, string, string, unknown?][] = [
      ["update_creation", { id: creationId, caption: "x" }, "create", "PATCH", `/api/v1/creations/${creationId}`, { caption: "x" }],
      ["delete_creation", { id: creationId }, "create", "DELETE", `/api/v1/creations/${creationId}`],
      ["delete_asset", { id: creationId }, "create", "DELETE", `/api/v1/assets/${creationId}`],
      ["reschedule_post", { id: creationId, scheduled_time: isoAt(world.clock.now() + HOUR) }, "schedule", "PATCH", `/api/v1/schedule/${creationId}`, { scheduled_time: isoAt(world.clock.now() + HOUR) }],
      ["create_webhook", { url: `${source.url}/events`, events: ["post.failed"] }, "schedule", "POST", "/api/v1/webhooks", { url: `${source.url}/events`, events: ["post.failed"] }],
      ["delete_webhook", { id: creationId }, "schedule", "DELETE", `/api/v1/webhooks/${creationId}`],
      ["reschedule_post", { id: creationId, content: { caption: "x" } }, "schedule", "PATCH", `/api/v1/schedule/${creationId}`, { content: { caption: "x" } }],
      ["list_creation_versions", { id: creationId }, "read", "GET", `/api/v1/creations/${creationId}/versions`],
      ["get_upload_link", { id: creationId }, "read", "GET", `/api/v1/assets/upload-links/${creationId}`],
      ["list_credit_ledger", {}, "read", "GET", "/api/v1/credits/ledger"],
      ["list_webhooks", {}, "read", "GET", "/api/v1/webhooks"],
    ];
    const everyGroup = ["read", "create", "schedule", "voice"] as const;
    for (const [tool, args, group, method, path, body] of calls) {
      expect(TOOLS.find((t) => t.name === tool)?.group, tool).toBe(group as (typeof everyGroup)[number]);
      const others = everyGroup.filter((g) => g !== group);
      const grant = await grantFor(world, clientId, account.accountId, account.userId, others);
      const res = await rawMcpPost(mcpUrl, toolsCall(tool, args), {
        authorization: `Bearer ${grant.accessToken}`,
      });
      expect(res.status, tool).toBe(403);
      expect(res.headers.get("www-authenticate"), tool).toContain(`error="insufficient_scope", scope="${group}"`);
      expect(JSON.parse(res.text), tool).toMatchObject({ error: "insufficient_scope", scope: group });
      const key = await account.mint(others);
      const viaRest = await world.call(method, path, { key: key.key, ...(body !== undefined ? { body } : {}) });
      expect(viaRest.status, `${method} ${path}`).toBe(403);
      expect(viaRest.json.requiredGroup, `${method} ${path}`).toBe(group);
    }
    expect((await world.call("GET", "/api/v1/webhooks", { key: account.key })).json.webhooks).toEqual([]);
  });
});
