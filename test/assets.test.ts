/**
 * The image library API against real local HTTPS sources (throwaway CA, Bun.serve with TLS): every accepted type
 * stored byte-exact, every refusal reason produced by a real response and storing nothing, the address table and a
 * property test through the route, fileName rules, listing with cursors, delete with 409 asset_in_use, groups,
 * account isolation and the auth matrix.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import fc from "fast-check";
import sharp from "sharp";
import type { Resolver } from "../src/lib/safe-fetch";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { assetReferenceCount } from "../src/modules/assets/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestCa, type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const MIB = 1024 * 1024;
const CAP = 10 * MIB;
const RANDOM_ID = "01934b7e-0000-7000-8000-000000000000";

let world: World;
let ca: TestCa;
let source: TestHttpsServer;
let owner: TestAccount;
let other: TestAccount;
/** Requests the source saw, by path. */
const hits = new Map<string, number>();
/** The resolver every ingest uses; tests swap it. */
let resolve: Resolver = async () => ["127.0.0.1"];
let resolverCalls = 0;

type Bytes = Uint8Array<ArrayBuffer>;
const images: Record<string, { bytes: Bytes; mimeType: string; ext: string }> = {};

/** The fixture bytes of one kind (png, jpeg, gif, webp). */
function bytesOf(kind: string): Bytes {
  const fixture = images[kind];
  if (!fixture) throw new Error(`no fixture ${kind}`);
  return fixture.bytes;
}

/** A PNG whose IHDR claims width × height, followed by nothing a decoder could use. */
function pngHeaderOnly(width: number, height: number): Bytes {
  const ihdr = new Uint8Array(17);
  const view = new DataView(ihdr.buffer);
  ihdr.set([0x49, 0x48, 0x44, 0x52]);
  view.setUint32(4, width);
  view.setUint32(8, height);
  ihdr.set([8, 6, 0, 0, 0], 12);
  const out = new Uint8Array(8 + 4 + 17 + 4 + 64);
  out.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  new DataView(out.buffer).setUint32(8, 13);
  out.set(ihdr, 12);
  new DataView(out.buffer).setUint32(29, Bun.hash.crc32(ihdr));
  return out;
}

const SVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script><rect width="10" height="10"/></svg>`;

function sourceHandler(request: Request): Response {
  const url = new URL(request.url);
  const path = url.pathname;
  hits.set(path, (hits.get(path) ?? 0) + 1);
  const image = /^\/img\/([a-z]+)\.[^/]*(\/.*)?$/.exec(path);
  if (image?.[1] && images[image[1]]) {
    // NB: a lying Content-Type: type comes from the bytes, never from the header.
    return new Response(bytesOf(image[1]), { headers: { "content-type": "application/octet-stream" } });
  }
  const redirect = /^\/r\/(\d+)$/.exec(path);
  if (redirect?.[1]) {
    const left = Number(redirect[1]);
    return new Response(null, { status: 302, headers: { location: left > 0 ? `/r/${left - 1}` : "/img/png.png" } });
  }
  switch (path) {
    case "/oversize-chunked": {
      const png = bytesOf("png");
      let sent = 0;
      // No Content-Length: the cap must be counted while streaming.
      return new Response(
        new ReadableStream({
          pull(controller) {
            if (sent > CAP) return controller.close();
            const chunk = sent === 0 ? png : new Uint8Array(256 * 1024);
            sent += chunk.byteLength;
            controller.enqueue(chunk);
          },
        }),
        { headers: { "content-type": "image/png" } },
      );
    }
    case "/exactly-cap": {
      const bytes = new Uint8Array(CAP);
      bytes.set(bytesOf("png"));
      return new Response(bytes);
    }
    case "/bomb.png":
      return new Response(Bun.gzipSync(new Uint8Array(64 * MIB)), {
        headers: { "content-type": "image/png", "content-encoding": "gzip" },
      });
    case "/huge.png":
      return new Response(pngHeaderOnly(100_000, 100_000), { headers: { "content-type": "image/png" } });
    case "/text.png":
      return new Response("this is plain text wearing a .png name\n", { headers: { "content-type": "image/png" } });
    case "/vector.svg":
      return new Response(SVG, { headers: { "content-type": "image/svg+xml" } });
    case "/html-then-png.png": {
      const html = new TextEncoder().encode("<html><script>alert(1)</script></html>");
      return new Response(new Uint8Array(Buffer.concat([html, bytesOf("png")])));
    }
    case "/empty.png":
      return new Response(new Uint8Array(0), { headers: { "content-type": "image/png" } });
    case "/missing.png":
      return new Response("not here", { status: 404 });
    case "/stall.png":
      return new Promise<Response>(() => undefined) as unknown as Response;
    case "/to-metadata":
      return new Response(null, { status: 302, headers: { location: "https://169.254.169.254/latest/meta-data/" } });
    case "/to-http":
      return new Response(null, { status: 301, headers: { location: `http://localhost:${url.port}/img/png.png` } });
    default:
      return new Response("no such fixture", { status: 404 });
  }
}

