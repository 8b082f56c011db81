/** Instance (admin only): every account, creating one with its owner, disabling/enabling, granting credits. */
import { asc, count, eq } from "drizzle-orm";
import { accounts, members } from "../../../db/tables";
import { isoAt } from "../../../lib/clock";
import { createAccount, setAccountDisabled } from "../../accounts/service";
import { grantCredits } from "../../credits/grant";
import { type DashboardCtx, forbiddenPage } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { zoneOf } from "../../../web/preferences";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";
import { parseAmount } from "./credits";

const CURRENT = "/dashboard/instance";

async function allAccounts(ctx: DashboardCtx) {
  const counts = new Map(
    (await ctx.deps.store.db.select({ accountId: members.accountId, n: count() }).from(members).groupBy(members.accountId).all()).map((r) => [
      r.accountId,
      r.n,
    ]),
  );
  return (await ctx.deps.store.db.select().from(accounts).orderBy(asc(accounts.createdAt)).all()).map((a) => ({
    ...a,
    members: counts.get(a.id) ?? 0,
  }));
}

async function instancePage(ctx: DashboardCtx, s: SessionContext, notices: Notice[], values: Record<string, string> = {}): Promise<Html> {
  const rows = await allAccounts(ctx);
  return page(
    s,
    { title: "Instance", current: CURRENT, notices },
    html`<section class="card" aria-labelledby="accounts-title">
  <h2 id="accounts-title">Accounts</h2>
  <div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Account</th><th scope="col">Created</th><th scope="col">People</th><th scope="col">Credits</th><th scope="col">State</th><th scope="col">Grant credits</th><th scope="col"><span class="sr-only">Disable or enable</span></th></tr></thead>
  <tbody>${rows.map(
    (a) => html`<tr>
    <td data-label="Account">${a.name}</td>
    <td data-label="Created">${timeTag(isoAt(a.createdAt), "—", zoneOf(s))}</td>
    <td data-label="People">${a.members}</td>
    <td data-label="Credits">${a.creditsBalance}${a.creditsReserved > 0 ? html` <span class="muted">(+${a.creditsReserved} reserved)</span>` : ""}</td>
    <td data-label="State"><span class="badge state-${a.disabledAt === null ? "active" : "disabled"}">${a.disabledAt === null ? "active" : "disabled"}</span></td>
    <td data-label="Grant credits"><form method="post" action="/dashboard/instance/accounts/${a.id}/grant" class="actions">
      ${csrfField(s.csrfToken)}
      <label class="sr-only" for="grant-${a.id}">Credits to grant to ${a.name}</label>
      <input id="grant-${a.id}" name="amount" type="number" min="1" step="1" required class="narrow-input">
      <button type="submit" class="small secondary">Grant</button>
    </form></td>
    <td data-label="Access">${
      a.disabledAt === null
        ? html`<a class="button small danger" href="/dashboard/instance/accounts/${a.id}/disable">Disable<span class="sr-only"> ${a.name}</span></a>`
        : html`<form method="post" action="/dashboard/instance/accounts/${a.id}/enable">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Enable<span class="sr-only"> ${a.name}</span></button></form>`
    }</td>
  </tr>`,
  )}</tbody></table></div>
</section>
<form method="post" action="/dashboard/instance/accounts" class="card form-card" aria-labelledby="create-title">
  <h2 id="create-title">Create an account</h2>
  ${csrfField(s.csrfToken)}
  <div class="row"><label for="a-name">Account name</label><input id="a-name" name="name" type="text" required maxlength="120" value="${values.name ?? ""}"></div>
  <div class="row"><label for="a-email">Owner's email</label><input id="a-email" name="email" type="email" required value="${values.email ?? ""}"></div>
  <div class="row"><label for="a-password">Owner's initial password</label><input id="a-password" name="password" type="password" required minlength="8" autocomplete="new-password"></div>
  <div class="row"><label for="a-credits">Initial credits</label><input id="a-credits" name="credits" type="number" min="0" step="1" value="${values.credits ?? String(ctx.deps.config.creditsInitial)}"></div>
  <button type="submit">Create account</button>
</form>`,
  );
}

function adminOnly(s: SessionContext): Response | null {
  return s.isAdmin ? null : forbiddenPage(s, "Only the instance administrator opens this page.");
}

/** GET /dashboard/instance */
export async function getInstance(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  return adminOnly(s) ?? htmlResponse(await instancePage(ctx, s, noticeFrom(request)));
}

/** POST /dashboard/instance/accounts: creates an account with its first owner. */
export async function postCreateAccount(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const values = { name: field(form, "name"), email: field(form, "email"), credits: field(form, "credits") };
  try {
    const credits = values.credits.trim() === "" ? undefined : /^\d{1,9}$/.test(values.credits.trim()) ? Number(values.credits) : Number.NaN;
    if (credits !== undefined && Number.isNaN(credits)) {
      return htmlResponse(await instancePage(ctx, s, [{ kind: "error", text: "Initial credits must be a whole number." }], values), 400);
    }
    await createAccount(ctx.deps, { name: values.name, email: values.email, password: field(form, "password"), credits });
    return redirect(`${CURRENT}?notice=account-created`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice], values), status);
  }
}

/** POST /dashboard/instance/accounts/:id/grant */
export async function postGrantTo(ctx: DashboardCtx, s: SessionContext, accountId: string, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  try {
    await grantCredits(ctx.deps, accountId, parseAmount(field(form, "amount")), "granted by the instance administrator");
    return redirect(`${CURRENT}?notice=granted`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice]), status);
  }
}

/** GET /dashboard/instance/accounts/:id/disable: the confirmation step. */
export async function getDisable(ctx: DashboardCtx, s: SessionContext, accountId: string): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const account = await ctx.deps.store.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such account.</p>`), 404);
  return htmlResponse(
    confirmPage(s, {
      title: "Disable account",
      current: CURRENT,
      question: html`Disable <strong>${account.name}</strong>? Its API keys answer 401 and its people cannot open it until it is enabled again. Nothing is deleted.`,
      action: `/dashboard/instance/accounts/${account.id}/disable`,
      confirmLabel: "Disable account",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/instance/accounts/:id/disable and /enable */
export async function postSetDisabled(ctx: DashboardCtx, s: SessionContext, accountId: string, disabled: boolean): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  try {
    await setAccountDisabled(ctx.deps, accountId, disabled);
    return redirect(`${CURRENT}?notice=${disabled ? "account-disabled" : "account-enabled"}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice]), status);
  }
}
