/**
 * Read-then-write decisions under concurrency. On SQLite a `store.write()` body holds the only writer, so a check and
 * the write it decides are serialised; on PostgreSQL (READ COMMITTED, many replicas) two writes can both pass the same
 * check unless the write is conditional or the deciding row is locked (docs/choices.md, issue 15). Each test fires the
 * racing operations at once (through the services, as concurrent requests would) and checks the invariant. Runs on
 * both dialects (SEEDCAST_TEST_DATABASE=postgres for PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { createBuiltinGenerator } from "../src/generation/builtin";
import { type CaptionRequest, type Generator, GenerationError } from "../src/generation/generator";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { AppError } from "../src/lib/errors";
import { createAccount, removeMember, setMemberRole } from "../src/modules/accounts/service";
import { deleteAsset, ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { createCreationByHand } from "../src/modules/creations/edit";
import { generateCreation, regenerateCreation } from "../src/modules/creations/service";
import { ADDRESS_MAX_FAILURES, LOGIN_MAX_FAILURES, beginLoginAttempt } from "../src/modules/dashboard/login-limit";
import { schedulePost } from "../src/modules/schedule/service";
import { createSeed } from "../src/modules/seeds/service";
import { createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type World, createWorld } from "./helpers/world";
import { startWebhookReceiver } from "./peers/webhook-receiver";

const PASSWORD = "correct horse battery";

/** Settles every promise; answers the values and the refusals (any non-AppError is a bug and fails the test). */
async function settle<T>(work: Promise<T>[]): Promise<{ ok: T[]; refused: AppError[] }> {
  const results = await Promise.allSettled(work);
  const ok: T[] = [];
  const refused: AppError[] = [];
  for (const r of results) {
    if (r.status === "fulfilled") ok.push(r.value);
    else if (r.reason instanceof AppError) refused.push(r.reason);
    else throw r.reason;
  }
  return { ok, refused };
}

/** The builtin generator with a caption that takes a while: a request sits between its checks and its save. */
function slowCaptions(): Generator {
  const inner = createBuiltinGenerator();
  return {
    name: "slow-captions",
    async writeCaption(req: CaptionRequest, signal?: AbortSignal) {
      await Bun.sleep(5 + Math.floor(Math.random() * 40));
      return inner.writeCaption(req, signal);
    },
    renderImage: (req, signal) => inner.renderImage(req, signal),
    describeImage: (req, signal) => inner.describeImage(req, signal),
  };
}

describe("first sign-ups at once", () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  test("20 first accounts created at once: exactly one user becomes instance admin (5 rounds on an empty instance)", async () => {
    // Hashing a password takes long enough to spread the sign-ups out; here every sign-up's hash is answered at the same
    // moment, so their writes (count the users, insert) really start together.
    const hashed = await Bun.password.hash(PASSWORD, { algorithm: "argon2id" });
    const original = Bun.password.hash;
    let waiting: (() => void)[] = [];
    Bun.password.hash = (() =>
      new Promise<string>((resolve) => {
        waiting.push(() => resolve(hashed));
        if (waiting.length === 20) {
          for (const go of waiting) go();
          waiting = [];
        }
      })) as typeof Bun.password.hash;
    try {
      await rounds();
    } finally {
      Bun.password.hash = original;
    }
  });

  async function rounds(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const { ok } = await settle(
        Array.from({ length: 20 }, (_, i) =>
          createAccount(world.deps, { name: `First ${i}`, email: `first${round}-${i}@race.test`, password: PASSWORD, credits: 0 }),
        ),
      );
      expect(ok.length).toBe(20);
      const rows = await world.sql<{ a: unknown }>("SELECT is_instance_admin AS a FROM users");
      expect(rows.length).toBe(20);
      expect(rows.filter((r) => Boolean(r.a)).length).toBe(1);
      // Back to an instance without users for the next round.
      await world.sql("DELETE FROM members");
      await world.sql("DELETE FROM accounts");
      await world.sql("DELETE FROM users");
    }
  }

  test("the same email signed up 20 times at once: one user, every other call refused as in use", async () => {
    const { ok, refused } = await settle(
      Array.from({ length: 20 }, (_, i) => createAccount(world.deps, { name: `Twin ${i}`, email: "twin@race.test", password: PASSWORD })),
    );
    expect(ok.length).toBe(1);
    expect(refused.length).toBe(19);
    for (const error of refused) {
      expect(error.code).toBe("invalid_request");
      expect(JSON.stringify(error.extra)).toContain("is already in use");
    }
    expect((await world.sql("SELECT id FROM users WHERE lower(email) = ?", "twin@race.test")).length).toBe(1);
  });
});

