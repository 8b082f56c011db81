/**
 * Does a post fit where it goes (decisions.md §7, §13)? Each network's counting rule, table-driven (a new network
 * adds its rows); every check of a target against what it will send, first as a table over declared capabilities
 * (networks without threads, first comments or some image types come with later connectors), then through
 * POST /schedule against the Mastodon peer, a Bluesky connection and a webhook; and "editing a creation after
 * scheduling changes nothing that goes out", read through loadDeliveryContent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { MAX_IMAGES, MAX_THREAD_PARTS, type StoredImage } from "../src/db/schema/post-content";
import { connections } from "../src/db/tables";
import type { ConnectionPlatform } from "../src/db/schema/connections";
import { isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { type FitTarget, type ImageFacts, targetProblems } from "../src/modules/schedule/fit";
import { captionLength } from "../src/publishing/caption-count";
import type { NetworkCapabilities } from "../src/publishing/connector";
import { loadDeliveryContent, type StoredContent } from "../src/publishing/content";
import { connectorFor } from "../src/publishing/registry";
import type { ConnectionMeta, OpenConnection } from "../src/store/connections";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, postRows, solidPng } from "./publishing-fixtures";

/** A connection as a connector sees it, for the limits it declares (no secrets needed). */
function connectionOf(platform: ConnectionPlatform, meta: ConnectionMeta = {}): OpenConnection {
  return { id: "c", accountId: "a", platform, label: platform, endpoint: "https://example.invalid", credentials: {}, session: null, meta };
}

const FAMILY = "👨‍👩‍👧‍👦"; // one grapheme, 11 UTF-16 units
const E_ACUTE = "e\u0301"; // one grapheme, two code points
const LONG_URL = `https://example.com/${"p".repeat(80)}`;

/** Each network's counting rule: [network, its connection's meta, text, length under the rule, limit]. */
const COUNTING: [ConnectionPlatform, ConnectionMeta, string, number, number][] = [
  ["bluesky", {}, "a".repeat(300), 300, 300],
  ["bluesky", {}, "a".repeat(301), 301, 300],
  ["bluesky", {}, FAMILY.repeat(300), 300, 300],
  ["bluesky", {}, E_ACUTE.repeat(301), 301, 300],
  // Bluesky counts a URL as written (its facets shorten nothing in the text).
  ["bluesky", {}, `see ${LONG_URL}`, 4 + LONG_URL.length, 300],
  ["mastodon", {}, "a".repeat(500), 500, 500],
  ["mastodon", {}, `${"x".repeat(476)} ${LONG_URL}`, 500, 500],
  ["mastodon", {}, `${"x".repeat(477)} ${LONG_URL}`, 501, 500],
  ["mastodon", {}, `http://a.example ${"y".repeat(10)}`, 23 + 1 + 10, 500],
  ["mastodon", {}, FAMILY.repeat(3), 3, 500],
  // The server's own limit (learnt at the credential check).
  ["mastodon", { maxCharacters: 1000 }, "z".repeat(1000), 1000, 1000],
  ["mastodon", { maxCharacters: 120 }, `${"z".repeat(96)} ${LONG_URL}`, 120, 120],
];

describe("counting rules, per network", () => {
  test.each(COUNTING)("%s %o: a text of %#", (platform, meta, text, length, limit) => {
    const declared = connectorFor(platform).captionLimit(connectionOf(platform, meta));
    expect(declared).not.toBeNull();
    expect(declared!.maxGraphemes).toBe(limit);
    expect(captionLength(text, declared!)).toBe(length);
  });

  test("webhooks have no limit", () => {
    expect(connectorFor("webhook").captionLimit(connectionOf("webhook"))).toBeNull();
  });

  test("a network's own count replaces graphemes (X's weighted count, declared by its connector)", () => {
    const weighted = (text: string) => [...text].reduce((n, ch) => n + (ch.charCodeAt(0) > 0x10ff ? 2 : 1), 0);
    expect(captionLength("日本語 ok", { count: weighted })).toBe(9);
  });
});

// ---------------------------------------------------------------------------------------------------------------

const IMAGE = (id: string): StoredImage => ({ assetId: id, altText: null });
const facts: ImageFacts = new Map([
  ["png", { mimeType: "image/png", readable: true }],
  ["gif", { mimeType: "image/gif", readable: true }],
  ["jpg", { mimeType: "image/jpeg", readable: true }],
]);
const content = (over: Partial<StoredContent>): StoredContent => ({ caption: "hello", images: [], thread: [], firstComment: null, variants: {}, ...over });