/** Every key in the world's media storage (local folder or bucket), temp files of interrupted writes included. */
async function storedFiles(w: World): Promise<string[]> {
  const listing = await w.deps.storage.list();
  return [...listing.entries, ...listing.temps].map((e) => e.key).sort();
}

/** Rows and files: a refusal must change neither. */
async function stored(): Promise<{ rows: number; files: string[] }> {
  const rows = Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM assets"))[0]?.n ?? 0);
  return { rows, files: await storedFiles(world) };
}

async function ingest(body: unknown, key = owner.key) {
  return world.call("POST", "/api/v1/assets/ingest-url", { key, body });
}

/** Asserts a refusal: 400 with `code`, nothing stored. */
async function expectRefused(url: string, code: string, extra: Record<string, unknown> = {}) {
  const before = await stored();
  const res = await ingest({ url, label: "refused" });
  expect({ url, status: res.status, error: res.json?.error }).toEqual({ url, status: 400, error: code });
  expect(typeof res.json.message).toBe("string");
  for (const [k, v] of Object.entries(extra)) expect(res.json[k]).toEqual(v);
  expect(await stored()).toEqual(before);
  return res;
}

beforeAll(async () => {
  images.png = { bytes: new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 4, background: "#3a7" } }).png().toBuffer()), mimeType: "image/png", ext: "png" };
  images.jpeg = { bytes: new Uint8Array(await sharp({ create: { width: 80, height: 60, channels: 3, background: "#a52" } }).jpeg().toBuffer()), mimeType: "image/jpeg", ext: "jpg" };
  images.gif = { bytes: new Uint8Array(await sharp({ create: { width: 30, height: 20, channels: 3, background: "#25a" } }).gif().toBuffer()), mimeType: "image/gif", ext: "gif" };
  images.webp = { bytes: new Uint8Array(await sharp({ create: { width: 50, height: 50, channels: 3, background: "#777" } }).webp().toBuffer()), mimeType: "image/webp", ext: "webp" };
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "localhost" } });
  ca = createTestCa();
  source = startHttpsServer(sourceHandler, { ca });
  configureIngestFetch(world.deps, {
    extraCa: ca.caPem,
    resolver: async (host) => {
      resolverCalls += 1;
      return resolve(host);
    },
  });
  owner = await world.createAccount();
  other = await world.createAccount();
});

afterAll(async () => {
  await source.stop();
  ca.dispose();
  await world.close();
});

beforeEach(() => {
  resolve = async () => ["127.0.0.1"];
  resolverCalls = 0;
});

