/**
 * Posts written by hand (decisions.md §13): POST /api/v1/creations (free, snake_case in, camelCase out, 404 for an
 * asset or seed that is not the account's), PATCH with images / thread / first_comment / variants (whole lists,
 * null removes), image_asset_id/alt_text kept equal to images[0], versions keeping the whole content, and assets used
 * anywhere in a creation or a pending post staying in use (409 asset_in_use).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { creations } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { creditSummary } from "../src/modules/credits/service";
import { createCreationByHand, updateCreation } from "../src/modules/creations/edit";
import { platformVersions } from "../src/modules/creations/platform-versions";
import { restoreVersion } from "../src/modules/creations/versions";
import { captionLength } from "../src/publishing/caption-count";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, solidPng } from "./publishing-fixtures";

const PATH = "/api/v1/creations";
const ZERO_ID = "0190a0a0-0000-7000-8000-000000000000";

let world: World;
let receiver: WebhookReceiver;
let acct: TestAccount;
let other: TestAccount;
let png: Uint8Array;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  acct = await world.createAccount();
  other = await world.createAccount();
  png = await solidPng();
  await addConnection(world.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await world.close();
});

let assetCounter = 0;
/** A fresh library asset of `a`. */
async function newAsset(a: TestAccount = acct): Promise<string> {
  assetCounter += 1;
  return (await ingestImageBytes(world.deps, a.accountId, { bytes: png, fileName: `picture-${assetCounter}` })).id;
}

/** The stored row: the columns that mirror images[0] are checked against it. */
async function rowOf(id: string) {
  return (await world.deps.store.db.select().from(creations).where(eq(creations.id, id)).get())!;
}

async function creationCount(a: TestAccount): Promise<number> {
  return (await world.deps.store.db.select({ id: creations.id }).from(creations).where(eq(creations.accountId, a.accountId)).all()).length;
}

const mediaUrl = (assetId: string) => `${BASE}/media/${assetId}.png`;

describeAuthMatrix("creations by hand", () => world, [
  { method: "POST", path: PATH, validBody: { type: "social_post", caption: "hello" } },
  { method: "PATCH", path: `${PATH}/${ZERO_ID}`, validBody: { images: null } },
]);

