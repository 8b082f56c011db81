/**
 * Media on S3 (MEDIA_STORE=s3) against a real Ceph radosgw from Debian (test/helpers/radosgw.ts), which checks every
 * SigV4 signature: the S3 store's put/read/body/exists/delete/list with pagination, a wrong secret refused, Bun's
 * unsigned Content-Type (oven-sh/bun#43029) seen on the wire and its workaround, and the whole app on S3: an image
 * uploaded through an upload link is served at /media with exactly the headers the local-disk store gives (in-process
 * and over a real socket, GET, HEAD, Range, 304, 416), deleted with its asset, and an orphan object is swept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { S3Client } from "bun";
import sharp from "sharp";
import { ConfigError, loadConfig } from "../src/config";
import type { AssetRecord } from "../src/modules/assets/service";
import { findAssetForMedia } from "../src/modules/assets/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { sweepOrphanMedia } from "../src/modules/assets/sweep";
import { createBackup } from "../src/modules/backup/service";
import type { Storage } from "../src/lib/storage";
import { S3StorageError, S3_MEDIA_PREFIX, createS3Storage } from "../src/lib/storage-s3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChildServer } from "./helpers/child-server";
import { type Radosgw, startRadosgw } from "./helpers/radosgw";
import { type TestAccount, type World, createWorld } from "./helpers/world";

type Bytes = Uint8Array<ArrayBuffer>;
const HOUR = 60 * 60 * 1000;

let gw: Radosgw;
let store: Storage;
let png: Bytes;

/** A Bun S3Client on the test bucket (the raw client, without the store's workaround). */
function rawClient(endpoint = gw.endpoint, secretAccessKey = gw.secretAccessKey): S3Client {
  return new S3Client({ endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey });
}

interface Seen {
  method: string;
  path: string;
  contentType: string | null;
  signedHeaders: string;
}

/**
 * A recording proxy in front of radosgw: what a client really sends, and what radosgw answers to it (optionally after
 * `rewrite` changed a header on the way, as anyone on the path could).
 */
