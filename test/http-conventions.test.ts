/**
 * Request conventions of decisions.md §10, over real HTTP servers built the way `seedcast serve` builds them (Bun's
 * router + the pipeline): JSON-only request bodies (415 unsupported_media_type, nothing read or written), and CORS
 * with and without CORS_ORIGINS (preflight answered without a key; headers on answers to an allowed origin only).
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

beforeAll(async () => {
  plain = await serve();
  withCors = await serve({ CORS_ORIGINS: `${APP_ORIGIN}, http://localhost:5173` });
});

afterAll(async () => {
  for (const s of [plain, withCors]) {
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
