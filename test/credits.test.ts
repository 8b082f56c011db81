/**
 * The credits ledger: routes, the hold life cycle, a fast-check model-based test with injected failures, and real
 * concurrency (20 simultaneous reserve → await → capture flows with credits for 4).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Elysia, t } from "elysia";
import { authOf } from "../src/http/request-context";
import { scopePlugin } from "../src/http/scope";
import { AppError } from "../src/lib/errors";
import { grantCredits } from "../src/modules/credits/grant";
import {
  captureHold,
  creditSummary,
  holdState,
  listLedger,
  releaseHold,
  reserveCredits,
} from "../src/modules/credits/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type World, createWorld } from "./helpers/world";

const GENERATE = "/api/v1/__generate";
const PRICE = 5;

let world: World;
beforeAll(async () => {
  world = await createWorld();
  const deps = world.deps;
  // A generate-like metered route: reserve, a real await (the "model call"), then capture in the saving transaction.
  world.app.elysia.use(
    new Elysia().use(scopePlugin).post(
      GENERATE,
      async ({ request, body, set }) => {
        const { accountId } = authOf(request);
        const hold = await reserveCredits(deps, accountId, PRICE, "test:generate");
        try {
          await Bun.sleep(body.delayMs);
          const charged = await deps.store.write(() => captureHold(deps, hold));
          set.status = 201;
          return { creditsCharged: charged };
        } finally {
          await releaseHold(deps, hold);
        }
      },
      { scope: "create", body: t.Object({ delayMs: t.Integer({ minimum: 0, maximum: 50 }) }) },
    ),
  );
});
afterAll(() => world.close());

describeAuthMatrix("credits", () => world, [
  { method: "GET", path: "/api/v1/credits" },
  { method: "GET", path: "/api/v1/credits/ledger" },
]);

type Kind = "grant" | "reserve" | "capture" | "release";
interface LedgerRow {
  kind: Kind;
  amount: number;
  hold_id: string | null;
}

async function ledgerRows(accountId: string): Promise<LedgerRow[]> {
  const rows = await world.sql<LedgerRow>("SELECT kind, amount, hold_id FROM credit_ledger WHERE account_id = ? ORDER BY id", accountId);
  return rows.map((r) => ({ ...r, amount: Number(r.amount) }));
}

/** Balance implied by the ledger: grants and releases add, reserves subtract, captures move nothing spendable. */
function ledgerBalance(rows: LedgerRow[]): number {
  const sign: Record<Kind, number> = { grant: 1, reserve: -1, capture: 0, release: 1 };
  return rows.reduce((sum, r) => sum + sign[r.kind] * r.amount, 0);
}

async function openHoldsTotal(accountId: string): Promise<number> {
  const [row] = await world.sql<{ n: number | string }>(
    "SELECT coalesce(sum(amount), 0) AS n FROM credit_holds WHERE account_id = ? AND state = 'open'",
    accountId,
  );
  return Number(row?.n ?? 0);
}

/** Every invariant of the ledger, checked against the database alone. */
async function assertLedgerInvariants(accountId: string): Promise<void> {
  const summary = await creditSummary(world.deps, accountId);
  const rows = await ledgerRows(accountId);
  expect(summary.balance).toBeGreaterThanOrEqual(0);
  expect(summary.reserved).toBeGreaterThanOrEqual(0);
  expect(summary.balance).toBe(ledgerBalance(rows));
  expect(summary.reserved).toBe(await openHoldsTotal(accountId));
  // Each hold: one reserve, and at most one resolution.
  const byHold = new Map<string, Kind[]>();
  for (const r of rows) if (r.hold_id) byHold.set(r.hold_id, [...(byHold.get(r.hold_id) ?? []), r.kind]);
  for (const kinds of byHold.values()) {
    expect(kinds[0]).toBe("reserve");
    expect(kinds.length).toBeLessThanOrEqual(2);
  }
}