describe("POST /creations", () => {
  test("writes a post with images, a thread, a first comment and versions: 201, free, Location, GET shows the same", async () => {
    const [one, two, three] = [await newAsset(), await newAsset(), await newAsset()];
    const before = await creditSummary(world.deps, acct.accountId);
    const res = await world.call("POST", PATH, {
      key: acct.key,
      body: {
        type: "social_post",
        caption: "  Our spring workshop, in pictures  ",
        images: [{ asset_id: one, alt_text: " The room " }, { asset_id: two }],
        thread: [{ caption: "What we made", images: [{ asset_id: three, alt_text: "Prints on a table" }] }, { caption: "Thanks for coming" }],
        first_comment: "Tickets: https://example.com/tickets",
        variants: { bluesky: { caption: "Spring workshop 🌱", thread: [], first_comment: "" }, mastodon: { images: [{ asset_id: two, alt_text: "Only this one" }] } },
      },
    });
    expect(res.status).toBe(201);
    expect(res.json.creditsCharged).toBe(0);
    const c = res.json.creation;
    expect(res.headers.get("location")).toBe(`${PATH}/${c.id}`);
    expect(c).toMatchObject({
      type: "social_post",
      seedId: null,
      imageAssetId: one,
      editedByHand: { caption: true, altText: true },
      body: {
        caption: "Our spring workshop, in pictures",
        altText: "The room",
        imageUrl: mediaUrl(one),
        images: [
          { assetId: one, url: mediaUrl(one), altText: "The room" },
          { assetId: two, url: mediaUrl(two), altText: "" },
        ],
        thread: [
          { caption: "What we made", images: [{ assetId: three, url: mediaUrl(three), altText: "Prints on a table" }] },
          { caption: "Thanks for coming", images: [] },
        ],
        firstComment: "Tickets: https://example.com/tickets",
        variants: {
          bluesky: { caption: "Spring workshop 🌱", thread: [], firstComment: "" },
          mastodon: { images: [{ assetId: two, url: mediaUrl(two), altText: "Only this one" }] },
        },
      },
    });
    expect(await creditSummary(world.deps, acct.accountId)).toEqual(before);
    const got = await world.call("GET", `${PATH}/${c.id}`, { key: acct.key });
    expect(got.json).toEqual({ creation: c });
    const row = await rowOf(c.id);
    expect({ imageAssetId: row.imageAssetId, altText: row.altText }).toEqual({ imageAssetId: one, altText: "The room" });
    expect(row.images[0]).toEqual({ assetId: one, altText: "The room" });
  });

  test("a caption alone: empty lists, null first comment, no versions; a seed of the account is named", async () => {
    const seed = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: "Bakery", content: "Fresh bread daily." } });
    const res = await world.call("POST", PATH, { key: acct.key, body: { caption: "Bread!", seed_id: seed.json.id, first_comment: "   " } });
    expect(res.status).toBe(201);
    expect(res.json.creation.seedId).toBe(seed.json.id);
    expect(res.json.creation.imageAssetId).toBeNull();
    expect(res.json.creation.body).toEqual({
      type: "social_post",
      caption: "Bread!",
      altText: null,
      imageUrl: null,
      images: [],
      thread: [],
      firstComment: null,
      variants: {},
    });
  });

  test("an Idempotency-Key replays the first answer and stores nothing new", async () => {
    const headers = { "Idempotency-Key": `by-hand-${crypto.randomUUID()}` };
    const first = await world.call("POST", PATH, { key: acct.key, headers, body: { caption: "once" } });
    const count = await creationCount(acct);
    const again = await world.call("POST", PATH, { key: acct.key, headers, body: { caption: "once" } });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(await creationCount(acct)).toBe(count);
    const reused = await world.call("POST", PATH, { key: acct.key, headers, body: { caption: "twice" } });
    expect(reused.status).toBe(422);
  });

  test("400s name the field; nothing written", async () => {
    const asset = await newAsset();
    const eleven = Array.from({ length: 11 }, () => ({ asset_id: asset }));
    const parts = Array.from({ length: 25 }, (_, i) => ({ caption: `part ${i}` }));
    const cases: [unknown, string][] = [
      [{ caption: "   " }, "caption"],
      [{}, "caption"],
      [{ caption: "é".repeat(63_207) }, "caption"],
      [{ caption: "ok", images: eleven }, "images"],
      [{ caption: "ok", thread: parts }, "thread"],
      [{ caption: "ok", thread: [{ caption: " " }] }, "thread[0].caption"],
      [{ caption: "ok", images: [{ asset_id: asset, alt_text: "a".repeat(1501) }] }, "images[0].alt_text"],
      [{ caption: "ok", images: [{ assetId: asset }] }, "images.0"],
      [{ caption: "ok", variants: { bluesky: { caption: "" } } }, "variants.bluesky.caption"],
      [{ caption: "ok", type: "story" }, "type"],
    ];
    const count = await creationCount(acct);
    for (const [body, field] of cases) {
      const res = await world.call("POST", PATH, { key: acct.key, body });
      expect({ field, status: res.status, error: res.json.error }).toEqual({ field, status: 400, error: "invalid_request" });
      const fields: string[] = res.json.details.map((d: { field: string }) => d.field);
      expect(fields.some((f) => f === field || f.startsWith(field)), `${field} in ${fields.join(", ")}`).toBe(true);
    }
    // A lone surrogate is not text (refused by name like every JSON body).
    const lone = await world.call("POST", PATH, { key: acct.key, rawBody: '{"caption":"bad \\ud800 text"}', headers: { "content-type": "application/json" } });
    expect(lone.status).toBe(400);
    expect(lone.json.details[0].field).toBe("caption");
    expect(await creationCount(acct)).toBe(count);
  });

  test("a version for a network that does not exist is dropped like every unknown field", async () => {
    const res = await world.call("POST", PATH, { key: acct.key, body: { caption: "ok", variants: { myspace: { caption: "x" }, bluesky: { caption: "b" } } } });
    expect(res.status).toBe(201);
    expect(res.json.creation.body.variants).toEqual({ bluesky: { caption: "b" } });
  });

  test("63,206 characters by hand are taken (each network's limit waits for scheduling)", async () => {
    const res = await world.call("POST", PATH, { key: acct.key, body: { caption: "é".repeat(63_206), thread: [{ caption: "ü".repeat(63_206) }] } });
    expect(res.status).toBe(201);
  });

  test("404 for another account's asset (in images, thread or a version) or seed, and for an unknown one; nothing written", async () => {
    const foreign = await newAsset(other);
    const mine = await newAsset();
    const otherSeed = await world.call("POST", "/api/v1/seeds", { key: other.key, body: { title: "Theirs", content: "Not yours." } });
    const count = await creationCount(acct);
    const bodies = [
      { caption: "x", images: [{ asset_id: foreign }] },
      { caption: "x", images: [{ asset_id: mine }, { asset_id: ZERO_ID }] },
      { caption: "x", images: [{ asset_id: "not-a-uuid" }] },
      { caption: "x", thread: [{ caption: "y", images: [{ asset_id: foreign }] }] },
      { caption: "x", variants: { mastodon: { images: [{ asset_id: foreign }] } } },
      { caption: "x", seed_id: otherSeed.json.id },
    ];
    for (const body of bodies) {
      const res = await world.call("POST", PATH, { key: acct.key, body });
      expect({ body, status: res.status, error: res.json.error }).toEqual({ body, status: 404, error: "not_found" });
    }
    expect(await creationCount(acct)).toBe(count);
  });

  test("403 for a key without the create group (read and schedule only); nothing written", async () => {
    const count = await creationCount(acct);
    const res = await world.call("POST", PATH, { key: (await acct.mint(["read", "schedule"])).key, body: { caption: "no" } });
    expect(res.status).toBe(403);
    expect(res.json.requiredGroup).toBe("create");
    expect(await creationCount(acct)).toBe(count);
  });
});