function startProxy(rewrite: (headers: Headers) => void = () => {}, rewriteBody: (body: ArrayBuffer) => ArrayBuffer = (b) => b) {
  const seen: Seen[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const auth = `${request.headers.get("authorization") ?? ""} ${url.search}`;
      seen.push({
        method: request.method,
        path: url.pathname,
        contentType: request.headers.get("content-type"),
        signedHeaders: decodeURIComponent(/SignedHeaders=([^,&\s]*)/.exec(auth)?.[1] ?? ""),
      });
      const headers = new Headers(request.headers);
      rewrite(headers);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : rewriteBody(await request.arrayBuffer());
      const answer = await fetch(`${gw.endpoint}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
  return { endpoint: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

beforeAll(async () => {
  gw = await startRadosgw();
  console.log(`radosgw ready in ${gw.startMs} ms`);
  store = createS3Storage(
    { endpoint: gw.endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey },
    { pageSize: 2 },
  );
  png = new Uint8Array(await sharp({ create: { width: 320, height: 200, channels: 3, background: "#2b6cb0" } }).png().toBuffer());
}, 120_000);

afterAll(async () => {
  await gw?.stop();
});

describe("the S3 store against radosgw", () => {
  test("put, read, exists, body (whole and ranged), delete; a missing key reads as NoSuchKey", async () => {
    await store.put("acct-1/one.png", png);
    expect(await store.exists("acct-1/one.png")).toBe(true);
    expect(await store.read("acct-1/one.png")).toEqual(png);
    expect(new Uint8Array(await new Response(store.body("acct-1/one.png")).arrayBuffer())).toEqual(png);
    expect(new Uint8Array(await new Response(store.body("acct-1/one.png", { start: 10, end: 19 })).arrayBuffer())).toEqual(png.slice(10, 20));
    // The object is in the bucket under media/, where a plain S3 client finds it.
    expect(await rawClient().exists(`${S3_MEDIA_PREFIX}acct-1/one.png`)).toBe(true);

    await store.put("acct-1/one.png", png.slice(0, 100)); // replaces
    expect(await store.read("acct-1/one.png")).toEqual(png.slice(0, 100));
    await store.delete("acct-1/one.png");
    expect(await store.exists("acct-1/one.png")).toBe(false);
    await store.delete("acct-1/one.png"); // missing is fine
    const missing = await store.read("acct-1/one.png").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(S3StorageError);
    expect((missing as S3StorageError).code).toBe("NoSuchKey");
  });

  test("keys outside the safe shape are refused before any request", async () => {
    for (const key of ["../x.png", "/abs.png", "a//b.png", "a/../b.png", "a b.png"]) {
      await expect(store.put(key, png)).rejects.toThrow("invalid storage key");
    }
  });

  test("list walks every page (2 keys a page here), filters by prefix, and ignores objects outside media/", async () => {
    const keys = ["list-a/1.png", "list-a/2.png", "list-a/3.png", "list-a/4.png", "list-a/5.png", "list-b/1.png"];
    for (const key of keys) await store.put(key, png.slice(0, 64));
    // Not Seedcast's: outside media/, and an odd name inside it. Neither is listed (so neither is ever swept).
    await rawClient().write("elsewhere/keep.png", png.slice(0, 10));
    await rawClient().write(`${S3_MEDIA_PREFIX}odd name.png`, png.slice(0, 10));
    const before = Date.now();
    const a = await store.list("list-a/");
    expect(a.entries.map((e) => e.key).sort()).toEqual(keys.slice(0, 5));
    expect(a.temps).toEqual([]);
    for (const entry of a.entries) expect(Math.abs(entry.mtimeMs - before)).toBeLessThan(10 * 60 * 1000);
    const all = (await store.list()).entries.map((e) => e.key);
    expect(all).toEqual(expect.arrayContaining(keys));
    expect(all.some((k) => k.includes("keep") || k.includes("odd"))).toBe(false);
    expect((await store.list("nowhere/")).entries).toEqual([]);
    for (const key of keys) await store.delete(key);
    expect((await store.list("list-")).entries).toEqual([]);
    expect(await rawClient().exists("elsewhere/keep.png")).toBe(true);
  });

  test("check(): passes on the bucket; a missing bucket or a wrong secret is named", async () => {
    await store.check();
    const settings = { endpoint: gw.endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey };
    await expect(createS3Storage({ ...settings, bucket: "no-such-bucket" }).check()).rejects.toThrow("NoSuchBucket");
    await expect(createS3Storage({ ...settings, secretAccessKey: "wrong" }).check()).rejects.toThrow("SignatureDoesNotMatch");
  });

  test("an upload whose bytes were changed on the way (the presigned payload is unsigned) is caught by the ETag check and removed", async () => {
    const flipping = startProxy(
      () => {},
      (body) => {
        const copy = new Uint8Array(body.slice(0));
        copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0xff;
        return copy.buffer;
      },
    );
    try {
      const viaProxy = createS3Storage({ endpoint: flipping.endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey });
      const refused = await viaProxy.put("acct-1/flipped.png", png).catch((e: unknown) => e);
      expect((refused as S3StorageError).code).toBe("BadDigest");
      expect(await store.exists("acct-1/flipped.png")).toBe(false);
    } finally {
      flipping.stop();
    }
  });

  test("a wrong secret is refused by radosgw (SignatureDoesNotMatch): the signing is real", async () => {
    const wrong = createS3Storage({ endpoint: gw.endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: `${gw.secretAccessKey}x` });
    const refused = await wrong.put("acct-1/wrong.png", png).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(S3StorageError);
    expect((refused as S3StorageError).code).toBe("SignatureDoesNotMatch");
    expect((refused as S3StorageError).status).toBe(403);
    // Nothing was stored, and the message carries neither the secret nor the presigned URL's signature.
    expect(await store.exists("acct-1/wrong.png")).toBe(false);
    expect(String((refused as Error).message)).not.toContain(gw.secretAccessKey);
    expect(String((refused as Error).message)).not.toContain("X-Amz-Signature");
    await expect(wrong.list()).rejects.toThrow();
    const rawRefusal = await rawClient(gw.endpoint, "not-the-secret").write("media/x.png", png).catch((e: unknown) => e);
    expect((rawRefusal as { code?: string }).code).toBe("SignatureDoesNotMatch");
  });
});

describe("Content-Type sent but not signed (oven-sh/bun#43029)", () => {
  test("Bun's client sends a Content-Type on every PUT, typed or not, and never lists it in SignedHeaders", async () => {
    const proxy = startProxy();
    try {
      const client = rawClient(proxy.endpoint);
      await client.write("bug/typed.png", png, { type: "image/png" });
      await client.write("bug/untyped.bin", png);
      const puts = proxy.seen.filter((s) => s.method === "PUT");
      expect(puts.map((p) => p.contentType)).toEqual(["image/png", "application/octet-stream"]);
      for (const put of puts) {
        expect(put.signedHeaders).toContain("host");
        expect(put.signedHeaders.split(";")).not.toContain("content-type");
      }
      // radosgw 16.2 (Debian bookworm) still accepts such a PUT; from Ceph 19.2.6 on it is refused with 403.
      expect((await client.stat("bug/typed.png")).type).toBe("image/png");
      expect((await client.stat("bug/untyped.bin")).type).toBe("application/octet-stream");
    } finally {
      proxy.stop();
    }
  });

  test("the unsigned type is not protected: rewritten on the way, radosgw stores the forged type; a signed header rewritten is refused", async () => {
    const forging = startProxy((headers) => headers.set("content-type", "text/html"));
    const dating = startProxy((headers) => headers.set("x-amz-date", "20200101T000000Z"));
    try {
      await rawClient(forging.endpoint).write("bug/forged.png", png, { type: "image/png" });
      expect((await rawClient().stat("bug/forged.png")).type).toBe("text/html");
      const refused = await rawClient(dating.endpoint).write("bug/dated.png", png).catch((e: unknown) => e);
      expect(["SignatureDoesNotMatch", "RequestTimeTooSkewed"]).toContain((refused as { code?: string }).code ?? "");
    } finally {
      forging.stop();
      dating.stop();
    }
  });

  test("the store's PUT sends no Content-Type at all (a presigned PUT signed for host only); the object keeps S3's default type", async () => {
    const proxy = startProxy();
    try {
      const viaProxy = createS3Storage({ endpoint: proxy.endpoint, bucket: gw.bucket, region: gw.region, accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey });
      await viaProxy.put("bug/ours.png", png);
      const put = proxy.seen.find((s) => s.method === "PUT");
      expect(put).toEqual({ method: "PUT", path: `/${gw.bucket}/${S3_MEDIA_PREFIX}bug/ours.png`, contentType: null, signedHeaders: "host" });
      expect(await viaProxy.read("bug/ours.png")).toEqual(png);
      expect((await rawClient().stat(`${S3_MEDIA_PREFIX}bug/ours.png`)).type).toBe("binary/octet-stream");
    } finally {
      proxy.stop();
    }
  });
});

/** The headers /media answers, but for what differs per request (Date, and the request id errors carry). */
function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== "date" && name !== "x-request-id") out[name] = value;
  });
  return out;
}

interface Side {
  world: World;
  owner: TestAccount;
  asset: AssetRecord;
  path: string;
  server: ReturnType<typeof Bun.serve>;
}

/** A world on `env`, an image uploaded through a single-use upload link (the browser flow), served like `seedcast serve`. */
async function side(env: Record<string, string>): Promise<Side> {
  const world = await createWorld({ env });
  const owner = await world.createAccount();
  const link = await world.call("POST", "/api/v1/assets/upload-link", { key: owner.key });
  expect(link.status).toBe(201);
  const data = new FormData();
  data.append("file", new File([png], "harbour.png", { type: "image/png" }));
  const uploaded = await world.app.handle(
    new Request(`http://localhost${new URL(link.json.uploadUrl).pathname}`, { method: "POST", body: data, headers: { accept: "application/json" } }),
  );
  expect(uploaded.status).toBe(201);
  const id = ((await uploaded.json()) as { asset: { id: string } }).asset.id;
  const asset = (await findAssetForMedia(world.deps, id)) as AssetRecord;
  const path = `/media/${asset.id}.${asset.ext}`;
  // As serve.ts: Bun's router finds the routes (HEAD /media has its own), the rest goes through handle.
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, routes: world.app.servedRoutes(), fetch: (r, s) => world.app.handle(r, s) });
  return { world, owner, asset, path, server };
}