describe("POST /api/v1/assets/ingest-url: accepted images", () => {
  for (const kind of ["png", "jpeg", "gif", "webp"]) {
    test(`${kind}: 201, stored byte-exact, typed by content, served from the library, source fetched once`, async () => {
      const path = `/img/${kind}.bin`;
      const res = await ingest({ url: `${source.url}${path}`, label: `My ${kind}` });
      expect(res.status).toBe(201);
      const fixture = images[kind];
      if (!fixture) throw new Error("fixture");
      expect(res.json.creditsCharged).toBe(0);
      const asset = res.json.asset;
      expect(Object.keys(asset).sort()).toEqual(["createdAt", "fileName", "id", "mimeType", "sizeBytes", "url"]);
      expect(asset.mimeType).toBe(fixture.mimeType);
      expect(asset.sizeBytes).toBe(fixture.bytes.byteLength);
      expect(asset.fileName).toBe(`My ${kind}.${fixture.ext}`);
      expect(asset.url).toBe(`http://localhost/media/${asset.id}.${fixture.ext}`);
      expect(asset.createdAt).toBe("2026-11-22T10:00:00.000Z");
      expect(hits.get(path)).toBe(1);

      const media = await world.app.handle(new Request(asset.url));
      expect(media.status).toBe(200);
      expect(media.headers.get("content-type")).toBe(fixture.mimeType);
      expect(new Uint8Array(await media.arrayBuffer())).toEqual(fixture.bytes);
      // Served from the library: the source is never asked again.
      expect(hits.get(path)).toBe(1);
    });
  }

  test("5 redirects are followed (each hop checked) and the image stored", async () => {
    const res = await ingest({ url: `${source.url}/r/4` });
    expect(res.status).toBe(201);
    expect(res.json.asset.mimeType).toBe("image/png");
    // The original URL's last segment names it: "4" gets the detected extension.
    expect(res.json.asset.fileName).toBe("4.png");
    expect(resolverCalls).toBe(6);
  });

  test("a body of exactly the cap passes", async () => {
    const res = await ingest({ url: `${source.url}/exactly-cap` });
    expect(res.status).toBe(201);
    expect(res.json.asset.sizeBytes).toBe(CAP);
  });

  test("a PNG with trailing HTML is stored as image/png (and served nosniff in a sandbox)", async () => {
    const png = bytesOf("png");
    const polyglot = new Uint8Array(Buffer.concat([png, new TextEncoder().encode("<script>alert(1)</script>")]));
    const server = startHttpsServer(() => new Response(polyglot), { ca });
    try {
      const res = await ingest({ url: `${server.url}/x.png` });
      expect(res.status).toBe(201);
      const media = await world.app.handle(new Request(res.json.asset.url));
      expect(media.headers.get("content-type")).toBe("image/png");
      expect(media.headers.get("x-content-type-options")).toBe("nosniff");
      expect(media.headers.get("content-security-policy")).toContain("sandbox");
    } finally {
      await server.stop();
    }
  });

  test("a resolver that answers public, then private: resolved once, the socket stays where it was checked", async () => {
    let calls = 0;
    resolve = async () => (++calls === 1 ? ["127.0.0.1"] : ["169.254.169.254"]);
    const before = hits.get("/img/webp.rebind") ?? 0;
    const res = await ingest({ url: `${source.url}/img/webp.rebind` });
    expect(res.status).toBe(201);
    expect(calls).toBe(1);
    expect(hits.get("/img/webp.rebind")).toBe(before + 1);
  });
});

describe("Idempotency-Key on ingest-url", () => {
  test("a repeat replays the first answer: one fetch, one asset", async () => {
    const path = "/img/png.idem";
    const headers = { "idempotency-key": "ingest-once-42" };
    const body = { url: `${source.url}${path}`, label: "once" };
    const before = await stored();
    const first = await world.call("POST", "/api/v1/assets/ingest-url", { key: owner.key, body, headers });
    const second = await world.call("POST", "/api/v1/assets/ingest-url", { key: owner.key, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.json).toEqual(first.json);
    expect(hits.get(path)).toBe(1);
    expect((await stored()).rows).toBe(before.rows + 1);
  });
});

describe("fileName rules (decisions.md §4)", () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ["label without extension gets the detected one", { label: "Launch photo" }, "Launch photo.jpg"],
    ["label with an image extension is kept", { label: "cover.jpeg" }, "cover.jpeg"],
    ["label with a version number still gets one", { label: "Banner v1.2" }, "Banner v1.2.jpg"],
    ["label is trimmed; blank label falls back to the URL", { label: "   " }, "picture.jpg"],
    ["no label: the URL's last segment", {}, "picture.jpg"],
  ];
  for (const [name, extra, expected] of cases) {
    test(name, async () => {
      const res = await ingest({ url: `${source.url}/img/jpeg.x/picture`, ...extra });
      expect(res.status).toBe(201);
      expect(res.json.asset.fileName).toBe(expected);
    });
  }

  test("a percent-encoded segment is decoded; a trailing slash means image.<ext>", async () => {
    const encoded = await ingest({ url: `${source.url}/img/gif.x/sunny%20day.gif` });
    expect(encoded.json.asset.fileName).toBe("sunny day.gif");
    const server = startHttpsServer(() => new Response(bytesOf("webp")), { ca });
    try {
      const bare = await ingest({ url: `${server.url}/` });
      expect(bare.json.asset.fileName).toBe("image.webp");
    } finally {
      await server.stop();
    }
  });
});

