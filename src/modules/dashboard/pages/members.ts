/**
 * Members (owners only): invite people by email with a role, change roles, remove people, make a password-reset link
 * for someone. Keys follow role changes at once. Typing a teammate's password (adding a person with an initial
 * password) is for the instance admin only (decisions.md §15); everyone else invites.
 */
import { and, asc, eq } from "drizzle-orm";
import { members, users } from "../../../db/tables";
import { addMember, removeMember, setMemberRole } from "../../accounts/service";
import { ROLES, SCOPE_LABELS } from "../../../auth/scopes";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { zoneOf } from "../../../web/preferences";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { Membership, SessionContext } from "../../../web/session";
import { isoAt } from "../../../lib/clock";
import { noticeFrom, refusal } from "./common";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { AppError } from "../../../lib/errors";
import { type PendingInvitation, createInvitation, pendingInvitations, revokeInvitation } from "../../accounts/invitations";
import { ownerResetLink } from "../../accounts/password-resets";
import { stashSecret, takeSecret } from "../reveal";

const CURRENT = "/dashboard/members";

interface MemberRow {
  userId: string;
  email: string;
  name: string;
  role: (typeof ROLES)[number];
  createdAt: number;
}

/** The people in one account (a read for this page; writes go through the accounts service). */
async function listMembers(ctx: DashboardCtx, accountId: string): Promise<MemberRow[]> {
  return ctx.deps.store.db
    .select({ userId: members.userId, email: users.email, name: users.name, role: members.role, createdAt: members.createdAt })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.accountId, accountId))
    .orderBy(asc(members.createdAt))
    .all();
}

function ownerOnly(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (account.role !== "owner") return forbiddenPage(s, "Only the account's owners manage its members.");
  return account;
}

/**
 * An owner's action from the Members page: `act` answers where to go next (the page with a notice, or a shown secret)
 * or a page of its own; a refusal it throws shows the Members page again, with the refusal in words.
 */
async function ownerAction(ctx: DashboardCtx, s: SessionContext, act: (account: Membership) => Promise<string | Response>): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  try {
    const next = await act(account);
    return next instanceof Response ? next : redirect(next);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: [notice] }), status);
  }
}

function roleOptions(selected: string): Html {
  return html`${ROLES.map((r) => html`<option value="${r}"${r === selected ? html` selected` : ""}>${r}</option>`)}`;
}

/** A link shown once to copy (an invitation or a reset link made without email). */
function linkBlock(title: string, link: string, note: string): Html {
  return html`<section class="secret" aria-labelledby="secret-title">
  <h2 id="secret-title">${title}</h2>
  <p><strong>Copy this link now and send it to them yourself. It will not be shown again</strong>: Seedcast stores only a hash of it.</p>
  <div class="value">
    <label class="sr-only" for="new-secret">The link</label>
    <input id="new-secret" type="text" readonly value="${link}" autocomplete="off" spellcheck="false" autofocus>
    <button type="button" data-copy="new-secret" hidden>Copy</button>
  </div>
  <p id="new-secret-status" role="status" class="hint"></p>
  <p>${note}</p>
</section>`;
}

/** Where an invitation's email is, in words; a failed one says what to do. */
function inviteMailWords(status: string, lastError: string | null): string {
  if (status === "sent") return "Emailed.";
  if (status === "failed") return `The email could not be delivered${lastError ? ` (${lastError})` : ""}. Withdraw it and invite again with “Show me the link”.`;
  return lastError ? `Email not delivered yet; trying again (${lastError}).` : "Email on its way.";
}