describe("GET /api/v1/credits", () => {
  test("answers {balance, reserved} for the caller's account", async () => {
    const a = await world.createAccount({ credits: 42 });
    await reserveCredits(world.deps, a.accountId, 10, "test");
    const res = await world.call("GET", "/api/v1/credits", { key: a.key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ balance: 32, reserved: 10 });
  });

  test("needs the read group: 403 with requiredGroup for a key without it", async () => {
    const a = await world.createAccount();
    const res = await world.call("GET", "/api/v1/credits", { key: (await a.mint(["create", "schedule", "voice"])).key });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ error: "forbidden", requiredGroup: "read" });
    const ok = await world.call("GET", "/api/v1/credits", { key: (await a.mint(["read"])).key });
    expect(ok.status).toBe(200);
  });

  test("the ledger lists movements newest first, paginated, only the caller's", async () => {
    const a = await world.createAccount({ credits: 30 });
    const other = await world.createAccount({ credits: 30 });
    const h1 = await reserveCredits(world.deps, a.accountId, 5, "p1");
    await captureHold(world.deps, h1);
    const h2 = await reserveCredits(world.deps, a.accountId, 7, "p2");
    await releaseHold(world.deps, h2);
    await reserveCredits(world.deps, other.accountId, 3, "other");
    const first = await world.call("GET", "/api/v1/credits/ledger?limit=3", { key: a.key });
    expect(first.status).toBe(200);
    expect(first.json.entries.map((e: { kind: string }) => e.kind)).toEqual(["release", "reserve", "capture"]);
    expect(first.json.entries[0]).toMatchObject({ amount: 7, holdId: h2, balanceAfter: 25, note: "p2" });
    expect(first.json.entries[0].createdAt).toMatch(/Z$/);
    const second = await world.call("GET", `/api/v1/credits/ledger?limit=3&cursor=${first.json.nextCursor}`, { key: a.key });
    expect(second.json.entries.map((e: { kind: string }) => e.kind)).toEqual(["reserve", "grant"]);
    expect(second.json.nextCursor).toBeNull();
    const bad = await world.call("GET", "/api/v1/credits/ledger?cursor=nonsense", { key: a.key });
    expect(bad.status).toBe(400);
    const tooMany = await world.call("GET", "/api/v1/credits/ledger?limit=201", { key: a.key });
    expect(tooMany.status).toBe(400);
  });
});

describe("holds", () => {
  test("insufficient credits → 402 {required, available}, nothing written", async () => {
    const a = await world.createAccount({ credits: 4 });
    const before = (await ledgerRows(a.accountId)).length;
    let error: unknown;
    try {
      await reserveCredits(world.deps, a.accountId, 5, "test");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(402);
    expect((error as AppError).toBody()).toMatchObject({ error: "insufficient_credits", required: 5, available: 4 });
    expect((await ledgerRows(a.accountId)).length).toBe(before);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 4, reserved: 0 });
  });

  test("a hold is resolved at most once; release after capture and double release are no-ops", async () => {
    const a = await world.createAccount({ credits: 10 });
    const h = await reserveCredits(world.deps, a.accountId, 6, "test");
    expect(await captureHold(world.deps, h)).toBe(6);
    await expect(captureHold(world.deps, h)).rejects.toThrow();
    await releaseHold(world.deps, h);
    expect(await holdState(world.deps, h)).toBe("captured");
    const r = await reserveCredits(world.deps, a.accountId, 4, "test");
    await releaseHold(world.deps, r);
    await releaseHold(world.deps, r);
    await expect(captureHold(world.deps, r)).rejects.toThrow();
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 4, reserved: 0 });
    await assertLedgerInvariants(a.accountId);
  });

  test("a hold of 0 works for free operations", async () => {
    const a = await world.createAccount({ credits: 0 });
    const h = await reserveCredits(world.deps, a.accountId, 0, "free");
    expect(await captureHold(world.deps, h)).toBe(0);
    await assertLedgerInvariants(a.accountId);
  });

  test("capture inside the caller's transaction commits or rolls back with it", async () => {
    const a = await world.createAccount({ credits: 10 });
    const h = await reserveCredits(world.deps, a.accountId, 5, "test");
    await expect(
      world.deps.store.write(async () => {
        await captureHold(world.deps, h);
        throw new Error("saving the creation failed");
      }),
    ).rejects.toThrow("saving the creation failed");
    expect(await holdState(world.deps, h)).toBe("open");
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 5, reserved: 5 });
    const n = await world.deps.store.write(() => captureHold(world.deps, h));
    expect(n).toBe(5);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 5, reserved: 0 });
    await assertLedgerInvariants(a.accountId);
  });

  test("the database refuses a second resolution row for a hold, even to a direct write", async () => {
    const a = await world.createAccount({ credits: 10 });
    const h = await reserveCredits(world.deps, a.accountId, 1, "test");
    await captureHold(world.deps, h);
    await expect(
      world.sql(
        "INSERT INTO credit_ledger (id, account_id, kind, amount, hold_id, note, balance_after, created_at) VALUES (?, ?, 'release', 1, ?, '', 0, 0)",
        crypto.randomUUID(),
        a.accountId,
        h,
      ),
    ).rejects.toThrow(/UNIQUE|unique/);
  });

  test("the CHECK constraints refuse negative totals even to a direct write", async () => {
    const a = await world.createAccount({ credits: 1 });
    await expect(world.sql("UPDATE accounts SET credits_balance = -1 WHERE id = ?", a.accountId)).rejects.toThrow(/CHECK|check constraint/);
    await expect(world.sql("UPDATE accounts SET credits_reserved = -1 WHERE id = ?", a.accountId)).rejects.toThrow(/CHECK|check constraint/);
  });
});

