/**
 * Posts as people write them, delivered (issue 24): several images, a thread and a first comment, sent to the REAL
 * Bluesky PDS (test/peers/bluesky), the Mastodon peer (test/peers/mastodon-server.ts) and the webhook receiver, and read
 * back from each: reply root/parent references, alt texts, aspect ratios, media descriptions in order, the
 * `in_reply_to_id` chain, the webhook payload. A thread that fails midway says how many parts went out; a retry
 * continues from the first part not out and never sends a part twice. A Mastodon post with a thread is held by
 * Seedcast, not handed to the server.
 *
 * Posts are written by hand (POST /api/v1/creations) and scheduled through the API; the few that test a refusal
 * mid-thread the checks at scheduling would catch first are inserted as snapshots directly (test/publishing-load.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import type { StoredImage, StoredPart } from "../src/db/schema/post-content";
import { creations } from "../src/db/tables";
import { ManualClock, isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { recordKeyForPart } from "../src/publishing/bluesky-rkey";
import { BACKOFF_MS, runDueOnce } from "../src/publishing/dispatcher";
import { type BlueskyPds, type BlueskyTestAccount, isBlueskyPdsInstalled, startBlueskyPds } from "./helpers/bluesky-pds";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, type Status, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, postRows, solidPng } from "./publishing-fixtures";
import { type DuePostContent, insertDuePosts } from "./publishing-load";

const START_TIMEOUT_MS = 60_000;
const COLLECTION = "app.bsky.feed.post";
/** Width × height of the post's four images and of the third part's one: each a different aspect ratio. */
const SIZES = [
  [300, 200],
  [200, 300],
  [400, 100],
  [120, 120],
  [90, 160],
] as const;

let pds: BlueskyPds;
let world: World;
let acct: TestAccount;
let bsky: BlueskyTestAccount;
let mastodon: MastodonServer;
let receiver: WebhookReceiver;
const connection: Record<"bluesky" | "mastodon" | "webhook", string> = { bluesky: "", mastodon: "", webhook: "" };
let images: StoredImage[];
let creationId: string;

beforeAll(async () => {
  if (!isBlueskyPdsInstalled()) throw new Error("Bluesky PDS peer not installed: run test/peers/bluesky/install.sh");
  pds = await startBlueskyPds({ readyTimeoutMs: START_TIMEOUT_MS });
  // The PDS signs tokens with the wall clock: our clock starts at real time.
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" }, clock: new ManualClock(Date.now()) });
  mastodon = await startMastodonServer({ now: () => world.clock.now(), mediaProcessingPolls: 0 });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  acct = await world.createAccount();
  bsky = await pds.createAccount();
  const add = async (input: Parameters<typeof addConnection>[1]): Promise<string> => {
    const view = await addConnection(world.deps, input);
    expect(view.readyToPost).toBe(true);
    return view.accountId;
  };
  connection.bluesky = await add({ accountId: acct.accountId, platform: "bluesky", handle: bsky.handle, appPassword: bsky.appPassword, service: pds.url });
  connection.mastodon = await add({ accountId: acct.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
  connection.webhook = await add({ accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
  images = [];
  for (const [i, [width, height]] of SIZES.entries()) {
    const asset = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(width, height), fileName: `picture-${i}` });
    images.push({ assetId: asset.id, altText: `Alt text of image ${i + 1} (${width}×${height})` });
  }
  creationId = (await makeCreation(world.deps, acct.accountId, { caption: "a creation the posts were scheduled from" })).id;
}, START_TIMEOUT_MS + 30_000);

afterAll(async () => {
  await pds?.stop();
  await mastodon?.stop();
  await receiver?.stop();
  await world?.close();
});

/** The post every network gets here: 4 images, a thread of 2 follow-up parts (the second with an image), a first comment. */
function threadContent(tag: string): DuePostContent & { thread: StoredPart[] } {
  return {
    caption: `${tag}: the post, with four pictures`,
    images: images.slice(0, 4),
    thread: [
      { caption: `${tag}: part two, read more at https://example.com/two`, images: [] },
      { caption: `${tag}: part three, one picture`, images: [images[4]!] },
    ],
    firstComment: `${tag}: the first comment, with the link https://example.com/comment`,
  };
}

/** An image as requests spell it. */
const imageInput = (image: StoredImage) => ({ asset_id: image.assetId, alt_text: image.altText });

/**
 * Writes `content` by hand (POST /api/v1/creations), schedules it to `platform`'s connection (POST /api/v1/schedule,
 * 5 minutes ahead), moves the clock there and runs the dispatcher. Answers the target's id.
 */
async function publish(platform: keyof typeof connection, content: DuePostContent): Promise<string> {
  const created = await world.call("POST", "/api/v1/creations", {
    key: acct.key,
    body: {
      type: "social_post",
      caption: content.caption,
      images: (content.images ?? []).map(imageInput),
      thread: (content.thread ?? []).map((part) => ({ caption: part.caption, images: part.images.map(imageInput) })),
      first_comment: content.firstComment ?? null,
    },
  });
  expect(created.status).toBe(201);
  const scheduled = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: created.json.creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: [connection[platform]] },
  });
  expect(scheduled.status).toBe(200);
  world.clock.advance(FIVE_MIN + 1000);
  await runDueOnce(world.deps);
  return (await postRows(world.deps, scheduled.json.post.id)).targets[0]!.id;
}

