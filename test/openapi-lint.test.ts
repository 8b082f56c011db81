/**
 * The served OpenAPI document under tools nobody here wrote: `@redocly/cli lint` with its recommended ruleset,
 * 0 errors, and exactly the warnings docs/api.md lists (section "The API description") with their reasons; and
 * Stoplight's Spectral (`@stoplight/spectral-cli`) with its `spectral:oas` ruleset, 0 errors and 0 warnings but the
 * one named below. Both run offline: Redocly's telemetry and update check are off by environment.
 *
 * Also the promises of decisions.md §10 the linter does not know: OpenAPI 3.1 only (no `nullable`), no validator
 * keywords leaked (`error`), named components, integer / uuid / date-time formats, Idempotency-Key on every POST,
 * `servers` from BASE_URL, the public routes with `security: []`, camelCase operation ids, /docs and /docs/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia, t } from "elysia";
import { CONNECTION_PLATFORMS } from "../src/db/schema/connections";
import { scopePlugin } from "../src/http/scope";
import { type Served, serveApp } from "./helpers/openapi-contract";
import { type World, createWorld } from "./helpers/world";

const BASE_URL = "https://posts.seedcast.test";
/**
 * The warnings docs/api.md explains, as `rule pointer`. (operation-4xx-response is gone since every operation documents
 * the server's 431.)
 */
const EXPECTED_WARNINGS = [
  "info-license #/info",
  // POST /schedule/{id}/approve and /reject (decisions.md §14) against GET /schedule/posts/{id} and DELETE /schedule/series/{id}.
  "no-ambiguous-paths #/paths/~1api~1v1~1schedule~1posts~1{id}",
  "no-ambiguous-paths #/paths/~1api~1v1~1schedule~1series~1{id}",
];

let world: World;
let server: Served;
// biome-ignore lint: the document is JSON of any shape.
let doc: any;
let text = "";
let dir = "";

beforeAll(async () => {
  world = await createWorld({ env: { BASE_URL } });
  server = serveApp(world.app);
  text = await (await fetch(`${server.base}/openapi.json`)).text();
  doc = JSON.parse(text);
  dir = mkdtempSync(join(tmpdir(), "seedcast-openapi-"));
});

