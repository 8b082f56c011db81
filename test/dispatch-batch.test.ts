/**
 * The dispatcher's batch machinery (issue 22), on the database this run is on:
 *  - the coalescing writer (src/db/coalescing-writer.ts): items submitted together share one transaction, items that
 *    arrive during a write share the next, and a batch that fails is written again item by item so only the bad
 *    item fails;
 *  - the claim's cutoff: a backlog is claimed earliest due first with ties in insertion order, as a full sort would;
 *  - a batch of deliveries: every post of the batch published once, its status final and its post.published event
 *    recorded, the targets' provider ids each their own (one UPDATE sets them all);
 *  - a post with several targets has its content (the image from storage) loaded once for all of them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, inArray } from "drizzle-orm";
import { isoAt } from "../src/lib/clock";
import { coalescingWriter } from "../src/db/coalescing-writer";
import type { Store, StoreDb } from "../src/db/store";
import { accounts, scheduledPosts, scheduledPostTargets, webhookEvents } from "../src/db/tables";
import { addConnection } from "../src/modules/connections/service";
import { claimDueTargets, runDueOnce } from "../src/publishing/dispatcher";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, solidPng } from "./publishing-fixtures";
import { insertDuePosts } from "./publishing-load";

let world: World;
let receiver: WebhookReceiver;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await world.close();
});

/** world.store, counting the transactions begun through it. */
function countingStore(): { store: Pick<Store, "write">; writes: () => number } {
  let writes = 0;
  return {
    store: {
      write<T>(body: (tx: StoreDb) => Promise<T>): Promise<T> {
        writes += 1;
        return world.store.write(body);
      },
    },
    writes: () => writes,
  };
}

/** Sets each item's account balance to its value; answers the balance read back inside the transaction. */
async function setBalances(tx: StoreDb, items: readonly { accountId: string; credits: number }[]): Promise<number[]> {
  const out: number[] = [];
  for (const item of items) {
    if (item.credits < 0) throw new Error("negative balance");
    await tx.update(accounts).set({ creditsBalance: item.credits }).where(eq(accounts.id, item.accountId)).run();
    out.push((await tx.select({ b: accounts.creditsBalance }).from(accounts).where(eq(accounts.id, item.accountId)).get())?.b ?? -1);
  }
  return out;
}

const balanceOf = async (accountId: string) => (await world.store.db.select({ b: accounts.creditsBalance }).from(accounts).where(eq(accounts.id, accountId)).get())?.b;

describe(`the coalescing writer on ${TEST_DIALECT}`, () => {
  test("items submitted together are written in one transaction, each answered its own result", async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, () => world.createAccount({ credits: 1 }).then((a) => a.accountId)));
    const counting = countingStore();
    const writer = coalescingWriter(counting.store, setBalances);
    const results = await Promise.all(ids.map((accountId, i) => writer.submit({ accountId, credits: 100 + i })));
    expect(results).toEqual(ids.map((_, i) => 100 + i));
    expect(counting.writes()).toBe(1);
    for (const [i, id] of ids.entries()) expect(await balanceOf(id)).toBe(100 + i);
  });

  test("items that arrive while a batch is written go together into the next transaction", async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => world.createAccount({ credits: 1 }).then((a) => a.accountId)));
    const counting = countingStore();
    const sizes: number[] = [];
    let later: Promise<number>[] = [];
    const writer = coalescingWriter(counting.store, async (tx, items: readonly { accountId: string; credits: number }[]) => {
      sizes.push(items.length);
      // The first batch is being written: five more arrive meanwhile.
      if (sizes.length === 1) later = ids.slice(1).map((accountId) => writer.submit({ accountId, credits: 7 }));
      return setBalances(tx, items);
    });
    expect(await writer.submit({ accountId: ids[0] ?? "", credits: 7 })).toBe(7);
    expect(await Promise.all(later)).toEqual([7, 7, 7, 7, 7]);
    await writer.idle();
    expect(sizes).toEqual([1, 5]);
    expect(counting.writes()).toBe(2);
  });

  test("a batch whose write fails is written again item by item: only the bad item fails, the others commit", async () => {
    const ids = await Promise.all(Array.from({ length: 4 }, () => world.createAccount({ credits: 1 }).then((a) => a.accountId)));
    const counting = countingStore();
    const writer = coalescingWriter(counting.store, setBalances);
    const settled = await Promise.allSettled(ids.map((accountId, i) => writer.submit({ accountId, credits: i === 2 ? -5 : 50 })));
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(String((settled[2] as PromiseRejectedResult).reason)).toContain("negative balance");
    // One failed batch (rolled back whole), then one transaction per item.
    expect(counting.writes()).toBe(1 + ids.length);
    expect(await Promise.all(ids.map(balanceOf))).toEqual([50, 50, 1, 50]);
  });
});