describe("the last owner, with every owner leaving at once", () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  async function accountWithOwners(n: number): Promise<{ accountId: string; owners: string[] }> {
    const first = await world.createAccount();
    const owners = [first.userId];
    for (let i = 1; i < n; i++) owners.push(await first.addMember("owner"));
    return { accountId: first.accountId, owners };
  }

  async function ownerCount(accountId: string): Promise<number> {
    return (await world.sql("SELECT user_id FROM members WHERE account_id = ? AND role = 'owner'", accountId)).length;
  }

  const LAST_OWNER = "An account keeps at least one owner.";

  test("20 owners removed at once: one stays, the one refusal keeps its message", async () => {
    for (let round = 0; round < 3; round++) {
      const { accountId, owners } = await accountWithOwners(20);
      const { ok, refused } = await settle(owners.map((userId) => removeMember(world.deps, accountId, userId)));
      expect(await ownerCount(accountId)).toBe(1);
      expect(ok.length).toBe(19);
      expect(refused.map((e) => [e.code, e.message])).toEqual([["invalid_request", LAST_OWNER]]);
    }
  });

  test("20 owners demoted at once (editor, viewer): one stays owner", async () => {
    for (let round = 0; round < 3; round++) {
      const { accountId, owners } = await accountWithOwners(20);
      const { ok, refused } = await settle(owners.map((userId, i) => setMemberRole(world.deps, userId, i % 2 ? "editor" : "viewer", accountId)));
      expect(await ownerCount(accountId)).toBe(1);
      expect(ok.length).toBe(19);
      expect(refused.map((e) => [e.code, e.message])).toEqual([["invalid_request", LAST_OWNER]]);
    }
  });

  test("removals and demotions mixed, two owners each removing the other: never zero owners", async () => {
    for (let round = 0; round < 5; round++) {
      const { accountId, owners } = await accountWithOwners(2);
      const [a, b] = owners as [string, string];
      await settle([removeMember(world.deps, accountId, a), removeMember(world.deps, accountId, b)]);
      expect(await ownerCount(accountId)).toBe(1);
    }
    const { accountId, owners } = await accountWithOwners(20);
    await settle(owners.map((userId, i) => (i % 2 ? removeMember(world.deps, accountId, userId) : setMemberRole(world.deps, userId, "editor", accountId))));
    expect(await ownerCount(accountId)).toBe(1);
  });

  test("a role change without an account (every account of the person) also keeps each account's last owner", async () => {
    const shared = await accountWithOwners(2);
    const [, second] = shared.owners as [string, string];
    // `second` is also the only owner of a second account: demoting them everywhere is refused as a whole.
    const other = await createAccount(world.deps, { name: "Solo", email: "solo-owner@race.test", password: PASSWORD });
    await world.sql("INSERT INTO members (account_id, user_id, role, created_at) VALUES (?, ?, 'owner', 0)", other.accountId, second);
    await world.sql("DELETE FROM members WHERE account_id = ? AND user_id = ?", other.accountId, other.userId);
    const error = await setMemberRole(world.deps, second, "viewer").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).message).toBe(LAST_OWNER);
    expect(await ownerCount(other.accountId)).toBe(1);
    expect(await ownerCount(shared.accountId)).toBe(2);
  });
});

