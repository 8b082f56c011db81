/** Accounts, users and memberships: created by the CLI and the dashboard, never by the API. */
import { and, asc, count, eq, isNotNull, isNull, lte, or, sql } from "drizzle-orm";
import { forUpdate } from "../../db/portable-sql";
import { INSTANCE_IDENTITY_ID } from "../../db/schema/instance-identity";
import type { StoreDb } from "../../db/store";
import { accounts, instanceIdentity, members, scheduledPostTargets, users } from "../../db/tables";
import { refreshPostStatus } from "../../publishing/post-status";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { type Role, isRole } from "../../auth/scopes";
import { grantCredits } from "../credits/grant";

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD = 8;

/** The trimmed address, or 400 invalid_request on `email`. */
export function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (!EMAIL_RE.test(trimmed) || trimmed.length > 254) throw invalidField("email", "must be an email address");
  return trimmed;
}

/** 400 invalid_request on `password` when it is shorter than MIN_PASSWORD. */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD) throw invalidField("password", `must be at least ${MIN_PASSWORD} characters`);
}

/** Account and person names: 1 to 120 characters after trimming. */
const NAME_MIN = 1;
export const NAME_MAX = 120;

/** Creates a user row; the first user of the instance becomes its admin. */
async function insertUser(deps: Pick<Deps, "store" | "clock">, email: string, password: string, name: string): Promise<string> {
  const normalized = checkEmail(email);
  checkPassword(password);
  const inUse = () => invalidField("email", "is already in use");
  const existing = await deps.store.db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${normalized})`).get();
  if (existing) throw inUse();
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  const id = newId();
  await deps.store.write(async (tx) => {
    // "No user yet" is decided under a lock: on PostgreSQL two first sign-ups would both count zero users, so the
    // instance's one identity row (written at start, before any request) is locked first and the count taken after
    // it, seeing what the sign-up that held it committed. Once there is a user nothing is locked.
    let isFirst = ((await tx.select({ n: count() }).from(users).get())?.n ?? 0) === 0;
    if (isFirst) {
      await forUpdate(
        deps.store.dialect,
        tx.select({ id: instanceIdentity.id }).from(instanceIdentity).where(eq(instanceIdentity.id, INSTANCE_IDENTITY_ID)),
      ).all();
      isFirst = ((await tx.select({ n: count() }).from(users).get())?.n ?? 0) === 0;
    }
    // The email was free when read above; a sign-up with the same email that committed since is refused the same way
    // (the unique index decides, on conflict nothing is inserted) instead of failing on the constraint.
    const inserted = await tx
      .insert(users)
      .values({ id, email: normalized, name, passwordHash, isInstanceAdmin: isFirst, createdAt: deps.clock.now() })
      .onConflictDoNothing()
      .returning({ id: users.id })
      .all();
    if (inserted.length === 0) throw inUse();
  });
  return id;
}

export interface CreatedAccount {
  accountId: string;
  userId: string;
}

/**
 * Creates an account with its first owner and the initial credit grant. `ownerName` is the person's name; left out
 * (or blank), the owner is named after the account, as for a one-person account.
 */
export async function createAccount(
  deps: Pick<Deps, "store" | "clock" | "config">,
  input: { name: string; email: string; password: string; credits?: number; ownerName?: string },
): Promise<CreatedAccount> {
  const name = input.name.trim();
  if (name.length < NAME_MIN || name.length > NAME_MAX) throw invalidField("name", `must be ${NAME_MIN} to ${NAME_MAX} characters`);
  const ownerName = input.ownerName?.trim() || name;
  if (ownerName.length > NAME_MAX) throw invalidField("ownerName", `must be at most ${NAME_MAX} characters`);
  const userId = await insertUser(deps, input.email, input.password, ownerName);
  const accountId = newId();
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    await tx.insert(accounts).values({ id: accountId, name, createdAt: now }).run();
    await tx.insert(members).values({ accountId, userId, role: "owner", createdAt: now }).run();
  });
  const credits = input.credits ?? deps.config.creditsInitial;
  if (credits > 0) await grantCredits(deps, accountId, credits, "initial credits");
  return { accountId, userId };
}

/** Adds a new person to an account with a role. */
export async function addMember(
  deps: Pick<Deps, "store" | "clock">,
  input: { accountId: string; email: string; password: string; role: string; name?: string },
): Promise<{ userId: string }> {
  if (!isRole(input.role)) throw invalidField("role", "must be owner, editor or viewer");
  const account = await deps.store.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, input.accountId)).get();
  if (!account) throw notFound("account");
  const userId = await insertUser(deps, input.email, input.password, input.name ?? "");
  const role = input.role;
  await deps.store.write(async (tx) => {
    await tx.insert(members).values({ accountId: input.accountId, userId, role, createdAt: deps.clock.now() }).run();
  });
  return { userId };
}

/**
 * Inside a write: refuses (400, as the dashboard always answered) when `userId` is the only owner of `accountId`, with
 * the account's row locked first. Every change that can take an owner away (removal, demotion) goes through here, so
 * on PostgreSQL two of them for one account run one after the other and the second counts what the first committed
 * (a plain count would let two owners remove or demote each other at once and leave no owner). On SQLite the write
 * already holds the only writer.
 */
async function keepLastOwner(deps: Pick<Deps, "store">, tx: StoreDb, accountId: string, userId: string): Promise<void> {
  await forUpdate(deps.store.dialect, tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId))).all();
  const owners = await tx
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.accountId, accountId), eq(members.role, "owner")))
    .all();
  if (owners.length === 1 && owners[0]?.userId === userId) {
    throw new AppError("invalid_request", "An account keeps at least one owner.");
  }
}

/**
 * Changes a member's role in every account they belong to (or one account when given). Keys follow at once. A change
 * that would leave an account without an owner is refused as a whole (400 "An account keeps at least one owner.").
 */
export async function setMemberRole(deps: Pick<Deps, "store">, userId: string, role: string, accountId?: string): Promise<void> {
  if (!isRole(role)) throw invalidField("role", "must be owner, editor or viewer");
  const where = accountId ? and(eq(members.userId, userId), eq(members.accountId, accountId)) : eq(members.userId, userId);
  const changed = await deps.store.write(async (tx) => {
    if (role !== "owner") {
      // Each account where the person is (or may meanwhile have become) an owner, locked in id order (no deadlock).
      const theirs = await tx.select({ accountId: members.accountId }).from(members).where(where).orderBy(asc(members.accountId)).all();
      for (const { accountId: id } of theirs) await keepLastOwner(deps, tx, id, userId);
    }
    return tx.update(members).set({ role }).where(where).returning({ userId: members.userId }).all();
  });
  if (changed.length === 0) throw notFound("member");
}

/** Removes a member from an account; their keys answer 401 from the next request on. */
export async function removeMember(deps: Pick<Deps, "store">, accountId: string, userId: string): Promise<void> {
  // The owner check and the delete share one write, with the account's row locked (keepLastOwner), so two removals
  // cannot each leave the other as the last owner, on PostgreSQL either.
  await deps.store.write(async (tx) => {
    await keepLastOwner(deps, tx, accountId, userId);
    const removed = await tx
      .delete(members)
      .where(and(eq(members.accountId, accountId), eq(members.userId, userId)))
      .returning({ userId: members.userId })
      .all();
    if (removed.length === 0) throw notFound("member");
  });
}

/** The account's first owner (by join time): the default member for CLI-minted keys. */
export async function firstOwner(deps: Pick<Deps, "store">, accountId: string): Promise<string> {
  const row = await deps.store.db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.accountId, accountId), eq(members.role, "owner")))
    .orderBy(asc(members.createdAt))
    .get();
  if (!row) throw notFound("account");
  return row.userId;
}

/** A member's role in an account, or null when not a member. */
export async function memberRole(deps: Pick<Deps, "store">, accountId: string, userId: string): Promise<Role | null> {
  const row = await deps.store.db
    .select({ role: members.role })
    .from(members)
    .where(and(eq(members.accountId, accountId), eq(members.userId, userId)))
    .get();
  return row?.role ?? null;
}

/** The message on a target that fell due while its account was disabled (set when the account is re-enabled). */
export const MISSED_WHILE_DISABLED = "Not sent: the account was disabled when this post was due. Schedule it again to send it.";

/**
 * Disables or re-enables an account. While disabled, every key answers 401, its members do not see it in the
 * dashboard, the dispatcher delivers none of its posts, and its upload links take no file.
 *
 * Re-enabling (in the same transaction): every target that fell due while the account was disabled (pending, not
 * held by a provider, due now or earlier) fails with MISSED_WHILE_DISABLED instead of going out late all at once;
 * posts due later go out at their time; upload links still within their 15 minutes work again. Answers how many
 * targets were failed so.
 */
export async function setAccountDisabled(deps: Pick<Deps, "store" | "clock">, accountId: string, disabled: boolean): Promise<number> {
  return deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const changed = await tx
      .update(accounts)
      .set({ disabledAt: disabled ? now : null })
      .where(eq(accounts.id, accountId))
      .returning({ id: accounts.id, disabledAt: accounts.disabledAt })
      .all();
    if (changed.length === 0) throw notFound("account");
    if (disabled) return 0;
    const missed = await tx
      .update(scheduledPostTargets)
      .set({ status: "failed", errorMessage: MISSED_WHILE_DISABLED, nextAttemptAt: null, sendStartedAt: null, updatedAt: now })
      .where(
        and(
          eq(scheduledPostTargets.accountId, accountId),
          eq(scheduledPostTargets.status, "scheduled"),
          eq(scheduledPostTargets.heldByProvider, false),
          isNotNull(scheduledPostTargets.nextAttemptAt),
          lte(scheduledPostTargets.nextAttemptAt, now),
          or(isNull(scheduledPostTargets.leaseExpiresAt), lte(scheduledPostTargets.leaseExpiresAt, now)),
        ),
      )
      .returning({ postId: scheduledPostTargets.postId })
      .all();
    // Sorted: refreshPostStatus locks each post row, always in id order (no deadlock with another refresher).
    for (const postId of [...new Set(missed.map((m) => m.postId))].sort()) await refreshPostStatus(tx, postId, now);
    return missed.length;
  });
}

/** Sets a user's password (the instance admin, from the CLI). 404 when the user does not exist. */
export async function setPassword(deps: Pick<Deps, "store">, userId: string, password: string): Promise<void> {
  checkPassword(password);
  const exists = await deps.store.db.select({ id: users.id }).from(users).where(eq(users.id, userId)).get();
  if (!exists) throw notFound("user");
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  await deps.store.write(async (tx) => {
    await tx.update(users).set({ passwordHash }).where(eq(users.id, userId)).run();
  });
}

/**
 * A person changes their own password: the current one must match (400 invalid_request on `currentPassword`
 * otherwise), the new one follows the same rule as at sign-up.
 */
export async function changeOwnPassword(deps: Pick<Deps, "store">, userId: string, current: string, next: string): Promise<void> {
  const user = await deps.store.db.select({ hash: users.passwordHash }).from(users).where(eq(users.id, userId)).get();
  if (!user) throw notFound("user");
  if (!(await Bun.password.verify(current, user.hash))) throw invalidField("currentPassword", "does not match your current password");
  await setPassword(deps, userId, next);
}
