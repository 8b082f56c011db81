/**
 * Upload links: minting and polling (groups, isolation, auth matrix), the page's headers and states, the multipart
 * POST (JSON and page answers), refused files keeping the link valid, 410/404, the byte cap while streaming, ten
 * concurrent uploads over real sockets storing exactly one asset, and the tidy job.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { JOB_IDS, systemJobs } from "../src/system-jobs";
import { UPLOAD_LINK_RETENTION_MS, tidyUploadLinks } from "../src/modules/uploads/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const RANDOM_ID = "01934b7e-0000-7000-8000-000000000000";
const MINUTE = 60_000;

let world: World;
let owner: TestAccount;
let other: TestAccount;
let png: Uint8Array<ArrayBuffer>;

async function stored(): Promise<{ rows: number; files: number }> {
  const rows = Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM assets"))[0]?.n ?? 0);
  // Every key in the world's media storage (local folder or bucket), temp files of interrupted writes included.
  const listing = await world.deps.storage.list();
  const files = listing.entries.length + listing.temps.length;
  return { rows, files };
}

async function mint(key = owner.key) {
  const res = await world.call("POST", "/api/v1/assets/upload-link", { key });
  expect(res.status).toBe(201);
  return { ...res.json, path: new URL(res.json.uploadUrl).pathname } as {
    id: string;
    uploadUrl: string;
    expiresAt: string;
    path: string;
  };
}

function form(bytes: Uint8Array<ArrayBuffer>, name = "photo.png", field = "file"): FormData {
  const data = new FormData();
  data.append(field, new File([bytes], name, { type: "image/png" }));
  return data;
}

async function post(path: string, body: BodyInit, accept = "application/json", headers: Record<string, string> = {}) {
  const res = await world.app.handle(new Request(`http://localhost${path}`, { method: "POST", body, headers: { accept, ...headers } }));
  const text = await res.text();
  let json: { [k: string]: unknown } | null = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, text, json };
}

async function status(id: string, key = owner.key) {
  return world.call("GET", `/api/v1/assets/upload-links/${id}`, { key });
}

beforeAll(async () => {
  world = await createWorld();
  owner = await world.createAccount();
  other = await world.createAccount();
  png = new Uint8Array(await sharp({ create: { width: 120, height: 90, channels: 3, background: "#c83" } }).png().toBuffer());
});

afterAll(() => world.close());

describe("POST /api/v1/assets/upload-link", () => {
  test("201 {id, uploadUrl, expiresAt, expiresInSeconds: 900, creditsCharged: 0}; the token is stored only hashed", async () => {
    const res = await world.call("POST", "/api/v1/assets/upload-link", { key: owner.key });
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(["creditsCharged", "expiresAt", "expiresInSeconds", "id", "uploadUrl"]);
    expect(res.json.expiresInSeconds).toBe(900);
    expect(res.json.creditsCharged).toBe(0);
    expect(res.json.expiresAt).toBe(new Date(world.clock.now() + 900_000).toISOString());
    const token = /^http:\/\/localhost\/upload\/([A-Za-z0-9_-]{43})$/.exec(res.json.uploadUrl)?.[1];
    expect(token).toBeDefined();
    const dump = JSON.stringify(await world.sql("SELECT * FROM upload_links"));
    expect(dump).not.toContain(token ?? "");
    expect(dump).toContain(res.json.id);
    // Every link is different.
    const second = await world.call("POST", "/api/v1/assets/upload-link", { key: owner.key });
    expect(second.json.uploadUrl).not.toBe(res.json.uploadUrl);
  });

  test("403 for a key without create; viewer keys too", async () => {
    const res = await world.call("POST", "/api/v1/assets/upload-link", { key: (await owner.mint(["read"])).key });
    expect([res.status, res.json.error, res.json.requiredGroup]).toEqual([403, "forbidden", "create"]);
    const viewer = await owner.addMember("viewer");
    const viewerRes = await world.call("POST", "/api/v1/assets/upload-link", { key: (await owner.mint(["read"], { userId: viewer })).key });
    expect(viewerRes.status).toBe(403);
    const poll = await world.call("GET", `/api/v1/assets/upload-links/${RANDOM_ID}`, { key: (await owner.mint(["create"])).key });
    expect([poll.status, poll.json.requiredGroup]).toEqual([403, "read"]);
  });
});

describe("the page at uploadUrl", () => {
  test("GET: 200 HTML form with no-store, no-referrer, a strict CSP and only its own resources", async () => {
    const link = await mint();
    const res = await world.call("GET", link.path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.text).toContain('enctype="multipart/form-data"');
    expect(res.text).toContain('name="file"');
    // Posts to its own URL (relative, so a path prefix in BASE_URL keeps working).
    expect(res.text).toContain('action=""');
    // No third-party resource: every src/href is relative to the page.
    const refs = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.sort()).toEqual(["_/icon.svg", "_/upload-page.css", "_/upload-page.js"]);
    for (const asset of ["_/upload-page.css", "_/upload-page.js", "_/icon.svg"]) {
      const file = await world.call("GET", `/upload/${asset}`);
      expect(file.status).toBe(200);
      expect(file.headers.get("x-content-type-options")).toBe("nosniff");
      expect(file.text.replace("http://www.w3.org/2000/svg", "")).not.toMatch(/https?:\/\//);
    }
    // The script counts down from the server's remaining seconds, not from the browser's clock.
    expect(res.text).toContain('data-expires-in="900"');
  });

  test("unknown or malformed token: 404 page with the same protective headers", async () => {
    const res = await world.call("GET", "/upload/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(res.status).toBe(404);
    expect(res.text).toContain("This upload link does not exist");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect((await world.call("GET", "/upload/short")).status).toBe(404);
  });

  test("POST with Accept JSON: 201 {asset}; the link is then used, GET shows the 410 page", async () => {
    const link = await mint();
    const res = await post(link.path, form(png, "Holiday.png"));
    expect(res.status).toBe(201);
    const asset = res.json?.asset as { id: string; fileName: string; mimeType: string; sizeBytes: number; url: string };
    expect(asset.fileName).toBe("Holiday.png");
    expect(asset.mimeType).toBe("image/png");
    expect(asset.sizeBytes).toBe(png.byteLength);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const media = await world.app.handle(new Request(asset.url));
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(png);
    const list = await world.call("GET", "/api/v1/assets", { key: owner.key });
    expect(list.json.assets[0].id).toBe(asset.id);
    const poll = await status(link.id);
    expect(poll.json).toEqual({ id: link.id, status: "used", assetId: asset.id, expiresAt: link.expiresAt });
    const page = await world.call("GET", link.path);
    expect(page.status).toBe(410);
    expect(page.text).toContain("This link was already used");
    const again = await post(link.path, form(png));
    expect([again.status, again.json?.error]).toEqual([410, "upload_link_used"]);
  });

  test("POST without JSON (a form without script): 200 page naming the file", async () => {
    const link = await mint();
    const res = await post(link.path, form(png, "no-script"), "text/html");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.text).toContain("Image added");
    expect(res.text).toContain("no-script.png");
    expect((await status(link.id)).json.status).toBe("used");
  });

  test("a refused file answers 400 with its reason and leaves the link valid; the next good file consumes it", async () => {
    const link = await mint();
    const before = await stored();
    const text = await post(link.path, form(new TextEncoder().encode("just text\n") as Uint8Array<ArrayBuffer>, "fake.png"));
    expect([text.status, text.json?.error]).toEqual([400, "unsupported_type"]);
    expect(String(text.json?.message)).toContain("This link still works");
    const svg = await post(link.path, form(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>') as Uint8Array<ArrayBuffer>, "x.svg"));
    expect(svg.json?.error).toBe("unsupported_type");
    const empty = await post(link.path, form(new Uint8Array(0), "empty.png"));
    expect(empty.json?.error).toBe("empty_body");
    const wrongField = await post(link.path, form(png, "x.png", "picture"));
    expect([wrongField.status, wrongField.json?.error]).toEqual([400, "invalid_request"]);
    const notMultipart = await post(link.path, png, "application/json", { "content-type": "image/png" });
    expect([notMultipart.status, notMultipart.json?.error]).toEqual([400, "invalid_request"]);
    const page = await post(link.path, form(new TextEncoder().encode("text") as Uint8Array<ArrayBuffer>, "fake.png"), "text/html");
    expect(page.status).toBe(400);
    expect(page.text).toContain("not a PNG, JPEG, GIF or WebP image");
    expect(page.text).toContain('name="file"');
    expect(await stored()).toEqual(before);
    expect((await status(link.id)).json.status).toBe("valid");
    expect((await world.call("GET", link.path)).status).toBe(200);
    const good = await post(link.path, form(png));
    expect(good.status).toBe(201);
  });

  test("over the byte cap: refused from Content-Length, and while streaming a chunked body; link stays valid", async () => {
    const small = await createWorld({ env: { MAX_IMAGE_BYTES: "4096" } });
    try {
      const acct = await small.createAccount();
      const link = (await small.call("POST", "/api/v1/assets/upload-link", { key: acct.key })).json;
      const path = new URL(link.uploadUrl).pathname;
      const big = new Uint8Array(200 * 1024);
      big.set(png);
      const declared = await small.app.handle(new Request(`http://localhost${path}`, { method: "POST", body: form(big), headers: { accept: "application/json" } }));
      expect(declared.status).toBe(400);
      expect(((await declared.json()) as { error: string }).error).toBe("image_too_large");
      // The same multipart body as a stream: no Content-Length to trust, the cap is counted as it arrives.
      const encoded = new Response(form(big));
      const contentType = encoded.headers.get("content-type") ?? "";
      const chunked = await small.app.handle(
        new Request(`http://localhost${path}`, {
          method: "POST",
          body: encoded.body,
          headers: { accept: "application/json", "content-type": contentType },
          // @ts-expect-error Bun accepts duplex for streamed request bodies
          duplex: "half",
        }),
      );
      expect(chunked.status).toBe(400);
      expect(((await chunked.json()) as { error: string }).error).toBe("image_too_large");
      const poll = await small.call("GET", `/api/v1/assets/upload-links/${link.id}`, { key: acct.key });
      expect(poll.json.status).toBe("valid");
    } finally {
      await small.close();
    }
  });

  test("expired: 410 page and upload_link_expired; polling says expired", async () => {
    const link = await mint();
    world.clock.advance(15 * MINUTE);
    const page = await world.call("GET", link.path);
    expect(page.status).toBe(410);
    expect(page.text).toContain("This link has expired");
    const res = await post(link.path, form(png));
    expect([res.status, res.json?.error]).toEqual([410, "upload_link_expired"]);
    expect((await status(link.id)).json.status).toBe("expired");
  });

  test("ten concurrent uploads to one link over real sockets: exactly one asset, one 201 and nine 410", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => world.app.handle(request) });
    try {
      const link = await mint();
      const before = await stored();
      const variants = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          sharp({ create: { width: 200 + i, height: 150, channels: 3, background: { r: 20 * i, g: 90, b: 160 } } }).png().toBuffer(),
        ),
      );
      const answers = await Promise.all(
        variants.map((bytes, i) =>
          fetch(`http://127.0.0.1:${server.port}${link.path}`, {
            method: "POST",
            body: form(new Uint8Array(bytes), `racer-${i}.png`),
            headers: { accept: "application/json" },
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: string; asset?: { id: string } } })),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([201, 410, 410, 410, 410, 410, 410, 410, 410, 410]);
      expect(answers.filter((a) => a.status === 410).every((a) => a.body.error === "upload_link_used")).toBe(true);
      expect(await stored()).toEqual({ rows: before.rows + 1, files: before.files + 1 });
      const winner = answers.find((a) => a.status === 201)?.body.asset?.id;
      expect((await status(link.id)).json.assetId).toBe(winner ?? "missing");
    } finally {
      await server.stop(true);
    }
  });
});

describe("GET /api/v1/assets/upload-links/{id}", () => {
  test("valid → used (assetId) → stays used after expiry; another account's id is 404 like a random id", async () => {
    const link = await mint();
    expect((await status(link.id)).json).toEqual({ id: link.id, status: "valid", assetId: null, expiresAt: link.expiresAt });
    const foreign = await status(link.id, other.key);
    const random = await status(RANDOM_ID, other.key);
    const garbage = await status("nope", other.key);
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(random.text);
    expect(garbage.text).toBe(random.text);
    const up = await post(link.path, form(png));
    world.clock.advance(20 * MINUTE);
    expect((await status(link.id)).json).toEqual({ id: link.id, status: "used", assetId: up.json?.asset && (up.json.asset as { id: string }).id, expiresAt: link.expiresAt });
  });

  test("another account's link page still works for its holder, and the asset lands in the minting account only", async () => {
    const link = await mint(other.key);
    const res = await post(link.path, form(png, "theirs.png"));
    expect(res.status).toBe(201);
    const id = (res.json?.asset as { id: string }).id;
    const mine = await world.call("GET", "/api/v1/assets?limit=200", { key: owner.key });
    expect(mine.json.assets.map((a: { id: string }) => a.id)).not.toContain(id);
    const theirs = await world.call("GET", "/api/v1/assets?limit=200", { key: other.key });
    expect(theirs.json.assets.map((a: { id: string }) => a.id)).toContain(id);
  });
});

describe("the tidy job", () => {
  test(`${JOB_IDS.uploadLinksTidy} is a system job and removes links a day after they expired, used or not`, async () => {
    expect(systemJobs.some((job) => job.id === JOB_IDS.uploadLinksTidy)).toBe(true);
    const fresh = await mint();
    const used = await mint();
    await post(used.path, form(png));
    const count = async () => Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM upload_links"))[0]?.n ?? 0);
    const total = await count();
    expect(await tidyUploadLinks(world.deps)).toBe(0);
    world.clock.advance(15 * MINUTE + UPLOAD_LINK_RETENTION_MS);
    const job = systemJobs.find((j) => j.id === JOB_IDS.uploadLinksTidy);
    await job?.run(world.deps);
    expect(await count()).toBe(0);
    expect(total).toBeGreaterThanOrEqual(2);
    expect((await status(fresh.id)).status).toBe(404);
    expect((await status(used.id)).status).toBe(404);
    expect((await world.call("GET", used.path)).status).toBe(404);
  });
});

describe("expires_in_seconds (decisions.md §15): 300 to 604,800, default 900", () => {
  const SHORTEST = 300;
  const LONGEST = 604_800;
  // Its own world: the clock moves by days here, which the tidy job's test above must not see.
  let own: World;
  let minter: TestAccount;
  beforeAll(async () => {
    own = await createWorld();
    minter = await own.createAccount();
  });
  afterAll(() => own.close());
  const mintFor = (body: unknown) => own.call("POST", "/api/v1/assets/upload-link", { key: minter.key, body });
  const pollOwn = (id: string) => own.call("GET", `/api/v1/assets/upload-links/${id}`, { key: minter.key });
  const upload = async (path: string) => {
    const res = await own.app.handle(new Request(`http://localhost${path}`, { method: "POST", body: form(png), headers: { accept: "application/json" } }));
    return { status: res.status, json: (await res.json()) as { error?: string } };
  };

  test("the bounds: 300 and 604800 accepted, 299 and 604801 refused with a 400 naming the field; nothing minted on refusal", async () => {
    const before = (await own.sql("SELECT id FROM upload_links")).length;
    for (const seconds of [SHORTEST, LONGEST]) {
      const res = await mintFor({ expires_in_seconds: seconds });
      expect(res.status).toBe(201);
      expect(res.json.expiresInSeconds).toBe(seconds);
      expect(res.json.expiresAt).toBe(new Date(own.clock.now() + seconds * 1000).toISOString());
    }
    for (const seconds of [SHORTEST - 1, LONGEST + 1, 600.5, "900", null]) {
      const res = await mintFor({ expires_in_seconds: seconds });
      expect({ seconds, status: res.status, error: res.json.error, field: res.json.details?.[0]?.field }).toEqual({
        seconds,
        status: 400,
        error: "invalid_request",
        field: "expires_in_seconds",
      });
      expect(res.json.message).toBe("expires_in_seconds: must be a whole number of seconds from 300 to 604800");
    }
    expect((await own.sql("SELECT id FROM upload_links")).length).toBe(before + 2);
  });

  test("without a body, or without the field, a link lives 900 seconds", async () => {
    for (const body of [undefined, {}]) {
      const res = await mintFor(body);
      expect([res.status, res.json.expiresInSeconds]).toEqual([201, 900]);
    }
  });

  for (const seconds of [SHORTEST, LONGEST]) {
    test(`a ${seconds}-second link works one second before its time and has expired at it (the clock moved)`, async () => {
      const early = await mintFor({ expires_in_seconds: seconds });
      const late = await mintFor({ expires_in_seconds: seconds });
      const path = (r: typeof early) => new URL(r.json.uploadUrl).pathname;
      own.clock.advance(seconds * 1000 - 1000);
      expect((await own.call("GET", path(early))).status).toBe(200);
      expect((await pollOwn(late.json.id)).json.status).toBe("valid");
      expect((await upload(path(early))).status).toBe(201);
      own.clock.advance(1000);
      expect((await pollOwn(late.json.id)).json.status).toBe("expired");
      expect((await own.call("GET", path(late))).status).toBe(410);
      const refused = await upload(path(late));
      expect([refused.status, refused.json.error]).toEqual([410, "upload_link_expired"]);
    });
  }
});

describeAuthMatrix("upload links", () => world, [
  { method: "POST", path: "/api/v1/assets/upload-link" },
  { method: "GET", path: `/api/v1/assets/upload-links/${RANDOM_ID}` },
]);