/** Declared capabilities for the table: today's networks, and shapes the later connectors declare. */
const CAPS: Record<string, NetworkCapabilities> = {
  bluesky: connectorFor("bluesky").capabilities(connectionOf("bluesky")),
  mastodon: connectorFor("mastodon").capabilities(connectionOf("mastodon")),
  noThreads: { name: "NoThreads", maxImages: 9, maxThreadParts: 0, firstComment: true, requiresImage: false, imageTypes: ["image/jpeg", "image/png"] },
  pictures: { name: "Pictures", maxImages: 10, maxThreadParts: 0, firstComment: false, requiresImage: true, imageTypes: ["image/jpeg"] },
};
const LIMITS: Record<string, FitTarget["captionLimit"]> = {
  bluesky: connectorFor("bluesky").captionLimit(connectionOf("bluesky")),
  mastodon: connectorFor("mastodon").captionLimit(connectionOf("mastodon", { maxCharacters: 50 })),
  noThreads: { maxGraphemes: 3000, platformName: "NoThreads" },
  pictures: { maxGraphemes: 2200, platformName: "Pictures" },
};
const target = (platform: string): FitTarget => ({ accountId: `id-${platform}`, platform, label: `@${platform}`, capabilities: CAPS[platform]!, captionLimit: LIMITS[platform]! });

/** [network, content, the fields of the problems expected (in order)]. */
const FITS: [string, StoredContent, string[]][] = [
  ["bluesky", content({ images: ["png", "png", "gif", "jpg"].map(IMAGE) }), []],
  ["bluesky", content({ images: ["png", "png", "gif", "jpg", "png"].map(IMAGE) }), ["images"]],
  ["bluesky", content({ thread: [{ caption: "ok", images: [] }, { caption: "b".repeat(301), images: Array(5).fill(IMAGE("png")) }] }), ["thread[1].caption", "thread[1].images"]],
  ["bluesky", content({ firstComment: "c".repeat(301) }), ["first_comment"]],
  ["bluesky", content({ thread: Array(MAX_THREAD_PARTS + 1).fill({ caption: "p", images: [] }) }), ["thread"]],
  // A version applies: Bluesky's own caption, thread and first comment.
  [
    "bluesky",
    content({ caption: "a".repeat(400), thread: [{ caption: "b".repeat(400), images: [] }], firstComment: "c".repeat(400), variants: { bluesky: { caption: "short", thread: [], firstComment: "" } } }),
    [],
  ],
  ["mastodon", content({ caption: `${"m".repeat(26)} ${LONG_URL}` }), []],
  ["mastodon", content({ caption: "m".repeat(51) }), ["caption"]],
  ["mastodon", content({ variants: { bluesky: { caption: "m".repeat(51) } } }), []],
  ["noThreads", content({ thread: [{ caption: "two", images: [] }] }), ["thread"]],
  ["noThreads", content({ thread: [{ caption: "two", images: [] }], variants: { noThreads: { thread: [] } } }), []],
  ["noThreads", content({ images: ["png", "gif"].map(IMAGE) }), ["images[1]"]],
  ["pictures", content({}), ["images"]],
  ["pictures", content({ images: [IMAGE("png")], firstComment: "first!" }), ["images[0]", "first_comment"]],
  ["pictures", content({ images: [IMAGE("jpg")], firstComment: "first!", variants: { pictures: { firstComment: "" } } }), []],
  ["pictures", content({ images: Array(MAX_IMAGES + 1).fill(IMAGE("jpg")) }), ["images"]],
];

describe("every target against what it will send", () => {
  test.each(FITS)("%s: case %#", (platform, sent, fields) => {
    const problems = targetProblems(target(platform), sent, facts);
    expect(problems.map((p) => p.field)).toEqual(fields);
    for (const p of problems) {
      expect(p).toMatchObject({ accountId: `id-${platform}`, platform });
      expect(p.problem).toContain(`@${platform}`);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

let world: World;
let receiver: WebhookReceiver;
let mastodon: MastodonServer;
let acct: TestAccount;
let ids: { webhook: string; mastodon: string; bluesky: string };
let png: Uint8Array;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 120 });
  acct = await world.createAccount();
  png = await solidPng();
  const hook = await addConnection(world.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
  const masto = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: mastodon.url, token: "mastodon-test-token" });
  // Scheduling never talks to Bluesky (its posts wait for the dispatcher): a connection marked ready is enough here.
  const bsky = await addConnection(world.deps, { accountId: acct.accountId, platform: "bluesky", handle: "fit.example.com", appPassword: "abcd-efgh-ijkl-mnop", service: "https://127.0.0.1:9" });
  await world.deps.store.write((tx) => tx.update(connections).set({ readyToPost: true, blockedReason: null }).where(eq(connections.id, bsky.accountId)).run());
  ids = { webhook: hook.accountId, mastodon: masto.accountId, bluesky: bsky.accountId };
});

afterAll(async () => {
  await receiver.stop();
  await mastodon.stop();
  await world.close();
});

async function asset(): Promise<string> {
  return (await ingestImageBytes(world.deps, acct.accountId, { bytes: png, fileName: "fit" })).id;
}

async function write(body: Record<string, unknown>): Promise<string> {
  const res = await world.call("POST", "/api/v1/creations", { key: acct.key, body });
  expect(res.status).toBe(201);
  return res.json.creation.id;
}

async function schedule(creationId: string, targets: string[]) {
  return world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: creationId, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets },
  });
}

