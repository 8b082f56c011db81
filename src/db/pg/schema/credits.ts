// PostgreSQL mirror of src/db/schema/credits.ts: the same tables, columns, JavaScript types and constraints.
/**
 * The credits ledger: every movement is a row; holds are reserved before work and resolved exactly once
 * (captured with the result, or released on failure). accounts.credits_balance/credits_reserved are the running totals.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";

export const creditHolds = pgTable(
  "credit_holds",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    amount: bigint("amount", { mode: "number" }).notNull(),
    state: text("state", { enum: ["open", "captured", "released"] }).notNull(),
    /** What the hold pays for, e.g. generate:social_post. */
    purpose: text("purpose").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    resolvedAt: bigint("resolved_at", { mode: "number" }),
  },
  (t) => [
    index("credit_holds_account_state_idx").on(t.accountId, t.state),
    check("credit_holds_amount_non_negative", sql`${t.amount} >= 0`),
    check("credit_holds_state_valid", sql`${t.state} IN ('open','captured','released')`),
  ],
);

export const creditLedger = pgTable(
  "credit_ledger",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["grant", "reserve", "capture", "release"] }).notNull(),
    /** Positive for grant; the hold amount for reserve/capture/release. */
    amount: bigint("amount", { mode: "number" }).notNull(),
    holdId: text("hold_id"),
    note: text("note").notNull().default(""),
    /** Running balance (spendable) after this movement. */
    balanceAfter: bigint("balance_after", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("credit_ledger_account_idx").on(t.accountId, t.createdAt),
    // Each hold is resolved at most once: the database itself refuses a second capture or release row.
    uniqueIndex("credit_ledger_one_resolution_per_hold")
      .on(t.holdId)
      .where(sql`${t.kind} IN ('capture','release')`),
    check("credit_ledger_kind_valid", sql`${t.kind} IN ('grant','reserve','capture','release')`),
    check("credit_ledger_amount_non_negative", sql`${t.amount} >= 0`),
  ],
);
