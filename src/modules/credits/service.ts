/**
 * The credits ledger: reserve before work, capture with the result, release on failure. Every movement is one
 * credit_ledger row; accounts.credits_balance / credits_reserved are the running totals, kept non-negative by CHECK
 * constraints and by conditional updates whose returned rows are checked. Each hold is resolved at most once because
 * resolving is a conditional `state = 'open'` → captured/released update.
 *
 * Ledger sign convention (amounts are stored non-negative; the kind gives the direction):
 *   grant   → balance += amount
 *   reserve → balance -= amount, reserved += amount
 *   capture → reserved -= amount (spent)
 *   release → reserved -= amount, balance += amount
 */
import { and, desc, eq, lt, sql } from "drizzle-orm";
import type { StoreDb } from "../../db/store";
import { accounts, creditHolds, creditLedger } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { isoAt } from "../../lib/clock";
import { LOW_CREDITS_THRESHOLD, recordEvent } from "../../store/events";
import { decodeCursor, encodeCursor } from "./cursor";

export type CreditDeps = Pick<Deps, "store" | "clock">;

export const LEDGER_KINDS = ["grant", "reserve", "capture", "release"] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

export interface CreditSummary {
  /** Spendable credits. */
  balance: number;
  /** Credits held by open reservations. */
  reserved: number;
}

export interface LedgerEntry {
  id: string;
  kind: LedgerKind;
  amount: number;
  holdId: string | null;
  note: string;
  balanceAfter: number;
  createdAt: number;
}

export interface LedgerPage {
  entries: LedgerEntry[];
  nextCursor: string | null;
}

async function writeLedger(
  tx: StoreDb,
  deps: CreditDeps,
  row: { accountId: string; kind: LedgerKind; amount: number; holdId: string | null; note: string; balanceAfter: number },
): Promise<void> {
  await tx
    .insert(creditLedger)
    .values({ id: newId(), createdAt: deps.clock.now(), ...row })
    .run();
}

/**
 * Reserves `amount` credits for `purpose` (e.g. "generate:social_post") and returns the hold id.
 * Throws 402 insufficient_credits `{required, available}` when the spendable balance is short; nothing is written then.
 * A hold of 0 is allowed (free operations can follow the same reserve → capture path).
 */
export async function reserveCredits(deps: CreditDeps, accountId: string, amount: number, purpose: string): Promise<string> {
  if (!Number.isSafeInteger(amount) || amount < 0) throw invalidField("amount", "must be a whole number ≥ 0");
  return deps.store.write(async (tx) => {
    const updated = await tx
      .update(accounts)
      .set({
        creditsBalance: sql`${accounts.creditsBalance} - ${amount}`,
        creditsReserved: sql`${accounts.creditsReserved} + ${amount}`,
      })
      .where(and(eq(accounts.id, accountId), sql`${accounts.creditsBalance} >= ${amount}`))
      .returning({ balance: accounts.creditsBalance })
      .all();
    const row = updated[0];
    if (!row) {
      const account = await tx
        .select({ balance: accounts.creditsBalance })
        .from(accounts)
        .where(eq(accounts.id, accountId))
        .get();
      if (!account) throw notFound("account");
      throw new AppError(
        "insufficient_credits",
        `This needs ${amount} credits; the account has ${account.balance} available.`,
        { required: amount, available: account.balance },
      );
    }
    const holdId = newId();
    await tx
      .insert(creditHolds)
      .values({ id: holdId, accountId, amount, state: "open", purpose, createdAt: deps.clock.now() })
      .run();
    await writeLedger(tx, deps, { accountId, kind: "reserve", amount, holdId, note: purpose, balanceAfter: row.balance });
    return holdId;
  });
}

/** Moves an open hold to `to`; returns the hold, or null when it is unknown or already resolved. */
async function resolveHold(tx: StoreDb, deps: CreditDeps, holdId: string, to: "captured" | "released") {
  const resolved = await tx
    .update(creditHolds)
    .set({ state: to, resolvedAt: deps.clock.now() })
    .where(and(eq(creditHolds.id, holdId), eq(creditHolds.state, "open")))
    .returning({ accountId: creditHolds.accountId, amount: creditHolds.amount, purpose: creditHolds.purpose })
    .all();
  return resolved[0] ?? null;
}

/**
 * Captures an open hold (the credits are spent) and returns the amount captured. Called inside the caller's own
 * `deps.store.write(...)` it joins that write, so the saved result and the capture commit together. Throws if the hold
 * is not open (already captured or released, or unknown): a capture must never silently succeed twice. `subject`
 * (optional) names what was paid for, e.g. `creation:<id>`, and is appended to the ledger note.
 */
