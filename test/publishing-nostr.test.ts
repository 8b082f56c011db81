/**
 * The Nostr connector against a REAL relay (@nostr-relay/core on SQLite under Node 22, test/peers/nostr) and the
 * Blossom stand-in (test/peers/blossom-server.ts), everything on 127.0.0.1. Notes are read back with nostr-tools'
 * own Relay client and every signature is checked with its verifyEvent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Event } from "nostr-tools/core";
import { parse as parseThread } from "nostr-tools/nip10";
import { decode, nsecEncode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { hexToBytes } from "nostr-tools/utils";
import { ManualClock, isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection, checkConnection } from "../src/modules/connections/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { NOSTR_IMAGES_HINT } from "../src/publishing/networks/nostr/connector";
import { generateKeys, parseSecretKey } from "../src/publishing/networks/nostr/keys";
import { partCreatedAt } from "../src/publishing/networks/nostr/notes";
import { connectorFor } from "../src/publishing/registry";
import { eq } from "drizzle-orm";
import { join } from "node:path";
import { connections } from "../src/db/tables";
import { type OpenConnection, openConnection } from "../src/store/connections";
import { type BlossomServer, startBlossomServer } from "./peers/blossom-server";
import { type NostrTestRelay, isNostrRelayInstalled, startNostrRelay } from "./helpers/nostr-relay";
import { DashboardClient } from "./helpers/dashboard-client";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { FIVE_MIN, leaveDeadWorker, makeCreation, postRows, solidPng } from "./publishing-fixtures";

const START_TIMEOUT_MS = 60_000;

let relay: NostrTestRelay;
let refusing: NostrTestRelay;
let blossom: BlossomServer;
let world: World;
let acct: TestAccount;
let keys: ReturnType<typeof generateKeys>;
let connectionId: string;

beforeAll(async () => {
  if (!isNostrRelayInstalled()) throw new Error("Nostr relay peer not installed: run test/peers/nostr/install.sh");
  [relay, refusing] = await Promise.all([startNostrRelay(), startNostrRelay({ refuseWord: "casino" })]);
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "localhost" }, clock: new ManualClock(Date.now()) });
  blossom = startBlossomServer({ now: () => world.clock.now() });
  acct = await world.createAccount();
  keys = generateKeys();
  const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "nostr", secretKey: keys.nsec, relays: [relay.url], blossom: blossom.url });
  connectionId = view.accountId;
}, START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([relay?.stop(), refusing?.stop(), blossom?.stop()]);
  await world?.close();
});

/** Schedules a creation to `target` for 5 minutes from now; answers the post id. */
async function schedule(creationId: string, target: string): Promise<string> {
  const res = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: creationId, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: [target] },
  });
  expect(res.status).toBe(200);
  return res.json.post.id as string;
}

async function getPost(id: string) {
  return (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key })).json.post;
}

/** A post written by hand (POST /api/v1/creations): 2 images with alt text and a 2-part thread whose second part has an image. */
async function writePost(caption: string, extra: Record<string, unknown> = {}): Promise<{ creationId: string; images: Uint8Array[] }> {
  const images = [await solidPng(64, 48), await solidPng(40, 30), await solidPng(20, 10)];
  const assets = await Promise.all(images.map((bytes, i) => ingestImageBytes(world.deps, acct.accountId, { bytes, fileName: `picture-${i}` })));
  const res = await world.call("POST", "/api/v1/creations", {
    key: acct.key,
    body: {
      type: "social_post",
      caption,
      images: [
        { asset_id: assets[0]!.id, alt_text: "A blue field" },
        { asset_id: assets[1]!.id, alt_text: "A smaller blue field" },
      ],
      thread: [{ caption: `${caption} (2/3)` }, { caption: `${caption} (3/3)`, images: [{ asset_id: assets[2]!.id, alt_text: "A small blue bar" }] }],
      ...extra,
    },
  });
  expect(res.status).toBe(201);
  return { creationId: res.json.creation.id as string, images };
}

async function richPost(caption: string): Promise<{ postId: string; images: Uint8Array[] }> {
  const { creationId, images } = await writePost(caption);
  return { postId: await schedule(creationId, connectionId), images };
}