describe(`batched dispatch on ${TEST_DIALECT}`, () => {
  async function webhookAccount(): Promise<{ accountId: string; connectionId: string; creationId: string; key: string }> {
    const a = await world.createAccount();
    const connection = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/posts`, secret: WEBHOOK_SECRET });
    const creation = await makeCreation(world.deps, a.accountId, { caption: "Batch" });
    // addConnection answers the API's view, whose accountId is the connection's id.
    return { accountId: a.accountId, connectionId: connection.accountId, creationId: creation.id, key: a.key };
  }

  test("a backlog is claimed earliest due first, ties in insertion order, also when the ties straddle the limit", async () => {
    const who = await webhookAccount();
    const now = world.clock.now();
    // Inserted first but due later: 4 targets due at now - 1000, all tied.
    const tied = await insertDuePosts(world.deps, { ...who, count: 4, firstDueAt: now - 1000, spreadMs: 0 });
    // Inserted last but due earliest: 3 targets due at now - 3000, now - 2500, now - 2000.
    const early = await insertDuePosts(world.deps, { ...who, count: 3, firstDueAt: now - 3000, spreadMs: 1500 });
    const first = await claimDueTargets(world.deps, 5, 60_000);
    expect(first.map((c) => c.targetId)).toEqual([...early, ...tied.slice(0, 2)]);
    const second = await claimDueTargets(world.deps, 5, 60_000);
    expect(second.map((c) => c.targetId)).toEqual(tied.slice(2));
    expect(await claimDueTargets(world.deps, 5, 60_000)).toEqual([]);
    // The posts of claimed targets are publishing.
    const posts = await world.store.db
      .select({ status: scheduledPosts.status })
      .from(scheduledPosts)
      .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
      .where(inArray(scheduledPostTargets.id, [...early, ...tied]))
      .all();
    expect(posts.map((p) => p.status)).toEqual(Array(7).fill("publishing"));
  });

  test("one batch of 40 due posts: each delivered once, each target its own provider id, each post published with its event", async () => {
    const who = await webhookAccount();
    const events = await world.call("POST", "/api/v1/webhooks", {
      key: who.key,
      body: { url: `${receiver.url}/events`, events: ["post.published"] },
    });
    expect(events.status).toBe(201);
    const targetIds = await insertDuePosts(world.deps, { ...who, count: 40, firstDueAt: world.clock.now() - 1000, spreadMs: 500 });
    const before = receiver.effects().length;
    expect(await runDueOnce(world.deps, { concurrency: 64 })).toBe(40);
    const got = receiver.effects().slice(before).filter((d) => d.event === "post.publish");
    expect(new Set(got.map((d) => d.idempotencyKey))).toEqual(new Set(targetIds));
    expect(got.length).toBe(40);
    const rows = await world.store.db.select().from(scheduledPostTargets).where(inArray(scheduledPostTargets.id, targetIds)).all();
    for (const row of rows) {
      expect(row.status).toBe("published");
      expect(row.providerPostId).toBe(row.id); // a webhook's provider id is the target id: set per target
      expect(row.leaseToken).toBeNull();
      expect(row.sendStartedAt).toBeNull();
    }
    const postIds = rows.map((r) => r.postId);
    const posts = await world.store.db.select().from(scheduledPosts).where(inArray(scheduledPosts.id, postIds)).all();
    expect(posts.map((p) => p.status)).toEqual(Array(40).fill("published"));
    const recorded = await world.store.db.select().from(webhookEvents).where(eq(webhookEvents.accountId, who.accountId)).all();
    const published = recorded.filter((e) => e.type === "post.published").map((e) => (JSON.parse(e.body) as { data: { post: { id: string } } }).data.post.id);
    expect(new Set(published)).toEqual(new Set(postIds));
    expect(published.length).toBe(40);
  });
  test("a post with an image and three webhook targets: the image is read from storage once for all three", async () => {
    const a = await world.createAccount();
    const targets: string[] = [];
    for (const path of ["one", "two", "three"]) {
      const connection = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/${path}`, secret: WEBHOOK_SECRET });
      targets.push(connection.accountId);
    }
    const creation = await makeCreation(world.deps, a.accountId, { caption: "Three ways", image: await solidPng() });
    const scheduled = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets },
    });
    expect(scheduled.status).toBe(200);
    world.clock.advance(FIVE_MIN + 61_000);
    let reads = 0;
    const storage = new Proxy(world.deps.storage, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (property === "read") {
          return (...args: Parameters<typeof target.read>) => {
            reads += 1;
            return target.read(...args);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const before = receiver.effects().length;
    const postId = (scheduled.json as { post: { id: string } }).post.id;
    const targetIds = (await world.store.db.select().from(scheduledPostTargets).where(eq(scheduledPostTargets.postId, postId)).all()).map((t) => t.id);
    expect(await runDueOnce({ ...world.deps, storage }, {}, targetIds)).toBe(3);
    const got = receiver.effects().slice(before);
    expect(got.map((d) => d.path).sort()).toEqual(["/one", "/three", "/two"]);
    for (const d of got) expect((d.body as { post: { imageUrl: string | null } }).post.imageUrl).not.toBeNull();
    expect(reads).toBe(1);
  });
});
