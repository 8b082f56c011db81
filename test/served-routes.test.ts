/**
 * The server answers most requests through Bun's native router (each route's own handler, src/http/served-routes.ts)
 * and the rest through `app.handle`, which the other tests call in-process. This file runs a real Bun.serve built the
 * way `seedcast serve` builds it next to one that sends everything through `app.handle`, and checks that they answer
 * alike: same status, content type and body for refusals, validation errors, lookups, odd encodings and pages; and
 * writes, idempotent replays, the 413 of a chunked body, the log line and the metrics label through served routes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { createLogger } from "../src/lib/log";
import { servable } from "../src/http/served-routes";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const SAMPLE_ID = "00000000-0000-7000-8000-000000000000";

let world: World;
let owner: TestAccount;
let reader: string;
let server: Server<undefined>;
let base: string;
/** The server as it was before served routes: everything through app.handle. */
let plain: Server<undefined>;
let plainBase: string;
const lines: string[] = [];

beforeAll(async () => {
  world = await createWorld({ log: createLogger("info", (line) => lines.push(line)) });
  owner = await world.createAccount();
  reader = (await owner.mint(["read"])).key;
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", routes: world.app.servedRoutes(), fetch: (request) => world.app.handle(request) });
  base = `http://127.0.0.1:${server.port}`;
  plain = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => world.app.handle(request) });
  plainBase = `http://127.0.0.1:${plain.port}`;
});
afterAll(async () => {
  await server.stop(true);
  await plain.stop(true);
  await world.close();
});

interface Sent {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Answer {
  status: number;
  type: string | null;
  location: string | null;
  body: string;
}

async function answerOf(response: Response): Promise<Answer> {
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    location: response.headers.get("location"),
    // A page's CSRF token is new on every answer.
    body: (await response.text()).replace(/name="_csrf" value="[^"]*"/g, 'name="_csrf" value="…"'),
  };
}

/** The same request to the server with served routes and to one that sends everything through app.handle. */
async function bothWays(sent: Sent): Promise<{ served: Answer; handled: Answer }> {
  const init = (): RequestInit => ({ method: sent.method, headers: sent.headers, body: sent.body, redirect: "manual" });
  const served = await answerOf(await fetch(`${base}${sent.path}`, init()));
  const handled = await answerOf(await fetch(`${plainBase}${sent.path}`, init()));
  return { served, handled };
}