export async function captureHold(deps: CreditDeps, holdId: string, subject?: string): Promise<number> {
  return deps.store.write(async (tx) => {
    const hold = await resolveHold(tx, deps, holdId, "captured");
    if (!hold) throw new Error(`captureHold: hold ${holdId} is not open`);
    const updated = await tx
      .update(accounts)
      .set({ creditsReserved: sql`${accounts.creditsReserved} - ${hold.amount}` })
      .where(and(eq(accounts.id, hold.accountId), sql`${accounts.creditsReserved} >= ${hold.amount}`))
      .returning({ balance: accounts.creditsBalance, reserved: accounts.creditsReserved })
      .all();
    const row = updated[0];
    // NB: reserved always covers an open hold; a miss means the totals were corrupted, so fail loudly (rolls back).
    if (!row) throw new Error(`captureHold: reserved total of account ${hold.accountId} does not cover hold ${holdId}`);
    // The spend that took the balance under the threshold is reported once, with the capture (event webhooks).
    if (row.balance < LOW_CREDITS_THRESHOLD && row.balance + hold.amount >= LOW_CREDITS_THRESHOLD) {
      await recordEvent(tx, deps.clock.now(), hold.accountId, "credits.low", () => ({
        balance: row.balance,
        reserved: row.reserved,
        threshold: LOW_CREDITS_THRESHOLD,
      }));
    }
    await writeLedger(tx, deps, {
      accountId: hold.accountId,
      kind: "capture",
      amount: hold.amount,
      holdId,
      // The subject (e.g. "creation:<id>") lets the dashboard's ledger link the charge to what it paid for.
      note: subject ? `${hold.purpose} ${subject}` : hold.purpose,
      balanceAfter: row.balance,
    });
    return hold.amount;
  });
}

/**
 * Releases an open hold: its credits return to the balance. A no-op when the hold is already resolved or unknown,
 * so failure paths can call it unconditionally (including from `finally`). Also works inside a caller's transaction.
 */
export async function releaseHold(deps: CreditDeps, holdId: string): Promise<void> {
  await deps.store.write(async (tx) => {
    const hold = await resolveHold(tx, deps, holdId, "released");
    if (!hold) return;
    const updated = await tx
      .update(accounts)
      .set({
        creditsBalance: sql`${accounts.creditsBalance} + ${hold.amount}`,
        creditsReserved: sql`${accounts.creditsReserved} - ${hold.amount}`,
      })
      .where(and(eq(accounts.id, hold.accountId), sql`${accounts.creditsReserved} >= ${hold.amount}`))
      .returning({ balance: accounts.creditsBalance })
      .all();
    const row = updated[0];
    if (!row) throw new Error(`releaseHold: reserved total of account ${hold.accountId} does not cover hold ${holdId}`);
    await writeLedger(tx, deps, {
      accountId: hold.accountId,
      kind: "release",
      amount: hold.amount,
      holdId,
      note: hold.purpose,
      balanceAfter: row.balance,
    });
  });
}

function prepareSummary(db: StoreDb) {
  return db
    .select({ balance: accounts.creditsBalance, reserved: accounts.creditsReserved })
    .from(accounts)
    .where(eq(accounts.id, sql.placeholder("accountId")))
    .prepare();
}

/**
 * The summary's statement, prepared once per database through drizzle (portable to the PostgreSQL dialect): building
 * and preparing the select at every call was most of a `GET /api/v1/credits` and of an MCP `get_credits`.
 */
const summaryStatements = new WeakMap<StoreDb, ReturnType<typeof prepareSummary>>();

/** The account's spendable balance and reserved total. 404 when the account does not exist. */
export async function creditSummary(deps: Pick<Deps, "store">, accountId: string): Promise<CreditSummary> {
  // NB: keyed by the db the store answers (the reader, or the open write's transaction), so a summary read inside a
  // write sees that write's own rows.
  const db = deps.store.db;
  let statement = summaryStatements.get(db);
  if (!statement) {
    statement = prepareSummary(db);
    summaryStatements.set(db, statement);
  }
  const row = await statement.get({ accountId });
  if (!row) throw notFound("account");
  return row;
}

/** The account's ledger, newest first, `limit` rows per page with an opaque cursor. */
export async function listLedger(
  deps: Pick<Deps, "store">,
  accountId: string,
  page: { limit: number; cursor?: string | null },
): Promise<LedgerPage> {
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  // NB: ledger ids are UUIDv7, so id order is insertion order even when the (injected) clock stands still.
  const rows = await deps.store.db
    .select({
      id: creditLedger.id,
      kind: creditLedger.kind,
      amount: creditLedger.amount,
      holdId: creditLedger.holdId,
      note: creditLedger.note,
      balanceAfter: creditLedger.balanceAfter,
      createdAt: creditLedger.createdAt,
    })
    .from(creditLedger)
    .where(after ? and(eq(creditLedger.accountId, accountId), lt(creditLedger.id, after)) : eq(creditLedger.accountId, accountId))
    .orderBy(desc(creditLedger.id))
    .limit(page.limit + 1)
    .all();
  const entries = rows.slice(0, page.limit);
  const last = entries[entries.length - 1];
  return { entries, nextCursor: rows.length > page.limit && last ? encodeCursor(last.id) : null };
}

/** One ledger page as the API answers it (GET /credits/ledger and the list_credit_ledger tool): timestamps as ISO text. */
export async function ledgerView(
  deps: Pick<Deps, "store">,
  accountId: string,
  page: { limit: number; cursor?: string | null },
): Promise<{ entries: (Omit<LedgerEntry, "createdAt"> & { createdAt: string })[]; nextCursor: string | null }> {
  const found = await listLedger(deps, accountId, page);
  return { entries: found.entries.map((e) => ({ ...e, createdAt: isoAt(e.createdAt) })), nextCursor: found.nextCursor };
}

/** The state of one hold, for callers and tests that need to know whether it is still open. */
export async function holdState(deps: Pick<Deps, "store">, holdId: string): Promise<"open" | "captured" | "released" | null> {
  const row = await deps.store.db.select({ state: creditHolds.state }).from(creditHolds).where(eq(creditHolds.id, holdId)).get();
  return row?.state ?? null;
}
