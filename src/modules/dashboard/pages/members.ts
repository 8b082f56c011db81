/** Members (owners only): add people with a role, change roles, remove people. Keys follow role changes at once. */
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

function roleOptions(selected: string): Html {
  return html`${ROLES.map((r) => html`<option value="${r}"${r === selected ? html` selected` : ""}>${r}</option>`)}`;
}

async function membersPage(
  ctx: DashboardCtx,
  s: SessionContext,
  accountId: string,
  notices: Notice[],
  values: Record<string, string> = {},
  errors: FieldErrors = {},
): Promise<Html> {
  const rows = await listMembers(ctx, accountId);
  const f = new FormState(errors);
  return page(
    s,
    { title: "Members", current: CURRENT, notices },
    html`<section class="card" aria-labelledby="people-title">
  <h2 id="people-title">People in this account</h2>
  <div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Person</th><th scope="col">Joined</th><th scope="col">Role</th><th scope="col"><span class="sr-only">Remove</span></th></tr></thead>
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
    <td data-label="Remove"><a class="button small danger" href="/dashboard/members/${m.userId}/remove">Remove<span class="sr-only"> ${m.email}</span></a></td>
  </tr>`,
  )}</tbody></table></div>
  <p class="hint">Owners and editors may hold every group; viewers only ${SCOPE_LABELS.read}.</p>
</section>
<form method="post" action="/dashboard/members" class="card form-card" aria-labelledby="add-title" novalidate>
  <h2 id="add-title">Add a person</h2>
  ${csrfField(s.csrfToken)}
  ${f.input({ name: "name", id: "m-name", label: "Name", value: values.name ?? "", attrs: html` maxlength="120"` })}
  ${f.input({ name: "email", id: "m-email", label: "Email", type: "email", value: values.email ?? "", required: true })}
  ${f.input({ name: "password", id: "m-password", label: "Initial password", type: "password", required: true, hint: "At least 8 characters; tell them in person.", attrs: html` minlength="8" autocomplete="new-password"` })}
  ${f.select({ name: "role", id: "m-role", label: "Role", value: values.role ?? "editor", options: ROLES.map((r) => [r, r] as const) })}
  <button type="submit">Add person</button>
</form>`,
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
  return htmlResponse(await membersPage(ctx, s, account.accountId, noticeFrom(request)));
}

/** POST /dashboard/members: adds a new person with a role. */
export async function postAddMember(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  const values = { name: field(form, "name").trim(), email: field(form, "email"), role: field(form, "role") };
  try {
    await addMember(ctx.deps, { accountId: account.accountId, ...values, password: field(form, "password") });
    return redirect(`${CURRENT}?notice=member-added`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const { fields: errors, general } = errorsOf(error, { name: "name", email: "email", password: "password", role: "role" }, memberWords, "email");
      return htmlResponse(await membersPage(ctx, s, account.accountId, general ? [{ kind: "error", text: general }] : [], values, errors), 400);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, [notice], values), status);
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
export async function postSetRole(ctx: DashboardCtx, s: SessionContext, userId: string, form: Form | undefined): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  try {
    // The last owner's demotion is refused by the service (400 "An account keeps at least one owner."), shown below.
    await setMemberRole(ctx.deps, userId, field(form, "role"), account.accountId);
    return redirect(`${CURRENT}?notice=member-updated`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, [notice]), status);
  }
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
export async function postRemoveMember(ctx: DashboardCtx, s: SessionContext, userId: string): Promise<Response> {
  const account = ownerOnly(s);
  if (account instanceof Response) return account;
  if (!(await isMember(ctx, account.accountId, userId))) {
    return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such person in this account.</p>`), 404);
  }
  try {
    await removeMember(ctx.deps, account.accountId, userId);
    return redirect(`${CURRENT}?notice=member-removed`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await membersPage(ctx, s, account.accountId, [notice]), status);
  }
}
