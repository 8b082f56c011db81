/** Accounts (tenants), the people in them and their roles. Timestamps are integer milliseconds since the epoch. */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** One posting slot as stored: the days it repeats on (mon…sun), its wall-clock time "HH:MM", its connections' ids. */
export interface StoredSlot {
  days: string[];
  time: string;
  targets: string[];
}

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Spendable credits, not counting what is reserved. */
    creditsBalance: integer("credits_balance").notNull().default(0),
    /** Credits held by open reservations. */
    creditsReserved: integer("credits_reserved").notNull().default(0),
    disabledAt: integer("disabled_at"),
    createdAt: integer("created_at").notNull(),
    /** The IANA time zone posting slots and repeats follow (decisions.md §14); members still see times in their own. */
    timeZone: text("time_zone").notNull().default("UTC"),
    /** Posts scheduled by editors wait for an owner's approval (decisions.md §14). */
    approvalRequired: integer("approval_required", { mode: "boolean" }).notNull().default(false),
    /** The posting schedule: slots of days × a wall-clock time × connections, in `timeZone` (modules/schedule/slots.ts). */
    postingSlots: text("posting_slots", { mode: "json" }).$type<StoredSlot[]>().notNull().default(sql`'[]'`),
    /**
     * Bumped by a trigger whenever a queued post leaves its slot (deleted, moved, taken out of the queue): the queue's
     * slot cursor (modules/schedule/queue.ts) is trusted only while this is unchanged (db/queue-triggers.ts).
     */
    queueGeneration: integer("queue_generation").notNull().default(0),
  },
  (t) => [
    check("accounts_balance_non_negative", sql`${t.creditsBalance} >= 0`),
    check("accounts_reserved_non_negative", sql`${t.creditsReserved} >= 0`),
  ],
);

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    name: text("name").notNull().default(""),
    /** argon2id via Bun.password. */
    passwordHash: text("password_hash").notNull(),
    /** The instance admin may create accounts and grant credits. */
    isInstanceAdmin: integer("is_instance_admin", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_unique").on(sql`lower(${t.email})`)],
);

export const members = sqliteTable(
  "members",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "editor", "viewer"] }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("members_account_user_unique").on(t.accountId, t.userId),
    index("members_user_idx").on(t.userId),
    check("members_role_valid", sql`${t.role} IN ('owner','editor','viewer')`),
  ],
);
