/**
 * Creations: generate, regenerate, list, get — the happy paths, every refusal (nothing charged, nothing written),
 * real concurrency on the credits, fault injection in the all-or-nothing save, the openai generator end to end against
 * the local OpenAI-compatible server, and Idempotency-Key retries.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createBuiltinGenerator } from "../src/generation/builtin";
import {
  type CaptionRequest,
  type Generator,
  GenerationError,
  type ImageRequest,
  MEDIA_STYLES,
} from "../src/generation/generator";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { ingestImageBytes } from "../src/modules/assets/service";
import { creditSummary } from "../src/modules/credits/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { createTestCa, startHttpsServer } from "./helpers/test-ca";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { startOpenAiServer } from "./peers/openai-server";

const GENERATE = "/api/v1/creations/generate";
const REGENERATE = "/api/v1/creations/regenerate";
const LIST = "/api/v1/creations";
const RANDOM_ID = "0192f0c4-1d2e-7a3b-8c4d-5e6f7a8b9c0d";

/** The builtin generator, wrapped so a test can see what it was asked and make one step fail. */
class ObservedGenerator implements Generator {
  readonly name = "observed-builtin";
  readonly inner = createBuiltinGenerator();
  captionRequests: CaptionRequest[] = [];
  imageRequests: ImageRequest[] = [];
  failImage = false;
  failCaption = false;
  failDescribe = false;
  overlongCaption = false;
  forcedCaption: string | null = null;

  async writeCaption(req: CaptionRequest, signal?: AbortSignal): Promise<string> {
    this.captionRequests.push(req);
    if (this.failCaption) throw new GenerationError("injected caption failure");
    if (this.overlongCaption) return "x".repeat(req.maxGraphemes + 1);
    if (this.forcedCaption !== null) return this.forcedCaption;
    return this.inner.writeCaption(req, signal);
  }
  async renderImage(req: ImageRequest, signal?: AbortSignal) {
    this.imageRequests.push(req);
    if (this.failImage) throw new GenerationError("injected image failure");
    return this.inner.renderImage(req, signal);
  }
  describeImage: Generator["describeImage"] = (req, signal) =>
    this.failDescribe ? Promise.reject(new GenerationError("injected describe failure")) : this.inner.describeImage(req, signal);
  reset(): void {
    this.failImage = false;
    this.failCaption = false;
    this.failDescribe = false;
    this.overlongCaption = false;
    this.forcedCaption = null;
    this.captionRequests = [];
    this.imageRequests = [];
  }
}

const generator = new ObservedGenerator();
let world: World;

beforeAll(async () => {
  world = await createWorld({ generator });
});
afterAll(() => world?.close());

/** Every key in the world's media storage (DATA_DIR/media, or the bucket), temp files of interrupted writes included. */
async function mediaFiles(w: World): Promise<string[]> {
  const listing = await w.deps.storage.list();
  return [...listing.entries, ...listing.temps].map((e) => e.key).sort();
}

