/**
 * Proves the Bluesky test peer is a working PDS on 127.0.0.1: the exact calls Seedcast's Bluesky connector
 * makes (session with an app password, blob upload, image post with alt text and aspect ratio, read-back)
 * succeed, and a wrong password is refused. Plain fetch, no client library.
 *
 * If the peer is not installed this file FAILS (CI installs it with test/peers/bluesky/install.sh).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";

import { type BlueskyPds, isBlueskyPdsInstalled, startBlueskyPds } from "./helpers/bluesky-pds.ts";

const POST_COLLECTION = "app.bsky.feed.post";
const IMAGE_WIDTH = 40;
const IMAGE_HEIGHT = 30;
const ALT_TEXT = "A small red test rectangle";
/** Launching a Node 22 PDS takes ~2 s here; leave room for a busy 2-core machine. */
const START_TIMEOUT_MS = 60_000;

const TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz";
const TID_LENGTH = 13;

/**
 * A record key in the atproto TID format (53-bit microsecond timestamp + 10-bit clock id, base32-sortable).
 * app.bsky.feed.post declares `key: "tid"`, so an explicit rkey for a post must be one.
 */
function newTid(clockId = Math.floor(Math.random() * 1024)): string {
  let n = (BigInt(Date.now()) * 1000n << 10n) | BigInt(clockId);
  let out = "";
  for (let i = 0; i < TID_LENGTH; i++) {
    out = TID_ALPHABET[Number(n & 31n)] + out;
    n >>= 5n;
  }
  return out;
}

interface Session {
  did: string;
  handle: string;
  accessJwt: string;
  refreshJwt: string;
}

interface BlobRef {
  $type: "blob";
  ref: { $link: string };
  mimeType: string;
  size: number;
}

