/**
 * The storage layer (src/db/store.ts, src/db/pg/store.ts) on the database this run is on: writes isolated from reads,
 * writers queued, nested writes joined, a promise that outlives its write refused, and money exact under concurrency.
 * The SQLite-only mechanics (the query_only reader, another process holding the write lock, commit-watch on the
 * writer's commits) run only in a SQLite run; test/store-pg.test.ts covers PostgreSQL's own (the builder shim,
 * the auth generation watch, ping while the server is down).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { watchCommits } from "../src/db/commit-watch";
import { DB_FILE_NAME } from "../src/db/client";
import { isSqliteStore } from "../src/db/store";
import { accounts } from "../src/db/tables";
import { captureHold, holdState, reserveCredits } from "../src/modules/credits/service";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

/** Lets every other promise chain that is ready run (what happens at any `await` of a service). */
const yieldToOthers = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

const balanceOf = async (accountId: string) =>
  (await world.store.db.select({ b: accounts.creditsBalance }).from(accounts).where(eq(accounts.id, accountId)).get())?.b;

describe(`the store on ${TEST_DIALECT}`, () => {
  test("reads outside a write see only committed data; reads inside see the write's own rows", async () => {
    const a = await world.createAccount({ credits: 10 });
    let outside: number | undefined;
    let inside: number | undefined;
    const writing = world.store
      .write(async (tx) => {
        await tx.update(accounts).set({ creditsBalance: 0 }).where(eq(accounts.id, a.accountId)).run();
        inside = await balanceOf(a.accountId); // store.db inside the body is the transaction
        await yieldToOthers();
        throw new Error("fails after the update");
      })
      .catch(() => "rolled back");
    const reading = (async () => {
      await Bun.sleep(0);
      outside = await balanceOf(a.accountId);
    })();
    expect(await writing).toBe("rolled back");
    await reading;
    expect(inside).toBe(0);
    expect(outside).toBe(10);
    expect(await balanceOf(a.accountId)).toBe(10);
  });

  test("a nested write joins its caller: a capture inside a failing outer write rolls back with it", async () => {
    const a = await world.createAccount({ credits: 10 });
    const hold = await reserveCredits(world.deps, a.accountId, 6, "test");
    expect(world.store.inWrite()).toBe(false);
    await expect(
      world.store.write(async () => {
        expect(world.store.inWrite()).toBe(true);
        await captureHold(world.deps, hold);
        throw new Error("saving the creation failed");
      }),
    ).rejects.toThrow("saving the creation failed");
    expect(await holdState(world.deps, hold)).toBe("open");
    expect(await world.store.write(() => captureHold(world.deps, hold))).toBe(6);
    expect(await holdState(world.deps, hold)).toBe("captured");
  });

  test("a promise left running after its write() is over fails loudly instead of writing outside it", async () => {
    const a = await world.createAccount({ credits: 10 });
    let straggler!: Promise<unknown>;
    await world.store.write(async () => {
      straggler = (async () => {
        await Bun.sleep(5);
        return world.store.write((tx) => tx.update(accounts).set({ creditsBalance: 0 }).where(eq(accounts.id, a.accountId)).run());
      })();
    });
    await expect(straggler).rejects.toThrow(/already over/);
    expect(await balanceOf(a.accountId)).toBe(10);
  });

  test("200 concurrent reserves against a balance of 50: exactly 50 succeed, the ledger balances", async () => {
    const a = await world.createAccount({ credits: 50 });
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, async (_, i) => {
        await Bun.sleep(i % 3);
        return reserveCredits(world.deps, a.accountId, 1, "race");
      }),
    );
    const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    expect(results.length - refused.length).toBe(50);
    expect(refused.length).toBe(150);
    for (const r of refused) expect(r.reason).toMatchObject({ code: "insufficient_credits" });
    const [row] = await world.sql(
      `SELECT
         (SELECT credits_balance FROM accounts WHERE id = ?) AS balance,
         (SELECT credits_reserved FROM accounts WHERE id = ?) AS reserved,
         (SELECT coalesce(sum(CASE kind WHEN 'grant' THEN amount WHEN 'reserve' THEN -amount WHEN 'release' THEN amount ELSE 0 END), 0)
            FROM credit_ledger WHERE account_id = ?) AS ledger,
         (SELECT count(*) FROM credit_holds WHERE account_id = ? AND state = 'open') AS holds`,
      a.accountId,
      a.accountId,
      a.accountId,
      a.accountId,
    );
    expect({ balance: Number(row.balance), reserved: Number(row.reserved), ledger: Number(row.ledger), holds: Number(row.holds) }).toEqual({
      balance: 0,
      reserved: 50,
      ledger: 0,
      holds: 50,
    });
  });

  test("another request's write waits for the open write instead of joining it", async () => {
    const a = await world.createAccount({ credits: 10 });
    const b = await world.createAccount({ credits: 10 });
    const order: string[] = [];
    const failing = world.store
      .write(async (tx) => {
        await tx.update(accounts).set({ creditsBalance: 1 }).where(eq(accounts.id, a.accountId)).run();
        order.push("A updated");
        await yieldToOthers();
        order.push("A fails");
        throw new Error("A failed");
      })
      .catch(() => undefined);
    const other = (async () => {
      await Bun.sleep(0);
      await world.store.write((tx) => tx.update(accounts).set({ creditsBalance: 99 }).where(eq(accounts.id, b.accountId)).run());
      order.push("B committed");
    })();
    await Promise.all([failing, other]);
    // SQLite: B queued on the writer behind A. PostgreSQL: B ran beside A on its own connection (another row).
    if (TEST_DIALECT === "sqlite") expect(order).toEqual(["A updated", "A fails", "B committed"]);
    else expect(order.sort()).toEqual(["A fails", "A updated", "B committed"]);
    expect(await balanceOf(a.accountId)).toBe(10);
    expect(await balanceOf(b.accountId)).toBe(99);
  });

  test("ping answers true while the database is there", async () => {
    expect(await world.store.ping()).toBe(true);
  });
});

