/**
 * Earlier versions of a creation (decisions.md §15): a regenerate, an edit by hand and a restore each keep what they
 * replace; the last 10 stay; GET /creations/{id}/versions (read group, 404 for others' creations); "edited by hand"
 * is tracked honestly; a version whose image was deleted restores its text only. On SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { restoreVersion } from "../src/modules/creations/versions";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";

let world: World;
let acct: TestAccount;

beforeAll(async () => {
  world = await createWorld();
  acct = await world.createAccount({ credits: 1000 });
});

afterAll(async () => {
  await world.close();
});

const versionsPath = (id: string) => `/api/v1/creations/${id}/versions`;

describeAuthMatrix("creation versions", () => world, [{ method: "GET", path: versionsPath("0190a0a0-0000-7000-8000-000000000000") }]);

async function generate(includeVisual = false): Promise<{ id: string; caption: string; imageAssetId: string | null }> {
  const seed = await world.call("POST", "/api/v1/seeds", {
    key: acct.key,
    body: {
      title: "Winter opening hours",
      content: "From December our bakery opens Mon–Sat 8:00–14:00. Rye loaf €4.50. Pre-order at https://bakery.example/order so we bake enough.",
      category: "announcement",
    },
  });
  expect(seed.status).toBe(201);
  const res = await world.call("POST", "/api/v1/creations/generate", {
    key: acct.key,
    body: { seed_id: seed.json.id ?? seed.json.seed?.id, ...(includeVisual ? { include_visual: true } : {}) },
  });
  expect(res.status).toBe(201);
  const c = res.json.creation;
  return { id: c.id, caption: c.body.caption, imageAssetId: c.imageAssetId };
}

async function versions(id: string, key = acct.key) {
  const res = await world.call("GET", versionsPath(id), { key });
  expect(res.status).toBe(200);
  return res.json.versions as Array<{ id: string; caption: string; altText: string | null; imageAssetId: string | null; imageUrl: string | null; editedByHand: { caption: boolean; altText: boolean }; replacedAt: string }>;
}

describe("GET /creations/{id}/versions", () => {
  test("generate keeps none; an edit by hand and a regenerate each keep what they replace, newest first", async () => {
    const c = await generate();
    expect(await versions(c.id)).toEqual([]);

    world.clock.advance(1000);
    const edited = await world.call("PATCH", `/api/v1/creations/${c.id}`, { key: acct.key, body: { caption: "My own words about the winter hours." } });
    expect(edited.json.creation.editedByHand).toEqual({ caption: true, altText: false });
    const afterEdit = await versions(c.id);
    expect(afterEdit).toHaveLength(1);
    expect(afterEdit[0]).toMatchObject({ caption: c.caption, altText: null, imageUrl: null, editedByHand: { caption: false, altText: false } });
    expect(afterEdit[0]!.replacedAt).toBe(new Date(world.clock.now()).toISOString());

    // Saving the same text again keeps no version.
    await world.call("PATCH", `/api/v1/creations/${c.id}`, { key: acct.key, body: { caption: "My own words about the winter hours." } });
    expect(await versions(c.id)).toHaveLength(1);

    const regen = await world.call("POST", "/api/v1/creations/regenerate", { key: acct.key, body: { creation_id: c.id, parts: "caption" } });
    expect(regen.status).toBe(200);
    expect(regen.json.creation.editedByHand).toEqual({ caption: false, altText: false });
    const afterRegen = await versions(c.id);
    expect(afterRegen.map((v) => v.caption)).toEqual(["My own words about the winter hours.", c.caption]);
    expect(afterRegen[0]!.editedByHand.caption).toBe(true);

    // Restore the hand-written one: it is current again (still marked as written by hand), the replaced one kept.
    const restored = await restoreVersion(world.deps, acct.accountId, c.id, afterRegen[0]!.id);
    expect(restored.body.caption).toBe("My own words about the winter hours.");
    expect(restored.editedByHand.caption).toBe(true);
    const afterRestore = await versions(c.id);
    expect(afterRestore.map((v) => v.caption)).toEqual([regen.json.creation.body.caption, "My own words about the winter hours.", c.caption]);
    const got = await world.call("GET", `/api/v1/creations/${c.id}`, { key: acct.key });
    expect(got.json.creation.body.caption).toBe("My own words about the winter hours.");
  });

  test("the last 10 stay", async () => {
    const c = await generate();
    for (let i = 1; i <= 13; i++) {
      const res = await world.call("PATCH", `/api/v1/creations/${c.id}`, { key: acct.key, body: { caption: `Edit number ${i}` } });
      expect(res.status).toBe(200);
    }
    const kept = await versions(c.id);
    expect(kept.map((v) => v.caption)).toEqual([12, 11, 10, 9, 8, 7, 6, 5, 4, 3].map((i) => `Edit number ${i}`));
    const rows = await world.sql("SELECT count(*) AS n FROM creation_versions WHERE creation_id = ?", c.id);
    expect(Number(rows[0].n)).toBe(10);
  });

  test("read group is enough; another account's creation and a random id answer the same 404; restore of another's version is 404", async () => {
    const c = await generate();
    await world.call("PATCH", `/api/v1/creations/${c.id}`, { key: acct.key, body: { caption: "mine" } });
    const reader = await acct.mint(["read"]);
    expect(await versions(c.id, reader.key)).toHaveLength(1);
    const other = await world.createAccount();
    const theirs = await world.call("GET", versionsPath(c.id), { key: other.key });
    const random = await world.call("GET", versionsPath(crypto.randomUUID()), { key: other.key });
    expect(theirs.status).toBe(404);
    expect(theirs.json).toEqual(random.json);
    const mine = await versions(c.id);
    await expect(restoreVersion(world.deps, other.accountId, c.id, mine[0]!.id)).rejects.toMatchObject({ code: "not_found" });
  });

  test("a kept version does not block deleting its image; restoring it then restores the text and keeps the current image", async () => {
    const c = await generate(true);
    expect(c.imageAssetId).not.toBeNull();
    const regen = await world.call("POST", "/api/v1/creations/regenerate", { key: acct.key, body: { creation_id: c.id, parts: "both" } });
    expect(regen.status).toBe(200);
    const newImage = regen.json.creation.imageAssetId;
    expect(newImage).not.toBe(c.imageAssetId);
    const [old] = await versions(c.id);
    expect(old).toMatchObject({ caption: c.caption, imageAssetId: c.imageAssetId, imageUrl: `http://localhost/media/${c.imageAssetId}.png` });

    const deleted = await world.call("DELETE", `/api/v1/assets/${c.imageAssetId}`, { key: acct.key });
    expect(deleted.status).toBe(200);
    const [gone] = await versions(c.id);
    expect(gone).toMatchObject({ imageAssetId: c.imageAssetId, imageUrl: null });

    const restored = await restoreVersion(world.deps, acct.accountId, c.id, gone!.id);
    expect(restored.body.caption).toBe(c.caption);
    expect(restored.imageAssetId).toBe(newImage);
  });
});