describe("PATCH /creations/{id}", () => {
  async function write(body: Record<string, unknown>) {
    const res = await world.call("POST", PATH, { key: acct.key, body: { caption: "start", ...body } });
    expect(res.status).toBe(201);
    return res.json.creation;
  }

  test("replaces the images (the first mirrored in imageAssetId/altText), the thread, the first comment and the versions", async () => {
    const [a, b, c] = [await newAsset(), await newAsset(), await newAsset()];
    const made = await write({ images: [{ asset_id: a, alt_text: "A" }] });
    const res = await world.call("PATCH", `${PATH}/${made.id}`, {
      key: acct.key,
      body: {
        images: [{ asset_id: b, alt_text: "B" }, { asset_id: a, alt_text: "A again" }],
        thread: [{ caption: "two", images: [{ asset_id: c }] }],
        first_comment: "link in here",
        variants: { mastodon: { caption: "for the fediverse" } },
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.creation).toMatchObject({
      imageAssetId: b,
      body: {
        caption: "start",
        altText: "B",
        imageUrl: mediaUrl(b),
        images: [
          { assetId: b, altText: "B" },
          { assetId: a, altText: "A again" },
        ],
        thread: [{ caption: "two", images: [{ assetId: c, altText: "" }] }],
        firstComment: "link in here",
        variants: { mastodon: { caption: "for the fediverse" } },
      },
    });
    // alt_text alone changes the first image's; altText is its first spelling.
    const alt = await world.call("PATCH", `${PATH}/${made.id}`, { key: acct.key, body: { alt_text: "Bee" } });
    expect(alt.json.creation.body).toMatchObject({ altText: "Bee", images: [{ assetId: b, altText: "Bee" }, { assetId: a, altText: "A again" }] });
    const row = await rowOf(made.id);
    expect({ imageAssetId: row.imageAssetId, altText: row.altText, first: row.images[0] }).toEqual({ imageAssetId: b, altText: "Bee", first: { assetId: b, altText: "Bee" } });
  });

  test("null removes: images (null and [] alike), thread, first comment, versions", async () => {
    const a = await newAsset();
    for (const images of [null, []]) {
      const made = await write({ images: [{ asset_id: a }], thread: [{ caption: "t" }], first_comment: "fc", variants: { bluesky: { caption: "b" } } });
      const res = await world.call("PATCH", `${PATH}/${made.id}`, { key: acct.key, body: { images, thread: null, first_comment: null, variants: null } });
      expect(res.status).toBe(200);
      expect(res.json.creation.imageAssetId).toBeNull();
      expect(res.json.creation.body).toMatchObject({ altText: null, imageUrl: null, images: [], thread: [], firstComment: null, variants: {} });
      const row = await rowOf(made.id);
      expect({ imageAssetId: row.imageAssetId, altText: row.altText, images: row.images }).toEqual({ imageAssetId: null, altText: null, images: [] });
    }
  });

  test("400s (nothing to change, alt_text with images or without an image, both spellings) and 404s (foreign asset, others' creation); nothing written", async () => {
    const a = await newAsset();
    const foreign = await newAsset(other);
    const made = await write({ images: [{ asset_id: a, alt_text: "kept" }] });
    const bare = await write({});
    const refusals: [string, unknown, number, string][] = [
      [made.id, {}, 400, "body"],
      [made.id, { alt_text: "x", images: [{ asset_id: a }] }, 400, "altText"],
      [made.id, { alt_text: "x", altText: "y" }, 400, "alt_text"],
      [bare.id, { alt_text: "nothing to describe" }, 400, "altText"],
      [made.id, { images: [{ asset_id: foreign }] }, 404, ""],
      [made.id, { variants: { bluesky: { thread: [{ caption: "p", images: [{ asset_id: foreign }] }] } } }, 404, ""],
    ];
    for (const [id, body, status, field] of refusals) {
      const res = await world.call("PATCH", `${PATH}/${id}`, { key: acct.key, body });
      expect({ body, status: res.status }).toEqual({ body, status });
      if (field) expect(res.json.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await world.call("GET", `${PATH}/${made.id}`, { key: acct.key })).json.creation).toEqual(made);
    const theirs = await world.call("PATCH", `${PATH}/${made.id}`, { key: other.key, body: { first_comment: "hijack" } });
    expect(theirs.status).toBe(404);
    expect((await world.call("GET", `${PATH}/${made.id}`, { key: acct.key })).json.creation).toEqual(made);
  });

  test("the service functions the dashboard calls take camelCase; a version keeps the whole content and a restore brings it back", async () => {
    const [a, b] = [await newAsset(), await newAsset()];
    const made = await createCreationByHand(world.deps, acct.accountId, {
      caption: "by the composer",
      images: [{ assetId: a, altText: "first" }],
      thread: [{ caption: "second part", images: [{ assetId: b }] }],
      firstComment: "a comment",
      variants: { bluesky: { firstComment: "" } },
    });
    expect(made.body).toMatchObject({ thread: [{ caption: "second part" }], firstComment: "a comment", variants: { bluesky: { firstComment: "" } } });
    const edited = await updateCreation(world.deps, acct.accountId, made.id, { caption: "changed", images: null, thread: null, firstComment: null, variants: null });
    expect(edited.body).toMatchObject({ caption: "changed", images: [], thread: [], firstComment: null, variants: {} });
    const versions = await world.call("GET", `${PATH}/${made.id}/versions`, { key: acct.key });
    expect(versions.json.versions).toHaveLength(1);
    const restored = await restoreVersion(world.deps, acct.accountId, made.id, versions.json.versions[0].id);
    expect(restored.body).toEqual(made.body);
    expect(restored.imageAssetId).toBe(a);
  });
});

describe("generate with platforms", () => {
  const content = Array.from(
    { length: 12 },
    (_, i) => `Workshop day ${i + 1} covers a new topic for people who write their own posts, with time for questions at the end.`,
  ).join(" ");

  test("same flat price; no version where the post's caption already fits (Bluesky 300 and Mastodon 500 by default, webhooks: no limit)", async () => {
    const a = await world.createAccount();
    const seed = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "Workshops", content } });
    const before = await creditSummary(world.deps, a.accountId);
    const res = await world.call("POST", `${PATH}/generate`, { key: a.key, body: { seed_id: seed.json.id, platforms: ["bluesky", "mastodon", "webhook"] } });
    expect(res.status).toBe(201);
    expect(res.json.creditsCharged).toBe(world.deps.config.prices.generateSocialPost);
    expect((await creditSummary(world.deps, a.accountId)).balance).toBe(before.balance - world.deps.config.prices.generateSocialPost);
    expect(res.json.creation.body.variants).toEqual({});
  });

  test("the account's own server limit wins (the strictest connection), counted under its rule", async () => {
    const mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 120 });
    try {
      const a = await world.createAccount();
      await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: "mastodon-test-token" });
      const seed = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "Workshops", content: `${content} https://example.com/signup` } });
      const res = await world.call("POST", `${PATH}/generate`, { key: a.key, body: { seed_id: seed.json.id, platforms: ["mastodon"] } });
      expect(res.status).toBe(201);
      const version: string = res.json.creation.body.variants.mastodon.caption;
      expect(res.json.creation.body.caption.length).toBeGreaterThan(120);
      expect(version.length).toBeLessThanOrEqual(120);
      expect(version).not.toBe(res.json.creation.body.caption);
      // It fits: scheduling it to that server is accepted.
      const post = await world.call("POST", "/api/v1/schedule", {
        key: a.key,
        body: { type: "social_post", creation_id: res.json.creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["mastodon"] },
      });
      expect(post.status).toBe(200);

      // A hand-written Bluesky version; then regenerate: without platforms the versions stay, with them Mastodon's is
      // written again from the new caption and Bluesky's (not named) stays.
      const id = res.json.creation.id;
      await world.call("PATCH", `${PATH}/${id}`, { key: a.key, body: { variants: { mastodon: { caption: version, first_comment: "" }, bluesky: { caption: "mine" } } } });
      const kept = await world.call("POST", `${PATH}/regenerate`, { key: a.key, body: { creation_id: id, parts: "caption" } });
      expect(kept.status).toBe(200);
      expect(kept.json.creation.body.variants).toEqual({ mastodon: { caption: version, firstComment: "" }, bluesky: { caption: "mine" } });
      const rewritten = await world.call("POST", `${PATH}/regenerate`, { key: a.key, body: { creation_id: id, parts: "caption", platforms: ["mastodon"] } });
      expect(rewritten.status).toBe(200);
      expect(rewritten.json.creditsCharged).toBe(world.deps.config.prices.regenerateCaption);
      const variants = rewritten.json.creation.body.variants;
      expect(variants.bluesky).toEqual({ caption: "mine" });
      expect(variants.mastodon.firstComment).toBe("");
      expect(variants.mastodon.caption.length).toBeLessThanOrEqual(120);
      expect(variants.mastodon.caption).not.toBe(rewritten.json.creation.body.caption);
    } finally {
      await mastodon.stop();
    }
  });

  test("a caption that fits in graphemes but not under Mastodon's URL rule is written again for the overshoot, then cut at a word", async () => {
    const a = await world.createAccount();
    const asked: number[] = [];
    // 479 characters of words and a short URL: 491 graphemes, but 503 under Mastodon's rule (the URL counts 23).
    const writer = async (max: number) => {
      asked.push(max);
      return `${"word ".repeat(96).trim()} http://a.co`;
    };
    const variants = await platformVersions(world.deps, a.accountId, ["mastodon"], "the post's own caption", writer);
    expect(asked).toEqual([500, 497]);
    const version = variants.mastodon!.caption!;
    expect(version.endsWith("…")).toBe(true);
    expect(captionLength(version, { urlLength: 23 })).toBeLessThanOrEqual(500);
    expect(version.length).toBeGreaterThan(400);
  });

  test("400 for a platform that does not exist or one named twice; nothing charged", async () => {
    const seed = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: "x", content: "Some words here." } });
    const before = await creditSummary(world.deps, acct.accountId);
    for (const platforms of [["myspace"], ["bluesky", "bluesky"]]) {
      const res = await world.call("POST", `${PATH}/generate`, { key: acct.key, body: { seed_id: seed.json.id, platforms } });
      expect({ platforms, status: res.status }).toEqual({ platforms, status: 400 });
      expect(res.json.details[0].field).toStartWith("platforms");
    }
    expect(await creditSummary(world.deps, acct.accountId)).toEqual(before);
  });
});

