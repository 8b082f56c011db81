/**
 * Fuzz every route of app.routes with generated and mutated requests (bodies, queries, headers, path ids, content
 * types, huge and malformed JSON): never a 5xx, every /api/v1 refusal in the error envelope with a code whose status
 * matches, and nothing written by a refused request (a digest of every table before and after).
 * FUZZ_RUNS raises the number of requests per route (default 25; the seed is fixed so a failure replays).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import fc from "fast-check";
import sharp from "sharp";
import { getTableName } from "drizzle-orm";
import { allTables } from "../src/db/tables";
import { ERROR_STATUS } from "../src/lib/errors";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { INVALID_KEY_BODY } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);

let world: World;
let acct: TestAccount;
const realIds: string[] = [];

beforeAll(async () => {
  world = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: "100000000" } });
  acct = await world.createAccount({ credits: 1000 });
  const seed = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: "Launch day", content: "We ship the new planner today. It is fast." } });
  realIds.push(seed.json.id);
  const bytes = new Uint8Array(await sharp({ create: { width: 32, height: 32, channels: 3, background: "#3366aa" } }).png().toBuffer());
  realIds.push((await ingestImageBytes(world.deps, acct.accountId, { bytes, fileName: "fuzz" })).id);
  const creation = await world.call("POST", "/api/v1/creations/generate", { key: acct.key, body: { type: "social_post", seed_id: seed.json.id } });
  if (creation.json?.creation?.id) realIds.push(creation.json.creation.id);
  const link = await world.call("POST", "/api/v1/assets/upload-link", { key: acct.key });
  if (link.json?.id) realIds.push(link.json.id);
});
afterAll(() => world.close());

/**
 * A digest of every table's rows (api_keys without last_used_at, which reads may touch). idempotency_keys is left out:
 * decisions.md §1 has a refused POST's answer replayed for its Idempotency-Key, so recording that answer is the
 * contract, not a write of user data; so is rate_limit_buckets (a request's rate-limit token, PostgreSQL mode).
 * Tables come from the drizzle schema (either database); rows are compared in a stable order of their JSON.
 */
const DIGEST_SKIPS = new Set(["idempotency_keys", "rate_limit_buckets"]);
async function digest(): Promise<string> {
  const tables = Object.values(allTables())
    .map((t) => getTableName(t))
    .filter((name) => !DIGEST_SKIPS.has(name))
    .sort();
  const hash = createHash("sha256");
  for (const table of tables) {
    const rows = (await world.sql<Record<string, unknown>>(`SELECT * FROM "${table}"`)).map((row) => {
      if (table === "api_keys") row.last_used_at = null;
      return JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v));
    });
    for (const row of rows.sort()) hash.update(row);
    hash.update(`|${table}:${rows.length}|`);
  }
  return hash.digest("hex");
}

const FIELD_NAMES = [
  "type", "seed_id", "creation_id", "image_asset_id", "include_visual", "aspect_ratio", "media_style", "parts",
  "change_instructions", "scheduled_time", "targets", "title", "content", "category", "image_url", "url", "label",
  "tone", "audience", "language", "emoji", "hashtags", "bannedWords", "signature", "limit", "cursor", "search",
];

/** Finding 8 (issue 14): control characters (NUL first of all) at the start, middle and end of otherwise valid text. */
function controlString(): fc.Arbitrary<string> {
  const control = fc.constantFrom("\u0000", "\u0001", "\u0008", "\u000b", "\u001b", "\u001f", "\u007f", "\u0085", "\u2028", "\ufeff", "\ud800", "\r\n");
  return fc
    .tuple(control, fc.constantFrom("Launch day", "x", "We ship today.", "2026-11-22T10:00:00.000Z", "square", "social_post"), fc.integer({ min: 0, max: 2 }))
    .map(([c, text, where]) => (where === 0 ? c + text : where === 1 ? text.slice(0, 2) + c + text.slice(2) : text + c));
}

const weirdString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("", " ", "null", "social_post", "square", "both", "https://127.0.0.1/x.png", "http://[::1]/", "2026-11-22T10:00:00.000Z", "\u0000", "💥".repeat(50), "a".repeat(5000), "' OR 1=1 --", "\"quoted\" AND launch*", "NEAR(", "../../etc/passwd"),
  fc.uuid(),
  controlString(),
);
const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  weirdString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(weirdString, { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), weirdString, { maxKeys: 3 }),
);
const mutatedObject = fc.dictionary(fc.constantFrom(...FIELD_NAMES), weirdValue, { maxKeys: 8 });