describe("the app on MEDIA_STORE=s3", () => {
  let local: Side;
  let s3: Side;

  beforeAll(async () => {
    // MEDIA_STORE=local explicitly: a PostgreSQL test run's worlds default to the run's bucket.
    local = await side({ MEDIA_STORE: "local" });
    s3 = await side(gw.env());
  });

  afterAll(async () => {
    for (const s of [local, s3]) {
      await s?.server.stop(true);
      await s?.world.close();
    }
  });

  test("the upload went to the bucket (not DATA_DIR), under the asset's storage key", async () => {
    expect(s3.world.deps.storage.kind).toBe("s3");
    expect(await rawClient().exists(`${S3_MEDIA_PREFIX}${s3.asset.storageKey}`)).toBe(true);
    expect(await Bun.file(`${s3.world.dataDir}/media/${s3.asset.storageKey}`).exists()).toBe(false);
    expect(s3.asset.mimeType).toBe("image/png");
  });

  const cases: [string, string, Record<string, string>][] = [
    ["GET", "GET", {}],
    ["HEAD", "HEAD", {}],
    ["Range bytes=0-99", "GET", { range: "bytes=0-99" }],
    ["Range bytes=100-", "GET", { range: "bytes=100-" }],
    ["Range bytes=-50", "GET", { range: "bytes=-50" }],
    ["Range past the end (416)", "GET", { range: `bytes=${10 ** 7}-` }],
    ["If-None-Match (304)", "GET", { "if-none-match": `"${"0".repeat(64)}", *` }],
    ["If-Range with another validator (whole image)", "GET", { range: "bytes=0-9", "if-range": '"other"' }],
  ];

  for (const [name, method, headers] of cases) {
    test(`in-process, ${name}: the same status, headers and bytes as the local store`, async () => {
      const answer = async (s: Side) => {
        const res = await s.world.app.handle(new Request(`http://localhost${s.path}`, { method, headers }));
        return { status: res.status, headers: headersOf(res), body: new Uint8Array(await res.arrayBuffer()) };
      };
      const [l, r] = [await answer(local), await answer(s3)];
      expect(r).toEqual(l);
      expect(r.headers["content-type"] ?? "image/png").toBe("image/png");
    });
  }

  test("in-process answers carry the protective headers and the exact slice", async () => {
    const res = await s3.world.app.handle(new Request(`http://localhost${s3.path}`, { headers: { range: "bytes=100-199" } }));
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes 100-199/${png.byteLength}`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("etag")).toBe(`"${new Bun.CryptoHasher("sha256").update(png).digest("hex")}"`);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png.slice(100, 200));
  });

  /** curl over a real socket: the status line and headers (lower-cased, no Date) and the body's bytes. */
  async function curl(s: Side, args: string[]) {
    const proc = Bun.spawn(["curl", "-s", "--http1.1", "-D", "-", "-o", "-", ...args, `http://127.0.0.1:${s.server.port}${s.path}`], { stdout: "pipe" });
    const raw = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
    await proc.exited;
    const split = Buffer.from(raw).indexOf("\r\n\r\n");
    const head = new TextDecoder().decode(raw.slice(0, split)).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const at = line.indexOf(":");
      const name = line.slice(0, at).toLowerCase();
      if (name !== "date") headers[name] = line.slice(at + 1).trim();
    }
    return { status: head[0] ?? "", headers, body: raw.slice(split + 4) };
  }

  test("over a real socket, HEAD: the same headers as local disk, Content-Length included, and no body", async () => {
    const [l, r] = [await curl(local, ["-I"]), await curl(s3, ["-I"])];
    expect(r).toEqual(l);
    expect(r.status).toBe("HTTP/1.1 200 OK");
    expect(r.headers["content-length"]).toBe(String(png.byteLength));
    expect(r.headers["content-type"]).toBe("image/png");
  });

  test("over a real socket, GET and Range: the same headers and bytes, except that the S3 body streams chunked (Bun drops Content-Length on a stream, oven-sh/bun#10507)", async () => {
    for (const args of [[], ["-r", "0-99"], ["-r", "-50"]]) {
      const [l, r] = [await curl(local, args), await curl(s3, args)];
      expect(r.status).toBe(l.status);
      expect(r.body).toEqual(l.body);
      const { "content-length": length, ...localRest } = l.headers;
      const { "transfer-encoding": encoding, ...s3Rest } = r.headers;
      expect(s3Rest).toEqual(localRest);
      expect(length).toBe(String(l.body.byteLength));
      expect(encoding).toBe("chunked");
    }
    expect((await curl(s3, [])).body).toEqual(png);
  });

  test("generation on S3: a generated card is stored in the bucket and served; a library image is read back for its alt text", async () => {
    const seed = await s3.world.call("POST", "/api/v1/seeds", {
      key: s3.owner.key,
      body: { title: "Harbour open day", content: "Boats, music and fresh fish at the old harbour on Sunday from ten until six.", category: "event" },
    });
    expect(seed.status).toBe(201);
    const seedId = seed.json.id ?? seed.json.seed?.id;
    const generated = await s3.world.call("POST", "/api/v1/creations/generate", { key: s3.owner.key, body: { seed_id: seedId, include_visual: true } });
    expect(generated.status).toBe(201);
    const card = generated.json.creation;
    const cardAsset = (await findAssetForMedia(s3.world.deps, card.imageAssetId)) as AssetRecord;
    expect(await rawClient().exists(`${S3_MEDIA_PREFIX}${cardAsset.storageKey}`)).toBe(true);
    const served = await s3.world.app.handle(new Request(card.body.imageUrl));
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    const stored: Uint8Array = await s3.world.deps.storage.read(cardAsset.storageKey);
    expect(new Uint8Array(await served.arrayBuffer()) as Uint8Array).toEqual(stored);

    // With a library image, the generator is handed its bytes (read from the bucket) to describe it.
    const photo = await ingestImageBytes(s3.world.deps, s3.owner.accountId, { bytes: png, fileName: "photo", source: "upload" });
    const withImage = await s3.world.call("POST", "/api/v1/creations/generate", { key: s3.owner.key, body: { seed_id: seedId, image_asset_id: photo.id } });
    expect(withImage.status).toBe(201);
    expect(withImage.json.creation.imageAssetId).toBe(photo.id);
    expect(withImage.json.creation.body.altText.length).toBeGreaterThan(5);
  });

  test("the type served is the asset row's: an object whose stored type says text/html is still image/png with nosniff", async () => {
    // As if the unsigned Content-Type had been rewritten on the way (see above): the object's own type is never served.
    await rawClient().write(`${S3_MEDIA_PREFIX}${s3.asset.storageKey}`, png, { type: "text/html" });
    expect((await rawClient().stat(`${S3_MEDIA_PREFIX}${s3.asset.storageKey}`)).type).toStartWith("text/html");
    const res = await s3.world.app.handle(new Request(`http://localhost${s3.path}`));
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
  });

  test("the hourly sweep deletes an orphan object older than an hour and keeps the asset's; fresh orphans wait", async () => {
    const { world } = s3;
    await world.deps.storage.put(`${s3.owner.accountId}/orphan-old.png`, png.slice(0, 50));
    // The bucket dates objects by the real clock: move the world's clock two hours past it.
    world.clock.set(Date.now() + 2 * HOUR);
    await world.deps.storage.put(`${s3.owner.accountId}/orphan-fresh.png`, png.slice(0, 50)); // "fresh" only if dated after the cutoff
    const result = await sweepOrphanMedia(world.deps, { olderThanMs: HOUR });
    expect(result.orphans).toBeGreaterThanOrEqual(2); // both are older than the moved clock's cutoff
    expect(await world.deps.storage.exists(`${s3.owner.accountId}/orphan-old.png`)).toBe(false);
    expect(await world.deps.storage.exists(s3.asset.storageKey)).toBe(true);

    // With the clock at real time, a just-written orphan is inside the hour: kept.
    world.clock.set(Date.now());
    await world.deps.storage.put(`${s3.owner.accountId}/orphan-new.png`, png.slice(0, 50));
    const second = await sweepOrphanMedia(world.deps, { olderThanMs: HOUR });
    expect(second.orphans).toBe(0);
    expect(await world.deps.storage.exists(`${s3.owner.accountId}/orphan-new.png`)).toBe(true);
    await world.deps.storage.delete(`${s3.owner.accountId}/orphan-new.png`);
  });

  test("the sweep follows every page of the listing (2 keys a page): all old orphans go, every named object stays", async () => {
    const { world } = s3;
    const orphans = [1, 2, 3, 4, 5].map((n) => `${s3.owner.accountId}/paged-orphan-${n}.png`);
    for (const key of orphans) await store.put(key, png.slice(0, 40));
    world.clock.set(Date.now() + 2 * HOUR);
    const result = await sweepOrphanMedia({ ...world.deps, storage: store }, { olderThanMs: HOUR });
    expect(result.orphans).toBeGreaterThanOrEqual(orphans.length);
    for (const key of orphans) expect(await store.exists(key)).toBe(false);
    expect(await store.exists(s3.asset.storageKey)).toBe(true);
    world.clock.set(Date.now());
  });

  test("seedcast backup refuses with MEDIA_STORE=s3, naming bucket versioning; nothing is written", async () => {
    const target = `${s3.world.dataDir}/refused-backup.tar.gz`;
    await expect(createBackup(s3.world.deps, target)).rejects.toThrow(/bucket versioning/);
    expect(await Bun.file(target).exists()).toBe(false);
  });

  test("an object gone from the bucket while its row remains is a plain 404 (and logged), not a broken stream", async () => {
    const key = `${S3_MEDIA_PREFIX}${s3.asset.storageKey}`;
    const kept = await rawClient().file(key).bytes();
    await rawClient().delete(key);
    try {
      const res = await s3.world.app.handle(new Request(`http://localhost${s3.path}`));
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toStartWith("text/plain");
    } finally {
      await s3.world.deps.storage.put(s3.asset.storageKey, kept);
    }
    expect((await s3.world.app.handle(new Request(`http://localhost${s3.path}`))).status).toBe(200);
  });

  test("deleting the asset deletes its object; its URL is 404 at once", async () => {
    const res = await s3.world.call("DELETE", `/api/v1/assets/${s3.asset.id}`, { key: s3.owner.key });
    expect(res.status).toBe(200);
    expect(await rawClient().exists(`${S3_MEDIA_PREFIX}${s3.asset.storageKey}`)).toBe(false);
    const gone = await s3.world.app.handle(new Request(`http://localhost${s3.path}`));
    expect(gone.status).toBe(404);
  });
});