describe("model-based: the ledger under random operations with injected failures", () => {
  interface Model {
    balance: number;
    holds: { amount: number; state: "open" | "captured" | "released" }[];
  }
  interface Real {
    accountId: string;
    holds: string[];
  }
  const reservedOf = (m: Model) => m.holds.filter((h) => h.state === "open").reduce((s, h) => s + h.amount, 0);
  /** Runs `op` inside a caller transaction that then fails: everything it did must roll back. */
  const inFailingTx = async (op: () => Promise<unknown>) => {
    let failed = false;
    try {
      await world.deps.store.write(async () => {
        await op();
        throw new Error("injected failure");
      });
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
  };
  const rejects = async (op: () => Promise<unknown>, type?: new (...args: never[]) => Error) => {
    let error: unknown = null;
    try {
      await op();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(type ?? Error);
  };
  const check = async (m: Model, r: Real) => {
    expect(await creditSummary(world.deps, r.accountId)).toEqual({ balance: m.balance, reserved: reservedOf(m) });
    await assertLedgerInvariants(r.accountId);
  };

  class Grant implements fc.AsyncCommand<Model, Real> {
    constructor(readonly amount: number) {}
    check = () => true;
    async run(m: Model, r: Real) {
      await grantCredits(world.deps, r.accountId, this.amount);
      m.balance += this.amount;
      await check(m, r);
    }
    toString = () => `grant(${this.amount})`;
  }
  class Reserve implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly amount: number,
      readonly fail: boolean,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      if (this.fail) {
        await inFailingTx(() => reserveCredits(world.deps, r.accountId, this.amount, "model"));
      } else if (this.amount > m.balance) {
        await rejects(() => reserveCredits(world.deps, r.accountId, this.amount, "model"), AppError);
      } else {
        r.holds.push(await reserveCredits(world.deps, r.accountId, this.amount, "model"));
        m.holds.push({ amount: this.amount, state: "open" });
        m.balance -= this.amount;
      }
      await check(m, r);
    }
    toString = () => `reserve(${this.amount}${this.fail ? ", fails" : ""})`;
  }
  class Resolve implements fc.AsyncCommand<Model, Real> {
    constructor(
      readonly pick: number,
      readonly action: "capture" | "release",
      readonly fail: boolean,
    ) {}
    check = (m: Readonly<Model>) => m.holds.length > 0;
    async run(m: Model, r: Real) {
      const i = this.pick % m.holds.length;
      const hold = m.holds[i]!;
      const id = r.holds[i]!;
      const act = async () => (this.action === "capture" ? void (await captureHold(world.deps, id)) : releaseHold(world.deps, id));
      if (this.fail) {
        if (hold.state === "open" || this.action === "release") await inFailingTx(act);
        else await rejects(act);
      } else if (hold.state !== "open") {
        if (this.action === "capture") await rejects(act);
        else await act(); // no-op
      } else {
        await act();
        hold.state = this.action === "capture" ? "captured" : "released";
        if (this.action === "release") m.balance += hold.amount;
      }
      await check(m, r);
    }
    toString = () => `${this.action}(#${this.pick}${this.fail ? ", fails" : ""})`;
  }

  test("balance == ledger sum, reserved == open holds, never negative, each hold resolved once", async () => {
    const commands = [
      fc.integer({ min: 1, max: 50 }).map((n) => new Grant(n)),
      fc.tuple(fc.integer({ min: 0, max: 40 }), fc.boolean()).map(([n, f]) => new Reserve(n, f)),
      fc.tuple(fc.nat(), fc.constantFrom("capture" as const, "release" as const), fc.boolean()).map(
        ([p, a, f]) => new Resolve(p, a, f),
      ),
    ];
    const accounts: string[] = [];
    for (let i = 0; i < 3; i++) accounts.push((await world.createAccount({ credits: 20 })).accountId);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        const accountId = accounts[run++ % accounts.length]!;
        const summary = await creditSummary(world.deps, accountId);
        // Start from the account's current state (it may carry earlier runs' holds), tracked freshly by this run.
        const model: Model = { balance: summary.balance, holds: [] };
        const real: Real = { accountId, holds: [] };
        // Release leftovers so reserved starts at 0 for the model.
        for (const row of await world.sql<{ id: string }>("SELECT id FROM credit_holds WHERE account_id = ? AND state = 'open'", accountId)) {
          await releaseHold(world.deps, row.id);
        }
        model.balance = (await creditSummary(world.deps, accountId)).balance;
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("concurrency", () => {
  test("20 simultaneous generate-like requests with credits for 4 → exactly 4 succeed, 16 × 402, balance 0", async () => {
    const a = await world.createAccount({ credits: 4 * PRICE });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => world.call("POST", GENERATE, { key: a.key, body: { delayMs: (i * 7) % 13 } })),
    );
    const ok = answers.filter((r) => r.status === 201);
    const refused = answers.filter((r) => r.status === 402);
    expect(ok.length).toBe(4);
    expect(refused.length).toBe(16);
    for (const r of ok) expect(r.json.creditsCharged).toBe(PRICE);
    for (const r of refused) expect(r.json).toMatchObject({ error: "insufficient_credits", required: PRICE });
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 0, reserved: 0 });
    await assertLedgerInvariants(a.accountId);
  });

  test("the same over the service: interleaved reserve → await → capture/release flows", async () => {
    const a = await world.createAccount({ credits: 4 * PRICE });
    const flow = async (i: number) => {
      await Bun.sleep(i % 3);
      const hold = await reserveCredits(world.deps, a.accountId, PRICE, "flow");
      try {
        await Bun.sleep((i * 5) % 7);
        if (i % 4 === 0) throw new Error("model failed"); // some flows fail and release
        return await world.deps.store.write(() => captureHold(world.deps, hold));
      } finally {
        await releaseHold(world.deps, hold);
      }
    };
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => flow(i)));
    const captured = results.filter((r) => r.status === "fulfilled").length;
    const summary = await creditSummary(world.deps, a.accountId);
    expect(summary.reserved).toBe(0);
    expect(summary.balance).toBe(4 * PRICE - captured * PRICE);
    expect(captured).toBeGreaterThanOrEqual(1);
    expect(captured).toBeLessThanOrEqual(4);
    await assertLedgerInvariants(a.accountId);
  });
});
