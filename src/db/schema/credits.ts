/**
 * The credits ledger: every movement is a row; holds are reserved before work and resolved exactly once
 * (captured with the result, or released on failure). accounts.credits_balance/credits_reserved are the running totals.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const creditHolds = sqliteTable(
  "credit_holds",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    amount: integer("amount").notNull(),
    state: text("state", { enum: ["open", "captured", "released"] }).notNull(),
    /** What the hold pays for, e.g. generate:social_post. */
    purpose: text("purpose").notNull(),
    createdAt: integer("created_at").notNull(),
    resolvedAt: integer("resolved_at"),
  },
  (t) => [
    index("credit_holds_account_state_idx").on(t.accountId, t.state),
    check("credit_holds_amount_non_negative", sql`${t.amount} >= 0`),
    check("credit_holds_state_valid", sql`${t.state} IN ('open','captured','released')`),
  ],
);

export const creditLedger = sqliteTable(
  "credit_ledger",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["grant", "reserve", "capture", "release"] }).notNull(),
    /** Positive for grant; the hold amount for reserve/capture/release. */
    amount: integer("amount").notNull(),
    holdId: text("hold_id"),
    note: text("note").notNull().default(""),
    /** Running balance (spendable) after this movement. */
    balanceAfter: integer("balance_after").notNull(),
    createdAt: integer("created_at").notNull(),
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