describe("POST /schedule checks every target", () => {
  test("409 not_schedulable names each target and part: a Mastodon thread part over 120 (fine on Bluesky), five images on Bluesky; nothing stored", async () => {
    const images = await Promise.all(Array.from({ length: 5 }, () => asset()));
    const id = await write({
      caption: "fits everywhere",
      images: images.map((asset_id) => ({ asset_id })),
      thread: [{ caption: "short" }, { caption: "t".repeat(121) }],
      variants: { mastodon: { images: [{ asset_id: images[0] }] } },
    });
    const res = await schedule(id, [ids.webhook, ids.mastodon, ids.bluesky]);
    expect(res.status).toBe(409);
    expect(res.json.error).toBe("not_schedulable");
    expect(res.json.problems).toEqual([
      { accountId: ids.mastodon, platform: "mastodon", field: "thread[1].caption", problem: expect.stringContaining("allows 120") },
      { accountId: ids.bluesky, platform: "bluesky", field: "images", problem: expect.stringContaining("at most 4") },
    ]);
    const posts = await world.call("GET", "/api/v1/schedule/posts", { key: acct.key });
    expect(posts.json.posts.filter((p: { creationId: string }) => p.creationId === id)).toEqual([]);
  });

  test("a first comment over the limit is named; the webhook alone takes everything", async () => {
    const id = await write({ caption: "hi", first_comment: "c".repeat(121), thread: Array.from({ length: 24 }, (_, i) => ({ caption: `part ${i}` })) });
    const refused = await schedule(id, [ids.mastodon]);
    expect(refused.json.problems).toEqual([{ accountId: ids.mastodon, platform: "mastodon", field: "first_comment", problem: expect.stringContaining("first comment") }]);
    const taken = await schedule(id, [ids.webhook]);
    expect(taken.status).toBe(200);
    expect(taken.json.post.content).toMatchObject({ firstComment: "c".repeat(121), images: [], variants: {} });
    expect(taken.json.post.content.thread).toHaveLength(24);
  });

  test("versions make it fit: each network is checked against its own", async () => {
    const images = await Promise.all(Array.from({ length: 6 }, () => asset()));
    const id = await write({
      caption: "l".repeat(400),
      images: images.map((asset_id) => ({ asset_id })),
      variants: {
        bluesky: { caption: "short for Bluesky", images: images.slice(0, 4).map((asset_id) => ({ asset_id, alt_text: "four" })) },
        mastodon: { caption: "short for Mastodon", images: images.slice(0, 4).map((asset_id) => ({ asset_id })) },
      },
    });
    const res = await schedule(id, [ids.webhook, ids.mastodon, ids.bluesky]);
    expect(res.status).toBe(200);
    expect(res.json.post.content.images).toHaveLength(6);
    expect(Object.keys(res.json.post.content.variants).sort()).toEqual(["bluesky", "mastodon"]);
  });
});

describe("editing a creation after scheduling changes nothing that goes out", () => {
  test("PATCH caption, images, thread, first comment and versions: each target still sends its snapshot", async () => {
    const [a, b, c] = [await asset(), await asset(), await asset()];
    const id = await write({
      caption: "The original",
      images: [{ asset_id: a, alt_text: "first" }, { asset_id: b }],
      thread: [{ caption: "original part", images: [{ asset_id: c, alt_text: "third" }] }],
      first_comment: "original comment",
      variants: { mastodon: { caption: "Mastodon's original", first_comment: "" } },
    });
    const res = await schedule(id, [ids.webhook, ids.mastodon, ids.bluesky]);
    expect(res.status).toBe(200);
    const { post } = await postRows(world.deps, res.json.post.id);
    const before = {
      webhook: await loadDeliveryContent(world.deps, post!, "webhook"),
      mastodon: await loadDeliveryContent(world.deps, post!, "mastodon"),
      bluesky: await loadDeliveryContent(world.deps, post!, "bluesky"),
    };
    const sent = (d: typeof before.webhook) => ({
      caption: d.caption,
      images: d.images.map((i) => [i.assetId, i.altText, i.bytes.length]),
      thread: d.thread.map((p) => [p.caption, p.images.map((i) => [i.assetId, i.altText])]),
      firstComment: d.firstComment,
    });
    expect(sent(before.webhook)).toEqual({
      caption: "The original",
      images: [
        [a, "first", png.length],
        [b, null, png.length],
      ],
      thread: [["original part", [[c, "third"]]]],
      firstComment: "original comment",
    });
    expect(sent(before.mastodon)).toMatchObject({ caption: "Mastodon's original", firstComment: null });

    const edit = await world.call("PATCH", `/api/v1/creations/${id}`, {
      key: acct.key,
      body: { caption: "Changed", images: [{ asset_id: c }], thread: [{ caption: "new part" }], first_comment: "new comment", variants: null },
    });
    expect(edit.status).toBe(200);
    const { post: after } = await postRows(world.deps, res.json.post.id);
    for (const platform of ["webhook", "mastodon", "bluesky"] as const) {
      expect(sent(await loadDeliveryContent(world.deps, after!, platform))).toEqual(sent(before[platform]));
    }
    const read = await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: acct.key });
    expect(read.json.post.content).toEqual(res.json.post.content);
  });
});