afterAll(async () => {
  await server.stop();
  await world.close();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint: walks any JSON.
function walk(node: any, visit: (node: any, path: string) => void, path = "#"): void {
  if (node === null || typeof node !== "object") return;
  visit(node, path);
  for (const [key, value] of Object.entries(node)) walk(value, visit, `${path}/${key}`);
}

describe("redocly lint (recommended)", () => {
  test("0 errors; the warnings are exactly the ones docs/api.md explains", async () => {
    const file = join(dir, "openapi.json");
    writeFileSync(file, text);
    const proc = Bun.spawn(["node", "node_modules/@redocly/cli/bin/cli.js", "lint", "--extends=recommended", "--format=json", file], {
      cwd: join(import.meta.dir, ".."),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", CI: "true" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text()];
    await proc.exited;
    let report: { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> };
    try {
      report = JSON.parse(out);
    } catch {
      throw new Error(`redocly printed no JSON report:\n${out}\n${err}`);
    }
    const errors = report.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
    const warnings = report.problems.filter((p) => p.severity === "warn").map((p) => `${p.ruleId} ${p.location[0]?.pointer}`);
    expect(warnings.sort()).toEqual([...EXPECTED_WARNINGS].sort());
    const readme = readFileSync(join(import.meta.dir, "..", "docs", "api.md"), "utf8");
    for (const rule of new Set(EXPECTED_WARNINGS.map((w) => w.split(" ")[0]!))) expect(readme).toContain(`\`${rule}\``);
  });
});

/** Spectral's findings the document keeps, as `rule pointer`: a self-hosted instance has no contact to name. */
const SPECTRAL_EXPECTED = ["info-contact info"];

describe("spectral lint (spectral:oas)", () => {
  test("0 errors; the only warning is info-contact", async () => {
    const file = join(dir, "openapi.json");
    const ruleset = join(dir, ".spectral.yaml");
    writeFileSync(file, text);
    writeFileSync(ruleset, 'extends: ["spectral:oas"]\n');
    const proc = Bun.spawn(["node", "node_modules/@stoplight/spectral-cli/dist/index.js", "lint", "--ruleset", ruleset, "--format", "json", "--quiet", file], {
      cwd: join(import.meta.dir, ".."),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err] = [await new Response(proc.stdout).text(), await new Response(proc.stderr).text()];
    await proc.exited;
    let results: Array<{ code: string; severity: number; path: Array<string | number>; message: string }>;
    try {
      results = JSON.parse(out);
    } catch {
      throw new Error(`spectral printed no JSON report:\n${out}\n${err}`);
    }
    // Severity: 0 error, 1 warning, 2 information, 3 hint.
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code} ${r.path.join("/")}: ${r.message}`);
    expect(errors).toEqual([]);
    expect(results.filter((r) => r.severity <= 1).map((r) => `${r.code} ${r.path.join("/")}`).sort()).toEqual(SPECTRAL_EXPECTED);
  });
});

describe("what decisions.md §10 promises of the document", () => {
  test("OpenAPI 3.1 without `nullable`, without leaked `error` keywords; servers from BASE_URL", () => {
    expect(doc.openapi).toStartWith("3.1");
    expect(doc.servers).toEqual([{ url: BASE_URL, description: expect.any(String) }]);
    const leaks: string[] = [];
    walk(doc, (node, path) => {
      if ("nullable" in node) leaks.push(`${path}: nullable`);
      if ((path.includes("/schema") || path.startsWith("#/components/schemas")) && "type" in node && typeof node.error === "string") leaks.push(`${path}: error`);
    });
    expect(leaks).toEqual([]);
  });

  test("named component schemas, used by the operations", () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of ["Seed", "Creation", "Asset", "Post", "Target", "Error", "InvalidApiKey", "ValidationError", "Forbidden", "InsufficientCredits", "RateLimited", "UpstreamFailure", "Voice", "LedgerEntry"]) {
      expect(names).toContain(name);
    }
    const refs = new Set<string>();
    walk(doc.paths, (node) => {
      if (typeof node.$ref === "string") refs.add(node.$ref.split("/").pop());
    });
    walk(doc.webhooks, (node) => {
      if (typeof node.$ref === "string") refs.add(node.$ref.split("/").pop());
    });
    walk(doc.components.schemas, (node) => {
      if (typeof node.$ref === "string") refs.add(node.$ref.split("/").pop());
    });
    expect(names.filter((n) => !refs.has(n))).toEqual([]);
    expect(doc.paths["/api/v1/seeds/{id}"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Seed" });
  });

  test("integers are integers, ids uuid, timestamps date-time, limit 1–200", () => {
    const s = doc.components.schemas;
    expect(s.Asset.properties.sizeBytes.type).toBe("integer");
    expect(s.CreditSummary.properties.balance.type).toBe("integer");
    expect(s.CreditSummary.properties.reserved.type).toBe("integer");
    expect(s.UploadLink.properties.expiresInSeconds.type).toBe("integer");
    expect(s.LedgerEntry.properties.amount.type).toBe("integer");
    expect(s.ChargedCreation.properties.creditsCharged.type).toBe("integer");
    for (const name of ["Seed", "Creation", "Asset", "Post", "LedgerEntry", "UploadLink"]) {
      expect(s[name].properties.id).toEqual({ type: "string", format: "uuid" });
      expect(s[name].properties.createdAt ?? s[name].properties.expiresAt).toEqual({ type: "string", format: "date-time" });
    }
    const notString: string[] = [];
    walk(doc, (node, path) => {
      if (Array.isArray(node.anyOf) && node.anyOf.some((b: { type?: string; format?: string }) => b.type === "string" && ["integer", "numeric"].includes(b.format ?? ""))) {
        notString.push(path);
      }
    });
    expect(notString).toEqual([]);
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: unknown }> }>>)) {
      for (const op of Object.values(item)) {
        const limit = op.parameters?.find((p) => p.name === "limit" && p.in === "query");
        if (limit) expect({ path, schema: limit.schema }).toEqual({ path, schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } });
      }
    }
    // The seed body schema says what it accepts, so a validator cannot skip it.
    const seedBody = doc.paths["/api/v1/seeds"].post.requestBody.content["application/json"].schema;
    expect(seedBody.properties.category).toEqual({ type: ["string", "null"], maxLength: 100 });
  });

  test("every POST declares Idempotency-Key; every operation has a camelCase id and a security requirement", () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
      for (const [method, op] of Object.entries(item)) {
        expect(op.operationId).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
        ids.add(op.operationId as string);
        expect(Array.isArray(op.security)).toBe(true);
        if (method === "post" && path.startsWith("/api/v1")) {
          expect((op.parameters as Array<{ name: string; in: string }>).some((p) => p.name === "Idempotency-Key" && p.in === "header")).toBe(true);
        }
        if (path.startsWith("/api/v1")) {
          expect(op.security).toEqual([{ apiKey: [] }]);
          const unauthorized = (op.responses as Record<string, { content: Record<string, { example: unknown }> }>)["401"]!;
          expect(unauthorized.content["application/json"]!.example).toEqual({ error: "Invalid API key" });
        } else if (path === "/mcp") {
          // The MCP endpoint takes Seedcast's own OAuth tokens (decisions.md §9), never a key.
          expect(op.security).toEqual([{ oauth2: [] }]);
          expect(doc.components.securitySchemes.oauth2.flows.authorizationCode.tokenUrl).toBe(`${BASE_URL}/oauth/token`);
        } else expect(op.security).toEqual([]);
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).reduce((n: number, item) => n + Object.keys(item as object).length, 0));
  });

  test("every id path parameter is a uuid; Target.platform is an enum; the 403 example names the operation's group", () => {
    const ids: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string; schema: { format?: string } }> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const p of op.parameters ?? []) {
          if (p.in === "path" && p.name === "id") ids.push(`${method} ${path} ${p.schema.format}`);
        }
      }
    }
    expect(ids.length).toBeGreaterThanOrEqual(13);
    expect(ids.filter((i) => !i.endsWith(" uuid"))).toEqual([]);
    expect(doc.components.schemas.Target.properties.platform.enum).toEqual([...CONNECTION_PLATFORMS]);
    const groups: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
      for (const [method, op] of Object.entries(item)) {
        const forbidden = (op.responses as Record<string, { content: Record<string, { examples: Record<string, { value: { requiredGroup: string } }> }> }>)["403"];
        if (!path.startsWith("/api/v1") || !forbidden) continue;
        const example = forbidden.content["application/json"]!.examples.forbidden!.value;
        groups.push(`${method} ${path}: ${example.requiredGroup === op["x-seedcast-group"]}`);
      }
    }
    expect(groups.length).toBeGreaterThan(20);
    expect(groups.filter((g) => !g.endsWith("true"))).toEqual([]);
  });

  test("413 and 415 only where a body is taken; 431 on every operation; Location on 201s; RateLimit fields on /api/v1 answers", () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: unknown; responses: Record<string, { $ref?: string; headers?: Record<string, unknown> }> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method} ${path}`;
        if (!op.requestBody) expect({ where, statuses: Object.keys(op.responses).filter((s) => s === "413" || s === "415") }).toEqual({ where, statuses: [] });
        expect({ where, ref: op.responses["431"]?.$ref }).toEqual({ where, ref: "#/components/responses/RequestHeaderFieldsTooLarge" });
        if (path.startsWith("/api/v1")) {
          for (const [status, response] of Object.entries(op.responses)) {
            if (status === "401" || status === "431") continue;
            expect({ where, status, headers: Object.keys(response.headers ?? {}).filter((h) => h.startsWith("RateLimit")) }).toEqual({
              where,
              status,
              headers: ["RateLimit-Policy", "RateLimit"],
            });
          }
          if (op.responses["201"]) expect({ where, location: Boolean(op.responses["201"].headers?.Location) }).toEqual({ where, location: true });
        }
      }
    }
    expect(doc.paths["/api/v1/seeds/{id}"].delete.responses["413"]).toBeUndefined();
    expect(doc.paths["/api/v1/seeds/{id}"].patch.responses["413"]).toBeDefined();
    expect(doc.paths["/upload/{token}"].post.responses["201"].headers.Location).toBeDefined();
    expect(doc.paths["/c/{id}"].get.responses["400"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ValidationError" });
    const link = doc.paths["/api/v1/assets/upload-link"].post.requestBody;
    expect(link.required).toBe(false);
    expect(link.content["application/json"].schema.properties.expires_in_seconds).toMatchObject({ type: "integer", minimum: 300, maximum: 604800, default: 900 });
  });

  test("the webhooks section: every event's payload and the two webhook-target payloads, as named components with their headers", () => {
    const names = ["post.published", "post.failed", "post.partially_failed", "post.unconfirmed", "post.cancelled", "post.needs_approval", "post.approved", "post.rejected", "creation.generated", "credits.low", "connection.needs_attention", "target.post.publish", "target.ping"];
    expect(Object.keys(doc.webhooks).sort()).toEqual([...names].sort());
    for (const name of names) {
      const op = doc.webhooks[name].post;
      const schema = op.requestBody.content["application/json"].schema;
      expect(schema.$ref).toMatch(/^#\/components\/schemas\/[A-Z][A-Za-z]+$/);
      const component = doc.components.schemas[schema.$ref.split("/").pop()];
      if (!name.startsWith("target.")) {
        expect(component.properties.type).toEqual({ type: "string", const: name });
        expect(Object.keys(component.properties).sort()).toEqual(["createdAt", "data", "id", "type"]);
      }
      expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature", "X-Seedcast-Signature", "X-Seedcast-Timestamp", "Idempotency-Key"]);
    }
    expect(doc.components.schemas.PostPublishedEvent.properties.data.properties.post).toEqual({ $ref: "#/components/schemas/Post" });
  });

  test("the public routes are documented: upload page GET and POST, media GET and HEAD, preview, probes, metrics", () => {
    expect(Object.keys(doc.paths["/upload/{token}"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/media/{file}"]).sort()).toEqual(["get", "head"]);
    for (const path of ["/c/{id}", "/livez", "/readyz", "/metrics"]) expect(doc.paths[path].get.security).toEqual([]);
  });

  test("/docs and /docs/ both show the reference, pointing at the document", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const res = await fetch(`${server.base}${path}`);
      expect(res.status).toBe(200);
      const page = await res.text();
      // The page starts Swagger UI from a same-origin script (its CSP allows no inline script); that script names the document.
      const scripts = [...page.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1] ?? "");
      expect(scripts.length).toBeGreaterThanOrEqual(2);
      let starter = "";
      for (const script of scripts) {
        const answer = await fetch(new URL(script, `${server.base}${path}`));
        expect(answer.status).toBe(200);
        const text = await answer.text();
        if (text.includes("SwaggerUIBundle(")) starter = text;
      }
      const url = starter.match(/url: "([^"]+)"/)?.[1] ?? "";
      expect(new URL(url, `${server.base}${path}`).pathname).toBe("/openapi.json");
    }
  });
});

describe("a route added later", () => {
  test("is documented by naming its errors: its own 404, and the group's 401 / 403, 400, 429 from its shape", async () => {
    const probe = await createWorld();
    try {
      probe.app.elysia.use(
        new Elysia().use(scopePlugin).get("/api/v1/probes/:id", () => ({ ok: true }), {
          scope: "read",
          errors: ["not_found"],
          params: t.Object({ id: t.String({ maxLength: 10 }) }),
          response: t.Object({ ok: t.Boolean() }, { title: "Probe" }),
          detail: { summary: "A probe", tags: ["health"] },
        }),
      );
      const spec = (await probe.call("GET", "/openapi.json")).json;
      const op = spec.paths["/api/v1/probes/{id}"].get;
      expect(op.operationId).toBe("getProbesById");
      expect(Object.keys(op.responses)).toEqual(["200", "400", "401", "403", "404", "429", "431"]);
      expect(op.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Probe" });
      expect(op.responses["404"].content["application/json"].examples.not_found.value.error).toBe("not_found");
      expect(op.responses["403"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Forbidden" });
      expect(op.responses["429"].headers["Retry-After"]).toBeDefined();
    } finally {
      await probe.close();
    }
  });
});