describe.skipIf(TEST_DIALECT !== "sqlite")("SQLite's reader and writer", () => {
  test("a write outside store.write() is refused loudly on the query_only reader", async () => {
    const a = await world.createAccount({ credits: 5 });
    await expect((async () => world.store.db.update(accounts).set({ creditsBalance: 0 }).where(eq(accounts.id, a.accountId)).run())()).rejects.toThrow(
      /readonly/i,
    );
    expect(await balanceOf(a.accountId)).toBe(5);
  });

  test("another process holding the write lock is waited for asynchronously: reads go on, then the write commits", async () => {
    const a = await world.createAccount({ credits: 10 });
    const other = new Database(join(world.dataDir, DB_FILE_NAME));
    other.exec("BEGIN IMMEDIATE"); // holds the write lock, as a CLI command's transaction would
    setTimeout(() => other.exec("COMMIT"), 60);
    let readsWhileWaiting = 0;
    let writing = true;
    const reads = (async () => {
      while (writing) {
        await balanceOf(a.accountId);
        readsWhileWaiting++;
        await Bun.sleep(5);
      }
    })();
    const hold = await reserveCredits(world.deps, a.accountId, 4, "while the CLI writes");
    writing = false;
    await reads;
    other.close();
    expect(hold).toBeString();
    expect(readsWhileWaiting).toBeGreaterThan(3); // the event loop was free while the writer waited
    expect(await balanceOf(a.accountId)).toBe(6);
  });

  test("commit-watch on the reader sees a commit made through the writer", async () => {
    const store = world.store;
    if (!isSqliteStore(store)) throw new Error("unreachable");
    const watch = watchCommits(store.sqlite);
    expect(watch.live).toBe(true);
    const a = await world.createAccount({ credits: 1 });
    watch.changed();
    expect(watch.changed()).toBe(false);
    await store.write((tx) => tx.update(accounts).set({ creditsBalance: 2 }).where(eq(accounts.id, a.accountId)).run());
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);
  });

  test("withWriter runs outside a transaction on the writer (VACUUM INTO), and is refused inside a write", async () => {
    const store = world.store;
    if (!isSqliteStore(store)) throw new Error("unreachable");
    const copy = join(world.dataDir, "copy.db");
    await store.withWriter((sqlite) => sqlite.query("VACUUM INTO ?").run(copy));
    const copied = new Database(copy, { readonly: true });
    expect(Number((copied.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n)).toBeGreaterThan(0);
    copied.close();
    await expect(store.write(() => store.withWriter(() => 1))).rejects.toThrow(/inside a write/);
  });
});
