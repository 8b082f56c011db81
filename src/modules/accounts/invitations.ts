/**
 * Invitations (decisions.md §15): an owner enters an email and a role and gets a single-use link, valid 7 days. Only
 * the HMAC of its token is stored; the link is mailed when SMTP_URL is set (and the person has not turned invitation
 * emails off), otherwise shown to the owner once to copy. The invitee opens it and chooses their own password and
 * name; an address that already has a login joins after signing in, as that same user. Accepting is one conditional
 * UPDATE, so a link is used once however many tabs or replicas try.
 */
import { and, desc, eq, gt, gte, isNull, lt, sql } from "drizzle-orm";
import type { StoreDb } from "../../db/store";
import { accounts, invitations, members, notices, users } from "../../db/tables";
import type { Deps } from "../../deps";
import { type Role, isRole } from "../../auth/scopes";
import { invalidField, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import type { MailStatus } from "../../db/schema/notices";
import { recordPersonNotice } from "../../store/notices";
import { NAME_MAX, checkEmail, checkPassword } from "./service";
import { DEAD_LINK_KEEP_MS, type LinkRefusal, linkState, linkTokenHash, newLinkToken, untakenRefusal } from "./one-time-links";

export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;
/** The purpose label of the token HMAC's derived key. */
const TOKEN_LABEL = "accounts:invitation:v1";
/** The path of an invitation link; the token follows (redacted in request logs: http/paths.ts). */
export const INVITE_PATH = "/invite";

type InvitationDeps = Pick<Deps, "store" | "clock" | "config" | "instanceSecret">;

export interface CreatedInvitation {
  id: string;
  /** The link to give the invitee (the only time it exists in clear). */
  link: string;
  /** True when it is on its way by email. */
  mailed: boolean;
}

export interface PendingInvitation {
  id: string;
  email: string;
  role: Role;
  createdAt: number;
  expiresAt: number;
  /** Its email: null when none was sent (no SMTP, or the link was shown instead); else the notice's mail status. */
  mail: { status: MailStatus; lastError: string | null } | null;
}

/** What opening a link finds. */
export type OpenedInvitation =
  | { state: "valid"; id: string; accountId: string; accountName: string; email: string; role: Role; expiresAt: number; hasLogin: boolean }
  | { state: LinkRefusal; accountName: string | null };

/** A refusal that rolls a write back and is answered as a result, not an error. */
class Refused extends Error {
  constructor(readonly refusal: LinkRefusal | "has_login" | "other_email") {
    super(refusal);
  }
}

function words(role: Role): string {
  return role === "owner" ? "an owner" : role === "editor" ? "an editor" : "a viewer";
}

/**
 * Invites `email` to `accountId` with `role`, by `invitedBy` (an owner). 400 when the address is not one or already
 * belongs to a member of the account. The link is mailed when SMTP is set, unless `showLinkInstead` (the owner passes it
 * on themselves, e.g. while email does not arrive).
 */
export async function createInvitation(
  deps: InvitationDeps,
  input: { accountId: string; email: string; role: string; invitedBy: string; showLinkInstead?: boolean },
): Promise<CreatedInvitation> {
  const email = checkEmail(input.email);
  if (!isRole(input.role)) throw invalidField("role", "must be owner, editor or viewer");
  const role = input.role;
  const account = await deps.store.db.select({ name: accounts.name }).from(accounts).where(eq(accounts.id, input.accountId)).get();
  if (!account) throw notFound("account");
  const inviter = await deps.store.db.select({ name: users.name, email: users.email }).from(users).where(eq(users.id, input.invitedBy)).get();
  const existing = await deps.store.db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${email})`).get();
  if (existing) {
    const member = await deps.store.db
      .select({ userId: members.userId })
      .from(members)
      .where(and(eq(members.accountId, input.accountId), eq(members.userId, existing.id)))
      .get();
    if (member) throw invalidField("email", "already belongs to a member of this account");
  }
  const now = deps.clock.now();
  const { token, hash } = newLinkToken(deps, TOKEN_LABEL);
  const link = `${deps.config.baseUrl}${INVITE_PATH}/${token}`;
  const who = inviter ? (inviter.name ? `${inviter.name} (${inviter.email})` : inviter.email) : "An owner";
  const title = `${who} invited you to join ${account.name} on Seedcast as ${words(role)}`;
  const mail = deps.config.smtp && !input.showLinkInstead
    ? {
        subject: `You are invited to join ${account.name} on Seedcast`,
        text: [
          `${title}.`,
          "",
          existing ? "Open this link and sign in with your Seedcast login to join:" : "Open this link to choose your password and join:",
          link,
          "",
          "The link works once, for 7 days. If you did not expect this, ignore this email.",
        ].join("\n"),
      }
    : null;
  const id = newId();
  const status = await deps.store.write(async (tx) => {
    await tx
      .insert(invitations)
      .values({ id, accountId: input.accountId, email, role, tokenHash: hash, invitedBy: input.invitedBy, createdAt: now, expiresAt: now + INVITATION_TTL_MS })
      .run();
    return recordPersonNotice(tx, now, deps.instanceSecret, { kind: "invitation", accountId: input.accountId, userId: existing?.id ?? null, email, title, mail });
  });
  return { id, link, mailed: status === "pending" };
}

/** The invitations of an account that can still be accepted, newest first. */
export async function pendingInvitations(deps: Pick<Deps, "store" | "clock">, accountId: string): Promise<PendingInvitation[]> {
  const now = deps.clock.now();
  const rows = await deps.store.db
    .select({ id: invitations.id, email: invitations.email, role: invitations.role, createdAt: invitations.createdAt, expiresAt: invitations.expiresAt })
    .from(invitations)
    .where(and(eq(invitations.accountId, accountId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)))
    .orderBy(desc(invitations.createdAt))
    .all();
  if (rows.length === 0) return [];
  // Each invitation's notice was written in the same transaction: same account, address and moment.
  const mails = await deps.store.db
    .select({ email: notices.email, createdAt: notices.createdAt, status: notices.mailStatus, lastError: notices.lastError })
    .from(notices)
    .where(and(eq(notices.accountId, accountId), eq(notices.kind, "invitation"), gte(notices.createdAt, Math.min(...rows.map((r) => r.createdAt)))))
    .all();
  return rows.map((r) => {
    const mail = mails.find((m) => m.email === r.email && m.createdAt === r.createdAt);
    return { ...r, mail: mail && mail.status !== "none" && mail.status !== "off" ? { status: mail.status, lastError: mail.lastError } : null };
  });
}

/** Revokes a pending invitation of `accountId`; 404 when there is none by that id that could still be accepted. */
export async function revokeInvitation(deps: Pick<Deps, "store" | "clock">, accountId: string, invitationId: string): Promise<void> {
  const now = deps.clock.now();
  const revoked = await deps.store.write((tx) =>
    tx
      .update(invitations)
      .set({ revokedAt: now })
      .where(and(eq(invitations.id, invitationId), eq(invitations.accountId, accountId), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)))
      .returning({ id: invitations.id })
      .all(),
  );
  if (revoked.length === 0) throw notFound("invitation");
}

/** What the link with `token` is: usable (with what it offers), or why not. */
export async function openInvitation(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, token: string): Promise<OpenedInvitation> {
  const hash = linkTokenHash(deps, TOKEN_LABEL, token);
  if (!hash) return { state: "unknown", accountName: null };
  const row = await deps.store.db
    .select({ invitation: invitations, accountName: accounts.name })
    .from(invitations)
    .innerJoin(accounts, eq(accounts.id, invitations.accountId))
    .where(eq(invitations.tokenHash, hash))
    .get();
  if (!row) return { state: "unknown", accountName: null };
  const { invitation } = row;
  const state = linkState({ usedAt: invitation.acceptedAt, revokedAt: invitation.revokedAt, expiresAt: invitation.expiresAt }, deps.clock.now());
  if (state !== "valid") return { state, accountName: row.accountName };
  const login = await deps.store.db.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${invitation.email})`).get();
  return {
    state: "valid",
    id: invitation.id,
    accountId: invitation.accountId,
    accountName: row.accountName,
    email: invitation.email,
    role: invitation.role,
    expiresAt: invitation.expiresAt,
    hasLogin: login !== undefined,
  };
}

