// PostgreSQL mirror of src/db/schema/post-series.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Repeating posts (decisions.md §14): a series is the rule a post repeats by. Its occurrences are ordinary posts with
 * `scheduled_posts.series_id`; one occurrence is pending at a time (`current_post_id`), and the next is scheduled
 * from its snapshot when it reaches a final status or is cancelled (modules/schedule/repeat.ts).
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, text } from "drizzle-orm/pg-core";
import { REPEAT_UNITS } from "../../schema/post-series";
import { accounts } from "./accounts";

export const postSeries = pgTable(
  "post_series",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    every: text("every", { enum: REPEAT_UNITS }).notNull(),
    interval: bigint("interval", { mode: "number" }).notNull().default(1),
    /** Occurrences in all, the first included; null: no limit. */
    maxCount: bigint("max_count", { mode: "number" }),
    /** No occurrence after this instant (ms); null: no limit. */
    until: bigint("until", { mode: "number" }),
    /** The first occurrence's wall-clock date and time in the account's zone, "YYYY-MM-DDTHH:MM". */
    anchorLocal: text("anchor_local").notNull(),
    /** Occurrences scheduled so far, the first included. */
    occurrences: bigint("occurrences", { mode: "number" }).notNull().default(1),
    /** The occurrence that is pending now (the one whose end schedules the next); null once none is. */
    currentPostId: text("current_post_id"),
    endedAt: bigint("ended_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("post_series_account_idx").on(t.accountId), check("post_series_every_valid", sql`${t.every} IN ('day','week','month')`)],
);