describe("login throttling under a burst of concurrent guesses", () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(async () => {
    await world.close();
  });

  async function failureCounts(): Promise<number[]> {
    return (await world.sql<{ f: unknown }>("SELECT failures AS f FROM login_throttle")).map((r) => Number(r.f)).sort((x, y) => x - y);
  }

  test("50 attempts at one email from one address: exactly LOGIN_MAX_FAILURES get through (5 rounds)", async () => {
    for (let round = 0; round < 5; round++) {
      await world.sql("DELETE FROM login_throttle");
      const answers = await Promise.all(Array.from({ length: 50 }, () => beginLoginAttempt(world.deps, "victim@race.test", `203.0.113.${round}`)));
      expect(answers.filter((a) => a === null).length).toBe(LOGIN_MAX_FAILURES);
      for (const a of answers.filter((x) => x !== null)) {
        expect(a?.reason).toBe("email");
        expect(a?.retryAfterSeconds).toBeGreaterThan(0);
      }
      // The email's count and the address's: nothing beyond the attempts that got through.
      expect(await failureCounts()).toEqual([LOGIN_MAX_FAILURES, LOGIN_MAX_FAILURES]);
    }
  });

  test("50 attempts at 50 emails from one address: exactly ADDRESS_MAX_FAILURES get through (5 rounds)", async () => {
    for (let round = 0; round < 5; round++) {
      await world.sql("DELETE FROM login_throttle");
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => beginLoginAttempt(world.deps, `spray${i}@race.test`, `198.51.100.${round}`)));
      expect(answers.filter((a) => a === null).length).toBe(ADDRESS_MAX_FAILURES);
      expect(answers.filter((a) => a !== null).every((a) => a?.reason === "address")).toBe(true);
      const counts = await failureCounts();
      // One row per email that got through (1 each) and the address's row at the limit.
      expect(counts.length).toBe(ADDRESS_MAX_FAILURES + 1);
      expect(counts[counts.length - 1]).toBe(ADDRESS_MAX_FAILURES);
    }
  });
});

describe("an asset deleted while requests start using it", () => {
  let world: World;
  let png: Uint8Array;
  beforeAll(async () => {
    world = await createWorld({ generator: slowCaptions() });
    png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#345678" } }).png().toBuffer());
  });
  afterAll(async () => {
    await world.close();
  });

  test("20 generates with image_asset_id and deletes of that asset at once: a deleted asset is never referenced", async () => {
    const acct = await world.createAccount({ credits: 100_000 });
    let deletedRounds = 0;
    for (let round = 0; round < 4; round++) {
      const asset = await ingestImageBytes(world.deps, acct.accountId, { bytes: png, fileName: `race-${round}.png`, source: "upload" });
      const seed = await createSeed(world.deps, acct.accountId, { title: `Race ${round}`, content: "Racing an asset delete." });
      const generates = Array.from({ length: 20 }, () =>
        generateCreation(world.deps, acct.accountId, { type: "social_post", seed_id: seed.id, image_asset_id: asset.id } as never),
      );
      // Deletes land while the generates sit between their checks and their saves.
      const deletes = Array.from({ length: 5 }, (_, i) => Bun.sleep(2 + i * 8).then(() => deleteAsset(world.deps, acct.accountId, asset.id)));
      const [gen, del] = await Promise.all([settle(generates), settle(deletes)]);
      for (const e of gen.refused) expect([e.code, e.message]).toEqual(["not_found", expect.any(String)]);
      for (const e of del.refused) expect(["asset_in_use", "not_found"]).toContain(e.code);
      const assetRows = await world.sql("SELECT id FROM assets WHERE id = ?", asset.id);
      const refs = await world.sql("SELECT id FROM creations WHERE image_asset_id = ?", asset.id);
      expect(refs.length).toBe(gen.ok.length);
      if (assetRows.length === 0) {
        deletedRounds++;
        expect(refs.length).toBe(0);
        expect(del.ok.length).toBe(1);
      } else {
        expect(del.ok.length).toBe(0);
        expect(refs.length).toBeGreaterThan(0);
      }
    }
    expect(deletedRounds).toBeGreaterThan(0);
  });

  test("20 posts written by hand with the asset in their thread, and deletes of it, at once: a deleted asset is never referenced", async () => {
    const acct = await world.createAccount();
    let deletedRounds = 0;
    for (let round = 0; round < 4; round++) {
      const asset = await ingestImageBytes(world.deps, acct.accountId, { bytes: png, fileName: `thread-${round}.png`, source: "upload" });
      const writes = Array.from({ length: 20 }, (_, i) =>
        Bun.sleep(4 + i * 2).then(() => createCreationByHand(world.deps, acct.accountId, { caption: `Race ${round}`, thread: [{ caption: "part", images: [{ assetId: asset.id }] }] })),
      );
      // Deletes land among the writes (each round a little later), so some rounds delete it and some find it in use.
      const deletes = Array.from({ length: 5 }, (_, i) => Bun.sleep(round * 4 + i * 6).then(() => deleteAsset(world.deps, acct.accountId, asset.id)));
      const [made, del] = await Promise.all([settle(writes), settle(deletes)]);
      for (const e of made.refused) expect(e.code).toBe("not_found");
      for (const e of del.refused) expect(["asset_in_use", "not_found"]).toContain(e.code);
      const assetRows = await world.sql("SELECT id FROM assets WHERE id = ?", asset.id);
      const refs = await world.sql("SELECT id FROM creations WHERE CAST(thread AS TEXT) LIKE ?", `%${asset.id}%`);
      expect(refs.length).toBe(made.ok.length);
      if (assetRows.length === 0) {
        deletedRounds++;
        expect(refs.length).toBe(0);
      } else {
        expect(del.ok.length).toBe(0);
      }
    }
    expect(deletedRounds).toBeGreaterThan(0);
  });

  test("20 deletes of one unused asset at once: one deletes it, the others answer 404", async () => {
    const acct = await world.createAccount();
    const asset = await ingestImageBytes(world.deps, acct.accountId, { bytes: png, fileName: "once.png", source: "upload" });
    const { ok, refused } = await settle(Array.from({ length: 20 }, () => deleteAsset(world.deps, acct.accountId, asset.id)));
    expect(ok.length).toBe(1);
    expect(refused.map((e) => e.code)).toEqual(Array(19).fill("not_found"));
  });
});