describe("POST /api/v1/assets/ingest-url: every refusal is a 400 with its reason and stores nothing", () => {
  test("image_too_large: streamed without Content-Length, one byte over the cap", async () => {
    await expectRefused(`${source.url}/oversize-chunked`, "image_too_large");
  });
  test("unsupported_encoding: a gzip bomb is refused, never inflated", async () => {
    await expectRefused(`${source.url}/bomb.png`, "unsupported_encoding");
  });
  test("image_dimensions_too_large: a 100000×100000 header", async () => {
    await expectRefused(`${source.url}/huge.png`, "image_dimensions_too_large");
  });
  test("unsupported_type: text named .png", async () => {
    await expectRefused(`${source.url}/text.png`, "unsupported_type");
  });
  test("unsupported_type: SVG", async () => {
    await expectRefused(`${source.url}/vector.svg`, "unsupported_type");
  });
  test("unsupported_type: HTML with a PNG inside (a polyglot's non-image part)", async () => {
    await expectRefused(`${source.url}/html-then-png.png`, "unsupported_type");
  });
  test("empty_body", async () => {
    await expectRefused(`${source.url}/empty.png`, "empty_body");
  });
  test("upstream_status: 404 with upstreamStatus", async () => {
    await expectRefused(`${source.url}/missing.png`, "upstream_status", { upstreamStatus: 404 });
  });
  test("too_many_redirects: 6 redirects", async () => {
    await expectRefused(`${source.url}/r/5`, "too_many_redirects");
  });
  test("host_not_public: a redirect to 169.254.169.254", async () => {
    await expectRefused(`${source.url}/to-metadata`, "host_not_public");
  });
  test("https_required: a redirect to plain http", async () => {
    await expectRefused(`${source.url}/to-http`, "https_required");
  });
  test("https_required: an http URL", async () => {
    await expectRefused("http://example.com/cat.png", "https_required");
  });
  test("invalid_url: user:password in the URL, or not a URL", async () => {
    await expectRefused(`https://user:secret@localhost:${source.port}/img/png.png`, "invalid_url");
    await expectRefused("not a url", "invalid_url");
  });
  test("port_not_allowed: a port other than 443 on a host that is not exempt", async () => {
    resolve = async () => ["93.184.215.14"];
    await expectRefused("https://example.com:8443/cat.png", "port_not_allowed");
  });
  test("host_unresolvable: the resolver finds nothing", async () => {
    resolve = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    await expectRefused("https://nothing-here.invalid/cat.png", "host_unresolvable");
  });
  test("host_not_public: a name that resolves to a private address", async () => {
    resolve = async () => ["10.0.0.7"];
    await expectRefused("https://intranet.example/cat.png", "host_not_public");
  });
  test("fetch_failed: a certificate from an untrusted CA", async () => {
    const stranger = startHttpsServer(() => new Response(bytesOf("png")));
    try {
      await expectRefused(`${stranger.url}/x.png`, "fetch_failed");
    } finally {
      await stranger.stop();
    }
  });
  test("fetch_failed: the total time budget", async () => {
    configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"], timeoutMs: 300 });
    try {
      await expectRefused(`${source.url}/stall.png`, "fetch_failed");
    } finally {
      configureIngestFetch(world.deps, {
        extraCa: ca.caPem,
        resolver: async (host) => {
          resolverCalls += 1;
          return resolve(host);
        },
      });
    }
  });
  test("invalid_request: url missing, label over 200 characters", async () => {
    const before = await stored();
    const missing = await ingest({ label: "x" });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toBe("invalid_request");
    expect(missing.json.details[0].field).toBe("url");
    const long = await ingest({ url: `${source.url}/img/png.png`, label: "x".repeat(201) });
    expect(long.status).toBe(400);
    expect(long.json.details[0].field).toBe("label");
    expect(await stored()).toEqual(before);
  });
});

/** Host forms that must never be fetched, each written as a URL host. */
const REFUSED_HOSTS = [
  "127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "127.0.1", "017700000001",
  "0.0.0.0", "0", "10.0.0.1", "012.0.0.1", "167772161", "172.16.0.1", "172.31.255.255", "192.168.1.1",
  "0xc0a80101", "169.254.169.254", "0xa9fea9fe", "2852039166", "100.64.0.1", "100.127.255.254", "224.0.0.1",
  "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1", "[::1]", "[::]",
  "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]", "[::ffff:10.0.0.1]", "[::127.0.0.1]",
  "[64:ff9b::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[64:ff9b::10.1.1.1]", "[2002:7f00:1::]", "[fe80::1]",
  "[fc00::1]", "[fd12:3456:789a::1]", "[ff02::1]", "[2001:db8::1]", "[fec0::1]",
];