/** A stored connection, opened as the dispatcher opens it. */
async function openById(id: string): Promise<OpenConnection> {
  const row = await world.deps.store.db.select().from(connections).where(eq(connections.id, id)).get();
  if (!row) throw new Error(`no connection ${id}`);
  return openConnection(world.deps, row);
}

function tagsNamed(event: Event, name: string): string[][] {
  return event.tags.filter((t) => t[0] === name);
}

function imeta(tag: string[]): Record<string, string> {
  return Object.fromEntries(tag.slice(1).map((entry) => [entry.slice(0, entry.indexOf(" ")), entry.slice(entry.indexOf(" ") + 1)]));
}

describe("keys", () => {
  test("an nsec and its 64 hex characters give the same key; the npub is derived", () => {
    const fromNsec = parseSecretKey(keys.nsec);
    const fromHex = parseSecretKey(` ${keys.secretHex.toUpperCase()} `);
    expect(fromNsec).toEqual(fromHex);
    expect(fromNsec.pubkey).toBe(getPublicKey(hexToBytes(keys.secretHex)));
    expect(decode(fromNsec.npub)).toEqual({ type: "npub", data: fromNsec.pubkey });
  });

  test("each bad key gets a sentence that says what to paste, and never echoes the key", () => {
    const attempts: Array<[string, RegExp]> = [
      [keys.npub, /That is a public key \(npub\)\. Paste the secret key instead/],
      [`${keys.nsec.slice(0, -1)}${keys.nsec.endsWith("q") ? "p" : "q"}`, /That nsec key is not valid/],
      ["12345", /either nsec1… \(63 characters\) or 64 hexadecimal characters/],
      ["0".repeat(64), /outside the range/],
      ["", /Paste your secret key/],
    ];
    for (const [typed, words] of attempts) {
      let message = "";
      try {
        parseSecretKey(typed);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(words);
      if (typed.length > 10) expect(message).not.toContain(typed);
    }
  });
});

describe("connect", () => {
  test("a working relay and Blossom server: ready, labelled with the npub, the key sealed (not in clear anywhere)", async () => {
    const row = (await world.sql("SELECT * FROM connections WHERE id = ?", connectionId))[0]!;
    expect(row.ready_to_post === 1 || row.ready_to_post === true).toBe(true);
    expect(row.label).toBe(`${keys.npub.slice(0, 12)}…${keys.npub.slice(-6)}`);
    expect(row.endpoint).toBe(relay.url);
    expect(JSON.stringify(row)).not.toContain(keys.secretHex);
    expect(JSON.stringify(row)).not.toContain(keys.nsec);
    expect(JSON.parse(row.meta)).toEqual({ providerAccountId: keys.pubkey });
  });

  test("a dead relay among good ones: not ready, and the reason names that relay and why", async () => {
    const a = await world.createAccount();
    const dead = "ws://localhost:9"; // discard port: nothing listens
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: generateKeys().secretHex, relays: `${relay.url}\n${dead}` });
    expect(view.readyToPost).toBe(false);
    expect(view.blockedReason).toContain("This relay did not answer");
    expect(view.blockedReason).toContain(dead);
    expect(view.blockedReason).not.toContain(relay.url);
  });

  test("each bad input is a sentence on its field, and nothing is stored", async () => {
    const a = await world.createAccount();
    const count = async () => (await world.sql("SELECT COUNT(*) AS n FROM connections WHERE account_id = ?", a.accountId))[0]!.n;
    const cases: Array<{ input: { secretKey: string; relays: string; blossom?: string }; field: string; words: RegExp }> = [
      { input: { secretKey: "nsec1nope", relays: relay.url }, field: "secretKey", words: /That nsec key is not valid/ },
      { input: { secretKey: keys.npub, relays: relay.url }, field: "secretKey", words: /public key \(npub\)/ },
      { input: { secretKey: keys.nsec, relays: "https://relay.example.com" }, field: "relays", words: /web address; a relay address starts with wss:\/\// },
      { input: { secretKey: keys.nsec, relays: "http://relay.example.com" }, field: "relays", words: /starts with wss:\/\// },
      { input: { secretKey: keys.nsec, relays: "ws://relay.example.com" }, field: "relays", words: /not encrypted \(ws:\/\/\)\. Use wss:\/\// },
      { input: { secretKey: keys.nsec, relays: Array.from({ length: 11 }, (_, i) => `wss://r${i}.example.com`).join(",") }, field: "relays", words: /11 relays are listed; a connection can use at most 10/ },
      { input: { secretKey: keys.nsec, relays: "" }, field: "relays", words: /List at least one relay/ },
      { input: { secretKey: keys.nsec, relays: "wss://relay.example.com:8443" }, field: "relays", words: /port 443/ },
      { input: { secretKey: keys.nsec, relays: relay.url, blossom: "ftp://files.example.com" }, field: "blossom", words: /Blossom server/ },
    ];
    for (const c of cases) {
      let error: { extra?: { details?: Array<{ field: string; problem: string }> } } | undefined;
      try {
        await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", ...c.input });
      } catch (e) {
        error = e as typeof error;
      }
      expect(error?.extra?.details?.[0]?.field).toBe(c.field);
      expect(error?.extra?.details?.[0]?.problem).toMatch(c.words);
    }
    expect(Number(await count())).toBe(0);
  });

  test("the same key again in the same account is refused as already connected", async () => {
    let message = "";
    try {
      await addConnection(world.deps, { accountId: acct.accountId, platform: "nostr", secretKey: keys.secretHex, relays: [relay.url] });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("is already connected");
  });

  test("scheduling images to a Nostr connection without Blossom, or a first comment to any: 409 not_schedulable, saying what to do", async () => {
    const a = await world.createAccount();
    const bare = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: generateKeys().nsec, relays: relay.url });
    const asset = await ingestImageBytes(world.deps, a.accountId, { bytes: await solidPng(10, 10), fileName: "x" });
    const when = isoAt(world.clock.now() + FIVE_MIN + 1000);
    const withImage = await world.call("POST", "/api/v1/creations", { key: a.key, body: { type: "social_post", caption: "Look", images: [{ asset_id: asset.id, alt_text: "x" }] } });
    const refused = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: withImage.json.creation.id, scheduled_time: when, targets: [bare.accountId] } });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe("not_schedulable");
    expect(refused.json.message).toContain("takes no images; this has 1. Nostr notes carry images through a Blossom server: add one to this connection");
    const withComment = await world.call("POST", "/api/v1/creations", { key: a.key, body: { type: "social_post", caption: "Look", first_comment: "More below" } });
    const noComment = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: withComment.json.creation.id, scheduled_time: when, targets: [bare.accountId] } });
    expect(noComment.status).toBe(409);
    expect(noComment.json.message).toMatch(/Nostr .*first comment/i);
    expect(Number((await world.sql("SELECT COUNT(*) AS n FROM scheduled_posts WHERE account_id = ?", a.accountId))[0]!.n)).toBe(0);
  });

  test("without a Blossom server the connection declares no images, with the hint; with one, up to 10", async () => {
    const a = await world.createAccount();
    const bare = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: generateKeys().nsec, relays: relay.url });
    const caps = connectorFor("nostr").capabilities(await openById(bare.accountId));
    expect(caps).toMatchObject({ name: "Nostr", maxImages: 0, maxThreadParts: 24, firstComment: false, imagesHint: NOSTR_IMAGES_HINT });
    const withBlossom = connectorFor("nostr").capabilities(await openById(connectionId));
    expect(withBlossom).toMatchObject({ maxImages: 10, firstComment: false });
    expect(withBlossom.imagesHint).toBeUndefined();
  });
});