/** POSTs JSON (or raw bytes) to an XRPC procedure and returns status + parsed body. */
async function xrpc(pds: BlueskyPds, method: string, init: { json?: unknown; bytes?: Uint8Array<ArrayBuffer>; mime?: string; jwt?: string }): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = {};
  if (init.jwt !== undefined) headers.authorization = `Bearer ${init.jwt}`;
  let body: BodyInit;
  if (init.bytes !== undefined) {
    headers["content-type"] = init.mime ?? "application/octet-stream";
    body = init.bytes;
  } else {
    headers["content-type"] = "application/json";
    body = JSON.stringify(init.json ?? {});
  }
  const res = await fetch(`${pds.url}/xrpc/${method}`, { method: "POST", headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("Bluesky PDS test peer", () => {
  let pds: BlueskyPds;

  beforeAll(async () => {
    // Fail loudly rather than skip: a silently skipped peer test would hide a broken CI install.
    if (!isBlueskyPdsInstalled()) {
      throw new Error("Bluesky PDS test peer is not installed: run test/peers/bluesky/install.sh");
    }
    pds = await startBlueskyPds({ readyTimeoutMs: START_TIMEOUT_MS });
  }, START_TIMEOUT_MS + 5_000);

  afterAll(async () => {
    await pds?.stop();
  });

  test("is installed", () => {
    expect(isBlueskyPdsInstalled()).toBe(true);
  });

  test("listens on 127.0.0.1 only", () => {
    expect(new URL(pds.url).hostname).toBe("127.0.0.1");
    expect(new URL(pds.plcUrl).hostname).toBe("127.0.0.1");
  });

  test("app-password session, blob upload, image post with explicit rkey, read back", async () => {
    const account = await pds.createAccount(`alice-${crypto.randomUUID().slice(0, 6)}`);
    expect(account.handle).toMatch(/^alice-[0-9a-f]{6}\.test$/);
    expect(account.did).toStartWith("did:plc:");
    // App passwords look like xxxx-xxxx-xxxx-xxxx.
    expect(account.appPassword).toMatch(/^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);

    const login = await xrpc(pds, "com.atproto.server.createSession", {
      json: { identifier: account.handle, password: account.appPassword },
    });
    expect(login.status).toBe(200);
    const session = login.body as unknown as Session;
    expect(session.did).toBe(account.did);
    expect(session.accessJwt).toBeString();

    const png = new Uint8Array(
      await sharp({ create: { width: IMAGE_WIDTH, height: IMAGE_HEIGHT, channels: 3, background: { r: 220, g: 30, b: 30 } } })
        .png()
        .toBuffer(),
    );
    const upload = await xrpc(pds, "com.atproto.repo.uploadBlob", { bytes: png, mime: "image/png", jwt: session.accessJwt });
    expect(upload.status).toBe(200);
    const blob = upload.body.blob as BlobRef;
    expect(blob.$type).toBe("blob");
    expect(blob.mimeType).toBe("image/png");
    expect(blob.size).toBe(png.byteLength);

    const rkey = newTid();
    const createdAt = new Date().toISOString();
    const post = {
      $type: POST_COLLECTION,
      text: "Hello from the Seedcast peer test",
      createdAt,
      embed: {
        $type: "app.bsky.embed.images",
        images: [{ image: blob, alt: ALT_TEXT, aspectRatio: { width: IMAGE_WIDTH, height: IMAGE_HEIGHT } }],
      },
    };
    const created = await xrpc(pds, "com.atproto.repo.createRecord", {
      json: { repo: session.did, collection: POST_COLLECTION, rkey, record: post, validate: true },
      jwt: session.accessJwt,
    });
    expect(created.status).toBe(200);
    expect(created.body.uri).toBe(`at://${account.did}/${POST_COLLECTION}/${rkey}`);
    expect(created.body.cid).toBeString();

    // Read back with plain fetch (no app view exists here, so com.atproto.repo.* is the way to read).
    const params = new URLSearchParams({ repo: account.did, collection: POST_COLLECTION, rkey });
    const res = await fetch(`${pds.url}/xrpc/com.atproto.repo.getRecord?${params}`);
    expect(res.status).toBe(200);
    const record = (await res.json()) as { uri: string; cid: string; value: typeof post };
    expect(record.cid).toBe(created.body.cid as string);
    expect(record.value.text).toBe(post.text);
    expect(record.value.createdAt).toBe(createdAt);
    const image = record.value.embed.images[0];
    expect(image?.alt).toBe(ALT_TEXT);
    expect(image?.aspectRatio).toEqual({ width: IMAGE_WIDTH, height: IMAGE_HEIGHT });
    expect(image?.image.ref.$link).toBe(blob.ref.$link);

    // The uploaded bytes are stored and served back unchanged.
    const blobRes = await fetch(`${pds.url}/xrpc/com.atproto.sync.getBlob?${new URLSearchParams({ did: account.did, cid: blob.ref.$link })}`);
    expect(blobRes.status).toBe(200);
    expect(new Uint8Array(await blobRes.arrayBuffer())).toEqual(png);

    // The helper's readers see the same record.
    expect(await pds.getRecord(account.did, POST_COLLECTION, rkey)).toMatchObject({ cid: record.cid });
    expect(await pds.getRecord(account.did, POST_COLLECTION, "does-not-exist")).toBeNull();
    const listed = await pds.listRecords(account.did, POST_COLLECTION);
    expect(listed.map((r) => r.uri)).toEqual([record.uri]);
  });

  test("putRecord with an explicit TID rkey; alt is required, non-TID rkeys are refused", async () => {
    const account = await pds.createAccount();
    const login = await xrpc(pds, "com.atproto.server.createSession", {
      json: { identifier: account.did, password: account.appPassword },
    });
    const jwt = (login.body as unknown as Session).accessJwt;
    const png = new Uint8Array(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 0, g: 0, b: 255 } } }).png().toBuffer(),
    );
    const blob = (await xrpc(pds, "com.atproto.repo.uploadBlob", { bytes: png, mime: "image/png", jwt })).body.blob as BlobRef;

    const rkey = newTid();
    const base = { $type: POST_COLLECTION, text: "put", createdAt: new Date().toISOString() };
    const noAlt = await xrpc(pds, "com.atproto.repo.putRecord", {
      json: { repo: account.did, collection: POST_COLLECTION, rkey, record: { ...base, embed: { $type: "app.bsky.embed.images", images: [{ image: blob }] } } },
      jwt,
    });
    expect(noAlt.status).toBe(400);
    expect(String(noAlt.body.message)).toContain("alt");

    const badKey = await xrpc(pds, "com.atproto.repo.putRecord", {
      json: { repo: account.did, collection: POST_COLLECTION, rkey: "not-a-tid", record: base },
      jwt,
    });
    expect(badKey.status).toBe(400);
    expect(String(badKey.body.message)).toContain("Invalid TID");

    const put = await xrpc(pds, "com.atproto.repo.putRecord", {
      json: { repo: account.did, collection: POST_COLLECTION, rkey, record: { ...base, embed: { $type: "app.bsky.embed.images", images: [{ image: blob, alt: "", aspectRatio: { width: 8, height: 8 } }] } } },
      jwt,
    });
    expect(put.status).toBe(200);
    expect(put.body.uri).toBe(`at://${account.did}/${POST_COLLECTION}/${rkey}`);
    const back = (await pds.getRecord(account.did, POST_COLLECTION, rkey)) as { value: { embed: { images: { alt: string }[] } } } | null;
    expect(back?.value.embed.images[0]?.alt).toBe("");
  });

  test("a wrong password answers 401 on createSession", async () => {
    const account = await pds.createAccount();
    const res = await fetch(`${pds.url}/xrpc/com.atproto.server.createSession`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ identifier: account.handle, password: `${account.appPassword}-wrong` }),
    });
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error?: string };
    expect(body.error).toBe("AuthenticationRequired");
  });
});
