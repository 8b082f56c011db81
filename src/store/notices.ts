/**
 * Notices to people (decisions.md §15): recorded INSIDE the transaction of the change they report, like event webhooks
 * (store/events.ts), so a notice exists if and only if the change committed, and a change made once (a post turning
 * failed under its row lock, a connection turning from ready to blocked in one conditional update) makes its notices
 * once, on whichever replica made it. The mailer (src/modules/notices/mailer.ts) sends the pending ones.
 *
 * It sits in store/, below publishing/ and the modules, because post-status (publishing) and the connection checks
 * (store/connections.ts, modules/connections) record them.
 *
 * API for the other layers:
 *  - `recordAccountNotice(tx, now, {kind, accountId, title, path})`: one notice per member whose role the kind
 *    concerns (NOTICE_AUDIENCE), mail `pending` unless they turned the kind off
 *  - `recordPersonNotice(tx, now, {...})`: one notice to one address (invitation, password reset), mail sealed by the caller
 *  - `noticePostFailed`, `noticePostUnconfirmed`, `noticeConnectionBlocked(tx, now, row, reason)`: the event sources
 *  - `mailOptOuts`, `setMailOptOut`
 */
import { and, eq, inArray } from "drizzle-orm";
import type { NoticeKind } from "../db/schema/notices";
import type { StoreDb } from "../db/store";
import { members, noticeMailOptOuts, notices, users } from "../db/tables";
import { newId } from "../lib/ids";
import { recordEvent } from "./events";
import { sealJson } from "./sealing";

type Role = (typeof members.$inferSelect)["role"];

/** Who in an account hears of each account notice. Invitation and reset notices go to one address, not an account. */
export const NOTICE_AUDIENCE: Record<Exclude<NoticeKind, "invitation" | "password_reset">, readonly Role[]> = {
  post_failed: ["owner", "editor"],
  post_unconfirmed: ["owner", "editor"],
  connection_needs_attention: ["owner", "editor"],
  post_awaiting_approval: ["owner"],
};
export type AccountNoticeKind = keyof typeof NOTICE_AUDIENCE;

/** A stored title's longest length (the dashboard line and the email subject). */
const TITLE_MAX = 200;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** The kinds of email `userIds` turned off, as "userId kind" strings. */
async function optedOut(tx: StoreDb, kind: NoticeKind, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await tx
    .select({ userId: noticeMailOptOuts.userId })
    .from(noticeMailOptOuts)
    .where(and(eq(noticeMailOptOuts.kind, kind), inArray(noticeMailOptOuts.userId, [...userIds])))
    .all();
  return new Set(rows.map((r) => r.userId));
}

/**
 * Records `kind` for every member of `accountId` whose role the kind concerns, inside the caller's transaction. Each
 * notice's mail is `pending` (the mailer sends it, or, without SMTP, marks it `none`) or `off` when the person turned
 * the kind off. Answers how many notices were recorded.
 */
export async function recordAccountNotice(
  tx: StoreDb,
  now: number,
  input: { kind: AccountNoticeKind; accountId: string; title: string; path: string | null },
): Promise<number> {
  const people = await tx
    .select({ userId: members.userId, email: users.email })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.accountId, input.accountId), inArray(members.role, [...NOTICE_AUDIENCE[input.kind]])))
    .all();
  if (people.length === 0) return 0;
  const off = await optedOut(tx, input.kind, people.map((p) => p.userId));
  const title = clip(input.title, TITLE_MAX);
  await tx
    .insert(notices)
    .values(
      people.map((p) => ({
        id: newId(),
        kind: input.kind,
        accountId: input.accountId,
        userId: p.userId,
        email: p.email,
        title,
        path: input.path,
        mailSealed: null,
        mailStatus: off.has(p.userId) ? ("off" as const) : ("pending" as const),
        nextAttemptAt: off.has(p.userId) ? null : now,
        createdAt: now,
      })),
    )
    .run();
  return people.length;
}

/** The derived key's purpose label for the sealed email of a notice (the notice id is the additional data). */
export const NOTICE_MAIL_KEY_LABEL = "notices:mail:v1";

/** An email as the mailer sends it. */
export interface NoticeMail {
  subject: string;
  text: string;
}

/**
 * Records one notice to one address (an invitation, a password reset). `mail` is the message (it holds a one-time
 * link: it is stored sealed under the instance secret, and cleared once sent), or null when there is no SMTP. A person
 * who turned the kind off gets no email (`off`), and the message is not kept. Answers the notice's mail status.
 */