describe("the address table through the route: every form refused with host_not_public, nothing stored", () => {
  test("at least 40 forms", () => {
    expect(REFUSED_HOSTS.length).toBeGreaterThanOrEqual(40);
  });
  test.each(REFUSED_HOSTS)("https://%s/", async (host) => {
    await expectRefused(`https://${host}/cat.png`, "host_not_public");
  });
  test.each(REFUSED_HOSTS.filter((h) => h.startsWith("[") || /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/.test(h)))(
    "a name resolving to %s",
    async (host) => {
      resolve = async () => [host.replace(/^\[|\]$/g, "")];
      await expectRefused("https://images.example/cat.png", "host_not_public");
    },
  );
});

describe("property: any address in a non-public block, in the URL or from the resolver, is refused", () => {
  const blocks: [number, number][] = [
    [0x7f000000, 8], [0x0a000000, 8], [0xac100000, 12], [0xc0a80000, 16], [0xa9fe0000, 16], [0x64400000, 10],
    [0xe0000000, 4], [0xf0000000, 4], [0x00000000, 8],
  ];
  const privateV4 = fc
    .tuple(fc.constantFrom(...blocks), fc.nat())
    .map(([[base, bits], n]) => (base | (n & (2 ** (32 - bits) - 1))) >>> 0);
  const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

  test("written as decimal, hex, dotted or IPv4-mapped in the URL", async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, fc.constantFrom("decimal", "hex", "dotted", "mapped"), async (n, form) => {
        const host = { decimal: String(n), hex: `0x${n.toString(16)}`, dotted: dotted(n), mapped: `[::ffff:${dotted(n)}]` }[form];
        const before = await stored();
        const res = await ingest({ url: `https://${host}/a.png` });
        expect(res.status).toBe(400);
        expect(res.json.error).toBe("host_not_public");
        expect(await stored()).toEqual(before);
      }),
      { numRuns: 60 },
    );
  });

  test("answered by the resolver, among public answers", async () => {
    await fc.assert(
      fc.asyncProperty(privateV4, fc.boolean(), async (n, first) => {
        resolve = async () => (first ? [dotted(n), "93.184.215.14"] : ["93.184.215.14", `::ffff:${dotted(n)}`]);
        const res = await ingest({ url: "https://images.example/a.png" });
        expect(res.status).toBe(400);
        expect(res.json.error).toBe("host_not_public");
      }),
      { numRuns: 40 },
    );
  });
});

describe("GET /api/v1/assets", () => {
  let lister: TestAccount;
  const ids: string[] = [];
  beforeAll(async () => {
    lister = await world.createAccount();
    resolve = async () => ["127.0.0.1"];
    for (let i = 0; i < 7; i++) {
      world.clock.advance(1000);
      const res = await ingest({ url: `${source.url}/img/png.list${i}`, label: `n${i}` }, lister.key);
      ids.push(res.json.asset.id);
    }
  });

  test("newest first, pages by opaque cursor, nextCursor null at the end", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      const res = await world.call("GET", `/api/v1/assets${query}`, { key: lister.key });
      expect(res.status).toBe(200);
      sizes.push(res.json.assets.length);
      seen.push(...res.json.assets.map((a: { id: string }) => a.id));
      cursor = res.json.nextCursor;
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...ids].reverse());
  });

  test("default limit 50; only the caller's assets", async () => {
    const res = await world.call("GET", "/api/v1/assets", { key: lister.key });
    expect(res.json.assets).toHaveLength(7);
    expect(res.json.nextCursor).toBeNull();
    const theirs = await world.call("GET", "/api/v1/assets", { key: other.key });
    expect(theirs.json.assets.map((a: { id: string }) => a.id)).not.toContain(ids[0]);
  });

  test("limit outside 1–200 and a forged cursor are 400 invalid_request", async () => {
    for (const q of ["limit=0", "limit=201", "limit=abc", "limit=1.5", "cursor=not-ours", `cursor=${btoa("[1,2]")}`]) {
      const res = await world.call("GET", `/api/v1/assets?${q}`, { key: lister.key });
      expect({ q, status: res.status, error: res.json.error }).toEqual({ q, status: 400, error: "invalid_request" });
    }
    const max = await world.call("GET", "/api/v1/assets?limit=200", { key: lister.key });
    expect(max.status).toBe(200);
  });
});