describe("a failed generate discards the seed image it ingested while others start using it", () => {
  test("19 generates reuse the asset a failing generate ingested and discards: a discarded asset is never referenced (4 rounds)", async () => {
    const ca = createTestCa();
    const png = await sharp({ create: { width: 80, height: 60, channels: 3, background: "#22aa66" } }).png().toBuffer();
    const server = startHttpsServer(() => new Response(png, { headers: { "content-type": "image/png" } }), { ca });
    const inner = createBuiltinGenerator();
    // Per round: the first describe (the request that ingested the image) waits for the gate, then fails (its discard
    // follows); every other describe (requests that found that asset in the library) waits for the same gate and a
    // few milliseconds more, so their saves land around the discard.
    let first = true;
    let gate = Promise.withResolvers<void>();
    let firstStarted = Promise.withResolvers<void>();
    let othersDescribing = 0;
    const generator: Generator = {
      name: "discard-race",
      writeCaption: (req, signal) => inner.writeCaption(req, signal),
      renderImage: (req, signal) => inner.renderImage(req, signal),
      async describeImage(req, signal) {
        if (first) {
          first = false;
          firstStarted.resolve();
          await gate.promise;
          throw new GenerationError("injected describe failure");
        }
        othersDescribing += 1;
        await gate.promise;
        await Bun.sleep(Math.floor(Math.random() * 12));
        return inner.describeImage(req, signal);
      },
    };
    const w = await createWorld({ generator, env: { ALLOW_PRIVATE_HOSTS: "localhost" } });
    try {
      configureIngestFetch(w.deps, { extraCa: ca.caPem });
      const acct = await w.createAccount({ credits: 100_000 });
      for (let round = 0; round < 4; round++) {
        first = true;
        gate = Promise.withResolvers<void>();
        firstStarted = Promise.withResolvers<void>();
        othersDescribing = 0;
        const seed = await createSeed(w.deps, acct.accountId, {
          title: `Garden ${round}`,
          content: "A photo from the garden.",
          image_url: `${server.url}/garden-${round}.png`,
        });
        const body = { type: "social_post", seed_id: seed.id } as never;
        const failing = settle([generateCreation(w.deps, acct.accountId, body)]);
        await firstStarted.promise;
        const ingested = await w.sql<{ id: string }>("SELECT id FROM assets WHERE account_id = ? AND source_url LIKE ?", acct.accountId, `%garden-${round}.png`);
        expect(ingested.length).toBe(1);
        const assetId = ingested[0]?.id as string;
        const others = settle(Array.from({ length: 19 }, () => generateCreation(w.deps, acct.accountId, body)));
        while (othersDescribing < 19) await Bun.sleep(1);
        gate.resolve();
        const [failed, done] = await Promise.all([failing, others]);
        expect(failed.refused.map((e) => e.code)).toEqual(["generation_failed"]);
        for (const e of done.refused) expect([e.code, e.extra.retryable]).toEqual(["generation_failed", true]);
        const assetRows = await w.sql("SELECT id FROM assets WHERE id = ?", assetId);
        const refs = await w.sql("SELECT id FROM creations WHERE image_asset_id = ?", assetId);
        expect(refs.length).toBe(done.ok.length);
        if (assetRows.length === 0) expect(refs.length).toBe(0);
        else expect(refs.length).toBeGreaterThan(0);
      }
    } finally {
      await w.close();
      await server.stop();
      ca.dispose();
    }
  });
});