/** Inserts one post for `platform`'s connection with `content`, due now (as a snapshot no check saw). Answers its target id. */
async function insertPost(platform: keyof typeof connection, content: DuePostContent): Promise<string> {
  const [targetId] = await insertDuePosts(world.deps, {
    accountId: acct.accountId,
    connectionId: connection[platform],
    creationId,
    count: 1,
    firstDueAt: world.clock.now(),
    spreadMs: 0,
    platform,
    content,
  });
  return targetId!;
}

async function targetRow(targetId: string) {
  const rows = await world.sql("SELECT status, error_message, parts_out, provider_post_id, published_url, attempts FROM scheduled_post_targets WHERE id = ?", targetId);
  const row = rows[0]!;
  const partsOut = typeof row.parts_out === "string" ? (JSON.parse(row.parts_out) as string[]) : (row.parts_out as string[]);
  return { ...row, partsOut, attempts: Number(row.attempts) } as {
    status: string;
    error_message: string | null;
    partsOut: string[];
    provider_post_id: string | null;
    published_url: string | null;
    attempts: number;
  };
}

interface BskyPost {
  text: string;
  reply?: { root: { uri: string; cid: string }; parent: { uri: string; cid: string } };
  facets?: Array<{ index: { byteStart: number; byteEnd: number }; features: Array<{ $type: string; uri: string }> }>;
  embed?: { $type: string; images: Array<{ alt: string; aspectRatio: { width: number; height: number }; image: { mimeType: string } }> };
}