const bodyArb = fc.oneof(
  { weight: 5, arbitrary: mutatedObject.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.constantFrom("{", "[1,2", '{"a":}', "\u0000\u0001", "null", "true", "", "{}".repeat(10)) },
  { weight: 1, arbitrary: fc.constant(`{"content":"${"x".repeat(1_100_000)}"}`) },
);
const contentTypeArb = fc.constantFrom(
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=----fuzz",
  "application/octet-stream",
  null,
);
const idArb = () => fc.oneof(fc.uuid(), fc.constantFrom(...realIds), weirdString.filter((s) => s.length > 0));
const queryArb = fc.dictionary(
  fc.oneof(fc.constantFrom("limit", "cursor", "search", "status", "from", "to", "seed_id", "type"), fc.string({ maxLength: 6 })),
  weirdString,
  { maxKeys: 4 },
);

interface FuzzRequest {
  path: string;
  query: Record<string, string>;
  body: string;
  contentType: string | null;
  idempotencyKey: string | null;
}

function requestArb(routePath: string): fc.Arbitrary<FuzzRequest> {
  const params = routePath.match(/:[A-Za-z_]+/g) ?? [];
  return fc.record({
    path: fc.tuple(...params.map(() => idArb())).map((ids) => {
      let p = routePath;
      for (const id of ids as string[]) p = p.replace(/:[A-Za-z_]+/, encodeURIComponent(id));
      return p.replace(/\*$/, "fuzz");
    }),
    query: queryArb,
    body: bodyArb,
    contentType: contentTypeArb,
    idempotencyKey: fc.option(fc.string({ minLength: 1, maxLength: 300 }), { freq: 4 }),
  });
}

function checkAnswer(path: string, status: number, text: string): string | null {
  if (status >= 500) return `5xx ${status}: ${text.slice(0, 200)}`;
  if (!path.startsWith("/api/v1") || status < 400) return null;
  if (status === 401) return text === INVALID_KEY_BODY ? null : `401 body ${text.slice(0, 100)}`;
  let body: { error?: unknown; message?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    return `non-JSON ${status}: ${text.slice(0, 100)}`;
  }
  if (typeof body.error !== "string" || typeof body.message !== "string") return `no envelope ${status}: ${text.slice(0, 200)}`;
  const expected = (ERROR_STATUS as Record<string, number>)[body.error];
  if (expected !== status) return `code ${body.error} with status ${status}`;
  return null;
}

/** A signed-in dashboard session for `email` over app.handle: its cookie and the CSRF token of its pages. */
async function dashboardSession(email: string, password: string): Promise<{ cookie: string; csrf: string }> {
  const jar = new Map<string, string>();
  const take = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, ...rest] = (pair ?? "").split("=");
      if (name) jar.set(name.trim(), rest.join("=").trim());
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const login = await world.app.handle(new Request("http://localhost/login"));
  take(login);
  const token = /name="_csrf" value="([^"]+)"/.exec(await login.text())?.[1] ?? "";
  const signed = await world.app.handle(
    new Request("http://localhost/login", {
      method: "POST",
      headers: { cookie: cookie(), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: token, email, password }),
    }),
  );
  take(signed);
  const page = await world.app.handle(new Request("http://localhost/dashboard", { headers: { cookie: cookie() } }));
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  if (page.status !== 200 || !csrf) throw new Error(`could not sign in to the dashboard (${page.status})`);
  return { cookie: cookie(), csrf };
}

/** Query parameters the dashboard pages read, with the values that broke them (finding 8) among generated ones. */
const dashboardQueryArb = fc.dictionary(
  fc.constantFrom("view", "date", "status", "cursor", "next", "notice", "expired", "out", "id"),
  fc.oneof(
    weirdString,
    fc.constantFrom("+275760-09-13", "-271821-04-19", "+275760-09-14", "9999-12-31", "0000-01-01", "2026-02-30", "2026-13-01", "day", "week", "1e400", "NaN"),
  ),
  { maxKeys: 4 },
);

