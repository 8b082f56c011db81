/**
 * Password-reset links (decisions.md §15): single use, valid one hour, only the HMAC of the token stored.
 *
 * - "Forgot password" (only when SMTP_URL is set) mails a link to the address if a login uses it. The caller answers
 *   the same words whether or not one does; at most one link per person per RESET_REQUEST_GAP_MS is made (a form
 *   posted in a loop does not flood an inbox), and a person who turned reset emails off gets none.
 * - An owner can make a link for a member from the Members page, shown once to pass on. Never for someone the owner
 *   could not otherwise reach: the instance admin (unless the owner is the admin), or a person who also belongs to an
 *   account the owner does not own (that would hand the owner that other account). The instance admin may make one
 *   for anybody.
 * - Using a link sets the password, uses up every open link of the person, and ends all their sessions, in one write
 *   whose first statement is the conditional UPDATE of the link (so it works once).
 */
import { and, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { members, passwordResets, sessions, users } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { isMailOptedOut, recordPersonNotice } from "../../store/notices";
import { checkPassword } from "./service";
import { DEAD_LINK_KEEP_MS, type LinkRefusal, linkState, linkTokenHash, newLinkToken, untakenRefusal } from "./one-time-links";

export const RESET_TTL_MS = 3_600_000;
/** The least time between two "Forgot password" links for one person. */
export const RESET_REQUEST_GAP_MS = 2 * 60_000;
const TOKEN_LABEL = "accounts:password-reset:v1";
/** The path of a reset link; the token follows (redacted in request logs: http/paths.ts). */
export const RESET_PATH = "/reset";

type ResetDeps = Pick<Deps, "store" | "clock" | "config" | "instanceSecret">;

function resetLink(deps: Pick<Deps, "config">, token: string): string {
  return `${deps.config.baseUrl}${RESET_PATH}/${token}`;
}

/**
 * "Forgot password": when SMTP is set and a login uses `email`, mails it a reset link. Answers nothing either way, so
 * the caller cannot tell (and must not say) whether the address exists.
 */
export async function requestPasswordReset(deps: ResetDeps, email: string): Promise<void> {
  if (!deps.config.smtp) return;
  const address = email.trim();
  if (address === "" || address.length > 254) return;
  const user = await deps.store.db.select({ id: users.id, email: users.email }).from(users).where(sql`lower(${users.email}) = lower(${address})`).get();
  if (!user) return;
  const { token, hash } = newLinkToken(deps, TOKEN_LABEL);
  const link = resetLink(deps, token);
  await deps.store.write(async (tx) => {
    const now = deps.clock.now();
    if (await isMailOptedOut(tx, user.id, "password_reset")) return;
    const recent = await tx
      .select({ id: passwordResets.id })
      .from(passwordResets)
      .where(and(eq(passwordResets.userId, user.id), isNull(passwordResets.createdBy), gt(passwordResets.createdAt, now - RESET_REQUEST_GAP_MS)))
      .get();
    if (recent) return;
    await tx.insert(passwordResets).values({ id: newId(), userId: user.id, tokenHash: hash, createdBy: null, createdAt: now, expiresAt: now + RESET_TTL_MS }).run();
    await recordPersonNotice(tx, now, deps.instanceSecret, {
      kind: "password_reset",
      accountId: null,
      userId: user.id,
      email: user.email,
      title: "A password reset link was sent to you",
      mail: {
        subject: "Reset your Seedcast password",
        text: [
          "Someone (hopefully you) asked to reset the password of your Seedcast login.",
          "",
          "Open this link to choose a new password:",
          link,
          "",
          "The link works once, for one hour. Using it signs you out everywhere else.",
          "If you did not ask for this, ignore this email: your password stays as it is.",
        ].join("\n"),
      },
    });
  });
}

/** 403 with the reason an owner may not make a reset link for this person. */
function notYours(message: string): AppError {
  return new AppError("forbidden", message);
}

/**
 * An owner (or the instance admin) makes a reset link for a member of `accountId`, to pass on. Answers the link, shown
 * once. 404 when the person is not a member; 403 when the rules above forbid it.
 */
export async function ownerResetLink(
  deps: ResetDeps,
  input: { accountId: string; actorUserId: string; actorIsAdmin: boolean; memberUserId: string },
): Promise<string> {
  const target = await deps.store.db
    .select({ isAdmin: users.isInstanceAdmin })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(and(eq(members.accountId, input.accountId), eq(members.userId, input.memberUserId)))
    .get();
  if (!target) throw notFound("member");
  if (!input.actorIsAdmin && input.memberUserId !== input.actorUserId) {
    if (target.isAdmin) throw notYours("Only the instance administrator can reset the administrator's password. They can use “Forgot password” on the sign-in page.");
    const theirs = await deps.store.db.select({ accountId: members.accountId }).from(members).where(eq(members.userId, input.memberUserId)).all();
    const mine = new Set(
      (
        await deps.store.db
          .select({ accountId: members.accountId })
          .from(members)
          .where(and(eq(members.userId, input.actorUserId), eq(members.role, "owner")))
          .all()
      ).map((m) => m.accountId),
    );
    if (theirs.some((m) => !mine.has(m.accountId))) {
      throw notYours("This person also belongs to an account you do not own, so only the instance administrator can make them a reset link.");
    }
  }
  const { token, hash } = newLinkToken(deps, TOKEN_LABEL);
  const now = deps.clock.now();
  await deps.store.write((tx) =>
    tx
      .insert(passwordResets)
      .values({ id: newId(), userId: input.memberUserId, tokenHash: hash, createdBy: input.actorUserId, createdAt: now, expiresAt: now + RESET_TTL_MS })
      .run(),
  );
  return resetLink(deps, token);
}

/** What opening a reset link finds: usable (for which address), or why not. */
export async function openReset(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, token: string): Promise<{ state: "valid"; email: string } | { state: LinkRefusal }> {
  const hash = linkTokenHash(deps, TOKEN_LABEL, token);
  if (!hash) return { state: "unknown" };
  const row = await deps.store.db
    .select({ reset: passwordResets, email: users.email })
    .from(passwordResets)
    .innerJoin(users, eq(users.id, passwordResets.userId))
    .where(eq(passwordResets.tokenHash, hash))
    .get();
  if (!row) return { state: "unknown" };
  const state = linkState(row.reset, deps.clock.now());
  return state === "valid" ? { state, email: row.email } : { state };
}

/**
 * Uses a reset link: sets the password (400 when too short), uses up the person's open links and ends all their
 * sessions. Answers the user id (the caller signs them in afresh), or why the link cannot be used.
 */
export async function useReset(
  deps: Pick<Deps, "store" | "clock" | "instanceSecret">,
  token: string,
  password: string,
): Promise<{ ok: true; userId: string } | { ok: false; refusal: LinkRefusal }> {
  const hash = linkTokenHash(deps, TOKEN_LABEL, token);
  if (!hash) return { ok: false, refusal: "unknown" };
  checkPassword(password);
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  return deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const used = await tx
      .update(passwordResets)
      .set({ usedAt: now })
      .where(and(eq(passwordResets.tokenHash, hash), isNull(passwordResets.usedAt), gt(passwordResets.expiresAt, now)))
      .returning({ userId: passwordResets.userId })
      .get();
    if (!used) {
      const row = await tx.select().from(passwordResets).where(eq(passwordResets.tokenHash, hash)).get();
      return { ok: false as const, refusal: untakenRefusal(row, now) };
    }
    await tx.update(users).set({ passwordHash }).where(eq(users.id, used.userId)).run();
    await tx.update(passwordResets).set({ usedAt: now }).where(and(eq(passwordResets.userId, used.userId), isNull(passwordResets.usedAt))).run();
    await tx.delete(sessions).where(eq(sessions.userId, used.userId)).run();
    return { ok: true as const, userId: used.userId };
  });
}

/** Deletes reset links whose hour ended more than DEAD_LINK_KEEP_MS ago (the periodic job). Answers how many. */
export async function tidyPasswordResets(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const before = deps.clock.now() - DEAD_LINK_KEEP_MS;
  const removed = await deps.store.write((tx) =>
    tx.delete(passwordResets).where(lt(passwordResets.expiresAt, before)).returning({ id: passwordResets.id }).all(),
  );
  return removed.length;
}
