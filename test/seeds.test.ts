/** Seeds (decisions.md §5): CRUD, ownership, validation, refusals that write nothing, and FTS5 search (the search cases are shared with PostgreSQL: seed-search-cases.ts). */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { assets, seeds as seedsTable } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { newId } from "../src/lib/ids";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type SearchBackend, describeSeedSearch } from "./seed-search-cases";

const SEEDS = "/api/v1/seeds";
const RANDOM_ID = "01939a4e-0000-7000-8000-000000000000";

let world: World;
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  world = await createWorld();
  a = await world.createAccount();
  b = await world.createAccount();
});
afterAll(() => world.close());

describeAuthMatrix("seeds", () => world, [
  { method: "POST", path: SEEDS, validBody: { title: "t", content: "c" } },
  { method: "GET", path: SEEDS },
  { method: "GET", path: `${SEEDS}?search=launch` },
  { method: "GET", path: `${SEEDS}/${RANDOM_ID}` },
  { method: "PATCH", path: `${SEEDS}/${RANDOM_ID}`, validBody: { title: "t" } },
  { method: "DELETE", path: `${SEEDS}/${RANDOM_ID}` },
]);

/** An asset row of `accountId` (the assets module's table; inserted directly, the bytes are not needed here). */
async function makeAsset(accountId: string): Promise<string> {
  const id = newId();
  await world.store.write((tx) =>
    tx
      .insert(assets)
      .values({
        id,
        accountId,
        fileName: "a.png",
        mimeType: "image/png",
        ext: "png",
        sizeBytes: 10,
        width: 1,
        height: 1,
        sha256: "0".repeat(64),
        storageKey: `${id}.png`,
        source: "upload",
        createdAt: world.clock.now(),
      })
      .run(),
  );
  return id;
}

async function seedCount(accountId: string): Promise<number> {
  return Number((await world.sql<{ n: number }>("SELECT count(*) AS n FROM seeds WHERE account_id = ?", accountId))[0]?.n);
}

async function create(acct: TestAccount, body: Record<string, unknown>) {
  const res = await world.call("POST", SEEDS, { key: acct.key, body });
  expect(res.status).toBe(201);
  return res.json;
}

