/**
 * GET/HEAD /media/<id>.<ext>: the stored type with nosniff and a sandbox CSP, immutable caching, a strong ETag with
 * 304s, and Range (206/416), in-process and over a real socket (curl) so HEAD and partial bodies are what a client sees.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { type AssetRecord, assetUrl, ingestImageBytes } from "../src/modules/assets/service";
import { type World, createWorld } from "./helpers/world";

let world: World;
let asset: AssetRecord;
let bytes: Bytes;
let path: string;
let server: ReturnType<typeof Bun.serve>;

type Bytes = Uint8Array<ArrayBuffer>;

async function get(headers: Record<string, string> = {}, method = "GET", target = path) {
  const res = await world.app.handle(new Request(`http://localhost${target}`, { method, headers }));
  return { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) as Bytes };
}

/** curl over a real socket: what HTTP clients see on the wire. */
async function curl(args: string[]): Promise<string> {
  const proc = Bun.spawn(["curl", "-s", "--http1.1", ...args, `http://127.0.0.1:${server.port}${path}`], { stdout: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return out;
}

beforeAll(async () => {
  world = await createWorld();
  const acct = await world.createAccount();
  bytes = new Uint8Array(await sharp({ create: { width: 300, height: 200, channels: 3, background: "#1e6b52" } }).jpeg({ quality: 90 }).toBuffer());
  asset = await ingestImageBytes(world.deps, acct.accountId, { bytes, fileName: "forest", source: "upload" });
  path = new URL(assetUrl(world.deps, asset)).pathname;
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => world.app.handle(request) });
});

afterAll(async () => {
  await server.stop(true);
  await world.close();
});

describe("GET /media/<id>.<ext>", () => {
  test("200 with the bytes, the stored type and every protective header; no key needed", async () => {
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.body).toEqual(bytes);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("etag")).toBe(`"${new Bun.CryptoHasher("sha256").update(bytes).digest("hex")}"`);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("last-modified")).toBe("Sun, 22 Nov 2026 10:00:00 GMT");
  });

  test("unknown id, wrong extension, malformed names and traversal attempts are 404", async () => {
    const id = asset.id;
    for (const target of [
      "/media/01934b7e-0000-7000-8000-000000000000.jpg",
      `/media/${id}.png`,
      `/media/${id}`,
      `/media/${id}.jpg.html`,
      "/media/..%2F..%2Finstance-secret",
      `/media/${asset.accountId}%2F${id}.jpg`,
    ]) {
      const res = await get({}, "GET", target);
      expect({ target, status: res.status }).toEqual({ target, status: 404 });
      expect(res.headers.get("content-type")).not.toContain("image/");
    }
  });

  test("If-None-Match with the ETag (also weak, in a list, or *) → 304 without a body", async () => {
    const etag = (await get()).headers.get("etag") ?? "";
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await get({ "if-none-match": value });
      expect({ value, status: res.status, size: res.body.byteLength }).toEqual({ value, status: 304, size: 0 });
      expect(res.headers.get("etag")).toBe(etag);
      expect(res.headers.get("cache-control")).toContain("immutable");
    }
    expect((await get({ "if-none-match": '"something-else"' })).status).toBe(200);
  });

  test("If-Modified-Since at or after the creation → 304; before → 200", async () => {
    expect((await get({ "if-modified-since": "Sun, 22 Nov 2026 10:00:00 GMT" })).status).toBe(304);
    expect((await get({ "if-modified-since": "Sun, 22 Nov 2026 09:59:59 GMT" })).status).toBe(200);
  });
});

describe("Range", () => {
  const size = () => bytes.byteLength;
  test("bytes=0-99, bytes=100-, bytes=-50 → 206 with the exact slice and Content-Range", async () => {
    const cases: [string, number, number][] = [
      ["bytes=0-99", 0, 99],
      ["bytes=100-", 100, size() - 1],
      ["bytes=-50", size() - 50, size() - 1],
      [`bytes=10-${size() + 1000}`, 10, size() - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get({ range });
      expect({ range, status: res.status }).toEqual({ range, status: 206 });
      expect(res.headers.get("content-range")).toBe(`bytes ${start}-${end}/${size()}`);
      expect(res.headers.get("content-length")).toBe(String(end - start + 1));
      expect(res.body).toEqual(bytes.slice(start, end + 1));
    }
  });

  test("a range past the end → 416 with bytes */size", async () => {
    const res = await get({ range: `bytes=${size()}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe(`bytes */${size()}`);
  });

  test("several ranges, garbage, or If-Range with another validator → the whole image", async () => {
    const variants: Record<string, string>[] = [
      { range: "bytes=0-1,5-6" },
      { range: "lines=1-2" },
      { range: "bytes=9-3" },
      { range: "bytes=0-9", "if-range": '"stale"' },
    ];
    for (const headers of variants) {
      const res = await get(headers);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(bytes);
    }
    const etag = (await get()).headers.get("etag") ?? "";
    expect((await get({ range: "bytes=0-9", "if-range": etag })).status).toBe(206);
  });
});

describe("over a real socket", () => {
  test("HEAD: the headers of GET with Content-Length and no body", async () => {
    const head = await curl(["-I"]);
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain(`content-length: ${bytes.byteLength}`);
    expect(head.toLowerCase()).toContain("content-type: image/jpeg");
    expect(head.toLowerCase()).toContain("x-content-type-options: nosniff");
    expect(head.toLowerCase()).not.toContain("content-length: 0");
  });

  test("a Range request through curl returns exactly the slice", async () => {
    const proc = Bun.spawn(["curl", "-s", "-r", "0-9", "-o", "-", "-w", "", `http://127.0.0.1:${server.port}${path}`], { stdout: "pipe" });
    const body = new Uint8Array(await new Response(proc.stdout).arrayBuffer());
    expect(body).toEqual(bytes.slice(0, 10));
  });

  test("a deleted asset's URL is 404 at once", async () => {
    const acct = await world.createAccount();
    const doomed = await ingestImageBytes(world.deps, acct.accountId, { bytes, fileName: "doomed" });
    const url = assetUrl(world.deps, doomed).replace("http://localhost", `http://127.0.0.1:${server.port}`);
    expect((await fetch(url)).status).toBe(200);
    expect((await world.call("DELETE", `/api/v1/assets/${doomed.id}`, { key: acct.key })).status).toBe(200);
    expect((await fetch(url)).status).toBe(404);
  });
});