function invitationsList(s: SessionContext, pending: PendingInvitation[]): Html {
  if (pending.length === 0) return html``;
  return html`<section class="card" aria-labelledby="invites-title">
  <h2 id="invites-title">Invitations not yet accepted</h2>
  <div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Link works until</th><th scope="col"><span class="sr-only">Withdraw</span></th></tr></thead>
  <tbody>${pending.map(
    (i) => html`<tr>
    <td data-label="Email">${i.email}${i.mail ? html`<br><span class="hint">${inviteMailWords(i.mail.status, i.mail.lastError)}</span>` : ""}</td>
    <td data-label="Role">${i.role}</td>
    <td data-label="Link works until">${timeTag(isoAt(i.expiresAt), "—", zoneOf(s))}</td>
    <td data-label="Withdraw"><form method="post" action="${CURRENT}/invitations/${i.id}/revoke" class="actions">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Withdraw<span class="sr-only"> the invitation of ${i.email}</span></button></form></td>
  </tr>`,
  )}</tbody></table></div>
</section>`;
}

interface MembersPageOptions {
  notices?: Notice[];
  top?: Html;
  /** Values and errors of the invite form. */
  invite?: { values: Record<string, string>; errors: FieldErrors };
  /** Values and errors of the admin's add-with-password form. */
  add?: { values: Record<string, string>; errors: FieldErrors };
}

async function membersPage(ctx: DashboardCtx, s: SessionContext, accountId: string, opts: MembersPageOptions = {}): Promise<Html> {
  const rows = await listMembers(ctx, accountId);
  const pending = await pendingInvitations(ctx.deps, accountId);
  const fi = new FormState(opts.invite?.errors ?? {});
  const iv = opts.invite?.values ?? {};
  const fa = new FormState(opts.add?.errors ?? {});
  const av = opts.add?.values ?? {};
  const mails = ctx.deps.config.smtp !== null;
  return page(
    s,
    { title: "Members", current: CURRENT, notices: opts.notices ?? [] },
    html`${opts.top ?? ""}<section class="card" aria-labelledby="people-title">
  <h2 id="people-title">People in this account</h2>
  <div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Person</th><th scope="col">Joined</th><th scope="col">Role</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
  <tbody>${rows.map(
    (m) => html`<tr>
    <td data-label="Person">${m.name ? html`${m.name}<br>` : ""}<span class="muted">${m.email}</span>${m.userId === s.userId ? html` <span class="badge">you</span>` : ""}</td>
    <td data-label="Joined">${timeTag(isoAt(m.createdAt), "—", zoneOf(s))}</td>
    <td data-label="Role"><form method="post" action="/dashboard/members/${m.userId}/role" class="actions">
      ${csrfField(s.csrfToken)}
      <label class="sr-only" for="role-${m.userId}">Role of ${m.email}</label>
      <select id="role-${m.userId}" name="role">${roleOptions(m.role)}</select>
      <button type="submit" class="small secondary">Set role</button>
    </form></td>
    <td data-label="Actions"><div class="actions">${
      m.userId === s.userId
        ? ""
        : html`<form method="post" action="/dashboard/members/${m.userId}/reset-link">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Reset link<span class="sr-only"> for ${m.email}</span></button></form>`
    }<a class="button small danger" href="/dashboard/members/${m.userId}/remove">Remove<span class="sr-only"> ${m.email}</span></a></div></td>
  </tr>`,
  )}</tbody></table></div>
  <p class="hint">Owners and editors may hold every group; viewers only ${SCOPE_LABELS.read}. “Reset link” makes a one-hour link that lets the person choose a new password; give it to them yourself.</p>
</section>
${invitationsList(s, pending)}
<form method="post" action="${CURRENT}/invite" class="card form-card" aria-labelledby="invite-title" novalidate>
  <h2 id="invite-title">Invite a person</h2>
  ${csrfField(s.csrfToken)}
  ${fi.input({ name: "email", id: "i-email", label: "Email", type: "email", value: iv.email ?? "", required: true, attrs: html` autocomplete="off"` })}
  ${fi.select({ name: "role", id: "i-role", label: "Role", value: iv.role ?? "editor", options: ROLES.map((r) => [r, r] as const) })}
  <p class="hint">${mails ? "They get an email with a link to choose their own password. The link works once, for 7 days." : "You get a link to send them (this Seedcast sends no email). It works once, for 7 days; with it they choose their own password."}</p>
  ${mails ? html`<fieldset><legend>Delivery</legend><label><input type="checkbox" name="showLink" value="1"${iv.showLink ? html` checked` : ""}> Show me the link to send myself instead of emailing it</label></fieldset>` : ""}
  <button type="submit">Invite</button>
</form>
${
  s.isAdmin
    ? html`<form method="post" action="/dashboard/members" class="card form-card" aria-labelledby="add-title" novalidate>
  <h2 id="add-title">Add a person with a password</h2>
  <p class="hint">As the administrator of this instance you may also create a login yourself and tell them the password in person.</p>
  ${csrfField(s.csrfToken)}
  ${fa.input({ name: "name", id: "m-name", label: "Name", value: av.name ?? "", attrs: html` maxlength="120"` })}
  ${fa.input({ name: "email", id: "m-email", label: "Email", type: "email", value: av.email ?? "", required: true })}
  ${fa.input({ name: "password", id: "m-password", label: "Initial password", type: "password", required: true, hint: "At least 8 characters; tell them in person.", attrs: html` minlength="8" autocomplete="new-password"` })}
  ${fa.select({ name: "role", id: "m-role", label: "Role", value: av.role ?? "editor", options: ROLES.map((r) => [r, r] as const) })}
  <button type="submit" class="secondary">Add person</button>
</form>`
    : ""
}`,
  );
}

