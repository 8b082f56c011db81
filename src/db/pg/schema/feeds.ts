// PostgreSQL mirror of src/db/schema/feeds.ts: the same tables, columns, JavaScript types and constraints.
import { bigint, index, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { FEED_MODES, FEED_STATES } from "../../schema/feeds";

export const feeds = pgTable(
  "feeds",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    mode: text("mode", { enum: FEED_MODES }).notNull(),
    targets: text("targets").notNull(),
    title: text("title"),
    etag: text("etag"),
    lastModified: text("last_modified"),
    state: text("state", { enum: FEED_STATES }).notNull(),
    failures: bigint("failures", { mode: "number" }).notNull().default(0),
    lastError: text("last_error"),
    lastErrorCode: text("last_error_code"),
    lastPolledAt: bigint("last_polled_at", { mode: "number" }),
    lastSuccessAt: bigint("last_success_at", { mode: "number" }),
    nextPollAt: bigint("next_poll_at", { mode: "number" }).notNull(),
    pollLeaseUntil: bigint("poll_lease_until", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("feeds_account_url_unique").on(t.accountId, t.url),
    index("feeds_account_created_idx").on(t.accountId, t.createdAt),
    index("feeds_due_idx").on(t.state, t.nextPollAt),
  ],
);

export const feedItems = pgTable(
  "feed_items",
  {
    feedId: text("feed_id")
      .notNull()
      .references(() => feeds.id, { onDelete: "cascade" }),
    itemKey: text("item_key").notNull(),
    seedId: text("seed_id"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.feedId, t.itemKey] })],
);
