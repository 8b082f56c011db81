// PostgreSQL mirror of src/db/schema/notices.ts: the same tables, columns, JavaScript types and constraints.
/**
 * Notices to people (decisions.md §15): recorded by src/store/notices.ts, mailed by src/modules/notices/. One row per notice per recipient: shown in the
 * dashboard (the event kinds, on "Notices"), and mailed through SMTP_URL when it is set and the person has not turned
 * that kind off. The row is its own mail outbox: it is written in the transaction of the change it reports, and the
 * mailer claims it with a fenced lease (lease_token + lease_expires_at), so one replica sends it, retried with backoff.
 *
 * `notice_mail_opt_outs`: a row turns one kind of email off for one person (no row: on).
 */
import { sql } from "drizzle-orm";
import { bigint, check, index, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { accounts, users } from "./accounts";
import { MAIL_STATUSES, NOTICE_KINDS } from "../../schema/notices";

export const notices = pgTable(
  "notices",
  {
    id: text("id").primaryKey(),
    kind: text("kind", { enum: NOTICE_KINDS }).notNull(),
    /** The account it is about; null for a password reset. */
    accountId: text("account_id").references(() => accounts.id, { onDelete: "cascade" }),
    /** The person it is for; null for an invitation to an address without a login yet. */
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    /** One plain line for the dashboard (never a secret). */
    title: text("title").notNull(),
    /** Where the dashboard links it (a path), or null. */
    path: text("path"),
    /** The email `{subject, text}` sealed under the instance secret (it may hold a one-time link); cleared once sent or given up. */
    mailSealed: text("mail_sealed"),
    mailStatus: text("mail_status", { enum: MAIL_STATUSES }).notNull(),
    /** Failed sending attempts so far. */
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }),
    leaseToken: text("lease_token"),
    leaseExpiresAt: bigint("lease_expires_at", { mode: "number" }),
    /** Why the last attempt failed (never the SMTP URL or a password). */
    lastError: text("last_error"),
    sentAt: bigint("sent_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [
    index("notices_mail_due_idx").on(t.mailStatus, t.nextAttemptAt),
    index("notices_user_idx").on(t.userId, t.createdAt),
    index("notices_account_idx").on(t.accountId, t.createdAt),
    check("notices_kind_valid", sql`${t.kind} IN ('post_failed','post_unconfirmed','connection_needs_attention','post_awaiting_approval','invitation','password_reset')`),
    check("notices_mail_status_valid", sql`${t.mailStatus} IN ('none','off','pending','sent','failed')`),
  ],
);

export const noticeMailOptOuts = pgTable(
  "notice_mail_opt_outs",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: NOTICE_KINDS }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.kind] })],
);