describe("publish", () => {
  test("2 images with alt text and a 2-part thread: 3 signed notes on the relay, NIP-10 replies, imeta, images on Blossom", async () => {
    const { postId, images } = await richPost("Spring is here");
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    const post = await getPost(postId);
    expect(post.status).toBe("published");
    const { post: row, targets } = await postRows(world.deps, postId);
    const notes = await relay.query({ authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 2) });
    expect(notes).toHaveLength(3);
    const byTime = notes.sort((x, y) => x.created_at - y.created_at);
    const [root, first, second] = byTime as [Event, Event, Event];
    expect(targets[0]!.providerPostId).toBe(root.id);
    expect(post.targets[0].publishedUrl).toMatch(/^https:\/\/njump\.me\/nevent1/);
    // The post: caption, then each image URL; an imeta per image with url, m, x (sha256), dim, alt.
    expect(root.kind).toBe(1);
    expect(root.content.startsWith("Spring is here\n\n")).toBe(true);
    expect(tagsNamed(root, "e")).toEqual([]);
    const metas = tagsNamed(root, "imeta").map(imeta);
    expect(metas).toHaveLength(2);
    for (const [i, meta] of metas.entries()) {
      const sha = new Bun.CryptoHasher("sha256").update(images[i]!).digest("hex");
      expect(meta).toEqual({ url: `${blossom.url}/${sha}.png`, m: "image/png", x: sha, dim: i === 0 ? "64x48" : "40x30", alt: i === 0 ? "A blue field" : "A smaller blue field" });
      expect(root.content).toContain(meta.url!);
      // The stand-in holds exactly the bytes, and serves them at the URL in the note.
      const served = new Uint8Array(await (await fetch(meta.url!)).arrayBuffer());
      expect(Buffer.from(served).equals(Buffer.from(images[i]!))).toBe(true);
    }
    // NIP-10: the first reply names the post as root only; the next names the root and the part it answers.
    expect(first.content).toBe("Spring is here (2/3)");
    expect(tagsNamed(first, "e")).toEqual([["e", root.id, relay.url, "root", keys.pubkey]]);
    expect(tagsNamed(first, "p")).toEqual([["p", keys.pubkey]]);
    expect(tagsNamed(second, "e")).toEqual([
      ["e", root.id, relay.url, "root", keys.pubkey],
      ["e", first.id, relay.url, "reply", keys.pubkey],
    ]);
    expect(tagsNamed(second, "imeta").map(imeta)[0]).toMatchObject({ alt: "A small blue bar", dim: "20x10" });
    // nostr-tools' own NIP-10 reader sees the same thread: each reply's root is the post, its parent the part before.
    const firstRead = parseThread(first);
    const secondRead = parseThread(second);
    expect([firstRead.root?.id, firstRead.reply?.id]).toEqual([root.id, root.id]);
    expect([secondRead.root?.id, secondRead.reply?.id]).toEqual([root.id, first.id]);
    expect(parseThread(root)).toMatchObject({ root: undefined, reply: undefined });
    // The Blossom uploads were authorised by this key (BUD-01 kind-24242 event checked by the stand-in).
    expect(blossom.uploads.every((u) => u.pubkey === keys.pubkey)).toBe(true);
  });

  test("a crash after sending, before recording: reconcile finds every part on the relay, records them, sends nothing again", async () => {
    const { postId } = await richPost("Resent once");
    const { post: row, targets } = await postRows(world.deps, postId);
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    const sent = (await postRows(world.deps, postId)).targets[0]!.partsOut;
    expect(sent).toHaveLength(3);
    // A worker that died after its notes went out but before anything was recorded: nothing known, outcome unknown.
    await world.sql(
      "UPDATE scheduled_post_targets SET parts_out = '[]', provider_post_id = NULL, published_at = NULL, next_attempt_at = ? WHERE id = ?",
      world.clock.now(),
      targets[0]!.id,
    );
    await leaveDeadWorker(world, targets[0]!.id);
    const uploadsBefore = blossom.uploads.length;
    world.clock.advance(1000);
    await runDueOnce(world.deps);
    expect((await getPost(postId)).status).toBe("published");
    const after = (await postRows(world.deps, postId)).targets[0]!;
    expect(after.partsOut).toEqual(sent);
    expect(after.providerPostId).toBe(sent[0]!);
    expect(blossom.uploads.length).toBe(uploadsBefore); // nothing was signed or uploaded again
    const window = { authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 2) };
    expect(await relay.query(window)).toHaveLength(3);
  });

  test("a crash mid-thread: the parts found on the relay are recorded in order; none is sent twice", async () => {
    const { postId } = await richPost("Cut short");
    const { post: row, targets } = await postRows(world.deps, postId);
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    const sent = (await postRows(world.deps, postId)).targets[0]!.partsOut;
    // Recorded: the post only. The relay has all three; reconcile finds parts 1 and 2 and records them in order.
    await world.sql("UPDATE scheduled_post_targets SET parts_out = ?, next_attempt_at = ? WHERE id = ?", JSON.stringify(sent.slice(0, 1)), world.clock.now(), targets[0]!.id);
    await leaveDeadWorker(world, targets[0]!.id);
    world.clock.advance(1000);
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, postId)).targets[0]!.partsOut).toEqual(sent);
    expect(await relay.query({ authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 2) })).toHaveLength(3);
  });

  test("a delivery resuming after a recorded post sends only the rest, replying to the recorded id", async () => {
    const fresh = await startNostrRelay();
    try {
      const a = await world.createAccount();
      const k = generateKeys();
      const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: k.nsec, relays: fresh.url });
      const rootId = "ab".repeat(32); // the post, out already (on another relay, say)
      const partsOut = [rootId];
      const scheduledTime = world.clock.now();
      const result = await connectorFor("nostr").deliver({
        deps: world.deps,
        connection: await openById(view.accountId),
        targetId: "resume",
        content: { postId: "resume", scheduledTime, caption: "One", images: [], thread: [{ caption: "Two", images: [] }, { caption: "Three", images: [] }], firstComment: null },
        saveProviderPostId: async () => {},
        partsOut,
        savePartOut: async (index, id) => {
          expect(index).toBe(partsOut.length);
          partsOut.push(id);
        },
        saveSession: async () => {},
      });
      expect(result).toMatchObject({ kind: "published", providerPostId: rootId });
      const notes = (await fresh.query({ authors: [k.pubkey] })).sort((x, y) => x.created_at - y.created_at);
      expect(notes.map((n) => n.content)).toEqual(["Two", "Three"]);
      expect(notes.map((n) => n.created_at)).toEqual([partCreatedAt(scheduledTime, 1), partCreatedAt(scheduledTime, 2)]);
      expect(notes[0]!.tags).toEqual([["e", rootId, fresh.url, "root", k.pubkey], ["p", k.pubkey]]);
      expect(notes[1]!.tags).toEqual([["e", rootId, fresh.url, "root", k.pubkey], ["e", notes[0]!.id, fresh.url, "reply", k.pubkey], ["p", k.pubkey]]);
      expect(partsOut).toEqual([rootId, notes[0]!.id, notes[1]!.id]);
    } finally {
      await fresh.stop();
    }
  });

  test("a crash before anything was sent: every relay answers without the note (proof of absence), it is sent once", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "Never sent before the crash" });
    const postId = await schedule(creation.id, connectionId);
    const { post: row, targets } = await postRows(world.deps, postId);
    world.clock.advance(FIVE_MIN + 1000);
    await leaveDeadWorker(world, targets[0]!.id);
    const reconciled = await connectorFor("nostr").reconcile({
      deps: world.deps,
      connection: await openById(connectionId),
      targetId: targets[0]!.id,
      content: { postId, scheduledTime: row!.scheduledTime, caption: "Never sent before the crash", images: [], thread: [], firstComment: null },
      saveProviderPostId: async () => {},
      partsOut: [],
      savePartOut: async () => {
        throw new Error("nothing is out: no part may be recorded");
      },
      saveSession: async () => {},
    });
    expect(reconciled).toBeNull();
    world.clock.advance(1000);
    await runDueOnce(world.deps);
    expect((await getPost(postId)).status).toBe("published");
    expect(await relay.query({ authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 0) })).toHaveLength(1);
  });

  test("a relay's refusal (OK false) fails the target with the relay's own words", async () => {
    const a = await world.createAccount();
    const k = generateKeys();
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: k.nsec, relays: refusing.url });
    expect(view.readyToPost).toBe(true);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "Visit my casino" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: [view.accountId] },
    });
    expect(res.status).toBe(200);
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: a.key })).json.post;
    expect(post.status).toBe("failed");
    expect(post.targets[0].errorMessage).toBe(`Every relay refused the note: ${refusing.url}: blocked: this relay does not accept notes containing "casino"`);
  });

  test("two relays, one refusing: the note is out (one relay accepted it)", async () => {
    const a = await world.createAccount();
    const k = generateKeys();
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: k.nsec, relays: [refusing.url, relay.url] });
    const creation = await makeCreation(world.deps, a.accountId, { caption: "A casino on one relay only" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: [view.accountId] },
    });
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: a.key })).json.post;
    expect(post.status).toBe("published");
    expect(await relay.query({ authors: [k.pubkey] })).toHaveLength(1);
    expect(await refusing.query({ authors: [k.pubkey] })).toHaveLength(0);
  });

  test("a relay answering OK false with a duplicate: message counts as having the note", async () => {
    // A relay written from NIP-01's OK message ("duplicate:" is the prefix for an event the relay already has).
    const fake = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request, server) => (server.upgrade(request) ? undefined : new Response("websocket only", { status: 400 })),
      websocket: {
        message(ws, raw) {
          const [type, event] = JSON.parse(String(raw)) as [string, { id: string }];
          if (type === "EVENT") ws.send(JSON.stringify(["OK", event.id, false, "duplicate: already have this event"]));
        },
      },
    });
    try {
      const a = await world.createAccount();
      const k = generateKeys();
      const url = `ws://localhost:${fake.port}`;
      // The fake answers no query (no EOSE), so the check stores the connection not ready; the delivery is driven directly.
      const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: k.nsec, relays: url });
      expect(view.readyToPost).toBe(false);
      const partsOut: string[] = [];
      const ctx = {
        deps: world.deps,
        connection: await openById(view.accountId),
        targetId: "dup",
        content: { postId: "dup", scheduledTime: world.clock.now(), caption: "Seen before", images: [], thread: [], firstComment: null },
        saveProviderPostId: async () => {},
        partsOut,
        savePartOut: async (_i: number, id: string) => {
          partsOut.push(id);
        },
        saveSession: async () => {},
      };
      const result = await connectorFor("nostr").deliver(ctx);
      expect(partsOut).toHaveLength(1);
      expect(result).toMatchObject({ kind: "published", providerPostId: partsOut[0] });
    } finally {
      fake.stop(true);
    }
  });

  test("cancelled before it is due: nothing reaches the relay", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "Cancelled in time" });
    const postId = await schedule(creation.id, connectionId);
    const { post: row } = await postRows(world.deps, postId);
    const cancel = await world.call("DELETE", `/api/v1/schedule/${postId}`, { key: acct.key });
    expect(cancel.status).toBe(200);
    expect(cancel.json).toEqual({ id: postId, cancelled: true, providerPostWithdrawn: false });
    world.clock.advance(FIVE_MIN + 1000);
    await runDueOnce(world.deps);
    expect((await world.call("GET", `/api/v1/schedule/posts/${postId}`, { key: acct.key })).status).toBe(404);
    expect(await relay.query({ authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 0) })).toHaveLength(0);
  });

  test("the Blossom server refusing an image fails the target with its words; nothing reaches the relay", async () => {
    const creation = await makeCreation(world.deps, acct.accountId, { caption: "Too big a picture", image: await solidPng(30, 30), altText: "x" });
    const postId = await schedule(creation.id, connectionId);
    const { post: row } = await postRows(world.deps, postId);
    blossom.setMode("too_large");
    try {
      world.clock.advance(FIVE_MIN + 1000);
      await runDueOnce(world.deps);
    } finally {
      blossom.setMode("ok");
    }
    const post = await getPost(postId);
    expect(post.status).toBe("failed");
    expect(post.targets[0].errorMessage).toBe("The Blossom server refused the image: File too large. Max allowed size is 1 KB");
    expect(await relay.query({ authors: [keys.pubkey], since: partCreatedAt(row!.scheduledTime, 0), until: partCreatedAt(row!.scheduledTime, 0) })).toHaveLength(0);
  });

  test("a relay restarted between two posts: the kept connection is found gone and opened anew", async () => {
    const a = await world.createAccount();
    const dbFile = join(world.dataDir, "restarting-relay.sqlite");
    let restarting = await startNostrRelay({ db: dbFile });
    try {
      const k = generateKeys();
      const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: k.nsec, relays: restarting.url });
      const post = async (caption: string) => {
        const creation = await makeCreation(world.deps, a.accountId, { caption });
        const res = await world.call("POST", "/api/v1/schedule", {
          key: a.key,
          body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 1000), targets: [view.accountId] },
        });
        world.clock.advance(FIVE_MIN + 1000);
        await runDueOnce(world.deps);
        return (await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: a.key })).json.post.status;
      };
      expect(await post("Before the restart")).toBe("published");
      const port = restarting.port;
      await restarting.stop();
      restarting = await startNostrRelay({ db: dbFile, port });
      expect(await post("After the restart")).toBe("published");
      expect((await restarting.query({ authors: [k.pubkey] })).map((e) => e.content).sort()).toEqual(["After the restart", "Before the restart"]);
    } finally {
      await restarting.stop();
    }
  });

  test("check again after the relay is gone: not ready, naming it", async () => {
    const a = await world.createAccount();
    const lonely = await startNostrRelay();
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "nostr", secretKey: nsecEncode(hexToBytes(generateKeys().secretHex)), relays: lonely.url });
    expect(view.readyToPost).toBe(true);
    await lonely.stop();
    const after = await checkConnection(world.deps, view.accountId);
    expect(after.readyToPost).toBe(false);
    expect(after.blockedReason).toContain(lonely.url);
  });
});