describe("create and read", () => {
  test("POST answers 201 with the seed; GET answers it identically", async () => {
    const asset = await makeAsset(a.accountId);
    const res = await world.call("POST", SEEDS, {
      key: a.key,
      body: {
        title: "  Spring launch  ",
        content: "We launch the spring range on Monday.\n\nStored as written.  ",
        category: "announcement",
        image_asset_id: asset,
        image_url: "https://example.com/x.png",
      },
    });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.any(String),
      title: "Spring launch",
      content: "We launch the spring range on Monday.\n\nStored as written.  ",
      category: "announcement",
      image_asset_id: asset,
      image_url: "https://example.com/x.png",
      createdAt: isoAt(world.clock.now()),
      updatedAt: isoAt(world.clock.now()),
    });
    const got = await world.call("GET", `${SEEDS}/${res.json.id}`, { key: a.key });
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);
  });

  test("category, image_asset_id and image_url are optional (null)", async () => {
    const seed = await create(a, { title: "Bare", content: "Just text." });
    expect(seed).toMatchObject({ category: null, image_asset_id: null, image_url: null });
  });

  test("validation: 400 invalid_request naming the field, nothing written", async () => {
    const before = await seedCount(a.accountId);
    const cases: [Record<string, unknown>, string][] = [
      [{ content: "c" }, "title"],
      [{ title: "", content: "c" }, "title"],
      [{ title: "   ", content: "c" }, "title"],
      [{ title: "x".repeat(301), content: "c" }, "title"],
      [{ title: "t" }, "content"],
      [{ title: "t", content: "x".repeat(20_001) }, "content"],
      [{ title: "t", content: "c", category: "x".repeat(101) }, "category"],
      [{ title: "t", content: "c", image_url: "ftp://example.com/a.png" }, "image_url"],
      [{ title: "t", content: "c", image_url: "not a url" }, "image_url"],
      [{ title: 42, content: "c" }, "title"],
    ];
    for (const [body, field] of cases) {
      const res = await world.call("POST", SEEDS, { key: a.key, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.json.error).toBe("invalid_request");
      expect(res.json.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect(await seedCount(a.accountId)).toBe(before);
  });

  test("limits are inclusive: 300-character title and 20,000-character content are accepted", async () => {
    const seed = await create(a, { title: "t".repeat(300), content: "c".repeat(20_000), category: "k".repeat(100) });
    expect(seed.title.length).toBe(300);
  });

  test("image_asset_id of another account or unknown → 404 not_found, identical bodies, nothing written", async () => {
    const foreign = await makeAsset(b.accountId);
    const before = await seedCount(a.accountId);
    const r1 = await world.call("POST", SEEDS, { key: a.key, body: { title: "t", content: "c", image_asset_id: foreign } });
    const r2 = await world.call("POST", SEEDS, { key: a.key, body: { title: "t", content: "c", image_asset_id: RANDOM_ID } });
    const r3 = await world.call("POST", SEEDS, { key: a.key, body: { title: "t", content: "c", image_asset_id: "nope" } });
    for (const r of [r1, r2, r3]) {
      expect(r.status).toBe(404);
      expect(r.json.error).toBe("not_found");
    }
    expect(r1.text).toBe(r2.text);
    expect(await seedCount(a.accountId)).toBe(before);
  });

  test("groups: writes need create, reads need read; 403 writes nothing", async () => {
    const readOnly = (await a.mint(["read"])).key;
    const createOnly = (await a.mint(["create"])).key;
    const seed = await create(a, { title: "Groups", content: "c" });
    const before = await seedCount(a.accountId);
    for (const [method, path, body] of [
      ["POST", SEEDS, { title: "t", content: "c" }],
      ["PATCH", `${SEEDS}/${seed.id}`, { title: "changed" }],
      ["DELETE", `${SEEDS}/${seed.id}`, undefined],
    ] as const) {
      const res = await world.call(method, path, { key: readOnly, body });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ error: "forbidden", requiredGroup: "create" });
    }
    for (const path of [SEEDS, `${SEEDS}/${seed.id}`]) {
      const res = await world.call("GET", path, { key: createOnly });
      expect(res.status).toBe(403);
      expect(res.json.requiredGroup).toBe("read");
    }
    expect(await seedCount(a.accountId)).toBe(before);
    const still = await world.call("GET", `${SEEDS}/${seed.id}`, { key: readOnly });
    expect(still.json.title).toBe("Groups");
  });

  test("another account's seed answers 404 exactly like a random id, for every method, and is untouched", async () => {
    const theirs = await create(b, { title: "Theirs", content: "private" });
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { title: "hijacked" }],
      ["DELETE", undefined],
    ] as const) {
      const foreign = await world.call(method, `${SEEDS}/${theirs.id}`, { key: a.key, body });
      const random = await world.call(method, `${SEEDS}/${RANDOM_ID}`, { key: a.key, body });
      const garbage = await world.call(method, `${SEEDS}/not-a-uuid`, { key: a.key, body });
      expect(foreign.status).toBe(404);
      expect(foreign.text).toBe(random.text);
      expect(garbage.status).toBe(404);
    }
    const mine = await world.call("GET", `${SEEDS}/${theirs.id}`, { key: b.key });
    expect(mine.json).toEqual(theirs);
  });
});

