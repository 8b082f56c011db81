/**
 * The mailer: sends the notices whose mail is `pending` (store/notices.ts records them inside the change they report).
 * It runs beside the dispatcher in `seedcast serve` on every replica, looking every MAIL_POLL_MS; no request ever
 * waits for SMTP.
 *
 * - Once across replicas: a notice is claimed with a fenced lease (one write: FOR UPDATE SKIP LOCKED on PostgreSQL,
 *   then a conditional UPDATE whose changed-row count is checked), and every later write is conditional on the lease
 *   token. A replica that dies after the SMTP server accepted a message but before recording it leaves the lease to
 *   expire, and the message is sent again: at least once, with that window as the only repeat.
 * - Never lost silently: a failed attempt is logged (the notice id, kind, attempt and the server's reason, never the
 *   SMTP URL, a password or the message) and retried after 1, 5, 15 and 60 minutes; after MAIL_MAX_ATTEMPTS the notice
 *   is `failed` with the reason, logged as an error. A notice still unsent a day after it was made is given up the
 *   same way (a reset link is dead by then anyway).
 * - Without SMTP_URL, pending notices are marked `none` (shown in the dashboard only), so turning SMTP on later does
 *   not mail a backlog.
 * - The sealed message (it may hold a one-time link) is cleared once the notice is sent or given up.
 */
import { and, asc, eq, isNotNull, isNull, lte, or } from "drizzle-orm";
import { forUpdateSkipLocked } from "../../db/portable-sql";
import type { NoticeKind } from "../../db/schema/notices";
import { notices } from "../../db/tables";
import type { Deps } from "../../deps";
import { newId } from "../../lib/ids";
import { type MailMessage, type SmtpSender, smtpSender } from "../../lib/smtp";
import { NOTICE_MAIL_KEY_LABEL, type NoticeMail } from "../../store/notices";
import { openJson } from "../../store/sealing";
import { KIND_SWITCH_LABELS } from "./kinds";

export const MAIL_MAX_ATTEMPTS = 5;
/** Pause after the 1st, 2nd, 3rd, 4th failed attempt. */
export const MAIL_BACKOFF_MS = [60_000, 300_000, 900_000, 3_600_000] as const;
/** How long a claimed notice is ours: longer than one attempt's worst case (the SMTP timeouts). */
export const MAIL_LEASE_MS = 120_000;
/** A notice not sent within this long after it was made is given up. */
export const MAIL_MAX_AGE_MS = 24 * 3_600_000;
/** How often each replica looks for due mail. */
export const MAIL_POLL_MS = 2_000;
/** Messages in flight at once per replica. */
const MAIL_BATCH = 8;

interface MailClaim {
  id: string;
  leaseToken: string;
}

function claimable(now: number) {
  return and(
    eq(notices.mailStatus, "pending"),
    isNotNull(notices.nextAttemptAt),
    lte(notices.nextAttemptAt, now),
    or(isNull(notices.leaseExpiresAt), lte(notices.leaseExpiresAt, now)),
  );
}

/** Claims up to `limit` due notices, oldest due first, with fresh leases, in one write transaction. */
export async function claimDueMail(deps: Pick<Deps, "store" | "clock">, limit: number, leaseMs = MAIL_LEASE_MS): Promise<MailClaim[]> {
  const now = deps.clock.now();
  // A plain read first: most looks find nothing, and then take no write lock.
  const any = await deps.store.db.select({ id: notices.id }).from(notices).where(claimable(now)).limit(1).get();
  if (!any) return [];
  return deps.store.write(async (tx) => {
    const at = deps.clock.now();
    const due = await forUpdateSkipLocked(
      deps.store.dialect,
      tx.select({ id: notices.id }).from(notices).where(claimable(at)).orderBy(asc(notices.nextAttemptAt)).limit(limit),
    ).all();
    const claims: MailClaim[] = [];
    for (const row of due) {
      const leaseToken = newId();
      const updated = await tx
        .update(notices)
        .set({ leaseToken, leaseExpiresAt: at + leaseMs })
        .where(and(eq(notices.id, row.id), claimable(at)))
        .returning({ id: notices.id })
        .all();
      if (updated.length === 1) claims.push({ id: row.id, leaseToken });
    }
    return claims;
  });
}

/** Records the outcome of a claimed notice (fenced by its lease); false when the lease was lost. */
async function record(deps: Pick<Deps, "store">, claim: MailClaim, values: Partial<typeof notices.$inferInsert>): Promise<boolean> {
  const rows = await deps.store.write((tx) =>
    tx
      .update(notices)
      .set({ ...values, leaseToken: null, leaseExpiresAt: null })
      .where(and(eq(notices.id, claim.id), eq(notices.leaseToken, claim.leaseToken)))
      .returning({ id: notices.id })
      .all(),
  );
  return rows.length === 1;
}

