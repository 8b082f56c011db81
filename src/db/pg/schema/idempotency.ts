// PostgreSQL mirror of src/db/schema/idempotency.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Idempotency-Key records (decisions.md §1): one row per (account, route, key). While the first request runs the row
 * is `in_flight` under a lease; afterwards it holds the answer to replay for 24 hours.
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { IDEMPOTENCY_STATES } from "../../schema/idempotency";

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Method and path, e.g. `POST /api/v1/seeds`: keys are scoped per route. */
    route: text("route").notNull(),
    key: text("key").notNull(),
    /** SHA-256 hex of the request (query + canonical body): a different body under the same key is refused. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: IDEMPOTENCY_STATES }).notNull(),
    /** Random id of the request that owns an in_flight row; only it may complete the row. */
    lease: text("lease").notNull(),
    /** An in_flight row whose lease ran out (a crashed process) may be taken over. */
    leaseUntil: bigint("lease_until", { mode: "number" }).notNull(),
    status: bigint("status", { mode: "number" }),
    contentType: text("content_type"),
    body: text("body"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.route, t.key] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
    check("idempotency_keys_state_valid", sql`${t.state} IN ('in_flight','done')`),
  ],
);
