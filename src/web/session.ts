/**
 * Dashboard sessions: a random 32-byte token in an HttpOnly cookie, stored only as its SHA-256. Idle expiry slides
 * forward on use up to an absolute lifetime. Role and membership are re-read on every request, so a role change or
 * removal takes effect at once. Sliding the expiry is a write on the read path: it runs in its own `store.write()`
 * after the answer is decided, not awaited (errors are logged).
 */
import { asc, eq, lt, sql } from "drizzle-orm";
import { accounts, members, sessions, users } from "../db/tables";
import type { Deps } from "../deps";
import { newId } from "../lib/ids";
import type { Role } from "../auth/scopes";
import { csrfToken } from "./csrf";

/** A session ends after this long without a request. */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
/** ...and in any case this long after sign-in. */
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
/** Sliding the expiry writes at most once a minute per session. */
const TOUCH_EVERY_MS = 60 * 1000;

export type SessionDeps = Pick<Deps, "store" | "clock" | "instanceSecret" | "log">;

export interface Membership {
  accountId: string;
  accountName: string;
  role: Role;
}

/** Everything a page needs to know about who is asking. */
export interface SessionContext {
  sessionId: string;
  userId: string;
  email: string;
  userName: string;
  isAdmin: boolean;
  /** The token every form of this session carries: csrfToken(deps, sessionId) (csrf.ts). */
  csrfToken: string;
  /** The account being viewed, or null for an admin who belongs to none. */
  account: Membership | null;
  memberships: Membership[];
}

/** A random URL-safe token of 32 bytes. */
export function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

/** SHA-256 (hex) of a cookie token: what the sessions table stores. */
export function hashToken(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

/** Accounts the user belongs to, oldest membership first; disabled accounts are left out. */
export async function membershipsOf(deps: Pick<Deps, "store">, userId: string): Promise<Membership[]> {
  const rows = await deps.store.db
    .select({ accountId: members.accountId, accountName: accounts.name, role: members.role, disabledAt: accounts.disabledAt })
    .from(members)
    .innerJoin(accounts, eq(accounts.id, members.accountId))
    .where(eq(members.userId, userId))
    .orderBy(asc(members.createdAt))
    .all();
  return rows
    .filter((m) => m.disabledAt === null)
    .map(({ accountId, accountName, role }) => ({ accountId, accountName, role }));
}

/** Starts a session for `userId`, viewing their first account. Returns the cookie token (never stored as is). */
export async function createSession(deps: SessionDeps, userId: string): Promise<{ token: string; sessionId: string }> {
  const now = deps.clock.now();
  const token = randomToken();
  const sessionId = newId();
  const first = (await membershipsOf(deps, userId))[0];
  await deps.store.write(async (tx) => {
    await tx
      .insert(sessions)
      .values({
        id: sessionId,
        tokenHash: hashToken(token),
        userId,
        accountId: first?.accountId ?? null,
        createdAt: now,
        lastSeenAt: now,
        expiresAt: now + SESSION_IDLE_MS,
        absoluteExpiresAt: now + SESSION_ABSOLUTE_MS,
      })
      .run();
  });
  return { token, sessionId };
}

/**
 * Resolves a cookie token: `missing` (no such session), `expired` (it existed but timed out; the row is deleted),
 * or the context.
 */
export async function resolveSession(deps: SessionDeps, token: string): Promise<SessionContext | "missing" | "expired"> {
  const row = await deps.store.db.select().from(sessions).where(eq(sessions.tokenHash, hashToken(token))).get();
  if (!row) return "missing";
  const now = deps.clock.now();
  if (now >= row.expiresAt || now >= row.absoluteExpiresAt) {
    await deps.store.write(async (tx) => {
      await tx.delete(sessions).where(eq(sessions.id, row.id)).run();
    });
    return "expired";
  }
  const user = await deps.store.db.select().from(users).where(eq(users.id, row.userId)).get();
  if (!user) return "missing";
  const memberships = await membershipsOf(deps, user.id);
  if (now - row.lastSeenAt >= TOUCH_EVERY_MS) touchSession(deps, row.id, now, Math.min(now + SESSION_IDLE_MS, row.absoluteExpiresAt));
  // NB: the stored account is only a preference; membership is checked here on every request.
  const account = memberships.find((m) => m.accountId === row.accountId) ?? memberships[0] ?? null;
  return {
    sessionId: row.id,
    userId: user.id,
    email: user.email,
    userName: user.name,
    isAdmin: user.isInstanceAdmin,
    csrfToken: csrfToken(deps, row.id),
    account,
    memberships,
  };
}

/** Slides a session's expiry in its own write, not awaited: the page does not wait for the writer (errors are logged). */
function touchSession(deps: Pick<Deps, "store" | "log">, sessionId: string, now: number, expiresAt: number): void {
  void deps.store
    .write(async (tx) => {
      await tx.update(sessions).set({ lastSeenAt: now, expiresAt }).where(eq(sessions.id, sessionId)).run();
    })
    .catch((error: unknown) => deps.log.error("could not slide a session's expiry", { sessionId, error: String(error) }));
}

/** True when a session row exists for the cookie token (live or expired); reads only, unlike resolveSession. */
export async function sessionExists(deps: Pick<Deps, "store">, token: string): Promise<boolean> {
  const row = await deps.store.db.select({ id: sessions.id }).from(sessions).where(eq(sessions.tokenHash, hashToken(token))).get();
  return row !== undefined;
}

/** Switches the account a session views; false unless the user is a member of it. */
export async function switchAccount(deps: Pick<Deps, "store">, session: SessionContext, accountId: string): Promise<boolean> {
  if (!session.memberships.some((m) => m.accountId === accountId)) return false;
  await deps.store.write(async (tx) => {
    await tx.update(sessions).set({ accountId }).where(eq(sessions.id, session.sessionId)).run();
  });
  return true;
}

/** Ends a session (logout). */
export async function destroySession(deps: Pick<Deps, "store">, sessionId: string): Promise<void> {
  await deps.store.write(async (tx) => {
    await tx.delete(sessions).where(eq(sessions.id, sessionId)).run();
  });
}

/** Deletes sessions past their expiry: housekeeping only, since every request checks expiry itself. */
export async function tidySessions(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const now = deps.clock.now();
  const removed = await deps.store.write((tx) => tx.delete(sessions).where(lt(sessions.expiresAt, now)).returning({ id: sessions.id }).all());
  return removed.length;
}

/** Verifies an email and password; returns the user id or null. Runs argon2 even for unknown emails (timing). */
export async function verifyLogin(deps: Pick<Deps, "store">, email: string, password: string): Promise<string | null> {
  const user = await deps.store.db
    .select({ id: users.id, passwordHash: users.passwordHash })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email.trim()})`)
    .get();
  const hash = user?.passwordHash ?? (await dummyHash());
  const ok = await Bun.password.verify(password, hash);
  return ok && user ? user.id : null;
}

let dummy: Promise<string> | null = null;

/**
 * A real argon2id hash to verify against when the email is unknown, so both paths cost the same. NB: made on the
 * first login, not at import: hashing costs ~200 ms and tens of MB, which every CLI call and every start would pay.
 */
function dummyHash(): Promise<string> {
  dummy ??= Bun.password.hash(randomToken(), { algorithm: "argon2id" });
  return dummy;
}

/** True when the instance has no users yet (first-run setup is open). */
export async function needsSetup(deps: Pick<Deps, "store">): Promise<boolean> {
  return (await deps.store.db.select({ id: users.id }).from(users).limit(1).get()) === undefined;
}