/** Refusals of the add form in plain words. */
function memberWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "email") return /in use/.test(problem) ? "Someone with that email already has a login here." : "Enter an email address, such as sam@example.com.";
  if (fieldName === "password") return "The initial password needs at least 8 characters.";
  if (fieldName === "role") return "Choose owner, editor or viewer.";
  if (fieldName === "name") return "Keep the name to at most 120 characters.";
  return message;
}

/** GET /dashboard/members */
export async function getMembers(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  const shown = new URL(request.url).searchParams.get("shown");
  if (shown) {
    const revealed = await takeSecret(ctx.deps, s.sessionId, shown);
    if (revealed) return htmlResponse(await membersPage(ctx, s, account.accountId, { top: linkBlock(revealed.title, revealed.secret, revealed.note ?? "") }));
    const gone: Notice = { kind: "warn", text: "That link was shown once and is not shown again. If it was not copied, make a new one." };
    return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: [gone] }));
  }
  return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: noticeFrom(request) }));
}

/** POST /dashboard/members: adds a new person with a password and a role (the instance admin only). */
export async function postAddMember(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  if (!s.isAdmin) return forbiddenPage(s, "Only the instance administrator can type a password for someone else. Invite them instead: they choose their own.");
  const values = { name: field(form, "name").trim(), email: field(form, "email"), role: field(form, "role") };
  try {
    await addMember(ctx.deps, { accountId: account.accountId, ...values, password: field(form, "password") });
    return redirect(`${CURRENT}?notice=member-added`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const { fields: errors, general } = errorsOf(error, { name: "name", email: "email", password: "password", role: "role" }, memberWords, "email");
      return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: general ? [{ kind: "error", text: general }] : [], add: { values, errors } }), 400);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: [notice], add: { values, errors: {} } }), status);
  }
}

async function isMember(ctx: DashboardCtx, accountId: string, userId: string): Promise<boolean> {
  const row = await ctx.deps.store.db
    .select({ userId: members.userId })
    .from(members)
    .where(and(eq(members.accountId, accountId), eq(members.userId, userId)))
    .get();
  return row !== undefined;
}

/** POST /dashboard/members/:userId/role: changes the role in this account only. */
export function postSetRole(ctx: DashboardCtx, s: SessionContext, userId: string, form: Form | undefined): Promise<Response> {
  return ownerAction(ctx, s, async (account) => {
    // The last owner's demotion is refused by the service (400 "An account keeps at least one owner."), shown below.
    await setMemberRole(ctx.deps, userId, field(form, "role"), account.accountId);
    return `${CURRENT}?notice=member-updated`;
  });
}