describe("Bluesky (real PDS)", () => {
  test("a 3-part thread with 4 images in the first part and a first comment: replies with root and parent strong refs, alt texts, aspect ratios, link facets", async () => {
    const before = (await pds.listRecords(bsky.did, COLLECTION)).length;
    const content = threadContent("Bluesky");
    const targetId = await publish("bluesky", content);
    const row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.error_message).toBeNull();
    expect(row.partsOut).toHaveLength(4);
    // Every part under its own derived record key, in order.
    expect(row.partsOut).toEqual([0, 1, 2, 3].map((i) => `at://${bsky.did}/${COLLECTION}/${recordKeyForPart(targetId, i)}`));
    expect(row.provider_post_id).toBe(row.partsOut[0]!);
    expect(row.published_url).toBe(`https://bsky.app/profile/${bsky.handle}/post/${recordKeyForPart(targetId, 0)}`);
    expect((await pds.listRecords(bsky.did, COLLECTION)).length).toBe(before + 4);

    const records = await Promise.all([0, 1, 2, 3].map((i) => pds.getRecord(bsky.did, COLLECTION, recordKeyForPart(targetId, i))));
    const [post, two, three, comment] = records.map((r) => r!.value as BskyPost);
    const ref = (i: number) => ({ uri: records[i]!.uri, cid: records[i]!.cid });

    expect(post!.text).toBe(content.caption!);
    expect(post!.reply).toBeUndefined();
    expect(post!.embed!.$type).toBe("app.bsky.embed.images");
    expect(post!.embed!.images.map((i) => i.alt)).toEqual(images.slice(0, 4).map((i) => i.altText!));
    expect(post!.embed!.images.map((i) => i.aspectRatio)).toEqual(SIZES.slice(0, 4).map(([width, height]) => ({ width, height })));

    expect(two!.text).toBe(content.thread[0]!.caption);
    expect(two!.reply).toEqual({ root: ref(0), parent: ref(0) });
    expect(two!.embed).toBeUndefined();
    const facet = two!.facets![0]!;
    expect(facet.features[0]).toEqual({ $type: "app.bsky.richtext.facet#link", uri: "https://example.com/two" });
    expect(new TextDecoder().decode(new TextEncoder().encode(two!.text).slice(facet.index.byteStart, facet.index.byteEnd))).toBe("https://example.com/two");

    expect(three!.text).toBe(content.thread[1]!.caption);
    expect(three!.reply).toEqual({ root: ref(0), parent: ref(1) });
    expect(three!.embed!.images.map((i) => [i.alt, i.aspectRatio])).toEqual([[images[4]!.altText!, { width: 90, height: 160 }]]);

    // The first comment answers the post itself.
    expect(comment!.text).toBe(content.firstComment!);
    expect(comment!.reply).toEqual({ root: ref(0), parent: ref(0) });
    expect(comment!.facets![0]!.features[0]!.uri).toBe("https://example.com/comment");
  });

  test("a crash after part 2 landed but before it was recorded: the retry finds it by its key and sends only the rest", async () => {
    const content = threadContent("Bluesky crash");
    const targetId = await publish("bluesky", content);
    const sent = await targetRow(targetId);
    expect(sent.status).toBe("published");
    // Take back the records of parts 3 and 4 (as if never sent) and forget part 2 (as if the crash came before its write).
    for (const i of [2, 3]) await deleteRecord(recordKeyForPart(targetId, i));
    await world.sql(
      "UPDATE scheduled_post_targets SET status = 'publishing', lease_token = 'dead', lease_expires_at = ?, send_started_at = ?, next_attempt_at = ?, parts_out = ? WHERE id = ?",
      world.clock.now() - 1,
      world.clock.now() - 5000,
      world.clock.now(),
      JSON.stringify(sent.partsOut.slice(0, 1)),
      targetId,
    );
    const cidOf = async (i: number) => (await pds.getRecord(bsky.did, COLLECTION, recordKeyForPart(targetId, i)))?.cid;
    const kept = [await cidOf(0), await cidOf(1)];
    await runDueOnce(world.deps);
    const row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.partsOut).toEqual(sent.partsOut);
    // Parts 1 and 2 are the same records as before (never written again); parts 3 and 4 are back, replying to them.
    expect([await cidOf(0), await cidOf(1)]).toEqual(kept);
    const three = (await pds.getRecord(bsky.did, COLLECTION, recordKeyForPart(targetId, 2)))!.value as BskyPost;
    expect(three.reply!.parent.cid).toBe(kept[1]!);
    const mine = (await pds.listRecords(bsky.did, COLLECTION)).filter((r) => (r.value as BskyPost).text.startsWith("Bluesky crash:"));
    expect(mine).toHaveLength(4);
  });

  test("a part the PDS refuses fails the target with how many parts went out", async () => {
    const content = threadContent("Bluesky refused");
    // The lexicon caps a post's text at 3,000 bytes: the PDS refuses the third part.
    content.thread[1] = { caption: "x".repeat(3001), images: [] };
    const targetId = await insertPost("bluesky", content);
    await runDueOnce(world.deps);
    const row = await targetRow(targetId);
    expect(row.status).toBe("failed");
    expect(row.partsOut).toHaveLength(2);
    expect(row.error_message).toStartWith("2 of 4 parts went out: Bluesky refused the part 3 of 4: ");
  });
});