describe("DELETE /api/v1/assets/{id}", () => {
  test("deletes the row and the file; the library URL then answers 404", async () => {
    const created = await ingest({ url: `${source.url}/img/png.del` });
    const asset = created.json.asset;
    const res = await world.call("DELETE", `/api/v1/assets/${asset.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: asset.id, deleted: true });
    expect((await stored()).files.some((f) => f.includes(asset.id))).toBe(false);
    expect((await world.app.handle(new Request(asset.url))).status).toBe(404);
    const again = await world.call("DELETE", `/api/v1/assets/${asset.id}`, { key: owner.key });
    expect(again.status).toBe(404);
  });

  test("409 asset_in_use while a seed refers to it; deletable once the seed is gone", async () => {
    const asset = (await ingest({ url: `${source.url}/img/jpeg.inuse` })).json.asset;
    const seed = await world.call("POST", "/api/v1/seeds", {
      key: owner.key,
      body: { title: "Launch", content: "We launch on Monday.", image_asset_id: asset.id },
    });
    expect(seed.status).toBe(201);
    expect(await assetReferenceCount(world.deps, asset.id)).toBe(1);
    const before = await stored();
    const refused = await world.call("DELETE", `/api/v1/assets/${asset.id}`, { key: owner.key });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe("asset_in_use");
    expect(await stored()).toEqual(before);
    expect((await world.app.handle(new Request(asset.url))).status).toBe(200);
    expect((await world.call("DELETE", `/api/v1/seeds/${seed.json.id}`, { key: owner.key })).status).toBe(200);
    expect((await world.call("DELETE", `/api/v1/assets/${asset.id}`, { key: owner.key })).status).toBe(200);
  });
});

describe("groups and account isolation", () => {
  test("403 forbidden with requiredGroup for a key lacking the route's group; nothing stored", async () => {
    const readOnly = (await owner.mint(["read"])).key;
    const createOnly = (await owner.mint(["create"])).key;
    const before = await stored();
    const ingestRes = await ingest({ url: `${source.url}/img/png.png` }, readOnly);
    expect([ingestRes.status, ingestRes.json.error, ingestRes.json.requiredGroup]).toEqual([403, "forbidden", "create"]);
    const del = await world.call("DELETE", `/api/v1/assets/${RANDOM_ID}`, { key: readOnly });
    expect([del.status, del.json.requiredGroup]).toEqual([403, "create"]);
    const list = await world.call("GET", "/api/v1/assets", { key: createOnly });
    expect([list.status, list.json.requiredGroup]).toEqual([403, "read"]);
    expect(await stored()).toEqual(before);
    // A viewer's key is capped at read, whatever it was minted with.
    const viewerId = await owner.addMember("viewer");
    const viewerKey = (await owner.mint(["read"], { userId: viewerId })).key;
    expect((await ingest({ url: `${source.url}/img/png.png` }, viewerKey)).status).toBe(403);
  });

  test("another account's asset id answers exactly like a random id, and stays", async () => {
    const mine = (await ingest({ url: `${source.url}/img/gif.iso` })).json.asset;
    const foreign = await world.call("DELETE", `/api/v1/assets/${mine.id}`, { key: other.key });
    const random = await world.call("DELETE", `/api/v1/assets/${RANDOM_ID}`, { key: other.key });
    const garbage = await world.call("DELETE", "/api/v1/assets/not-a-uuid", { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(random.text);
    expect(garbage.text).toBe(random.text);
    expect(foreign.json.error).toBe("not_found");
    const list = await world.call("GET", "/api/v1/assets?limit=200", { key: other.key });
    expect(list.json.assets.map((a: { id: string }) => a.id)).not.toContain(mine.id);
    expect((await world.app.handle(new Request(mine.url))).status).toBe(200);
  });
});

describeAuthMatrix("assets", () => world, [
  { method: "POST", path: "/api/v1/assets/ingest-url", validBody: { url: "https://example.com/cat.png", label: "cat" } },
  { method: "GET", path: "/api/v1/assets" },
  { method: "DELETE", path: `/api/v1/assets/${RANDOM_ID}` },
]);
