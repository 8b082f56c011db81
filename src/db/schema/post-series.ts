/**
 * Repeating posts (decisions.md §14): a series is the rule a post repeats by. Its occurrences are ordinary posts with
 * `scheduled_posts.series_id`; one occurrence is pending at a time (`current_post_id`), and the next is scheduled
 * from its snapshot when it reaches a final status or is cancelled (modules/schedule/repeat.ts).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const REPEAT_UNITS = ["day", "week", "month"] as const;
export type RepeatUnit = (typeof REPEAT_UNITS)[number];

export const postSeries = sqliteTable(
  "post_series",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    every: text("every", { enum: REPEAT_UNITS }).notNull(),
    interval: integer("interval").notNull().default(1),
    /** Occurrences in all, the first included; null: no limit. */
    maxCount: integer("max_count"),
    /** No occurrence after this instant (ms); null: no limit. */
    until: integer("until"),
    /** The first occurrence's wall-clock date and time in the account's zone, "YYYY-MM-DDTHH:MM". */
    anchorLocal: text("anchor_local").notNull(),
    /** Occurrences scheduled so far, the first included. */
    occurrences: integer("occurrences").notNull().default(1),
    /** The occurrence that is pending now (the one whose end schedules the next); null once none is. */
    currentPostId: text("current_post_id"),
    endedAt: integer("ended_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("post_series_account_idx").on(t.accountId), check("post_series_every_valid", sql`${t.every} IN ('day','week','month')`)],
);