/** Form fields any dashboard form reads, each with generated and control-character values. */
const DASHBOARD_FIELDS = [
  "name", "ownerName", "email", "password", "confirm", "role", "groups", "expires", "amount", "note", "accountId", "platform",
  "url", "secret", "label", "instance", "token", "handle", "appPassword", "service", "tone", "audience", "language", "emoji",
  "hashtags", "bannedWords", "signature", "next",
];
const dashboardFormArb = fc.dictionary(fc.constantFrom(...DASHBOARD_FIELDS), fc.oneof(weirdString, controlString()), { maxKeys: 8 });

describe("finding 8: the dashboard's query parameters and control characters in every text field", () => {
  let session: { cookie: string; csrf: string };
  beforeAll(async () => {
    await createAccount(world.deps, { name: "Fuzz dash", email: "fuzz@dash.test", password: "correct horse battery", credits: 10 });
    session = await dashboardSession("fuzz@dash.test", "correct horse battery");
  });

  test("the two answers the probe saw as 500 are clear 400s", async () => {
    const cal = await world.app.handle(new Request("http://localhost/dashboard/calendar?date=%2B275760-09-13", { headers: { cookie: session.cookie } }));
    expect(cal.status).toBe(400);
    expect(await cal.text()).toContain("YYYY-MM-DD");
    const nul = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: "\u0000Launch", content: "We ship today." } });
    expect(nul.status).toBe(400);
    expect(nul.json.error).toBe("invalid_request");
  });

  test("control characters in every text field of otherwise valid API bodies: a 2xx or a clear 400, never a 5xx, nothing written on refusal", async () => {
    const seed = await world.call("POST", "/api/v1/seeds", { key: acct.key, body: { title: "Base", content: "Base seed." } });
    const gen = await world.call("POST", "/api/v1/creations/generate", { key: acct.key, body: { type: "social_post", seed_id: seed.json.id } });
    const valid: { method: string; path: string; body: Record<string, unknown> }[] = [
      { method: "POST", path: "/api/v1/seeds", body: { title: "Launch day", content: "We ship today.", category: "news" } },
      { method: "PATCH", path: `/api/v1/seeds/${seed.json.id}`, body: { title: "Launch day", content: "We ship today.", category: "news" } },
      {
        method: "PUT",
        path: "/api/v1/voice",
        body: { tone: "friendly", audience: "makers", language: "en", emoji: "some", hashtags: ["launch"], bannedWords: ["cheap"], signature: "— the team" },
      },
      { method: "POST", path: "/api/v1/creations/regenerate", body: { creation_id: gen.json.creation.id, parts: "caption", change_instructions: "shorter" } },
      { method: "POST", path: "/api/v1/assets/ingest-url", body: { url: "https://example.test/a.png" } },
    ];
    const controls = ["\u0000", "\u0001", "\u001b", "\u007f", "\u0085", "\u2028", "\ud800", "\ufeff"];
    const problems: string[] = [];
    for (const { method, path, body } of valid) {
      for (const [field, value] of Object.entries(body)) {
        for (const c of controls) {
          for (const variant of [`${c}x`, `x${c}x`, `x${c}`]) {
            const mutated = { ...body, [field]: Array.isArray(value) ? [variant] : typeof value === "string" ? variant : value };
            const before = await digest();
            const res = await world.call(method, path, { key: acct.key, body: mutated });
            const problem = checkAnswer(path, res.status, res.text);
            if (problem) problems.push(`${method} ${path} ${field}=${JSON.stringify(variant)} → ${problem}`);
            if (res.status >= 400 && (await digest()) !== before) problems.push(`${method} ${path} ${field} → ${res.status} wrote`);
            if (c === "\u0000" && res.status !== 400) problems.push(`${method} ${path} ${field} with NUL → ${res.status}`);
          }
        }
      }
    }
    expect(problems.slice(0, 30)).toEqual([]);
  });

  test("every dashboard GET with every edge value of every query parameter: never a 5xx", async () => {
    const edges = ["+275760-09-13", "-271821-04-19", "275760-09-13", "9999-12-31", "0000-01-01", "1969-12-31", "2026-02-30", "2026-13-01", "\u0000", "%", "a".repeat(3000), "day", "week", "failed", "1", "//evil.test", "/dashboard//x"];
    const names = ["view", "date", "status", "cursor", "next", "notice", "expired", "out"];
    const problems: string[] = [];
    const gets = world.app.routes.filter((r) => r.method === "GET" && (r.path.startsWith("/dashboard") || ["/login", "/setup", "/"].includes(r.path)));
    for (const route of gets) {
      const path = route.path.replace(/:[A-Za-z_]+/g, realIds[0] ?? "x").replace(/\*$/, "fuzz");
      for (const name of names) {
        for (const value of edges) {
          const res = await world.app.handle(
            new Request(`http://localhost${path}?${new URLSearchParams({ [name]: value, view: name === "view" ? value : "day" })}`, { headers: { cookie: session.cookie } }),
          );
          await res.arrayBuffer();
          if (res.status >= 500) problems.push(`GET ${path}?${name}=${value.slice(0, 20)} → ${res.status}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test("every dashboard GET with generated query parameters, every POST with generated fields: never a 5xx", async () => {
    const problems: string[] = [];
    let requests = 0;
    const routes = world.app.routes.filter((r) => (r.path.startsWith("/dashboard") || ["/login", "/setup", "/"].includes(r.path)) && (r.method === "GET" || r.method === "POST"));
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      if (route.path === "/logout") continue; // would end the session the rest of the run needs
      await fc.assert(
        fc.asyncProperty(requestArb(route.path), dashboardQueryArb, dashboardFormArb, async (req, query, form) => {
          const qs = new URLSearchParams(query).toString();
          const headers: Record<string, string> = { cookie: session.cookie };
          let body: string | undefined;
          if (route.method === "POST") {
            headers["content-type"] = "application/x-www-form-urlencoded";
            body = new URLSearchParams({ ...form, _csrf: session.csrf }).toString();
          }
          const res = await world.app.handle(new Request(`http://localhost${req.path}${qs ? `?${qs}` : ""}`, { method: route.method, headers, body }));
          const text = await res.text();
          requests += 1;
          if (res.status >= 500) problems.push(`${route.method} ${req.path}?${qs} → ${res.status}: ${text.slice(0, 120)}`);
          return res.status < 500;
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      ).catch(() => {});
    }
    expect(requests).toBeGreaterThan(routes.length);
    expect([...new Set(problems)].slice(0, 30)).toEqual([]);
  });
});

