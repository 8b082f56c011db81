/**
 * Hand edits of creations (decisions.md §10): PATCH caption / altText (free, limits of generated captions, the image
 * untouched), DELETE (409 creation_in_use while a pending post uses it), scheduled posts keeping their snapshot.
 * Posts go out to a real webhook receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { creditSummary } from "../src/modules/credits/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, postRows, solidPng } from "./publishing-fixtures";

let world: World;
let receiver: WebhookReceiver;
let acct: TestAccount;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  acct = await world.createAccount();
  await addConnection(world.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await world.close();
});

const path = (id: string) => `/api/v1/creations/${id}`;

describeAuthMatrix("creation edit and delete", () => world, [
  { method: "PATCH", path: path("0190a0a0-0000-7000-8000-000000000000"), validBody: { caption: "hello" } },
  { method: "DELETE", path: path("0190a0a0-0000-7000-8000-000000000000") },
]);

describe("PATCH /creations/{id}", () => {
  test("sets the caption (trimmed), free, the image and alt text untouched; GET shows it", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "Generated words", altText: "a blue card", image: await solidPng() });
    const before = await creditSummary(world.deps, acct.accountId);
    world.clock.advance(1000);
    const res = await world.call("PATCH", path(c.id), { key: acct.key, body: { caption: "  My own words, by hand  " } });
    expect(res.status).toBe(200);
    expect(res.json.creation).toMatchObject({
      id: c.id,
      imageAssetId: c.imageAssetId,
      body: { caption: "My own words, by hand", altText: "a blue card", imageUrl: `http://localhost/media/${c.imageAssetId}.png` },
    });
    expect(res.json.creation.updatedAt).not.toBe(res.json.creation.createdAt);
    expect(await creditSummary(world.deps, acct.accountId)).toEqual(before);
    const got = await world.call("GET", path(c.id), { key: (await acct.mint(["read"])).key });
    expect(got.json.creation).toEqual(res.json.creation);
  });

  test("sets the alt text of a creation with an image; refuses it without one", async () => {
    const withImage = await makeCreation(world.deps, acct.accountId, { caption: "pic", altText: "old", image: await solidPng() });
    const ok = await world.call("PATCH", path(withImage.id), { key: acct.key, body: { altText: "A blue rectangle" } });
    expect(ok.status).toBe(200);
    expect(ok.json.creation.body).toMatchObject({ caption: "pic", altText: "A blue rectangle" });
    const textOnly = await makeCreation(world.deps, acct.accountId, { caption: "no pic" });
    const refused = await world.call("PATCH", path(textOnly.id), { key: acct.key, body: { altText: "nothing to describe" } });
    expect(refused.status).toBe(400);
    expect(refused.json.details).toEqual([{ field: "altText", problem: "cannot be set: the creation has no image" }]);
  });

  test("400s: empty caption, caption over the limit, nothing to change, wrong types; nothing written", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "stays" });
    const cases: [unknown, string][] = [
      [{ caption: "   " }, "caption"],
      [{ caption: "é".repeat(63_207) }, "caption"],
      [{}, "body"],
      [{ caption: 42 }, "caption"],
      [{ altText: "x".repeat(1501) }, "altText"],
    ];
    for (const [body, field] of cases) {
      const res = await world.call("PATCH", path(c.id), { key: acct.key, body });
      expect({ body, status: res.status, error: res.json.error }).toEqual({ body, status: 400, error: "invalid_request" });
      expect(res.json.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    // A caption written by hand may be as long as the longest network takes (decisions §13): 63,206 characters,
    // counted as people count them; CAPTION_MAX_GRAPHEMES (300) bounds generated captions only.
    const family = "👨‍👩‍👧";
    for (const caption of [family.repeat(301), "é".repeat(63_206)]) {
      const fits = await world.call("PATCH", path(c.id), { key: acct.key, body: { caption } });
      expect(fits.status).toBe(200);
    }
    const restore = await world.call("PATCH", path(c.id), { key: acct.key, body: { caption: "stays" } });
    expect(restore.json.creation.body.caption).toBe("stays");
  });

  test("404 for another account's or a missing id (identical); 403 without the create group", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "mine" });
    const other = await world.createAccount();
    const theirs = await world.call("PATCH", path(c.id), { key: other.key, body: { caption: "hijack" } });
    const missing = await world.call("PATCH", path(crypto.randomUUID()), { key: other.key, body: { caption: "hijack" } });
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
    const forbidden = await world.call("PATCH", path(c.id), { key: (await acct.mint(["read", "schedule"])).key, body: { caption: "no" } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.requiredGroup).toBe("create");
    const still = await world.call("GET", path(c.id), { key: acct.key });
    expect(still.json.creation.body.caption).toBe("mine");
  });

  test("a scheduled post keeps its snapshot: the edited caption does not go out", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "What was scheduled" });
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: c.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
    });
    expect(scheduled.status).toBe(200);
    const edited = await world.call("PATCH", path(c.id), { key: acct.key, body: { caption: "Edited afterwards" } });
    expect(edited.status).toBe(200);
    world.clock.advance(FIVE_MIN + 60_000);
    const before = receiver.deliveries.length;
    await runDueOnce(world.deps);
    const sent = receiver.deliveries.slice(before).find((d) => (d.body as { post?: { id?: string } }).post?.id === scheduled.json.post.id);
    expect((sent?.body as { post: { caption: string } }).post.caption).toBe("What was scheduled");
  });
});

describe("DELETE /creations/{id}", () => {
  test("deletes; the image stays in the library; a second delete is 404", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "bye", altText: "pic", image: await solidPng() });
    const res = await world.call("DELETE", path(c.id), { key: acct.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: c.id, deleted: true });
    expect((await world.call("GET", path(c.id), { key: acct.key })).status).toBe(404);
    expect((await world.call("DELETE", path(c.id), { key: acct.key })).status).toBe(404);
    const asset = await world.call("GET", "/api/v1/assets", { key: acct.key });
    expect(asset.json.assets.map((a: { id: string }) => a.id)).toContain(c.imageAssetId);
  });

  test("409 creation_in_use while a pending post uses it; after the post went out it can go, and the post keeps its snapshot", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "in use" });
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: c.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
    });
    const postId = scheduled.json.post.id;
    const blocked = await world.call("DELETE", path(c.id), { key: acct.key });
    expect(blocked.status).toBe(409);
    expect(blocked.json.error).toBe("creation_in_use");
    expect((await world.call("GET", path(c.id), { key: acct.key })).status).toBe(200);
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, postId)).post!.status).toBe("published");
    const ok = await world.call("DELETE", path(c.id), { key: acct.key });
    expect(ok.status).toBe(200);
    const post = await world.call("GET", `/api/v1/schedule/posts/${postId}`, { key: acct.key });
    expect(post.json.post).toMatchObject({ id: postId, creationId: c.id, status: "published" });
    expect((await postRows(world.deps, postId)).post!.caption).toBe("in use");
  });

  test("a cancelled post no longer blocks; another account cannot delete (404); 403 for a read key", async () => {
    const c = await makeCreation(world.deps, acct.accountId, { caption: "cancel first" });
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: c.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
    });
    expect((await world.call("DELETE", path(c.id), { key: acct.key })).status).toBe(409);
    expect((await world.call("DELETE", `/api/v1/schedule/${scheduled.json.post.id}`, { key: acct.key })).status).toBe(200);
    const other = await world.createAccount();
    expect((await world.call("DELETE", path(c.id), { key: other.key })).status).toBe(404);
    expect((await world.call("DELETE", path(c.id), { key: (await acct.mint(["read"])).key })).status).toBe(403);
    expect((await world.call("DELETE", path(c.id), { key: acct.key })).status).toBe(200);
  });
});
