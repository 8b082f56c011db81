// PostgreSQL mirror of src/db/schema/rate-limits.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Request rate limits kept in the database, so every replica of a cluster draws on the same bucket (decisions.md §11).
 * One token bucket per limited thing (an API key, an OAuth grant, a registering client address): `tokens_milli`
 * thousandths of a token as of `updated_at`, refilled at the limit's rate when it is next taken from; a replica may take
 * a few tokens at once and spend them itself (src/http/rate-limit-db.ts). Used in
 * PostgreSQL mode; the appliance keeps its buckets in memory (one process owns the database: src/http/rate-limit.ts).
 * A bucket untouched for a minute is full again, so rows older than that are deleted by the tidy job.
 */
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";

export const rateLimitBuckets = pgTable(
  "rate_limit_buckets",
  {
    /** `<limiter>:<key id | grant id | address hmac>` */
    key: text("key").primaryKey(),
    tokensMilli: bigint("tokens_milli", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    /** Whole tokens the last take handed out (0: refused); what the conditional upsert answers. */
    granted: bigint("granted", { mode: "number" }).notNull(),
  },
  (t) => [index("rate_limit_buckets_updated_idx").on(t.updatedAt)],
);
