/**
 * A person's notices and their email switches (decisions.md §15): what the dashboard's Notices page lists, and which
 * kinds of email each person turned off on "Your settings".
 */
import { and, desc, eq, isNull, lt, ne, or } from "drizzle-orm";
import { NOTICE_KINDS, type MailStatus, type NoticeKind } from "../../db/schema/notices";
import { notices } from "../../db/tables";
import type { Deps } from "../../deps";
import { mailOptOuts, setMailOptOut } from "../../store/notices";

export interface NoticeView {
  id: string;
  kind: NoticeKind;
  title: string;
  path: string | null;
  mailStatus: MailStatus;
  lastError: string | null;
  createdAt: number;
}

/** How many notices the page shows. */
export const NOTICES_SHOWN = 50;

/** The newest notices of `userId` about `accountId` (and those about no account, and invitations), newest first. */
export async function noticesFor(deps: Pick<Deps, "store">, userId: string, accountId: string | null): Promise<NoticeView[]> {
  // An invitation is about an account the person is not in yet: shown whichever account they look at.
  const everywhere = or(isNull(notices.accountId), eq(notices.kind, "invitation"));
  const scope = accountId ? or(eq(notices.accountId, accountId), everywhere) : everywhere;
  return deps.store.db
    .select({
      id: notices.id,
      kind: notices.kind,
      title: notices.title,
      path: notices.path,
      mailStatus: notices.mailStatus,
      lastError: notices.lastError,
      createdAt: notices.createdAt,
    })
    .from(notices)
    .where(and(eq(notices.userId, userId), scope))
    .orderBy(desc(notices.createdAt), desc(notices.id))
    .limit(NOTICES_SHOWN)
    .all();
}

/** The kinds whose email `userId` receives (every kind not turned off). */
export async function mailedKinds(deps: Pick<Deps, "store">, userId: string): Promise<Set<NoticeKind>> {
  const off = await mailOptOuts(deps.store.db, userId);
  return new Set(NOTICE_KINDS.filter((k) => !off.has(k)));
}

/** Sets which kinds of email `userId` receives: exactly the kinds in `on`, every other kind off. */
export async function setMailedKinds(deps: Pick<Deps, "store" | "clock">, userId: string, on: ReadonlySet<string>): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    for (const kind of NOTICE_KINDS) await setMailOptOut(tx, now, userId, kind, !on.has(kind));
  });
}

/** How long a notice is kept (shown on the Notices page) once its email is settled. */
export const NOTICE_KEEP_MS = 90 * 24 * 3_600_000;

/** Deletes notices older than NOTICE_KEEP_MS whose email is no longer pending (the periodic job). Answers how many. */
export async function tidyNotices(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const before = deps.clock.now() - NOTICE_KEEP_MS;
  const removed = await deps.store.write((tx) =>
    tx
      .delete(notices)
      .where(and(lt(notices.createdAt, before), ne(notices.mailStatus, "pending")))
      .returning({ id: notices.id })
      .all(),
  );
  return removed.length;
}