/** What a notice of an account event says by email: its line, where to look, and where to turn it off. */
function eventMail(baseUrl: string, kind: NoticeKind, title: string, path: string | null): NoticeMail {
  const lines = [title, ""];
  if (path) lines.push(`See it here: ${baseUrl}${path}`, "");
  lines.push(
    "—",
    "Seedcast",
    `You get this email because you are a member of this account. To stop emails like it, turn "${KIND_SWITCH_LABELS[kind]}" off in Your settings: ${baseUrl}/dashboard/account`,
  );
  return { subject: title, text: lines.join("\n") };
}


/** Sends one claimed notice (or, without a sender, marks it dashboard-only) and records the outcome. Never throws. */
export async function deliverMail(deps: Pick<Deps, "store" | "clock" | "config" | "log" | "instanceSecret">, claim: MailClaim, sender: SmtpSender | null): Promise<void> {
  const row = await deps.store.db.select().from(notices).where(and(eq(notices.id, claim.id), eq(notices.leaseToken, claim.leaseToken))).get();
  if (!row) return; // lease lost
  const now = deps.clock.now();
  if (!sender) {
    await record(deps, claim, { mailStatus: "none", mailSealed: null, nextAttemptAt: null });
    return;
  }
  if (now - row.createdAt > MAIL_MAX_AGE_MS) {
    const lastError = "Not sent within a day of the notice; given up.";
    deps.log.error("notice email given up", { noticeId: row.id, kind: row.kind, attempts: row.attempts, reason: lastError });
    await record(deps, claim, { mailStatus: "failed", mailSealed: null, nextAttemptAt: null, lastError });
    return;
  }
  try {
    const mail = row.mailSealed
      ? openJson<NoticeMail>(deps.instanceSecret, row.id, row.mailSealed, NOTICE_MAIL_KEY_LABEL)
      : eventMail(deps.config.baseUrl, row.kind, row.title, row.path);
    const message: MailMessage = { to: row.email, subject: mail.subject, text: mail.text };
    await sender.send(message);
    await record(deps, claim, { mailStatus: "sent", mailSealed: null, nextAttemptAt: null, sentAt: deps.clock.now(), lastError: null });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const attempts = row.attempts + 1;
    const final = attempts >= MAIL_MAX_ATTEMPTS;
    const fields = { noticeId: row.id, kind: row.kind, attempts, final, reason };
    if (final) deps.log.error("notice email failed; given up", fields);
    else deps.log.warn("notice email failed; will retry", fields);
    const lastError = final ? `Gave up after ${attempts} attempts: ${reason}` : reason;
    await record(
      deps,
      claim,
      final
        ? { mailStatus: "failed", mailSealed: null, nextAttemptAt: null, attempts, lastError }
        : { attempts, nextAttemptAt: deps.clock.now() + (MAIL_BACKOFF_MS[attempts - 1] ?? MAIL_BACKOFF_MS[3]), lastError },
    );
  }
}

/** The SMTP sender of this configuration, or null without SMTP_URL. */
export function senderFor(deps: Pick<Deps, "config">): SmtpSender | null {
  const smtp = deps.config.smtp;
  return smtp ? smtpSender(smtp.url, smtp.from) : null;
}

/** Claims and sends every due notice (in batches), awaiting all. Tests and the running mailer call it. */
export async function runDueMailOnce(deps: Pick<Deps, "store" | "clock" | "config" | "log" | "instanceSecret">, sender: SmtpSender | null): Promise<number> {
  let handled = 0;
  for (;;) {
    const claims = await claimDueMail(deps, MAIL_BATCH);
    if (claims.length === 0) return handled;
    await Promise.all(claims.map((c) => deliverMail(deps, c, sender)));
    handled += claims.length;
  }
}

export interface RunningMailer {
  /** Stops looking and waits for the round in progress. */
  stop(): Promise<void>;
}

/** Starts the mailer loop of `seedcast serve`. */
export function startMailer(deps: Deps): RunningMailer {
  const sender = senderFor(deps);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let round: Promise<void> = Promise.resolve();
  const tick = () => {
    round = (async () => {
      try {
        await runDueMailOnce(deps, sender);
      } catch (error) {
        deps.log.error("mailer round failed", { error: error instanceof Error ? error.message : String(error) });
      }
    })();
    void round.then(() => {
      if (!stopped) timer = setTimeout(tick, MAIL_POLL_MS);
    });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await round;
      sender?.close();
    },
  };
}
