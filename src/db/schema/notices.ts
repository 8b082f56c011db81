/**
 * Notices to people (decisions.md §15): recorded by src/store/notices.ts, mailed by src/modules/notices/. One row per notice per recipient: shown in the
 * dashboard (the event kinds, on "Notices"), and mailed through SMTP_URL when it is set and the person has not turned
 * that kind off. The row is its own mail outbox: it is written in the transaction of the change it reports, and the
 * mailer claims it with a fenced lease (lease_token + lease_expires_at), so one replica sends it, retried with backoff.
 *
 * `notice_mail_opt_outs`: a row turns one kind of email off for one person (no row: on).
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, users } from "./accounts";

/**
 * Every kind of notice. `post_awaiting_approval` is recorded when an editor's post is held for an owner
 * (modules/schedule/approval.ts). `post_unconfirmed` has no source yet; its kind, words and switch are ready
 * (src/modules/notices/kinds.ts).
 */
export const NOTICE_KINDS = [
  "post_failed",
  "post_unconfirmed",
  "connection_needs_attention",
  "post_awaiting_approval",
  "invitation",
  "password_reset",
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/**
 * `none`: no email (SMTP is not set); `off`: the person turned this kind off; `pending`: to be sent (or retried);
 * `sent`; `failed`: given up after the last attempt.
 */
export const MAIL_STATUSES = ["none", "off", "pending", "sent", "failed"] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

export const notices = sqliteTable(
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
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at"),
    leaseToken: text("lease_token"),
    leaseExpiresAt: integer("lease_expires_at"),
    /** Why the last attempt failed (never the SMTP URL or a password). */
    lastError: text("last_error"),
    sentAt: integer("sent_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("notices_mail_due_idx").on(t.mailStatus, t.nextAttemptAt),
    index("notices_user_idx").on(t.userId, t.createdAt),
    index("notices_account_idx").on(t.accountId, t.createdAt),
    check("notices_kind_valid", sql`${t.kind} IN ('post_failed','post_unconfirmed','connection_needs_attention','post_awaiting_approval','invitation','password_reset')`),
    check("notices_mail_status_valid", sql`${t.mailStatus} IN ('none','off','pending','sent','failed')`),
  ],
);

export const noticeMailOptOuts = sqliteTable(
  "notice_mail_opt_outs",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: NOTICE_KINDS }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.kind] })],
);
