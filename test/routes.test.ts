/**
 * Route inventory over app.routes: every /api/v1 route declares its group (enforced and documented), every other route
 * is on the explicit public list below. Adding a route without doing one of the two fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CSV_BODY_ROUTES, parseCsvBody } from "../src/http/csv-body";
import { parseJsonBody } from "../src/http/json-body";
import { declaredGroup } from "../src/http/route-table";
import { SCOPES, type Scope } from "../src/auth/scopes";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

/** Routes that need no key, by exact path or by prefix (ending in "/"). Each is a page, a probe or a public file. */
const PUBLIC_ROUTES = [
  "/livez",
  "/readyz",
  "/metrics",
  "/openapi.json",
  "/docs",
  "/docs/",
  "/media/",
  "/upload/",
  "/c/",
  "/",
  "/setup",
  "/login",
  "/logout",
  // Teammates (decisions.md §15): the link's token is the credential.
  "/forgot-password",
  "/reset/",
  "/invite/",
  "/dashboard",
  "/dashboard/",
  // The OAuth authorization server (decisions.md §9): discovery, registration, authorize, token, revoke.
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/mcp",
  "/.well-known/oauth-authorization-server",
  "/oauth/",
  // The MCP endpoint: outside the API key pipeline, it checks OAuth access tokens itself (test/mcp-security.test.ts).
  "/mcp",
];

function isPublic(path: string): boolean {
  return PUBLIC_ROUTES.some((p) => (p.endsWith("/") && p !== "/" ? path.startsWith(p) : path === p));
}

const SAMPLE_ID = "00000000-0000-7000-8000-000000000000";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

// The shared auth matrix over every /api/v1 route the app has, so a route added later is covered without anyone
// remembering to list it (module tests also run it with realistic bodies).
const inventory = await createWorld();
describeAuthMatrix(
  "every /api/v1 route",
  () => inventory,
  inventory.app.routes
    .filter((r) => r.path.startsWith("/api/v1") && r.method !== "ALL")
    .map((r) => ({ method: r.method, path: r.path.replace(/:[A-Za-z_]+/g, SAMPLE_ID), validBody: {} })),
);
afterAll(() => inventory.close());

describe("route inventory", () => {
  test("every /api/v1 route declares a group; every other route is public by name", () => {
    const routes = world.app.routes;
    expect(routes.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const route of routes) {
      const group = declaredGroup(route);
      if (route.path.startsWith("/api/v1")) {
        if (!group || !([...SCOPES, "authenticated"] as string[]).includes(group)) problems.push(`${route.method} ${route.path}: no group`);
      } else if (!isPublic(route.path)) {
        problems.push(`${route.method} ${route.path}: not on the public list`);
      } else if (group) {
        problems.push(`${route.method} ${route.path}: public route declares a group`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("OpenAPI documents every /api/v1 operation with its group", async () => {
    const spec = (await world.call("GET", "/openapi.json")).json;
    const missing: string[] = [];
    for (const route of world.app.routes.filter((r) => r.path.startsWith("/api/v1"))) {
      const docPath = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      const op = spec.paths?.[docPath]?.[route.method.toLowerCase()];
      if (!op || op["x-seedcast-group"] !== declaredGroup(route)) missing.push(`${route.method} ${route.path}`);
      const body = (route.hooks as { body?: unknown } | undefined)?.body;
      if (body && !op?.requestBody?.content?.["application/json"]?.schema) missing.push(`${route.method} ${route.path}: body schema`);
    }
    expect(missing).toEqual([]);
  });

  test("a key lacking a route's group gets 403 forbidden naming it, before validation", async () => {
    const acct = await world.createAccount();
    const results: string[] = [];
    for (const route of world.app.routes.filter((r) => r.path.startsWith("/api/v1"))) {
      const group = declaredGroup(route);
      if (!group || group === "authenticated") continue;
      const others = SCOPES.filter((s) => s !== group) as Scope[];
      const key = (await acct.mint(others)).key;
      const path = route.path.replace(/:[A-Za-z_]+/g, SAMPLE_ID);
      const res = await world.call(route.method, path, {
        key,
        rawBody: route.method === "GET" || route.method === "HEAD" ? undefined : "{not json",
        headers: { "content-type": "application/json" },
      });
      if (res.status !== 403 || res.json?.error !== "forbidden" || res.json?.requiredGroup !== group) {
        results.push(`${route.method} ${route.path}: ${res.status} ${res.text.slice(0, 120)}`);
      }
    }
    expect(results).toEqual([]);
  });

  test("every /api/v1 route that can take a body parses it with parseJsonBody (the CSV import with parseCsvBody); no GET route has a parser", () => {
    const problems: string[] = [];
    for (const route of world.app.routes) {
      const hooks = (route.hooks as { parse?: unknown } | undefined)?.parse;
      const parsers = (Array.isArray(hooks) ? hooks : hooks ? [hooks] : []).map((h: { fn?: unknown }) => h.fn ?? h);
      if (route.path.startsWith("/api/v1") && ["POST", "PUT", "PATCH", "DELETE"].includes(route.method)) {
        const parser = CSV_BODY_ROUTES.has(`${route.method} ${route.path}`) ? parseCsvBody : parseJsonBody;
        if (!parsers.includes(parser)) problems.push(`${route.method} ${route.path}: no ${parser.name}`);
      }
      // A parse hook makes Elysia compile the route into an async handler, a GET included.
      if (route.method === "GET" && parsers.length > 0) problems.push(`${route.method} ${route.path}: has a parser`);
    }
    expect(problems).toEqual([]);
  });

  // The key's first request looks it up in the database (a promise); from then on a SQLite store answers it from the
  // cache synchronously. PostgreSQL's auth watch is a query, so every request awaits there.
  test.skipIf(TEST_DIALECT !== "sqlite")("the health echo is answered without a promise (no hook makes it asynchronous)", async () => {
    const acct = await world.createAccount();
    const request = () => world.app.handle(new Request("http://localhost/api/v1/health", { headers: { authorization: `Bearer ${acct.key}` } }));
    expect((await request()).status).toBe(200);
    const answer = request();
    expect(answer).toBeInstanceOf(Response);
    expect((answer as Response).status).toBe(200);
  });
});