describe("assets in use", () => {
  test("an asset in a creation's thread or version blocks its deletion (409 asset_in_use) until the creation lets go", async () => {
    const [inThread, inVersion] = [await newAsset(), await newAsset()];
    const made = await world.call("POST", PATH, {
      key: acct.key,
      body: { caption: "x", thread: [{ caption: "y", images: [{ asset_id: inThread }] }], variants: { mastodon: { images: [{ asset_id: inVersion }] } } },
    });
    for (const id of [inThread, inVersion]) {
      const res = await world.call("DELETE", `/api/v1/assets/${id}`, { key: acct.key });
      expect(res.status).toBe(409);
      expect(res.json.error).toBe("asset_in_use");
    }
    await world.call("PATCH", `${PATH}/${made.json.creation.id}`, { key: acct.key, body: { thread: null, variants: null } });
    for (const id of [inThread, inVersion]) expect((await world.call("DELETE", `/api/v1/assets/${id}`, { key: acct.key })).status).toBe(200);
  });

  test("a pending post's snapshot keeps its thread image in use after the creation drops it; cancelling frees it", async () => {
    const image = await newAsset();
    const made = await world.call("POST", PATH, { key: acct.key, body: { caption: "x", thread: [{ caption: "y", images: [{ asset_id: image }] }] } });
    const id = made.json.creation.id;
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
    });
    expect(scheduled.status).toBe(200);
    expect(scheduled.json.post.content.thread).toEqual([{ caption: "y", images: [{ assetId: image, altText: "" }] }]);
    await world.call("PATCH", `${PATH}/${id}`, { key: acct.key, body: { thread: null } });
    expect((await world.call("DELETE", `/api/v1/assets/${image}`, { key: acct.key })).json.error).toBe("asset_in_use");
    expect((await world.call("DELETE", `/api/v1/schedule/${scheduled.json.post.id}`, { key: acct.key })).status).toBe(200);
    expect((await world.call("DELETE", `/api/v1/assets/${image}`, { key: acct.key })).status).toBe(200);
  });
});