describe("seedcast serve on MEDIA_STORE=s3", () => {
  const dir = mkdtempSync(join(tmpdir(), "seedcast-serve-s3-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const command = [process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "serve"];

  test("starts and answers; a missing bucket stops the start with its name and S3's code, never the secret", async () => {
    const server = await startChildServer(command, { cwd: dir, env: { ...gw.env(), DATA_DIR: join(dir, "ok") }, logFile: join(dir, "ok.log") });
    try {
      const res = await fetch(`${server.base}/media/01934b7e-0000-7000-8000-000000000000.png`);
      expect(res.status).toBe(404);
      expect(server.log()).toContain('"ready"');
      expect(server.log()).not.toContain(gw.secretAccessKey);
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
    const env = { ...gw.env({ S3_BUCKET: "missing-bucket" }), DATA_DIR: join(dir, "missing") };
    const failed = await startChildServer(command, { cwd: dir, env, logFile: join(dir, "missing.log") }).then(
      (s) => {
        s.proc.kill("SIGKILL");
        return "started";
      },
      (error: Error) => error.message,
    );
    expect(failed).toContain("exited (1)");
    expect(failed).toContain("missing-bucket");
    expect(failed).toContain("NoSuchBucket");
    expect(failed).not.toContain(gw.secretAccessKey);
  }, 60_000);
});

describe("configuration", () => {
  const full = () => gw.env();

  test("MEDIA_STORE=s3 reads the bucket's settings; the secret never shows when the config is printed or serialised", () => {
    const config = loadConfig({ ...full(), DATA_DIR: "/tmp/x" });
    expect(config.media.kind).toBe("s3");
    if (config.media.kind !== "s3") return;
    expect(config.media).toMatchObject({ endpoint: gw.endpoint, bucket: gw.bucket, region: "us-east-1", accessKeyId: gw.accessKeyId });
    expect(config.media.secretAccessKey).toBe(gw.secretAccessKey);
    expect(JSON.stringify(config)).not.toContain(gw.secretAccessKey);
    expect(Bun.inspect(config)).not.toContain(gw.secretAccessKey);
    expect(loadConfig({ ...full(), S3_REGION: "" }).media).toMatchObject({ region: "us-east-1" });
    expect(loadConfig({}).media).toEqual({ kind: "local" });
  });

  test("fails fast naming the variable, and never echoes the secret", () => {
    const refusal = (env: Record<string, string>): string => {
      try {
        loadConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error("accepted");
    };
    expect(refusal({ MEDIA_STORE: "gcs" })).toContain("MEDIA_STORE");
    for (const name of ["S3_ENDPOINT", "S3_BUCKET", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY"]) {
      const message = refusal({ ...full(), [name]: "" });
      expect(message).toContain(name);
      expect(message).not.toContain(gw.secretAccessKey);
    }
    expect(refusal({ ...full(), S3_ENDPOINT: "ftp://x" })).toContain("S3_ENDPOINT");
    expect(refusal({ ...full(), S3_ENDPOINT: "https://user:pw@s3.example.com" })).not.toContain("pw");
    expect(refusal({ ...full(), S3_BUCKET: "Not_A_Bucket" })).toContain("S3_BUCKET");
    expect(refusal({ ...full(), S3_REGION: "us east" })).toContain("S3_REGION");
    expect(refusal({ ...full(), BACKUP_CRON: "0 3 * * *" })).toContain("bucket");
  });
});