/** Each request whose two answers differ, described. */
async function differencesOf(sent: readonly Sent[]): Promise<string[]> {
  const differences: string[] = [];
  for (const one of sent) {
    const { served, handled } = await bothWays(one);
    const [a, b] = [JSON.stringify(served), JSON.stringify(handled)];
    if (a !== b) differences.push(`${one.method} ${one.path} ${a.slice(0, 300)} ≠ ${b.slice(0, 300)}`);
  }
  return differences;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const json = (key: string) => ({ ...bearer(key), "content-type": "application/json" });

describe("served routes", () => {
  test("every route Bun's router can find is served by its own handler; HEAD goes to handle", () => {
    const served = world.app.servedRoutes();
    const missing: string[] = [];
    let count = 0;
    for (const route of world.app.routes) {
      if (!servable(route as never)) continue;
      count += 1;
      const methods = served[encodeURI(route.path)] as Record<string, unknown> | undefined;
      if (typeof methods?.[route.method] !== "function") missing.push(`${route.method} ${route.path}`);
      if (route.method === "GET" && methods?.HEAD === undefined) missing.push(`HEAD ${route.path}`);
    }
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(40);
    // Wildcards stay with Elysia's router.
    expect(Object.keys(served).some((path) => path.includes("*"))).toBe(false);
  });

  test("every /api/v1 route: the same refusal both ways without a key, with a read-only key and with a bad body", async () => {
    const differences: string[] = [];
    for (const route of world.app.routes) {
      if (!route.path.startsWith("/api/v1") || !servable(route as never)) continue;
      const path = route.path.replace(/:[A-Za-z_]+/g, SAMPLE_ID);
      const hasBody = route.method !== "GET" && route.method !== "DELETE";
      const cases: Sent[] = [
        { method: route.method, path },
        { method: route.method, path, headers: json(reader), body: hasBody ? "{}" : undefined },
        // A full key with a body that fails validation: refused, nothing written.
        { method: route.method, path, headers: json(owner.key), body: hasBody ? '{"broken": ' : undefined },
      ];
      differences.push(...(await differencesOf(cases)));
    }
    expect(differences).toEqual([]);
  });

  test("lookups, odd encodings, queries, trailing slashes, HEAD, other methods and pages answer alike", async () => {
    const seed = await world.call("POST", "/api/v1/seeds", { key: owner.key, body: { title: "Served", content: "A seed read both ways." } });
    expect(seed.status).toBe(201);
    const id = seed.json.id as string;
    const asReader = (path: string, method = "GET"): Sent => ({ method, path, headers: bearer(reader) });
    const anonymous = (path: string, method = "GET"): Sent => ({ method, path });
    const sent: Sent[] = [
      asReader("/api/v1/health"),
      asReader("/api/v1/health/"),
      asReader("/api/v1/health", "HEAD"),
      asReader("/api/v1/health", "PUT"),
      asReader("//api/v1/health"),
      asReader("/api/v1/%68ealth"),
      asReader("/api/v1/./health"),
      asReader("/API/v1/health"),
      asReader(`/api/v1/seeds/${id}`),
      asReader(`/api/v1/seeds/${id.toUpperCase()}`),
      asReader(`/api/v1/seeds/${id}?x=1`),
      asReader("/api/v1/seeds/not-a-uuid"),
      asReader("/api/v1/seeds/a%20b"),
      asReader("/api/v1/seeds/a%2Fb"),
      asReader("/api/v1/seeds/%E2%82%AC"),
      asReader("/api/v1/seeds?limit=1"),
      asReader("/api/v1/seeds?limit=abc"),
      asReader("/api/v1/seeds?search=served"),
      asReader("/api/v1/credits/ledger?limit=2"),
      asReader("/api/v1/nothing-here"),
      anonymous("/api/v1/nothing-here"),
      anonymous("/livez"),
      anonymous("/readyz"),
      anonymous("/openapi.json"),
      anonymous("/docs"),
      anonymous("/"),
      anonymous("/login"),
      anonymous("/dashboard"),
      anonymous("/dashboard/keys"),
      anonymous("/dashboard/no-such-page"),
      anonymous("/dashboard/static/no-such-file"),
      anonymous(`/c/${SAMPLE_ID}`),
      anonymous(`/media/${SAMPLE_ID}.png`),
      anonymous(`/media/${SAMPLE_ID}.png`, "HEAD"),
      anonymous("/upload/not-a-token"),
      anonymous("/upload/_/icon.svg"),
      anonymous("/no-such-page"),
    ];
    expect(await differencesOf(sent)).toEqual([]);
  });

  test("a write through the served route: parsed, stored, replayed under its Idempotency-Key", async () => {
    const headers = { ...json(owner.key), "idempotency-key": "served-write-1" };
    const body = JSON.stringify({ title: "Over HTTP", content: "Written through Bun's router." });
    const first = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers, body });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; title: string };
    expect(created.title).toBe("Over HTTP");
    const again = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers, body });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { id: string }).id).toBe(created.id);
    const read = await world.call("GET", `/api/v1/seeds/${created.id}`, { key: owner.key });
    expect(read.json.title).toBe("Over HTTP");
    const listed = await world.call("GET", "/api/v1/seeds?search=router", { key: owner.key });
    expect(listed.json.seeds.map((s: { id: string }) => s.id)).toEqual([created.id]);
  });

  test("a chunked JSON body over 1 MiB answers 413 through the served route, nothing written", async () => {
    const before = await world.call("GET", "/api/v1/seeds?limit=100", { key: owner.key });
    const big = new TextEncoder().encode(JSON.stringify({ title: "Big", content: "x".repeat(1024 * 1024) }));
    const stream = new ReadableStream({
      start(controller) {
        for (let at = 0; at < big.length; at += 64 * 1024) controller.enqueue(big.slice(at, at + 64 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${base}/api/v1/seeds`, { method: "POST", headers: json(owner.key), body: stream });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe("payload_too_large");
    const after = await world.call("GET", "/api/v1/seeds?limit=100", { key: owner.key });
    expect(after.json.seeds.length).toBe(before.json.seeds.length);
  });

  test("the log line and the metrics label of a served request name the route and the path", async () => {
    lines.length = 0;
    const res = await fetch(`${base}/api/v1/seeds/${SAMPLE_ID}`, { headers: { ...bearer(reader), "x-request-id": "served-trace" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe("served-trace");
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");
    expect(logged).toEqual([
      expect.objectContaining({ reqId: "served-trace", method: "GET", path: `/api/v1/seeds/${SAMPLE_ID}`, route: "/api/v1/seeds/:id", status: 404 }),
    ]);
    const metrics = await world.deps.metrics.registry.metrics();
    expect(metrics).toMatch(/seedcast_http_requests_total\{method="GET",route="\/api\/v1\/seeds\/:id",status="404"\} [1-9]/);
  });
});

// The shared auth matrix over HTTP through the served routes (it moves the world's clock, so it runs last).
describeAuthMatrix(
  "served routes",
  () => world,
  [
    { method: "GET", path: "/api/v1/health" },
    { method: "GET", path: `/api/v1/seeds/${SAMPLE_ID}` },
    { method: "POST", path: "/api/v1/seeds", validBody: { title: "t", content: "c" } },
    { method: "DELETE", path: `/api/v1/schedule/${SAMPLE_ID}` },
  ],
  (request) => {
    const url = new URL(request.url);
    return fetch(`${base}${url.pathname}${url.search}`, request);
  },
);