/** Deletes a record of the test account (its main password signs in). */
async function deleteRecord(rkey: string): Promise<void> {
  const login = await fetch(`${pds.url}/xrpc/com.atproto.server.createSession`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ identifier: bsky.did, password: bsky.password }),
  });
  const { accessJwt } = (await login.json()) as { accessJwt: string };
  const res = await fetch(`${pds.url}/xrpc/com.atproto.repo.deleteRecord`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${accessJwt}` },
    body: JSON.stringify({ repo: bsky.did, collection: COLLECTION, rkey }),
  });
  expect(res.status).toBe(200);
}

describe("Mastodon (peer)", () => {
  function statusesOf(tag: string): Status[] {
    return [...mastodon.state.statuses.values()].filter((s) => s.text.startsWith(`${tag}:`));
  }

  test("4 media with their descriptions in order, the thread as an in_reply_to_id chain, the first comment replying to the post", async () => {
    const content = threadContent("Mastodon");
    const targetId = await publish("mastodon", content);
    const row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.partsOut).toHaveLength(4);
    const [post, two, three, comment] = row.partsOut.map((id) => mastodon.state.statuses.get(id)!);
    expect(statusesOf("Mastodon")).toHaveLength(4);
    expect(row.provider_post_id).toBe(post!.id);
    expect(row.published_url).toBe(post!.url);

    expect(post!.text).toBe(content.caption!);
    expect(post!.in_reply_to_id).toBeNull();
    expect(post!.media_attachments.map((m) => m.description)).toEqual(images.slice(0, 4).map((i) => i.altText));
    expect(two!.text).toBe(content.thread[0]!.caption);
    expect(two!.in_reply_to_id).toBe(post!.id);
    expect(two!.media_attachments).toEqual([]);
    expect(three!.text).toBe(content.thread[1]!.caption);
    expect(three!.in_reply_to_id).toBe(two!.id);
    expect(three!.media_attachments.map((m) => m.description)).toEqual([images[4]!.altText]);
    expect(comment!.text).toBe(content.firstComment!);
    expect(comment!.in_reply_to_id).toBe(post!.id);
    expect(comment!.in_reply_to_account_id).toBe(mastodon.state.account.id);

    // Each part under its own Idempotency-Key.
    const keys = mastodon.state.requests.filter((r) => r.method === "POST" && r.path === "/api/v1/statuses" && r.idempotencyKey?.startsWith(targetId)).map((r) => r.idempotencyKey);
    expect(keys).toEqual([targetId, `${targetId}:1`, `${targetId}:2`, `${targetId}:3`]);
  });

  test("a part refused for a passing reason: the target waits, saying 2 of 4 parts went out; the retry sends only the rest", async () => {
    const content = threadContent("Mastodon retry");
    let refusals = 0;
    mastodon.state.statusHook = (input) => {
      if (input.status !== content.thread[1]!.caption) return null;
      refusals++;
      return new Response(JSON.stringify({ error: "Service Unavailable" }), { status: 503, headers: { "content-type": "application/json" } });
    };
    let targetId: string;
    try {
      targetId = await publish("mastodon", content);
    } finally {
      mastodon.state.statusHook = null;
    }
    expect(refusals).toBe(1);
    const waiting = await targetRow(targetId);
    expect(waiting.status).toBe("scheduled");
    expect(waiting.attempts).toBe(1);
    expect(waiting.partsOut).toHaveLength(2);
    expect(waiting.error_message).toStartWith("2 of 4 parts went out: The Mastodon server refused the part 3 of 4: ");
    expect(statusesOf("Mastodon retry")).toHaveLength(2);

    // Cancelling now cannot take the two parts back: refused, and nothing changes.
    const postId = await postIdOf(targetId);
    const cancel = await world.call("DELETE", `/api/v1/schedule/${postId}`, { key: acct.key });
    expect(cancel.status).toBe(502);
    expect(cancel.json.error).toBe("distribution_failed");
    expect(cancel.json.message).toContain("The first 2 parts of this post went out already and cannot be taken back; the rest follows.");
    expect((await targetRow(targetId)).status).toBe("scheduled");

    world.clock.advance(BACKOFF_MS[0]);
    await runDueOnce(world.deps);
    const row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.error_message).toBeNull();
    expect(row.partsOut.slice(0, 2)).toEqual(waiting.partsOut);
    const statuses = statusesOf("Mastodon retry");
    expect(statuses.map((s) => s.text).sort()).toEqual([content.caption!, content.thread[0]!.caption, content.thread[1]!.caption, content.firstComment!].sort());
    const [post, two, three, comment] = row.partsOut.map((id) => mastodon.state.statuses.get(id)!);
    expect([two!.in_reply_to_id, three!.in_reply_to_id, comment!.in_reply_to_id]).toEqual([post!.id, two!.id, post!.id]);
  });

  test("a crash with parts posted but not recorded: the recent statuses settle what is out, only the rest is sent again, under its part's key", async () => {
    const content = threadContent("Mastodon crash");
    const targetId = await publish("mastodon", content);
    const sent = await targetRow(targetId);
    expect(sent.status).toBe("published");
    const dieAfter = async (recorded: number) =>
      world.sql(
        "UPDATE scheduled_post_targets SET status = 'publishing', lease_token = 'dead', lease_expires_at = ?, send_started_at = ?, next_attempt_at = ?, parts_out = ? WHERE id = ?",
        world.clock.now() - 1,
        world.clock.now() - 5000,
        world.clock.now(),
        JSON.stringify(sent.partsOut.slice(0, recorded)),
        targetId,
      );
    const statusPosts = () => mastodon.state.requests.filter((r) => r.method === "POST" && r.path === "/api/v1/statuses");

    // Parts 2–4 went out but only the post was recorded: all three are found, nothing is sent.
    await dieAfter(1);
    let before = statusPosts().length;
    await runDueOnce(world.deps);
    let row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.partsOut).toEqual(sent.partsOut);
    expect(statusPosts().length).toBe(before);

    // Parts 3 and 4 never went out (removed here), part 2 did but was not recorded: part 2 is found, 3 and 4 are sent.
    for (const id of sent.partsOut.slice(2)) mastodon.state.statuses.delete(id);
    await dieAfter(1);
    before = statusPosts().length;
    await runDueOnce(world.deps);
    row = await targetRow(targetId);
    expect(row.status).toBe("published");
    expect(row.partsOut.slice(0, 2)).toEqual(sent.partsOut.slice(0, 2));
    expect(statusPosts().slice(before).map((r) => r.idempotencyKey)).toEqual([`${targetId}:2`, `${targetId}:3`]);
    const [post, two, three, comment] = row.partsOut.map((id) => mastodon.state.statuses.get(id)!);
    expect([three!.in_reply_to_id, comment!.in_reply_to_id]).toEqual([two!.id, post!.id]);
    expect(statusesOf("Mastodon crash")).toHaveLength(4);
  });

  test("a part refused for good fails the target with how many parts went out", async () => {
    const content = threadContent("Mastodon refused");
    mastodon.state.statusHook = (input) =>
      input.status === content.firstComment ? new Response(JSON.stringify({ error: "Validation failed: Text is spam" }), { status: 422 }) : null;
    let targetId: string;
    try {
      targetId = await publish("mastodon", content);
    } finally {
      mastodon.state.statusHook = null;
    }
    const row = await targetRow(targetId);
    expect(row.status).toBe("failed");
    expect(row.partsOut).toHaveLength(3);
    expect(row.error_message).toBe("3 of 4 parts went out: The Mastodon server refused the part 4 of 4: Validation failed: Text is spam");
    const api = (await world.call("GET", `/api/v1/schedule/posts/${(await postIdOf(targetId))}`, { key: acct.key })).json.post;
    expect(api.status).toBe("failed");
    expect(api.targets[0].errorMessage).toBe(row.error_message);
  });

  test("scheduling a post with a thread far ahead keeps it with Seedcast: nothing is handed to the server", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "Mastodon held: the post" });
    await world.deps.store.write((tx) =>
      tx.update(creations).set({ thread: [{ caption: "Mastodon held: part two", images: [] }] }).where(eq(creations.id, creation.id)).run(),
    );
    const scheduledBefore = mastodon.state.scheduled.size;
    const res = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + 4 * FIVE_MIN), targets: [connection.mastodon] },
    });
    expect(res.status).toBe(200);
    expect(mastodon.state.scheduled.size).toBe(scheduledBefore);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]!.heldByProvider).toBe(false);
    expect(targets[0]!.nextAttemptAt).toBe(Date.parse(res.json.post.scheduledTime));
    world.clock.advance(4 * FIVE_MIN);
    await runDueOnce(world.deps);
    expect(statusesOf("Mastodon held").map((s) => s.text)).toEqual(["Mastodon held: the post", "Mastodon held: part two"]);
    // Without a thread, the same schedule is handed over to the server as before.
    const single = await makeCreation(world.deps, acct.accountId, { caption: "Mastodon single" });
    const one = await world.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: single.id, scheduled_time: isoAt(world.clock.now() + 4 * FIVE_MIN), targets: [connection.mastodon] },
    });
    expect(one.json.post.targets[0].providerPostId).not.toBeNull();
    expect(mastodon.state.scheduled.size).toBe(scheduledBefore + 1);
  });
});

async function postIdOf(targetId: string): Promise<string> {
  return (await world.sql("SELECT post_id FROM scheduled_post_targets WHERE id = ?", targetId))[0]!.post_id as string;
}

describe("webhook (receiver)", () => {
  test("one signed delivery carries every image, the thread and the first comment, and today's first-image fields", async () => {
    const content = threadContent("Webhook");
    const targetId = await publish("webhook", content);
    expect((await targetRow(targetId)).status).toBe("published");
    const deliveries = receiver.effects().filter((d) => d.idempotencyKey === targetId);
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]!.verified).toBe(true);
    const post = (deliveries[0]!.body as { post: Record<string, unknown> }).post;
    const urlOf = (assetId: string) => expect.stringMatching(new RegExp(`/media/${assetId}\\.png$`));
    const image = (i: number) => ({ assetId: images[i]!.assetId, url: urlOf(images[i]!.assetId), mimeType: "image/png", altText: images[i]!.altText });
    expect(post).toMatchObject({
      targetId,
      caption: content.caption,
      imageUrl: urlOf(images[0]!.assetId),
      altText: images[0]!.altText,
      imageMimeType: "image/png",
      images: [0, 1, 2, 3].map(image),
      thread: [
        { caption: content.thread[0]!.caption, images: [] },
        { caption: content.thread[1]!.caption, images: [image(4)] },
      ],
      firstComment: content.firstComment,
    });
  });

  test("a post without images, thread or comment carries empty lists and null", async () => {
    const targetId = await publish("webhook", { caption: "Webhook plain" });
    const body = receiver.effects().find((d) => d.idempotencyKey === targetId)!.body as { post: Record<string, unknown> };
    expect(body.post).toMatchObject({ caption: "Webhook plain", imageUrl: null, altText: null, images: [], thread: [], firstComment: null });
  });
});
