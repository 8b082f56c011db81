// PostgreSQL mirror of src/db/schema/accounts.ts: the same tables, columns, JavaScript types and constraints.
/** Accounts (tenants), the people in them and their roles. Timestamps are integer milliseconds since the epoch. */
import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { StoredSlot } from "../../schema/accounts";
import { jsonDocument } from "../columns";

export const accounts = pgTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Spendable credits, not counting what is reserved. */
    creditsBalance: bigint("credits_balance", { mode: "number" }).notNull().default(0),
    /** Credits held by open reservations. */
    creditsReserved: bigint("credits_reserved", { mode: "number" }).notNull().default(0),
    disabledAt: bigint("disabled_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    /** The IANA time zone posting slots and repeats follow (decisions.md §14); members still see times in their own. */
    timeZone: text("time_zone").notNull().default("UTC"),
    /** Posts scheduled by editors wait for an owner's approval (decisions.md §14). */
    approvalRequired: boolean("approval_required").notNull().default(false),
    /** The posting schedule: slots of days × a wall-clock time × connections, in `timeZone` (modules/schedule/slots.ts). */
    postingSlots: jsonDocument<StoredSlot[]>("posting_slots").notNull().default(sql`'[]'::jsonb`),
    /**
     * Bumped by a trigger whenever a queued post leaves its slot (deleted, moved, taken out of the queue): the queue's
     * slot cursor (modules/schedule/queue.ts) is trusted only while this is unchanged (db/queue-triggers.ts).
     */
    queueGeneration: bigint("queue_generation", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    check("accounts_balance_non_negative", sql`${t.creditsBalance} >= 0`),
    check("accounts_reserved_non_negative", sql`${t.creditsReserved} >= 0`),
  ],
);

export const users = pgTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    name: text("name").notNull().default(""),
    /** argon2id via Bun.password. */
    passwordHash: text("password_hash").notNull(),
    /** The instance admin may create accounts and grant credits. */
    isInstanceAdmin: boolean("is_instance_admin").notNull().default(false),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("users_email_unique").on(sql`lower(${t.email})`)],
);

export const members = pgTable(
  "members",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "editor", "viewer"] }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("members_account_user_unique").on(t.accountId, t.userId),
    index("members_user_idx").on(t.userId),
    check("members_role_valid", sql`${t.role} IN ('owner','editor','viewer')`),
  ],
);