/** Marks the invitation used by `userId`, inside a write; throws Refused when it no longer can be. */
async function consume(tx: StoreDb, hash: string, userId: string, now: number) {
  const used = await tx
    .update(invitations)
    .set({ acceptedAt: now, acceptedBy: userId })
    .where(and(eq(invitations.tokenHash, hash), isNull(invitations.acceptedAt), isNull(invitations.revokedAt), gt(invitations.expiresAt, now)))
    .returning({ accountId: invitations.accountId, role: invitations.role, email: invitations.email })
    .get();
  if (!used) {
    const row = await tx.select().from(invitations).where(eq(invitations.tokenHash, hash)).get();
    throw new Refused(untakenRefusal(row && { usedAt: row.acceptedAt, revokedAt: row.revokedAt, expiresAt: row.expiresAt }, now));
  }
  return used;
}

export type AcceptResult = { ok: true; userId: string; accountId: string } | { ok: false; refusal: LinkRefusal | "has_login" | "other_email" };

/**
 * Accepts an invitation as a new person: creates their login (the invited address, the password and name they chose)
 * and the membership, and uses the link up, in one write. 400 on a short password or a long name; `has_login` when
 * the address has a login already (they sign in and accept instead).
 */
export async function acceptAsNewUser(deps: InvitationDeps, token: string, input: { name: string; password: string }): Promise<AcceptResult> {
  const hash = linkTokenHash(deps, TOKEN_LABEL, token);
  if (!hash) return { ok: false, refusal: "unknown" };
  const name = input.name.trim();
  if (name.length > NAME_MAX) throw invalidField("name", `must be at most ${NAME_MAX} characters`);
  checkPassword(input.password);
  const passwordHash = await Bun.password.hash(input.password, { algorithm: "argon2id" });
  const userId = newId();
  try {
    return await deps.store.write(async (tx) => {
      const now = deps.clock.now();
      const pending = await tx.select({ email: invitations.email }).from(invitations).where(eq(invitations.tokenHash, hash)).get();
      if (!pending) throw new Refused("unknown");
      const taken = await tx.select({ id: users.id }).from(users).where(sql`lower(${users.email}) = lower(${pending.email})`).get();
      if (taken) throw new Refused("has_login");
      const inserted = await tx
        .insert(users)
        .values({ id: userId, email: pending.email, name, passwordHash, isInstanceAdmin: false, createdAt: now })
        .onConflictDoNothing()
        .returning({ id: users.id })
        .all();
      if (inserted.length === 0) throw new Refused("has_login");
      const used = await consume(tx, hash, userId, now);
      await tx.insert(members).values({ accountId: used.accountId, userId, role: used.role, createdAt: now }).run();
      return { ok: true as const, userId, accountId: used.accountId };
    });
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}

/**
 * Accepts an invitation as the signed-in `userId`, whose address must be the invited one (`other_email` otherwise).
 * Someone already in the account keeps their role; the link is used up either way.
 */
export async function acceptAsUser(deps: InvitationDeps, token: string, userId: string): Promise<AcceptResult> {
  const hash = linkTokenHash(deps, TOKEN_LABEL, token);
  if (!hash) return { ok: false, refusal: "unknown" };
  try {
    return await deps.store.write(async (tx) => {
      const now = deps.clock.now();
      const user = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)).get();
      const pending = await tx.select({ email: invitations.email }).from(invitations).where(eq(invitations.tokenHash, hash)).get();
      if (!pending) throw new Refused("unknown");
      if (!user || user.email.toLowerCase() !== pending.email.toLowerCase()) throw new Refused("other_email");
      const used = await consume(tx, hash, userId, now);
      await tx.insert(members).values({ accountId: used.accountId, userId, role: used.role, createdAt: now }).onConflictDoNothing().run();
      return { ok: true as const, userId, accountId: used.accountId };
    });
  } catch (error) {
    if (error instanceof Refused) return { ok: false, refusal: error.refusal };
    throw error;
  }
}

/**
 * Deletes invitations whose 7 days ended more than DEAD_LINK_KEEP_MS ago, used or not (the periodic job; until then
 * their link still says why it cannot be used). Answers how many.
 */
export async function tidyInvitations(deps: Pick<Deps, "store" | "clock">): Promise<number> {
  const before = deps.clock.now() - DEAD_LINK_KEEP_MS;
  const removed = await deps.store.write((tx) => tx.delete(invitations).where(lt(invitations.expiresAt, before)).returning({ id: invitations.id }).all());
  return removed.length;
}