describe("a creation's image replaced and deleted while posts of it are being scheduled", () => {
  test("10 schedules have read and checked the old image when it is replaced and deleted: every post gets the new image", async () => {
    const secret = "whsec-0123456789abcdef";
    const w = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost" } });
    const receiver = await startWebhookReceiver({ secret });
    const storage = w.deps.storage;
    const exists = storage.exists.bind(storage);
    try {
      const acct = await w.createAccount({ credits: 100_000 });
      const hook = await addConnection(w.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret });
      const png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#785634" } }).png().toBuffer());
      const old = await ingestImageBytes(w.deps, acct.accountId, { bytes: png, fileName: "old.png", source: "upload" });
      const seed = await createSeed(w.deps, acct.accountId, { title: "Swap", content: "An image swapped while scheduling." });
      const { creation } = await generateCreation(w.deps, acct.accountId, { type: "social_post", seed_id: seed.id, image_asset_id: old.id } as never);

      // Each schedule's check looks for the old image's file; the answer comes back only once the image is replaced and
      // deleted, so every schedule stands between its check and its write with a snapshot whose image is gone.
      const gate = Promise.withResolvers<void>();
      const allRead = Promise.withResolvers<void>();
      let reads = 0;
      storage.exists = async (key) => {
        const found = await exists(key);
        if (key === old.storageKey) {
          reads += 1;
          if (reads === 10) allRead.resolve();
          await gate.promise;
        }
        return found;
      };
      const at = new Date(w.clock.now() + 10 * 60 * 1000).toISOString();
      const schedules = settle(
        Array.from({ length: 10 }, () => schedulePost(w.deps, acct.accountId, { creationId: creation.id, scheduledTime: at, targets: [hook.accountId] })),
      );
      await allRead.promise;
      await regenerateCreation(w.deps, acct.accountId, { creation_id: creation.id, parts: "image" });
      const [replaced] = await w.sql<{ image_asset_id: string }>("SELECT image_asset_id FROM creations WHERE id = ?", creation.id);
      expect(replaced?.image_asset_id).not.toBe(old.id);
      // Nothing uses the old image now: the creation has the new one and no post is stored yet.
      await deleteAsset(w.deps, acct.accountId, old.id);
      gate.resolve();

      const { ok, refused } = await schedules;
      expect(refused).toEqual([]);
      expect(ok.length).toBe(10);
      const posts = await w.sql<{ image_asset_id: string | null }>("SELECT image_asset_id FROM scheduled_posts WHERE creation_id = ?", creation.id);
      expect(posts.map((p) => p.image_asset_id)).toEqual(Array(10).fill(replaced?.image_asset_id));
      const dangling = await w.sql(
        "SELECT p.id FROM scheduled_posts p LEFT JOIN assets a ON a.id = p.image_asset_id WHERE p.image_asset_id IS NOT NULL AND a.id IS NULL",
      );
      expect(dangling).toEqual([]);
    } finally {
      storage.exists = exists;
      await w.close();
      await receiver.stop();
    }
  });
});