describe("patch and delete", () => {
  test("PATCH changes given fields, null clears, updatedAt moves", async () => {
    const asset = await makeAsset(a.accountId);
    const seed = await create(a, { title: "Old", content: "Body", category: "tip", image_url: "http://x.test/a.png" });
    world.clock.advance(60_000);
    const res = await world.call("PATCH", `${SEEDS}/${seed.id}`, {
      key: a.key,
      body: { title: "New", category: null, image_asset_id: asset, image_url: null },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      ...seed,
      title: "New",
      category: null,
      image_asset_id: asset,
      image_url: null,
      updatedAt: isoAt(world.clock.now()),
    });
    expect((await world.call("GET", `${SEEDS}/${seed.id}`, { key: a.key })).json).toEqual(res.json);
  });

  test("PATCH with another account's asset → 404, seed unchanged; invalid field → 400, unchanged", async () => {
    const seed = await create(a, { title: "Keep", content: "Body" });
    const foreign = await makeAsset(b.accountId);
    const r = await world.call("PATCH", `${SEEDS}/${seed.id}`, { key: a.key, body: { title: "X", image_asset_id: foreign } });
    expect(r.status).toBe(404);
    const v = await world.call("PATCH", `${SEEDS}/${seed.id}`, { key: a.key, body: { title: "" } });
    expect(v.status).toBe(400);
    expect((await world.call("GET", `${SEEDS}/${seed.id}`, { key: a.key })).json).toEqual(seed);
  });

  test("DELETE answers {id, deleted: true}; the seed is gone, also from search", async () => {
    const seed = await create(a, { title: "Ephemeral zeppelin", content: "Soon gone" });
    expect((await world.call("GET", `${SEEDS}?search=zeppelin`, { key: a.key })).json.seeds.length).toBe(1);
    const res = await world.call("DELETE", `${SEEDS}/${seed.id}`, { key: a.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: seed.id, deleted: true });
    expect((await world.call("GET", `${SEEDS}/${seed.id}`, { key: a.key })).status).toBe(404);
    expect((await world.call("DELETE", `${SEEDS}/${seed.id}`, { key: a.key })).status).toBe(404);
    expect((await world.call("GET", `${SEEDS}?search=zeppelin`, { key: a.key })).json.seeds).toEqual([]);
  });
});

/** The shared search cases (seed-search-cases.ts), through the HTTP API. */
const httpBackend = (): SearchBackend<TestAccount> => ({
  newAccount: () => world.createAccount(),
  async create(acct, seed, opts) {
    if (!opts?.sameTime) world.clock.advance(1000);
    return (await create(acct, { ...seed })).id;
  },
  async insertMany(acct, rows) {
    const order = rows.map(() => newId());
    const values = rows.map((row, i) => ({ id: order[i] as string, accountId: acct.accountId, ...row, createdAt: i, updatedAt: i }));
    await world.store.write(async (tx) => {
      for (let i = 0; i < values.length; i += 500) await tx.insert(seedsTable).values(values.slice(i, i + 500)).run();
    });
    return order;
  },
  async list(acct, query) {
    const params: string[] = [];
    if (query.search !== undefined) params.push(`search=${encodeURIComponent(query.search)}`);
    if (query.limit !== undefined) params.push(`limit=${query.limit}`);
    // NB: sent as given (a cursor is URL-safe; "%%%" stays a malformed one).
    if (query.cursor) params.push(`cursor=${query.cursor}`);
    const res = await world.call("GET", `${SEEDS}${params.length ? `?${params.join("&")}` : ""}`, { key: acct.key });
    const seeds: { id: string; title: string }[] = res.status === 200 ? res.json.seeds : [];
    return { status: res.status, ids: seeds.map((s) => s.id), titles: seeds.map((s) => s.title), nextCursor: res.status === 200 ? res.json.nextCursor : null };
  },
});

describeSeedSearch("SQLite, through the API", httpBackend);

describe("list and search through the API", () => {
  let c: TestAccount;
  beforeAll(async () => {
    c = await world.createAccount();
  });

  test("search follows edits: a patched seed is found by its new words only", async () => {
    const seed = await create(c, { title: "Walrus facts", content: "Tusks." });
    await world.call("PATCH", `${SEEDS}/${seed.id}`, { key: c.key, body: { title: "Narwhal facts" } });
    expect((await world.call("GET", `${SEEDS}?search=walrus`, { key: c.key })).json.seeds).toEqual([]);
    expect((await world.call("GET", `${SEEDS}?search=narwh`, { key: c.key })).json.seeds.map((s: { id: string }) => s.id)).toEqual([
      seed.id,
    ]);
    await world.call("DELETE", `${SEEDS}/${seed.id}`, { key: c.key });
  });

  test("limit bounds: 1–200, else 400", async () => {
    for (const limit of ["0", "201", "abc", "-1"]) {
      const res = await world.call("GET", `${SEEDS}?limit=${limit}`, { key: c.key });
      expect({ limit, status: res.status }).toEqual({ limit, status: 400 });
    }
    expect((await world.call("GET", `${SEEDS}?limit=200`, { key: c.key })).status).toBe(200);
  });
});
