/**
 * Idempotency-Key records (decisions.md §1): one row per (account, route, key). While the first request runs the row
 * is `in_flight` under a lease; afterwards it holds the answer to replay for 24 hours.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

export const IDEMPOTENCY_STATES = ["in_flight", "done"] as const;

export const idempotencyKeys = sqliteTable(
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
    leaseUntil: integer("lease_until").notNull(),
    status: integer("status"),
    contentType: text("content_type"),
    body: text("body"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.route, t.key] }),
    index("idempotency_keys_created_idx").on(t.createdAt),
    check("idempotency_keys_state_valid", sql`${t.state} IN ('in_flight','done')`),
  ],
);
