/**
 * The Bluesky connector against a REAL PDS (@atproto/pds under Node 22, test/peers/bluesky) on 127.0.0.1:
 * an image post with alt text appears in the repo (getRecord), an over-1 MB image is re-encoded and accepted,
 * a wrong app password makes the target not ready with a useful blockedReason, the session is cached, and a
 * retry after an unknown outcome never makes a second post (deterministic record key + getRecord).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { ManualClock } from "../src/lib/clock";
import { addConnection, checkConnection } from "../src/modules/connections/service";
import { recordKeyForTarget } from "../src/publishing/bluesky-rkey";
import { BLUESKY_MAX_IMAGE_BYTES } from "../src/publishing/bluesky";
import { runDueOnce } from "../src/publishing/dispatcher";
import { type BlueskyPds, type BlueskyTestAccount, isBlueskyPdsInstalled, startBlueskyPds } from "./helpers/bluesky-pds";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { FIVE_MIN, leaveDeadWorker, makeCreation, noisePng, postRows, solidPng } from "./publishing-fixtures";

const START_TIMEOUT_MS = 60_000;
const COLLECTION = "app.bsky.feed.post";

let pds: BlueskyPds;
let world: World;
let acct: TestAccount;
let bsky: BlueskyTestAccount;
let connectionId: string;

beforeAll(async () => {
  if (!isBlueskyPdsInstalled()) throw new Error("Bluesky PDS peer not installed: run test/peers/bluesky/install.sh");
  pds = await startBlueskyPds({ readyTimeoutMs: START_TIMEOUT_MS });
  // The PDS signs tokens with the wall clock: our clock starts at real time so createdAt/now agree.
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" }, clock: new ManualClock(Date.now()) });
  acct = await world.createAccount();
  bsky = await pds.createAccount();
  const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "bluesky", handle: bsky.handle, appPassword: bsky.appPassword, service: pds.url });
  connectionId = view.accountId;
}, START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await pds?.stop();
  await world?.close();
});

async function scheduleAndPublish(caption: string, opts: { image?: Uint8Array; altText?: string } = {}) {
  const creation = await makeCreation(world.deps, acct.accountId, { caption, altText: opts.altText ?? null, ...(opts.image ? { image: opts.image } : {}) });
  const res = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: ["bluesky"] },
  });
  expect(res.status).toBe(200);
  world.clock.advance(FIVE_MIN + 1000);
  await runDueOnce(world.deps);
  return (await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: acct.key })).json.post;
}

function rkeyOf(uri: string): string {
  return uri.split("/").pop()!;
}

describe("connect", () => {
  test("a valid app password is ready; the target is labelled with the handle", async () => {
    const targets = (await world.call("GET", "/api/v1/schedule/targets", { key: acct.key })).json.targets;
    expect(targets).toEqual([{ platform: "bluesky", accountId: connectionId, label: `@${bsky.handle}`, readyToPost: true, blockedReason: null, expiresAt: null }]);
  });

  test("a wrong app password is not ready, and the reason says what to fix; scheduling to it answers 409", async () => {
    const a = await world.createAccount();
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "bluesky", handle: bsky.handle, appPassword: "wron-gpas-swor-dxxx", service: pds.url });
    expect(view.readyToPost).toBe(false);
    expect(view.blockedReason).toContain(`Bluesky refused to sign in as ${bsky.handle}`);
    expect(view.blockedReason).toContain("Invalid identifier or password");
    expect(view.blockedReason).toContain("App passwords");
    const creation = await makeCreation(world.deps, a.accountId, { caption: "nope" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: ["bluesky"] },
    });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ error: "target_not_ready", blockedReason: view.blockedReason });
  });

  test("checks reuse the cached session instead of signing in again", async () => {
    const sealedBefore = (await world.sql("SELECT session_sealed AS s FROM connections WHERE id = ?", connectionId))[0]!.s;
    expect(sealedBefore).not.toBeNull();
    expect((await checkConnection(world.deps, connectionId)).readyToPost).toBe(true);
    const sealedAfter = (await world.sql("SELECT session_sealed AS s FROM connections WHERE id = ?", connectionId))[0]!.s;
    expect(sealedAfter).toBe(sealedBefore); // getSession with the cached token: no new session was made
  });

  test("an access token the PDS no longer accepts is refreshed with refreshSession (no new sign-in)", async () => {
    const { openJson, sealJson } = await import("../src/store/sealing");
    const row = (await world.sql("SELECT session_sealed AS s FROM connections WHERE id = ?", connectionId))[0]!;
    const session = openJson<Record<string, string>>(world.deps.instanceSecret, connectionId, row.s);
    const broken = { ...session, accessJwt: `${(session.accessJwt ?? "").slice(0, -4)}AAAA` };
    await world.sql(
      "UPDATE connections SET session_sealed = ? WHERE id = ?",
      sealJson(world.deps.instanceSecret, connectionId, broken),
      connectionId,
    );
    // A wrong stored app password proves no createSession happened: only refreshSession can make this pass.
    const credentials = (await world.sql("SELECT credentials_sealed AS c FROM connections WHERE id = ?", connectionId))[0]!.c;
    const wrong = sealJson(world.deps.instanceSecret, connectionId, { handle: bsky.handle, appPassword: "not-the-password" });
    await world.sql("UPDATE connections SET credentials_sealed = ? WHERE id = ?", wrong, connectionId);
    const view = await checkConnection(world.deps, connectionId);
    await world.sql("UPDATE connections SET credentials_sealed = ? WHERE id = ?", credentials, connectionId);
    expect(view.readyToPost).toBe(true);
    const after = openJson<Record<string, string>>(
      world.deps.instanceSecret,
      connectionId,
      (await world.sql("SELECT session_sealed AS s FROM connections WHERE id = ?", connectionId))[0]!.s,
    );
    expect(after.accessJwt).not.toBe(broken.accessJwt);
    expect(after.refreshJwt).not.toBe(session.refreshJwt); // refreshSession rotates the refresh token
    expect(after.did).toBe(bsky.did);
  });

  test("a caption over 300 graphemes is not schedulable", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "é".repeat(301) });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: ["bluesky"] },
    });
    expect(res.status).toBe(409);
    expect(res.json.problems[0].problem).toContain("allows 300");
  });
});

describe("publish", () => {
  test("a post with an image and alt text appears in the repo, with aspectRatio, link facets and the derived record key", async () => {
    const caption = "Read the launch notes at https://example.com/notes — ünïcödé first!";
    const post = await scheduleAndPublish(caption, { image: await solidPng(300, 200), altText: "A blue rectangle" });
    expect(post.status).toBe("published");
    const target = post.targets[0];
    const { targets } = await postRows(world.deps, post.id);
    expect(rkeyOf(target.providerPostId)).toBe(recordKeyForTarget(targets[0]!.id));
    expect(target.publishedUrl).toBe(`https://bsky.app/profile/${bsky.handle}/post/${rkeyOf(target.providerPostId)}`);
    const record = await pds.getRecord(bsky.did, COLLECTION, rkeyOf(target.providerPostId));
    expect(record).not.toBeNull();
    const value = record!.value as {
      text: string;
      createdAt: string;
      facets: Array<{ index: { byteStart: number; byteEnd: number }; features: Array<{ uri: string }> }>;
      embed: { $type: string; images: Array<{ alt: string; aspectRatio: { width: number; height: number }; image: { size: number; mimeType: string } }> };
    };
    expect(value.text).toBe(caption);
    expect(value.createdAt).toBe(isoAt(world.clock.now()));
    expect(value.embed.$type).toBe("app.bsky.embed.images");
    expect(value.embed.images[0]!.alt).toBe("A blue rectangle");
    expect(value.embed.images[0]!.aspectRatio).toEqual({ width: 300, height: 200 });
    const facet = value.facets[0]!;
    expect(facet.features[0]!.uri).toBe("https://example.com/notes");
    const bytes = new TextEncoder().encode(caption);
    expect(new TextDecoder().decode(bytes.slice(facet.index.byteStart, facet.index.byteEnd))).toBe("https://example.com/notes");
  });

  test("an image over 1 MB is re-encoded under 1,000,000 bytes and accepted", async () => {
    const big = await noisePng(1100);
    expect(big.byteLength).toBeGreaterThan(BLUESKY_MAX_IMAGE_BYTES);
    const post = await scheduleAndPublish("A big noisy picture", { image: big, altText: "Static noise" });
    expect(post.status).toBe("published");
    const record = await pds.getRecord(bsky.did, COLLECTION, rkeyOf(post.targets[0].providerPostId));
    const image = (record!.value as { embed: { images: Array<{ alt: string; image: { size: number; mimeType: string }; aspectRatio: { width: number; height: number } }> } })
      .embed.images[0]!;
    expect(image.image.size).toBeLessThanOrEqual(BLUESKY_MAX_IMAGE_BYTES);
    expect(image.image.mimeType).toBe("image/jpeg");
    expect(image.alt).toBe("Static noise");
    expect(image.aspectRatio.width).toBe(image.aspectRatio.height);
  });

  test("after an unknown outcome the retry reconciles with getRecord: no second post", async () => {
    const post = await scheduleAndPublish("Only once, even after a crash");
    expect(post.status).toBe("published");
    const { targets } = await postRows(world.deps, post.id);
    const before = (await pds.listRecords(bsky.did, COLLECTION)).length;
    // As a crash between the PDS's answer and our write leaves the row.
    await world.sql(
      "UPDATE scheduled_post_targets SET status = 'publishing', lease_token = 'dead', lease_expires_at = ?, send_started_at = ?, next_attempt_at = ?, published_url = NULL WHERE id = ?",
      world.clock.now(),
      world.clock.now(),
      world.clock.now(),
      targets[0]!.id,
    );
    world.clock.advance(1);
    await runDueOnce(world.deps);
    expect((await pds.listRecords(bsky.did, COLLECTION)).length).toBe(before);
    const after = (await postRows(world.deps, post.id)).targets[0]!;
    expect(after.status).toBe("published");
    expect(after.publishedUrl).toContain(rkeyOf(after.providerPostId!));
  });

  test("even a blind resend under the same record key cannot make a second post", async () => {
    const post = await scheduleAndPublish("Blind resend");
    const { targets } = await postRows(world.deps, post.id);
    const before = (await pds.listRecords(bsky.did, COLLECTION)).length;
    // No send_started_at (so no reconcile): deliver runs again and meets the existing record.
    await world.sql(
      "UPDATE scheduled_post_targets SET status = 'scheduled', next_attempt_at = ?, published_url = NULL WHERE id = ?",
      world.clock.now(),
      targets[0]!.id,
    );
    await runDueOnce(world.deps);
    expect((await pds.listRecords(bsky.did, COLLECTION)).length).toBe(before);
    expect((await postRows(world.deps, post.id)).targets[0]!.status).toBe("published");
  });

  test("cancel after an unknown outcome: getRecord proves nothing landed, so the cancel withdraws it", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "never sent" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: ["bluesky"] },
    });
    const id = res.json.post.id;
    world.clock.advance(FIVE_MIN + 1000);
    const target = (await postRows(world.deps, id)).targets[0]!;
    await leaveDeadWorker(world, target.id);
    const cancel = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: acct.key });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toEqual({ id, cancelled: true, providerPostWithdrawn: false });
    expect(await pds.getRecord(bsky.did, COLLECTION, recordKeyForTarget(target.id))).toBeNull();
  });
});
