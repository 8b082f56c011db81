/**
 * Request conventions of decisions.md §10, over real HTTP servers built the way `seedcast serve` builds them (Bun's
 * router + the pipeline): JSON-only request bodies (415 unsupported_media_type, nothing read or written), CORS
 * with and without CORS_ORIGINS (preflight answered without a key; headers on answers to an allowed origin only),
 * 405 with Allow for a known path's other methods, Location on 201s (replays too), and the IETF RateLimit fields.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { ConfigError, loadConfig } from "../src/config";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const SAMPLE_ID = "00000000-0000-7000-8000-000000000000";
const APP_ORIGIN = "https://app.example.com";

interface Served {
  world: World;
  server: Server<undefined>;
  base: string;
  acct: TestAccount;
}

async function serve(env: Record<string, string> = {}): Promise<Served> {
  const world = await createWorld({ env });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: world.app.servedRoutes(), fetch: (request) => world.app.handle(request) });
  return { world, server, base: `http://127.0.0.1:${server.port}`, acct: await world.createAccount() };
}

let plain: Served;
let withCors: Served;
/** A key may make 5 requests a minute here. */
let limited: Served;

beforeAll(async () => {
  plain = await serve();
  withCors = await serve({ CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` });
  limited = await serve({ RATE_LIMIT_PER_MINUTE: "5" });
});

afterAll(async () => {
  for (const s of [plain, withCors, limited]) {
    await s.server.stop(true);
    await s.world.close();
  }
});

const count = async (s: Served, table: string) => Number((await s.world.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table}`))[0]?.n);

describe("415: request bodies under /api/v1 are JSON only", () => {
  test("multipart, urlencoded, text and a body without Content-Type are refused on every body route; nothing stored", async () => {
    const { base, acct } = plain;
    const form = new FormData();
    form.set("title", "Sneaky");
    form.set("content", "a multipart seed");
    const bodies: [string, () => RequestInit][] = [
      ["multipart", () => ({ body: form })],
      ["urlencoded", () => ({ body: new URLSearchParams({ title: "Sneaky", content: "urlencoded" }) })],
      ["text/plain", () => ({ body: '{"title":"Sneaky","content":"json as text"}', headers: { "content-type": "text/plain" } })],
      ["xml", () => ({ body: "<seed/>", headers: { "content-type": "application/xml" } })],
    ];
    const routes: [string, string][] = [
      ["POST", "/api/v1/seeds"],
      ["PATCH", `/api/v1/seeds/${SAMPLE_ID}`],
      ["POST", "/api/v1/creations/generate"],
      ["PATCH", `/api/v1/creations/${SAMPLE_ID}`],
      ["POST", "/api/v1/schedule"],
      ["PATCH", `/api/v1/schedule/${SAMPLE_ID}`],
      ["PUT", "/api/v1/voice"],
      ["POST", "/api/v1/webhooks"],
      ["POST", "/api/v1/assets/ingest-url"],
    ];
    const seedsBefore = await count(plain, "seeds");
    for (const [method, path] of routes) {
      for (const [name, init] of bodies) {
        const given = init();
        const res = await fetch(`${base}${path}`, { method, ...given, headers: { authorization: `Bearer ${acct.key}`, ...(given.headers as Record<string, string>) } });
        const json = (await res.json()) as { error: string; message: string; details: { field: string }[] };
        expect({ method, path, name, status: res.status, error: json.error }).toEqual({ method, path, name, status: 415, error: "unsupported_media_type" });
        expect(json.details[0]!.field).toBe("Content-Type");
      }
    }
    // A body with no Content-Type at all (Bun's fetch would label a string text/plain, so a byte body).
    const bare = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers: { authorization: `Bearer ${acct.key}` }, body: new TextEncoder().encode('{"title":"t","content":"c"}') });
    expect(bare.status).toBe(415);
    expect(await count(plain, "seeds")).toBe(seedsBefore);
  });

  test("a multipart body over 1 MiB is refused at once with 415, not read; JSON over 1 MiB stays 413", async () => {
    const { base, acct } = plain;
    const big = new FormData();
    big.set("content", "x".repeat(3 * 1024 * 1024));
    const multipart = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers: { authorization: `Bearer ${acct.key}` }, body: big });
    // Content-Length is over the cap, so the pipeline's size check (413) may answer before the parser (415): either
    // way it is refused without the body being parsed.
    expect([413, 415]).toContain(multipart.status);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`title=${"y".repeat(2 * 1024 * 1024)}`));
        controller.close();
      },
    });
    const chunked = await fetch(`${base}/api/v1/seeds`, {
      method: "POST",
      headers: { authorization: `Bearer ${acct.key}`, "content-type": "application/x-www-form-urlencoded" },
      body: stream,
    });
    expect(chunked.status).toBe(415);
    const json = await fetch(`${base}/api/v1/seeds`, {
      method: "POST",
      headers: { authorization: `Bearer ${acct.key}`, "content-type": "application/json" },
      body: JSON.stringify({ title: "t", content: "z".repeat(1024 * 1024 + 10) }),
    });
    expect(json.status).toBe(413);
  });

  test("JSON with charset and +json types is accepted; body-less POST and DELETE still work", async () => {
    const { base, acct } = plain;
    const headers = (type: string) => ({ authorization: `Bearer ${acct.key}`, "content-type": type });
    const charset = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers: headers("application/json; charset=utf-8"), body: JSON.stringify({ title: "A", content: "charset" }) });
    expect(charset.status).toBe(201);
    const id = ((await charset.json()) as { id: string }).id;
    const merge = await fetch(`${base}/api/v1/seeds/${id}`, { method: "PATCH", headers: headers("Application/Merge-Patch+JSON"), body: JSON.stringify({ title: "B" }) });
    expect(merge.status).toBe(200);
    const link = await fetch(`${base}/api/v1/assets/upload-link`, { method: "POST", headers: { authorization: `Bearer ${acct.key}` } });
    expect(link.status).toBe(201);
    const del = await fetch(`${base}/api/v1/seeds/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${acct.key}`, "content-type": "text/plain" } });
    expect(del.status).toBe(200);
  });

  test("the credential comes first: no key and a multipart body is the one 401", async () => {
    const res = await fetch(`${plain.base}/api/v1/seeds`, { method: "POST", body: new URLSearchParams({ a: "b" }) });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('{"error":"Invalid API key"}');
  });
});

