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
import { ERROR_STATUS } from "../src/lib/errors";
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
 * contract, not a write of user data.
 */
function digest(): string {
  const sqlite = world.deps.sqlite;
  const tables = sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' AND name != 'idempotency_keys' ORDER BY name")
    .all()
    .map((r) => r.name);
  const hash = createHash("sha256");
  for (const table of tables) {
    const rows = sqlite.query(`SELECT * FROM "${table}" ORDER BY rowid`).all() as Record<string, unknown>[];
    for (const row of rows) {
      if (table === "api_keys") row.last_used_at = null;
      hash.update(JSON.stringify(row, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v)));
    }
    hash.update(`|${table}:${rows.length}|`);
  }
  return hash.digest("hex");
}

const FIELD_NAMES = [
  "type", "seed_id", "creation_id", "image_asset_id", "include_visual", "aspect_ratio", "media_style", "parts",
  "change_instructions", "scheduled_time", "targets", "title", "content", "category", "image_url", "url", "label",
  "tone", "audience", "language", "emoji", "hashtags", "bannedWords", "signature", "limit", "cursor", "search",
];

const weirdString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("", " ", "null", "social_post", "square", "both", "https://127.0.0.1/x.png", "http://[::1]/", "2026-11-22T10:00:00.000Z", "\u0000", "💥".repeat(50), "a".repeat(5000), "' OR 1=1 --", "\"quoted\" AND launch*", "NEAR(", "../../etc/passwd"),
  fc.uuid(),
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
          const before = digest();
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
          if (res.status >= 400 && digest() !== before) problems.push(`${route.method} ${req.path} → ${res.status} wrote to the database`);
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