/** GET /dashboard/members/:userId/remove: the confirmation step. */
export async function getRemoveMember(ctx: DashboardCtx, s: SessionContext, userId: string): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  const member = (await listMembers(ctx, account.accountId)).find((m) => m.userId === userId);
  if (!member) return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such person in this account.</p>`), 404);
  return htmlResponse(
    confirmPage(s, {
      title: "Remove person",
      current: CURRENT,
      question: html`Remove <strong>${member.email}</strong> from ${account.accountName}? Their API keys stop working at once.`,
      action: `/dashboard/members/${userId}/remove`,
      confirmLabel: "Remove person",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/members/:userId/remove */
export function postRemoveMember(ctx: DashboardCtx, s: SessionContext, userId: string): Promise<Response> {
  return ownerAction(ctx, s, async (account) => {
    if (!(await isMember(ctx, account.accountId, userId))) {
      return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such person in this account.</p>`), 404);
    }
    await removeMember(ctx.deps, account.accountId, userId);
    return `${CURRENT}?notice=member-removed`;
  });
}

/** Refusals of the invite form in plain words. */
function inviteWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "email") return /member/.test(problem) ? "That person is already in this account." : "Enter an email address, such as sam@example.com.";
  if (fieldName === "role") return "Choose owner, editor or viewer.";
  return message;
}

/** POST /dashboard/members/invite: makes a single-use invitation link; mailed, or shown once to copy. */
export async function postInvite(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  const values = { email: field(form, "email").trim(), role: field(form, "role"), showLink: field(form, "showLink") };
  try {
    const invited = await createInvitation(ctx.deps, {
      accountId: account.accountId,
      email: values.email,
      role: values.role,
      invitedBy: s.userId,
      showLinkInstead: values.showLink === "1",
    });
    if (invited.mailed) return redirect(`${CURRENT}?notice=invitation-sent`);
    const token = await stashSecret(ctx.deps, s.sessionId, {
      title: `Invitation for ${values.email}`,
      secret: invited.link,
      note: `With it they choose their own password and join ${account.accountName} as ${values.role}. It works once, for 7 days.`,
    });
    return redirect(`${CURRENT}?shown=${token}`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const { fields: errors, general } = errorsOf(error, { email: "email", role: "role" }, inviteWords, "email");
      return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: general ? [{ kind: "error", text: general }] : [], invite: { values, errors } }), 400);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, { notices: [notice], invite: { values, errors: {} } }), status);
  }
}

/** POST /dashboard/members/invitations/:id/revoke: withdraws an invitation; its link says so from now on. */
export function postRevokeInvitation(ctx: DashboardCtx, s: SessionContext, invitationId: string): Promise<Response> {
  return ownerAction(ctx, s, async (account) => {
    await revokeInvitation(ctx.deps, account.accountId, invitationId);
    return `${CURRENT}?notice=invitation-revoked`;
  });
}

/** POST /dashboard/members/:userId/reset-link: a one-hour password-reset link for a member, shown once to pass on. */
export function postResetLink(ctx: DashboardCtx, s: SessionContext, userId: string): Promise<Response> {
  return ownerAction(ctx, s, async (account) => {
    const link = await ownerResetLink(ctx.deps, { accountId: account.accountId, actorUserId: s.userId, actorIsAdmin: s.isAdmin, memberUserId: userId });
    const member = (await listMembers(ctx, account.accountId)).find((m) => m.userId === userId);
    const token = await stashSecret(ctx.deps, s.sessionId, {
      title: `Password reset link for ${member?.email ?? "this person"}`,
      secret: link,
      note: "With it they choose a new password; their other sessions end. It works once, for one hour.",
    });
    return `${CURRENT}?shown=${token}`;
  });
}
