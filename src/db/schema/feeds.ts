/**
 * Feeds (decisions.md §14): a blog's RSS, Atom or JSON Feed, read when added and then every 30 minutes, each new item
 * becoming a seed (and, by mode, a generated creation or a queued post). Two tables:
 *  - `feeds`: the subscription, its conditional-request validators (ETag, Last-Modified), its state (active, or paused
 *    after 5 failures in a row, with the reason), and the poll lease (`poll_lease_until`): a poll claims the feed with
 *    a conditional UPDATE, so one poller at a time reads a feed, across replicas.
 *  - `feed_items`: every item already taken, by its key (guid, else link). The primary key (feed_id, item_key) is what
 *    makes an item a seed once only, even when two polls of the same feed race: the loser's insert conflicts.
 */
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const FEED_MODES = ["seed", "draft", "queue"] as const;
export type FeedMode = (typeof FEED_MODES)[number];

export const FEED_STATES = ["active", "paused"] as const;
export type FeedState = (typeof FEED_STATES)[number];

export const feeds = sqliteTable(
  "feeds",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    mode: text("mode", { enum: FEED_MODES }).notNull(),
    /** JSON array of connection ids (queue mode), as given. */
    targets: text("targets").notNull(),
    /** The feed's own title, from its last good read. */
    title: text("title"),
    etag: text("etag"),
    lastModified: text("last_modified"),
    state: text("state", { enum: FEED_STATES }).notNull(),
    /** Failed polls in a row; 5 pause the feed. */
    failures: integer("failures").notNull().default(0),
    /** The last failure's sentence (the reason shown when paused); null after a good poll. */
    lastError: text("last_error"),
    lastErrorCode: text("last_error_code"),
    lastPolledAt: integer("last_polled_at"),
    lastSuccessAt: integer("last_success_at"),
    nextPollAt: integer("next_poll_at").notNull(),
    /** Set while a poll runs (a claim); a poll that died leaves it to expire. */
    pollLeaseUntil: integer("poll_lease_until"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("feeds_account_url_unique").on(t.accountId, t.url),
    index("feeds_account_created_idx").on(t.accountId, t.createdAt),
    index("feeds_due_idx").on(t.state, t.nextPollAt),
  ],
);

export const feedItems = sqliteTable(
  "feed_items",
  {
    feedId: text("feed_id")
      .notNull()
      .references(() => feeds.id, { onDelete: "cascade" }),
    /** The item's guid (RSS), id (Atom, JSON Feed), else its link. */
    itemKey: text("item_key").notNull(),
    /** The seed it became (no foreign key: deleting the seed must not make the item new again). */
    seedId: text("seed_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.feedId, t.itemKey] })],
);

export type FeedRow = typeof feeds.$inferSelect;
export type FeedItemRow = typeof feedItems.$inferSelect;