describe("CORS", () => {
  const preflight = (s: Served, path: string, origin: string) =>
    fetch(`${s.base}${path}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, idempotency-key" },
    });

  test("without CORS_ORIGINS: no CORS header on a preflight nor on an answer", async () => {
    const pre = await preflight(plain, "/api/v1/seeds", APP_ORIGIN);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-methods")).toBeNull();
    const res = await fetch(`${plain.base}/api/v1/health`, { headers: { origin: APP_ORIGIN, authorization: `Bearer ${plain.acct.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("with CORS_ORIGINS: the preflight of an allowed origin is 204 without a key, naming what a client sends", async () => {
    for (const path of ["/api/v1/seeds", `/api/v1/schedule/${SAMPLE_ID}`, "/api/v1/webhooks", "/openapi.json"]) {
      const pre = await preflight(withCors, path, APP_ORIGIN);
      expect({ path, status: pre.status }).toEqual({ path, status: 204 });
      expect(pre.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
      expect(pre.headers.get("access-control-allow-methods")).toContain("PATCH");
      const allowedHeaders = pre.headers.get("access-control-allow-headers")!.toLowerCase();
      for (const h of ["authorization", "content-type", "idempotency-key"]) expect(allowedHeaders).toContain(h);
      expect(pre.headers.get("vary")).toContain("Origin");
      expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
    }
    const local = await preflight(withCors, "/api/v1/seeds", "http://localhost:5173");
    expect(local.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
  });

  test("another origin gets no CORS header (preflight or answer); the real request still needs its key", async () => {
    const pre = await preflight(withCors, "/api/v1/seeds", "https://evil.example");
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const res = await fetch(`${withCors.base}/api/v1/health`, { headers: { origin: "https://evil.example", authorization: `Bearer ${withCors.acct.key}` } });
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    const noKey = await fetch(`${withCors.base}/api/v1/seeds`, { method: "POST", headers: { origin: APP_ORIGIN, "content-type": "application/json" }, body: "{}" });
    expect(noKey.status).toBe(401);
    expect(await noKey.text()).toBe('{"error":"Invalid API key"}');
    // The 401 is readable by the allowed browser client.
    expect(noKey.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
  });

  test("answers to an allowed origin carry the CORS headers: success, error and the served document", async () => {
    const headers = { origin: APP_ORIGIN, authorization: `Bearer ${withCors.acct.key}` };
    const ok = await fetch(`${withCors.base}/api/v1/health`, { headers });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(ok.headers.get("access-control-expose-headers")).toContain("Retry-After");
    const missing = await fetch(`${withCors.base}/api/v1/seeds/${SAMPLE_ID}`, { headers });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    const doc = await fetch(`${withCors.base}/openapi.json`, { headers: { origin: APP_ORIGIN } });
    expect(doc.status).toBe(200);
    expect(doc.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    // Pages are not the API's: no CORS there.
    const page = await fetch(`${withCors.base}/livez`, { headers: { origin: APP_ORIGIN } });
    expect(page.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("CORS_ORIGINS is validated at start, naming the variable", () => {
    expect(loadConfig({ CORS_ORIGINS: "https://a.example, http://localhost:3000/" }).corsOrigins).toEqual(new Set(["https://a.example", "http://localhost:3000"]));
    expect(loadConfig({ CORS_ORIGINS: "*" }).corsOrigins).toEqual(new Set(["*"]));
    expect(loadConfig({}).corsOrigins.size).toBe(0);
    for (const bad of ["app.example.com", "https://a.example/path", "ftp://a.example"]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow("CORS_ORIGINS");
    }
  });
});

describe("405 method_not_allowed with Allow", () => {
  const call = (s: Served, method: string, path: string, key: string | null = s.acct.key, body?: string) =>
    fetch(`${s.base}${path}`, {
      method,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
      body,
    });

  test("a known /api/v1 path with a method it does not serve: the envelope, Allow listing what it serves; nothing written", async () => {
    const seedsBefore = await count(plain, "seeds");
    const cases: [string, string, string][] = [
      ["PUT", `/api/v1/seeds/${SAMPLE_ID}`, "DELETE, GET, HEAD, PATCH"],
      ["POST", `/api/v1/seeds/${SAMPLE_ID}`, "DELETE, GET, HEAD, PATCH"],
      ["DELETE", "/api/v1/seeds", "GET, HEAD, POST"],
      ["PUT", "/api/v1/seeds", "GET, HEAD, POST"],
      ["DELETE", "/api/v1/credits", "GET, HEAD"],
      ["PATCH", "/api/v1/webhooks", "GET, HEAD, POST"],
      ["GET", "/api/v1/assets/upload-link", "DELETE, POST"], // DELETE: the /api/v1/assets/{id} route also matches
      ["POST", "/api/v1/voice", "GET, HEAD, PUT"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(plain, method, path, plain.acct.key, method === "GET" ? undefined : '{"title":"t","content":"c"}');
      const json = (await res.json()) as { error: string; message: string; allowed: string[] };
      expect({ method, path, status: res.status, allow: res.headers.get("allow"), error: json.error }).toEqual({ method, path, status: 405, allow, error: "method_not_allowed" });
      expect(json.message).toBe(`${method} is not served at this path; it serves ${allow}.`);
      expect(json.allowed).toEqual(allow.split(", "));
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
    expect(await count(plain, "seeds")).toBe(seedsBefore);
  });

  test("the credential still comes first under /api/v1; an unknown path stays 404; a served method is unaffected", async () => {
    const anonymous = await call(plain, "PUT", "/api/v1/seeds", null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("allow")).toBeNull();
    expect((await call(plain, "PUT", "/api/v1/no-such-thing")).status).toBe(404);
    expect((await call(plain, "GET", "/api/v1/credits")).status).toBe(200);
    expect((await call(plain, "HEAD", "/api/v1/credits")).status).toBe(200);
  });

  test("public paths too, in plain text: POST /livez, DELETE /media/{file}, PUT /mcp", async () => {
    const cases: [string, string, string][] = [
      ["POST", "/livez", "GET, HEAD"],
      ["DELETE", `/media/${SAMPLE_ID}.png`, "GET, HEAD"],
      ["PUT", "/mcp", "DELETE, GET, HEAD, POST"],
      ["PATCH", "/openapi.json", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(plain, method, path, null);
      expect({ method, path, status: res.status, allow: res.headers.get("allow"), body: await res.text() }).toEqual({ method, path, status: 405, allow, body: "Method not allowed" });
    }
    expect((await call(plain, "DELETE", "/no-such-page", null)).status).toBe(404);
  });
});

describe("Location on 201", () => {
  test("each created resource names its own URL; following it finds the resource; an Idempotency-Key replay carries it too", async () => {
    const { base, acct } = plain;
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, { method: "POST", headers: { authorization: `Bearer ${acct.key}`, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${acct.key}` } });

    const seed = await post("/api/v1/seeds", { title: "Located", content: "Where am I?" }, { "idempotency-key": "locate-me" });
    expect(seed.status).toBe(201);
    const seedBody = (await seed.json()) as { id: string };
    expect(seed.headers.get("location")).toBe(`/api/v1/seeds/${seedBody.id}`);
    const found = await get(seed.headers.get("location")!);
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual(seedBody);
    const replay = await post("/api/v1/seeds", { title: "Located", content: "Where am I?" }, { "idempotency-key": "locate-me" });
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.headers.get("location")]).toEqual([201, "true", `/api/v1/seeds/${seedBody.id}`]);

    const link = await post("/api/v1/assets/upload-link", {});
    const linkBody = (await link.json()) as { id: string };
    expect(link.headers.get("location")).toBe(`/api/v1/assets/upload-links/${linkBody.id}`);
    expect(((await (await get(link.headers.get("location")!)).json()) as { status: string }).status).toBe("valid");

    // A refusal is not a 201 and names nothing.
    expect((await post("/api/v1/seeds", { title: "" })).headers.get("location")).toBeNull();
  });
});

describe("RateLimit-Policy and RateLimit (IETF fields) on every /api/v1 answer to a valid key", () => {
  /** `"key";r=4;t=12` → {r, t}. */
  const parse = (value: string | null) => {
    const m = /^"key";r=(\d+);t=(\d+)$/.exec(value ?? "");
    if (!m) throw new Error(`not a RateLimit field: ${value}`);
    return { r: Number(m[1]), t: Number(m[2]) };
  };

  test("the quota counts down per key, the 429 says r=0 with its wait, refusals before the take leave it, and it refills", async () => {
    const { base, world } = limited;
    const a = await world.createAccount();
    const call = (path: string, key: string | null = a.key, method = "GET") =>
      fetch(`${base}${path}`, { method, headers: key ? { authorization: `Bearer ${key}` } : {} });
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call("/api/v1/credits");
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-policy")).toBe('"key";q=5;w=60');
      remaining.push(parse(res.headers.get("ratelimit")).r);
    }
    expect(remaining).toEqual([4, 3, 2]);
    // A 403 is refused before the take: it reports the bucket and spends nothing.
    const reader = await a.mint(["read"]);
    const other = await call("/api/v1/voice", reader.key, "PUT");
    expect(other.status).toBe(403);
    expect(parse(other.headers.get("ratelimit")).r).toBe(5); // another key, its own bucket
    const forbidden = await fetch(`${base}/api/v1/voice`, { method: "PUT", headers: { authorization: `Bearer ${reader.key}`, "content-type": "application/json" }, body: "{}" });
    expect(forbidden.status).toBe(403);
    expect(parse(forbidden.headers.get("ratelimit")).r).toBe(5);
    // An unknown route and a 405 are answers to the key too.
    const missing = await call("/api/v1/nothing-here");
    expect([missing.status, parse(missing.headers.get("ratelimit")).r]).toEqual([404, 1]);
    const notAllowed = await call("/api/v1/credits", a.key, "DELETE");
    expect([notAllowed.status, parse(notAllowed.headers.get("ratelimit")).r]).toEqual([405, 0]);
    const refused = await call("/api/v1/credits");
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("retry-after"));
    const field = parse(refused.headers.get("ratelimit"));
    expect(field.r).toBe(0);
    expect(wait).toBeGreaterThan(0);
    expect(field.t).toBeGreaterThanOrEqual(wait);
    expect(refused.headers.get("ratelimit-policy")).toBe('"key";q=5;w=60');
    // No key, no bucket: the 401 carries neither field.
    const anonymous = await call("/api/v1/credits", null);
    expect([anonymous.status, anonymous.headers.get("ratelimit"), anonymous.headers.get("ratelimit-policy")]).toEqual([401, null, null]);
    // A minute later the bucket is full again: 4 left after one more request, and t counts the one spent.
    world.clock.advance(60_000);
    const again = await call("/api/v1/credits");
    expect(again.status).toBe(200);
    expect(parse(again.headers.get("ratelimit"))).toEqual({ r: 4, t: 12 });
  });

  test("pages outside /api/v1 carry no RateLimit field", async () => {
    const res = await fetch(`${limited.base}/livez`);
    expect(res.headers.get("ratelimit")).toBeNull();
  });
});