describe("the dashboard's Nostr form", () => {
  test("a relay that does not answer: nothing stored, the relays kept, the key not; reconnect keeps the id and shows no key", async () => {
    const a = await world.createAccount({ name: "Form" });
    const [owner] = await world.sql<{ email: string }>("SELECT u.email FROM users u JOIN members m ON m.user_id = u.id WHERE m.account_id = ?", a.accountId);
    const client = new DashboardClient(world);
    expect((await client.login(owner?.email ?? "")).status).toBe(303);
    const k = generateKeys();
    const dead = "ws://localhost:9";
    const failed = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "nostr", secretKey: k.nsec, relays: `${relay.url}\n${dead}` });
    expect(failed.status).toBe(400);
    expect(failed.text).toContain("Not connected: the check failed.");
    expect(failed.text).toMatch(/id="nostr-relays-error">This relay did not answer \(ws:\/\/localhost:9: /);
    expect(failed.text).not.toContain(k.nsec);
    expect(failed.text).not.toContain(k.secretHex);
    expect(Number((await world.sql("SELECT COUNT(*) AS n FROM connections WHERE account_id = ?", a.accountId))[0]!.n)).toBe(0);

    const made = await client.submit("/dashboard/connections", "/dashboard/connections", { platform: "nostr", newKey: "1", relays: relay.url });
    expect(made.status).toBe(303);
    const [row] = await world.sql<{ id: string; label: string }>("SELECT id, label FROM connections WHERE account_id = ?", a.accountId);
    const page = await client.get(`/dashboard/connections/${row!.id}/reconnect`);
    expect(page.text).toContain(relay.url);
    expect(page.text).toMatch(/name="secretKey"[^>]*type="password"|type="password"[^>]*name="secretKey"/);
    const again = await client.submit(`/dashboard/connections/${row!.id}/reconnect`, `/dashboard/connections/${row!.id}/reconnect`, { secretKey: k.nsec, relays: relay.url });
    expect(again.status).toBe(303);
    const [after] = await world.sql<{ id: string; label: string }>("SELECT id, label FROM connections WHERE account_id = ?", a.accountId);
    expect(after!.id).toBe(row!.id);
    expect(after!.label).toBe(`${k.npub.slice(0, 12)}…${k.npub.slice(-6)}`);
    expect((await client.get("/dashboard/connections")).text).toContain(k.npub);
  });
});