describe("fuzz every route", () => {
  test("app.routes is what gets fuzzed", () => {
    expect(world.app.routes.length).toBeGreaterThan(20);
  });

  test("every route: no 5xx, envelope on refusal, nothing written on refusal", async () => {
    const problems: string[] = [];
    let requests = 0;
    const routes = world.app.routes.filter((r) => r.method !== "ALL");
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(requestArb(route.path), async (req) => {
          const before = await digest();
          const headers: Record<string, string> = { authorization: `Bearer ${acct.key}` };
          if (req.contentType) headers["content-type"] = req.contentType;
          if (req.idempotencyKey) headers["idempotency-key"] = req.idempotencyKey;
          const qs = new URLSearchParams(req.query).toString();
          const hasBody = route.method !== "GET" && route.method !== "HEAD";
          const res = await world.app.handle(
            new Request(`http://localhost${req.path}${qs ? `?${qs}` : ""}`, { method: route.method, headers, body: hasBody ? req.body : undefined }),
          );
          const text = await res.text();
          requests += 1;
          const problem = checkAnswer(req.path, res.status, text);
          if (problem) problems.push(`${route.method} ${route.path} → ${problem}`);
          if (res.status >= 400 && (await digest()) !== before) problems.push(`${route.method} ${req.path} → ${res.status} wrote to the database`);
          return problem === null;
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      ).catch(() => {});
    }
    expect(requests).toBeGreaterThan(routes.length);
    expect([...new Set(problems)].slice(0, 30)).toEqual([]);
  });

  test("unknown paths, odd methods and huge headers never 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.webPath(),
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
        fc.string({ maxLength: 2000 }),
        async (path, method, headerValue) => {
          const headers: Record<string, string> = { authorization: `Bearer ${acct.key}`, "x-fuzz": headerValue.replace(/[^\x20-\x7e]/g, "") };
          const res = await world.app.handle(new Request(`http://localhost/api/v1${path.startsWith("/") ? path : `/${path}`}`, { method, headers }));
          const text = await res.text();
          expect(checkAnswer("/api/v1", res.status, text)).toBeNull();
        },
      ),
      { numRuns: RUNS * 4, seed: SEED },
    );
  });
});