export async function recordPersonNotice(
  tx: StoreDb,
  now: number,
  instanceSecret: Uint8Array,
  input: { kind: "invitation" | "password_reset"; accountId: string | null; userId: string | null; email: string; title: string; mail: NoticeMail | null },
): Promise<"none" | "off" | "pending"> {
  const off = input.userId !== null && (await optedOut(tx, input.kind, [input.userId])).has(input.userId);
  const mailStatus = off ? "off" : input.mail ? "pending" : "none";
  const id = newId();
  await tx
    .insert(notices)
    .values({
      id,
      kind: input.kind,
      accountId: input.accountId,
      userId: input.userId,
      email: input.email,
      title: clip(input.title, TITLE_MAX),
      path: null,
      mailSealed: mailStatus === "pending" && input.mail ? sealJson(instanceSecret, id, input.mail, NOTICE_MAIL_KEY_LABEL) : null,
      mailStatus,
      nextAttemptAt: mailStatus === "pending" ? now : null,
      createdAt: now,
    })
    .run();
  return mailStatus;
}

/** Whether `userId` turned the email of `kind` off. */
export async function isMailOptedOut(tx: StoreDb, userId: string, kind: NoticeKind): Promise<boolean> {
  return (await optedOut(tx, kind, [userId])).has(userId);
}

/**
 * The failed-post notice, from the point where a post becomes final (publishing/post-status.ts, the same point that
 * records `post.failed` / `post.partially_failed` for event webhooks).
 */
export async function noticePostFailed(
  tx: StoreDb,
  now: number,
  post: { id: string; accountId: string; caption: string },
  errorMessage: string | null,
  partially: boolean,
): Promise<void> {
  const what = clip(post.caption, 60) || "a post without a caption";
  const title = `${partially ? "A post went out only partly" : "A post was not published"}: “${what}”${errorMessage ? `. ${errorMessage}` : ""}`;
  await recordAccountNotice(tx, now, { kind: "post_failed", accountId: post.accountId, title, path: `/dashboard/calendar/posts/${post.id}` });
}

/**
 * The notice of a post that became `unconfirmed` (decisions.md §12): a network could not tell whether it went out, so
 * a person must look and answer "It was posted" or "Send again" on the post's page.
 */
export async function noticePostUnconfirmed(
  tx: StoreDb,
  now: number,
  post: { id: string; accountId: string; caption: string },
  errorMessage: string | null,
): Promise<void> {
  const what = clip(post.caption, 60) || "a post without a caption";
  const title = `Check whether a post went out: “${what}”${errorMessage ? `. ${errorMessage}` : ""}`;
  await recordAccountNotice(tx, now, { kind: "post_unconfirmed", accountId: post.accountId, title, path: `/dashboard/calendar/posts/${post.id}` });
}

/**
 * The needs-attention notice, when a connection turns from ready to blocked (store/connections.ts, modules/connections),
 * and the `connection.needs_attention` event for the account's event webhooks, in the same transaction.
 */
export async function noticeConnectionBlocked(
  tx: StoreDb,
  now: number,
  connection: { id: string; accountId: string; label: string; platform: string },
  reason: string | null,
): Promise<void> {
  const title = `${connection.label} (${connection.platform}) needs attention${reason ? `: ${reason}` : ""}`;
  await recordAccountNotice(tx, now, { kind: "connection_needs_attention", accountId: connection.accountId, title, path: "/dashboard/connections" });
  await recordEvent(tx, now, connection.accountId, "connection.needs_attention", () => ({
    accountId: connection.id,
    platform: connection.platform,
    label: connection.label,
    blockedReason: reason,
  }));
}

/** The kinds whose email `userId` turned off. */
export async function mailOptOuts(db: StoreDb, userId: string): Promise<Set<NoticeKind>> {
  const rows = await db.select({ kind: noticeMailOptOuts.kind }).from(noticeMailOptOuts).where(eq(noticeMailOptOuts.userId, userId)).all();
  return new Set(rows.map((r) => r.kind));
}

/** Turns the email of `kind` off (`off` true) or back on for `userId`. Idempotent. */
export async function setMailOptOut(tx: StoreDb, now: number, userId: string, kind: NoticeKind, off: boolean): Promise<void> {
  if (off) await tx.insert(noticeMailOptOuts).values({ userId, kind, createdAt: now }).onConflictDoNothing().run();
  else await tx.delete(noticeMailOptOuts).where(and(eq(noticeMailOptOuts.userId, userId), eq(noticeMailOptOuts.kind, kind))).run();
}