async function countRows(w: World, table: "assets" | "creations", accountId: string): Promise<number> {
  const [row] = await w.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`, accountId);
  return Number(row?.n ?? 0);
}

/** Makes every UPDATE of `table` fail ('injected save failure') until stopFailingUpdates; on either database. */
async function failUpdates(w: World, table: string): Promise<void> {
  if (w.dialect === "sqlite") {
    await w.sql(`CREATE TRIGGER ${table}_fail BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, 'injected save failure'); END`);
    return;
  }
  await w.sql(`CREATE FUNCTION ${table}_fail() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN RAISE EXCEPTION 'injected save failure'; END $f$`);
  await w.sql(`CREATE TRIGGER ${table}_fail BEFORE UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION ${table}_fail()`);
}

async function stopFailingUpdates(w: World, table: string): Promise<void> {
  if (w.dialect === "sqlite") {
    await w.sql(`DROP TRIGGER ${table}_fail`);
    return;
  }
  await w.sql(`DROP TRIGGER ${table}_fail ON ${table}`);
  await w.sql(`DROP FUNCTION ${table}_fail()`);
}

function balance(w: World, accountId: string) {
  return creditSummary(w.deps, accountId);
}

async function createSeed(w: World, acct: TestAccount, fields: Record<string, unknown> = {}): Promise<string> {
  const res = await w.call("POST", "/api/v1/seeds", {
    key: acct.key,
    body: {
      title: "Spring workshop: social media that feels human",
      content:
        "Join us on Saturday, April 12 at 10am for a hands-on workshop. We'll cover writing captions that sound like you, " +
        "planning a month of posts in an hour, and measuring what matters. Seats are limited to 25 people.",
      category: "event",
      ...fields,
    },
  });
  expect(res.status).toBe(201);
  return res.json.id ?? res.json.seed?.id;
}

async function pngBytes(width: number, height: number, color = "#3366cc"): Promise<Uint8Array<ArrayBuffer>> {
  return Uint8Array.from(await sharp({ create: { width, height, channels: 3, background: color } }).png().toBuffer());
}

async function imageOf(w: World, url: string): Promise<{ status: number; type: string | null; bytes: Uint8Array }> {
  expect(url.startsWith(`${BASE}/media/`)).toBe(true);
  const res = await w.app.handle(new Request(url));
  return { status: res.status, type: res.headers.get("content-type"), bytes: new Uint8Array(await res.arrayBuffer()) };
}

function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

describeAuthMatrix("creations", () => world, [
  { method: "POST", path: GENERATE, validBody: { type: "social_post", seed_id: RANDOM_ID } },
  { method: "POST", path: REGENERATE, validBody: { type: "social_post", creation_id: RANDOM_ID, parts: "caption" } },
  { method: "GET", path: LIST },
  { method: "GET", path: `${LIST}/${RANDOM_ID}` },
]);

describe("generate", () => {
  test("caption only: 201, the creation's shape, flat price captured", async () => {
    generator.reset();
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const res = await world.call("POST", GENERATE, { key: acct.key, body: { type: "social_post", seed_id: seedId } });
    expect(res.status).toBe(201);
    expect(res.json.creditsCharged).toBe(5);
    const c = res.json.creation;
    expect(c).toEqual({
      id: expect.any(String),
      type: "social_post",
      editedByHand: { caption: false, altText: false },
      url: `${BASE}/c/${c.id}`,
      body: { type: "social_post", caption: expect.any(String), altText: null, imageUrl: null, images: [], thread: [], firstComment: null, variants: {} },
      seedId,
      imageAssetId: null,
      aspectRatio: "square",
      mediaStyle: "minimal",
      createdAt: new Date(world.clock.now()).toISOString(),
      updatedAt: new Date(world.clock.now()).toISOString(),
    });
    expect(c.body.caption.length).toBeGreaterThan(20);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 95, reserved: 0 });
    expect(generator.captionRequests[0]?.maxGraphemes).toBe(world.deps.config.captionMaxGraphemes);
    expect(generator.captionRequests[0]?.variant).toBe(0);

    const got = await world.call("GET", `${LIST}/${c.id}`, { key: acct.key });
    expect(got.status).toBe(200);
    expect(got.json).toEqual({ creation: c });
  });

  test("include_visual: a generated card enters the library, served from its URL, flat price", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const res = await world.call("POST", GENERATE, {
      key: acct.key,
      body: { seed_id: seedId, include_visual: true, aspect_ratio: "landscape", media_style: "bold" },
    });
    expect(res.status).toBe(201);
    expect(res.json.creditsCharged).toBe(5);
    const c = res.json.creation;
    expect(c.aspectRatio).toBe("landscape");
    expect(c.mediaStyle).toBe("bold");
    expect(c.imageAssetId).toEqual(expect.any(String));
    expect(c.body.imageUrl).toBe(`${BASE}/media/${c.imageAssetId}.png`);
    expect(c.body.altText.length).toBeGreaterThan(10);
    const image = await imageOf(world, c.body.imageUrl);
    expect(image.status).toBe(200);
    expect(image.type).toStartWith("image/png");
    const meta = await sharp(image.bytes).metadata();
    expect([meta.width, meta.height]).toEqual([1200, 628]);
    expect(image.bytes.byteLength).toBeLessThan(1024 * 1024);

    const assets = await world.call("GET", "/api/v1/assets", { key: acct.key });
    expect(assets.status).toBe(200);
    expect(assets.json.assets.map((a: { id: string }) => a.id)).toEqual([c.imageAssetId]);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 95, reserved: 0 });
  });

  test("image precedence: image_asset_id, else generated, else the seed's asset, else none", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const mine = await ingestImageBytes(world.deps, acct.accountId, { bytes: await pngBytes(800, 600), fileName: "mine" });
    const seedAsset = await ingestImageBytes(world.deps, acct.accountId, {
      bytes: await pngBytes(640, 640, "#cc3333"),
      fileName: "seed",
    });
    const plainSeed = await createSeed(world, acct);
    const seedWithAsset = await createSeed(world, acct, { image_asset_id: seedAsset.id });

    const explicit = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedWithAsset, image_asset_id: mine.id } });
    expect(explicit.status).toBe(201);
    expect(explicit.json.creation.imageAssetId).toBe(mine.id);
    expect(explicit.json.creation.body.imageUrl).toBe(`${BASE}/media/${mine.id}.png`);
    expect(explicit.json.creation.body.altText.length).toBeGreaterThan(0);

    const generated = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedWithAsset, include_visual: true } });
    expect(generated.status).toBe(201);
    expect([mine.id, seedAsset.id]).not.toContain(generated.json.creation.imageAssetId);

    const fromSeed = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedWithAsset } });
    expect(fromSeed.status).toBe(201);
    expect(fromSeed.json.creation.imageAssetId).toBe(seedAsset.id);

    const none = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: plainSeed, include_visual: false } });
    expect(none.status).toBe(201);
    expect(none.json.creation.imageAssetId).toBeNull();
    expect(none.json.creation.body).toMatchObject({ altText: null, imageUrl: null });
    expect((await balance(world, acct.accountId)).balance).toBe(80);
  });

  test("the seed's image_url is ingested once into the library (https with a test CA), then reused", async () => {
    const ca = createTestCa();
    const png = await pngBytes(500, 500, "#22aa66");
    let fetches = 0;
    const server = startHttpsServer(
      () => {
        fetches += 1;
        return new Response(png, { headers: { "content-type": "image/png" } });
      },
      { ca },
    );
    const w = await createWorld({ generator, env: { ALLOW_PRIVATE_HOSTS: "localhost" } });
    try {
      configureIngestFetch(w.deps, { extraCa: ca.caPem });
      const acct = await w.createAccount({ credits: 100 });
      const seedId = await createSeed(w, acct, { image_url: `${server.url}/photos/garden.png` });
      // A failure after the ingest (alt text) removes the freshly ingested asset again: nothing changed.
      generator.failDescribe = true;
      const failed = await w.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
      generator.failDescribe = false;
      expect(failed.status).toBe(502);
      expect(fetches).toBe(1);
      expect(await countRows(w, "assets", acct.accountId)).toBe(0);
      expect(await mediaFiles(w)).toEqual([]);
      expect(await balance(w, acct.accountId)).toEqual({ balance: 100, reserved: 0 });

      const first = await w.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
      expect(first.status).toBe(201);
      const assetId = first.json.creation.imageAssetId;
      expect(assetId).toEqual(expect.any(String));
      const served = await imageOf(w, first.json.creation.body.imageUrl);
      expect(sha256(served.bytes)).toBe(sha256(png));
      const second = await w.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
      expect(second.status).toBe(201);
      expect(second.json.creation.imageAssetId).toBe(assetId);
      expect(fetches).toBe(2);
      expect(await countRows(w, "assets", acct.accountId)).toBe(1);
    } finally {
      await w.close();
      await server.stop();
      ca.dispose();
    }
  });

  test("a refused seed image_url answers its ingest reason; nothing charged or stored", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct, { image_url: "http://example.com/cat.png" });
    const res = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("https_required");
    expect(await balance(world, acct.accountId)).toEqual({ balance: 100, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(0);
    expect(await countRows(world, "assets", acct.accountId)).toBe(0);
  });

  test("validation: type, aspect_ratio, media_style, include_visual with image_asset_id → 400, nothing charged", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const cases: [Record<string, unknown>, string, string[]][] = [
      [{ type: "thread", seed_id: seedId }, "type", ["social_post"]],
      [{ seed_id: seedId, aspect_ratio: "wide" }, "aspect_ratio", ["square", "portrait", "landscape", "story"]],
      [{ seed_id: seedId, media_style: "neon" }, "media_style", [...MEDIA_STYLES]],
      [{ seed_id: seedId, include_visual: true, image_asset_id: RANDOM_ID }, "image_asset_id", ["include_visual"]],
      [{}, "seed_id", []],
      [{ seed_id: seedId, include_visual: "yes" }, "include_visual", []],
    ];
    for (const [body, field, named] of cases) {
      const res = await world.call("POST", GENERATE, { key: acct.key, body });
      expect({ body, status: res.status, error: res.json.error }).toEqual({ body, status: 400, error: "invalid_request" });
      const detail = res.json.details.find((d: { field: string }) => d.field === field);
      expect({ body, detail: detail?.field }).toEqual({ body, detail: field });
      for (const word of named) expect(detail.problem).toContain(word);
    }
    expect(await balance(world, acct.accountId)).toEqual({ balance: 100, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(0);
  });

  test("403 without the create group; GET needs read", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const readOnly = (await acct.mint(["read"])).key;
    const createOnly = (await acct.mint(["create"])).key;
    for (const [path, body] of [
      [GENERATE, { seed_id: seedId }],
      [REGENERATE, { creation_id: RANDOM_ID }],
    ] as const) {
      const res = await world.call("POST", path, { key: readOnly, body });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ error: "forbidden", requiredGroup: "create" });
    }
    for (const path of [LIST, `${LIST}/${RANDOM_ID}`]) {
      const res = await world.call("GET", path, { key: createOnly });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ error: "forbidden", requiredGroup: "read" });
    }
    expect(await balance(world, acct.accountId)).toEqual({ balance: 100, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(0);
  });

  test("404 for another account's seed, asset and creation, identical to a random id; nothing charged", async () => {
    const owner = await world.createAccount({ credits: 100 });
    const other = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, owner);
    const asset = await ingestImageBytes(world.deps, owner.accountId, { bytes: await pngBytes(300, 300), fileName: "x" });
    const made = await world.call("POST", GENERATE, { key: owner.key, body: { seed_id: seedId } });
    expect(made.status).toBe(201);
    const creationId = made.json.creation.id;
    const otherSeed = await createSeed(world, other);

    const pairs: [string, Record<string, unknown>, Record<string, unknown>][] = [
      [GENERATE, { seed_id: seedId }, { seed_id: RANDOM_ID }],
      [GENERATE, { seed_id: otherSeed, image_asset_id: asset.id }, { seed_id: otherSeed, image_asset_id: RANDOM_ID }],
      [REGENERATE, { creation_id: creationId, parts: "caption" }, { creation_id: RANDOM_ID, parts: "caption" }],
      [GENERATE, { seed_id: "not-a-uuid" }, { seed_id: RANDOM_ID }],
    ];
    for (const [path, foreign, random] of pairs) {
      const a = await world.call("POST", path, { key: other.key, body: foreign });
      const b = await world.call("POST", path, { key: other.key, body: random });
      expect({ path, status: a.status }).toEqual({ path, status: 404 });
      expect(a.json.error).toBe("not_found");
      expect(a.text).toBe(b.text);
    }
    const got = await world.call("GET", `${LIST}/${creationId}`, { key: other.key });
    const random = await world.call("GET", `${LIST}/${RANDOM_ID}`, { key: other.key });
    expect(got.status).toBe(404);
    expect(got.text).toBe(random.text);
    const listed = await world.call("GET", LIST, { key: other.key });
    expect(listed.json).toEqual({ creations: [], nextCursor: null });
    expect(await balance(world, other.accountId)).toEqual({ balance: 100, reserved: 0 });
    expect(await countRows(world, "creations", other.accountId)).toBe(0);
  });

  test("402 insufficient_credits with required and available; nothing written", async () => {
    const acct = await world.createAccount({ credits: 3 });
    const seedId = await createSeed(world, acct);
    const res = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId, include_visual: true } });
    expect(res.status).toBe(402);
    expect(res.json).toMatchObject({ error: "insufficient_credits", required: 5, available: 3 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(0);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 3, reserved: 0 });
  });

  test("20 simultaneous generates with credits for 4: exactly 4 × 201, 16 × 402, balance 0", async () => {
    const acct = await world.createAccount({ credits: 20 });
    const seedId = await createSeed(world, acct);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId, include_visual: i % 2 === 0 } }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(4);
    expect(statuses.filter((s) => s === 402)).toHaveLength(16);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 0, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(4);
    const imagesMade = results.filter((r) => r.status === 201 && r.json.creation.imageAssetId).length;
    expect(await countRows(world, "assets", acct.accountId)).toBe(imagesMade);
  });

  test("banned words of the brand voice never reach a saved caption", async () => {
    generator.reset();
    const acct = await world.createAccount({ credits: 100 });
    const voice = await world.call("PUT", "/api/v1/voice", { key: acct.key, body: { bannedWords: ["workshop", "Ünique"] } });
    expect(voice.status).toBe(200);
    const seedId = await createSeed(world, acct);
    const ok = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
    expect(ok.status).toBe(201);
    expect(ok.json.creation.body.caption).not.toMatch(/workshop/i);
    expect(generator.captionRequests[0]?.voice.bannedWords).toEqual(["workshop", "Ünique"]);
    generator.forcedCaption = "An ünique evening with friends.";
    const refused = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
    generator.forcedCaption = null;
    expect(refused.status).toBe(502);
    expect(refused.json.error).toBe("generation_failed");
    expect(await balance(world, acct.accountId)).toEqual({ balance: 95, reserved: 0 });
  });

  test("a generator failure answers 502 generation_failed (retryable); nothing charged, stored or created", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const filesBefore = await mediaFiles(world);
    generator.failImage = true;
    const image = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId, include_visual: true } });
    generator.failImage = false;
    expect(image.status).toBe(502);
    expect(image.json).toMatchObject({ error: "generation_failed", retryable: true });
    generator.failCaption = true;
    const caption = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
    generator.failCaption = false;
    expect(caption.status).toBe(502);
    generator.overlongCaption = true;
    const overlong = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
    generator.overlongCaption = false;
    expect(overlong.status).toBe(502);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 100, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(0);
    expect(await countRows(world, "assets", acct.accountId)).toBe(0);
    expect(await mediaFiles(world)).toEqual(filesBefore);
  });
});

describe("list", () => {
  test("newest first, filter by seed_id, limit and cursor", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedA = await createSeed(world, acct, { title: "Seed A" });
    const seedB = await createSeed(world, acct, { title: "Seed B" });
    const ids: string[] = [];
    for (const seedId of [seedA, seedB, seedA, seedA, seedB]) {
      const res = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId } });
      expect(res.status).toBe(201);
      ids.push(res.json.creation.id);
    }
    const idsOf = (res: { json: { creations: { id: string }[] } }) => res.json.creations.map((c) => c.id);
    const pick = (...positions: number[]): string[] => positions.map((i) => ids[i] ?? "missing");
    const all = await world.call("GET", LIST, { key: acct.key });
    expect(all.status).toBe(200);
    expect(idsOf(all)).toEqual([...ids].reverse());
    expect(all.json.nextCursor).toBeNull();

    const onlyA = await world.call("GET", `${LIST}?seed_id=${seedA}`, { key: acct.key });
    expect(idsOf(onlyA)).toEqual(pick(3, 2, 0));

    const page1 = await world.call("GET", `${LIST}?limit=2`, { key: acct.key });
    expect(idsOf(page1)).toEqual(pick(4, 3));
    const page2 = await world.call("GET", `${LIST}?limit=2&cursor=${page1.json.nextCursor}`, { key: acct.key });
    expect(idsOf(page2)).toEqual(pick(2, 1));
    const page3 = await world.call("GET", `${LIST}?limit=2&cursor=${page2.json.nextCursor}`, { key: acct.key });
    expect(idsOf(page3)).toEqual(pick(0));
    expect(page3.json.nextCursor).toBeNull();

    for (const bad of ["limit=0", "limit=201", "limit=x", "cursor=nonsense"]) {
      const res = await world.call("GET", `${LIST}?${bad}`, { key: acct.key });
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.json.error).toBe("invalid_request");
    }
  });
});

describe("regenerate", () => {
  async function fresh(opts: { image?: boolean; credits?: number } = {}) {
    generator.reset();
    const acct = await world.createAccount({ credits: opts.credits ?? 100 });
    const seedId = await createSeed(world, acct);
    const res = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId, include_visual: opts.image ?? true } });
    expect(res.status).toBe(201);
    return { acct, seedId, creation: res.json.creation };
  }

  test("caption: 200, same id, a different caption, image kept, 1 credit; instructions reach the generator", async () => {
    const { acct, creation } = await fresh();
    world.clock.advance(60_000);
    const res = await world.call("POST", REGENERATE, {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, parts: "caption", change_instructions: "shorter, no emoji" },
    });
    expect(res.status).toBe(200);
    expect(res.json.creditsCharged).toBe(1);
    const c = res.json.creation;
    expect(c.id).toBe(creation.id);
    expect(c.body.caption).not.toBe(creation.body.caption);
    expect(c.imageAssetId).toBe(creation.imageAssetId);
    expect(c.body.imageUrl).toBe(creation.body.imageUrl);
    expect(c.body.altText).toBe(creation.body.altText);
    expect(c.createdAt).toBe(creation.createdAt);
    expect(c.updatedAt).not.toBe(creation.updatedAt);
    const req = generator.captionRequests.at(-1);
    expect(req?.changeInstructions).toBe("shorter, no emoji");
    expect(req?.previousCaption).toBe(creation.body.caption);
    expect(req?.variant).toBe(1);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 94, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(1);
  });

  test("image: new bytes, caption kept, 4 credits; both: 4 credits; default parts is both", async () => {
    const { acct, creation } = await fresh();
    const before = await imageOf(world, creation.body.imageUrl);
    const img = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "image" } });
    expect(img.status).toBe(200);
    expect(img.json.creditsCharged).toBe(4);
    expect(img.json.creation.id).toBe(creation.id);
    expect(img.json.creation.body.caption).toBe(creation.body.caption);
    expect(img.json.creation.imageAssetId).not.toBe(creation.imageAssetId);
    const after = await imageOf(world, img.json.creation.body.imageUrl);
    expect(sha256(after.bytes)).not.toBe(sha256(before.bytes));
    expect(generator.imageRequests.at(-1)?.previousImageSha256).toBe(sha256(before.bytes));

    const both = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id } });
    expect(both.status).toBe(200);
    expect(both.json.creditsCharged).toBe(4);
    expect(both.json.creation.body.caption).not.toBe(creation.body.caption);
    expect(both.json.creation.imageAssetId).not.toBe(img.json.creation.imageAssetId);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 100 - 5 - 4 - 4, reserved: 0 });
    // The replaced cards stay in the library, no longer in use (deletable); the current one is in use.
    expect(await countRows(world, "assets", acct.accountId)).toBe(3);
    const del = await world.call("DELETE", `/api/v1/assets/${creation.imageAssetId}`, { key: acct.key });
    expect(del.status).toBe(200);
    const inUse = await world.call("DELETE", `/api/v1/assets/${both.json.creation.imageAssetId}`, { key: acct.key });
    expect(inUse.status).toBe(409);
  });

  test("image on a creation without an image generates one", async () => {
    const { acct, creation } = await fresh({ image: false });
    expect(creation.imageAssetId).toBeNull();
    const res = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "image" } });
    expect(res.status).toBe(200);
    expect(res.json.creation.imageAssetId).toEqual(expect.any(String));
    expect(res.json.creation.body.altText.length).toBeGreaterThan(0);
    expect((await imageOf(world, res.json.creation.body.imageUrl)).status).toBe(200);
  });

  test("a creation outlives its seed: regenerate still works after the seed is deleted", async () => {
    const { acct, seedId, creation } = await fresh({ image: false });
    const deleted = await world.call("DELETE", `/api/v1/seeds/${seedId}`, { key: acct.key });
    expect(deleted.status).toBe(200);
    const res = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id } });
    expect(res.status).toBe(200);
    expect(res.json.creation.body.caption).not.toBe(creation.body.caption);
    expect(res.json.creation.imageAssetId).toEqual(expect.any(String));
  });

  test("successive regenerates keep differing (variant counter)", async () => {
    const { acct, creation } = await fresh({ image: false });
    const seen = new Set([creation.body.caption]);
    let previous = creation.body.caption;
    for (let i = 0; i < 5; i++) {
      const res = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "caption" } });
      expect(res.status).toBe(200);
      expect(res.json.creation.body.caption).not.toBe(previous);
      previous = res.json.creation.body.caption;
      seen.add(previous);
    }
    expect(seen.size).toBeGreaterThanOrEqual(3);
  });

  test("fault injection in both: the image step fails → creation unchanged, nothing charged, no orphan file or asset", async () => {
    const { acct, creation } = await fresh();
    const before = (await world.call("GET", `${LIST}/${creation.id}`, { key: acct.key })).json;
    const files = await mediaFiles(world);
    const assets = await countRows(world, "assets", acct.accountId);
    const credits = await balance(world, acct.accountId);
    generator.failImage = true;
    const res = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "both" } });
    generator.failImage = false;
    expect(res.status).toBe(502);
    expect(res.json).toMatchObject({ error: "generation_failed", retryable: true });
    expect(generator.captionRequests.length).toBeGreaterThan(1); // the caption step did run first
    const after = (await world.call("GET", `${LIST}/${creation.id}`, { key: acct.key })).json;
    expect(after).toEqual(before);
    expect(await balance(world, acct.accountId)).toEqual(credits);
    expect(await mediaFiles(world)).toEqual(files);
    expect(await countRows(world, "assets", acct.accountId)).toBe(assets);
    const [row] = await world.sql<{ variant: number }>("SELECT variant FROM creations WHERE id = ?", creation.id);
    expect(Number(row?.variant)).toBe(0);
  });

  test("a failing save after the image file was written removes the file again (no orphan), releases the hold", async () => {
    const { acct, creation } = await fresh();
    const before = (await world.call("GET", `${LIST}/${creation.id}`, { key: acct.key })).json;
    const files = await mediaFiles(world);
    const credits = await balance(world, acct.accountId);
    // A real trigger (not TEMP: a TEMP trigger belongs to one connection, and the store writes on its own).
    await failUpdates(world, "creations");
    try {
      const res = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "both" } });
      expect(res.status).toBe(500);
      expect(res.json.error).toBe("internal_error");
    } finally {
      await stopFailingUpdates(world, "creations");
    }
    expect((await world.call("GET", `${LIST}/${creation.id}`, { key: acct.key })).json).toEqual(before);
    expect(await balance(world, acct.accountId)).toEqual(credits);
    expect(await mediaFiles(world)).toEqual(files);
    expect(await countRows(world, "assets", acct.accountId)).toBe(1);
    const holds = (
      await world.sql<{ state: string; n: number | string }>(
        "SELECT state, count(*) AS n FROM credit_holds WHERE account_id = ? GROUP BY state ORDER BY state",
        acct.accountId,
      )
    ).map((h) => ({ state: h.state, n: Number(h.n) }));
    expect(holds).toEqual([
      { state: "captured", n: 1 },
      { state: "released", n: 1 },
    ]);
  });

  test("validation and 402: parts, change_instructions length, type, not enough credits", async () => {
    const { acct, creation } = await fresh({ credits: 8 });
    const badParts = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "title" } });
    expect(badParts.status).toBe(400);
    expect(badParts.json.details[0].problem).toContain("caption, image, both");
    const long = await world.call("POST", REGENERATE, {
      key: acct.key,
      body: { creation_id: creation.id, change_instructions: "x".repeat(1001) },
    });
    expect(long.status).toBe(400);
    const badType = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, type: "story" } });
    expect(badType.status).toBe(400);
    // 3 left: caption (1) fits, both (4) does not.
    const poor = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "both" } });
    expect(poor.status).toBe(402);
    expect(poor.json).toMatchObject({ error: "insufficient_credits", required: 4, available: 3 });
    const ok = await world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "caption" } });
    expect(ok.status).toBe(200);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 2, reserved: 0 });
  });

  test("concurrent regenerates of one creation all succeed, one after another", async () => {
    const { acct, creation } = await fresh({ image: false });
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        world.call("POST", REGENERATE, { key: acct.key, body: { creation_id: creation.id, parts: "caption" } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const [row] = await world.sql<{ variant: number }>("SELECT variant FROM creations WHERE id = ?", creation.id);
    expect(Number(row?.variant)).toBe(4);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 91, reserved: 0 });
  });
});

describe("idempotency", () => {
  test("a retried generate with the same Idempotency-Key replays the answer and is not charged twice", async () => {
    const acct = await world.createAccount({ credits: 100 });
    const seedId = await createSeed(world, acct);
    const headers = { "idempotency-key": `gen-${crypto.randomUUID()}` };
    const body = { seed_id: seedId, include_visual: true };
    const first = await world.call("POST", GENERATE, { key: acct.key, body, headers });
    const second = await world.call("POST", GENERATE, { key: acct.key, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.json).toEqual(first.json);
    expect(await balance(world, acct.accountId)).toEqual({ balance: 95, reserved: 0 });
    expect(await countRows(world, "creations", acct.accountId)).toBe(1);
    expect(await countRows(world, "assets", acct.accountId)).toBe(1);
    const different = await world.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId }, headers });
    expect(different.status).toBe(422);
    expect(different.json.error).toBe("idempotency_key_reused");
  });
});

describe("openai generator end to end", () => {
  test("generate with an image and regenerate against the local OpenAI-compatible server", async () => {
    const server = await startOpenAiServer();
    const w = await createWorld({
      env: { GENERATOR: "openai", OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: server.apiKey, OPENAI_TIMEOUT_MS: "5000" },
    });
    try {
      expect(w.deps.generator.name).toBe("openai");
      const acct = await w.createAccount({ credits: 100 });
      const seedId = await createSeed(w, acct);
      server.queueChat(
        JSON.stringify({ caption: "Spring workshop on Saturday: captions that sound like you. Save your seat!" }),
        JSON.stringify({ altText: "A bright card announcing the spring workshop." }),
      );
      const res = await w.call("POST", GENERATE, { key: acct.key, body: { seed_id: seedId, include_visual: true } });
      expect(res.status).toBe(201);
      expect(res.json.creditsCharged).toBe(5);
      const c = res.json.creation;
      expect(c.body.caption).toBe("Spring workshop on Saturday: captions that sound like you. Save your seat!");
      expect(c.body.altText).toBe("A bright card announcing the spring workshop.");
      const image = await imageOf(w, c.body.imageUrl);
      expect(image.status).toBe(200);
      expect((await sharp(image.bytes).metadata()).format).toBe("png");
      expect(server.requests.filter((r) => r.endpoint === "images")).toHaveLength(1);
      expect(server.requests.every((r) => r.authorization === `Bearer ${server.apiKey}`)).toBe(true);

      server.queueChat(JSON.stringify({ caption: "Shorter: spring workshop, Saturday 10am. Join us!" }));
      const again = await w.call("POST", REGENERATE, {
        key: acct.key,
        body: { creation_id: c.id, parts: "caption", change_instructions: "shorter" },
      });
      expect(again.status).toBe(200);
      expect(again.json.creation.body.caption).toBe("Shorter: spring workshop, Saturday 10am. Join us!");
      const lastChat = server.requests.filter((r) => r.endpoint === "chat").at(-1);
      expect(JSON.stringify(lastChat?.body)).toContain("shorter");

      server.setMode("error500", "images");
      const failed = await w.call("POST", REGENERATE, { key: acct.key, body: { creation_id: c.id, parts: "image" } });
      expect(failed.status).toBe(502);
      expect(failed.json).toMatchObject({ error: "generation_failed", retryable: true });
      expect(await balance(w, acct.accountId)).toEqual({ balance: 94, reserved: 0 });
      const unchanged = await w.call("GET", `${LIST}/${c.id}`, { key: acct.key });
      expect(unchanged.json.creation.imageAssetId).toBe(c.imageAssetId);
    } finally {
      await w.close();
      await server.stop();
    }
  });
});
