/**
 * Request rate limits kept in the database, so every replica of a cluster draws on the same bucket (decisions.md §11).
 * One token bucket per limited thing (an API key, an OAuth grant, a registering client address): `tokens_milli`
 * thousandths of a token as of `updated_at`, refilled at the limit's rate when it is next taken from; a replica may take
 * a few tokens at once and spend them itself (src/http/rate-limit-db.ts). Used in
 * PostgreSQL mode; the appliance keeps its buckets in memory (one process owns the database: src/http/rate-limit.ts).
 * A bucket untouched for a minute is full again, so rows older than that are deleted by the tidy job.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const rateLimitBuckets = sqliteTable(
  "rate_limit_buckets",
  {
    /** `<limiter>:<key id | grant id | address hmac>` */
    key: text("key").primaryKey(),
    tokensMilli: integer("tokens_milli").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Whole tokens the last take handed out (0: refused); what the conditional upsert answers. */
    granted: integer("granted").notNull(),
  },
  (t) => [index("rate_limit_buckets_updated_idx").on(t.updatedAt)],
);
