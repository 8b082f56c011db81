/**
 * Your account (the person's own settings): the time zone every dashboard time is shown and read in (the page script
 * sets it from the browser the first time: POST .../time-zone with `x-requested-with: fetch`; the form changes it),
 * the password, and which kinds of notice are emailed (decisions.md §15).
 */
import { AppError } from "../../../lib/errors";
import { MIN_PASSWORD, changeOwnPassword } from "../../accounts/service";
import { type FieldErrors, FormState } from "../fields";
import { endOtherSessions } from "../sessions-end";
import type { DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import { isTimeZone, saveTimeZone, storedTimeZone, timeZones, zoneOf } from "../../../web/preferences";
import type { SessionContext } from "../../../web/session";
import { zonedParts } from "../../../lib/zoned";
import { noticeFrom } from "./common";
import { NOTICE_KINDS } from "../../../db/schema/notices";
import { KIND_SWITCH_LABELS } from "../../notices/kinds";
import { mailedKinds, setMailedKinds } from "../../notices/service";
import { NOTICES_PATH } from "./notices";

export const ACCOUNT_PATH = "/dashboard/account";

function passwordForm(s: SessionContext, errors: FieldErrors): Html {
  const f = new FormState(errors);
  return html`<form method="post" action="${ACCOUNT_PATH}/password" class="card form-card" aria-labelledby="pw-title" novalidate>
  <h2 id="pw-title">Change your password</h2>
  ${csrfField(s.csrfToken)}
  ${f.input({ name: "currentPassword", label: "Current password", type: "password", required: true, attrs: html` autocomplete="current-password"` })}
  ${f.input({ name: "newPassword", label: "New password", type: "password", required: true, hint: `At least ${MIN_PASSWORD} characters.`, attrs: html` autocomplete="new-password"` })}
  ${f.input({ name: "confirmPassword", label: "New password again", type: "password", required: true, attrs: html` autocomplete="new-password"` })}
  <p class="hint">Your other signed-in browsers are signed out when it changes.</p>
  <button type="submit">Change password</button>
</form>`;
}

/** The per-kind email switches (checked: emailed). */
async function emailForm(ctx: DashboardCtx, s: SessionContext): Promise<Html> {
  const on = await mailedKinds(ctx.deps, s.userId);
  const mails = ctx.deps.config.smtp !== null;
  return html`<form method="post" action="${ACCOUNT_PATH}/notices" class="card form-card" aria-labelledby="emails-title">
  <h2 id="emails-title">Emails</h2>
  ${csrfField(s.csrfToken)}
  <fieldset><legend>Email me when</legend>
  ${NOTICE_KINDS.map(
    (k) => html`<label><input type="checkbox" name="mail" value="${k}"${on.has(k) ? html` checked` : ""}> ${KIND_SWITCH_LABELS[k]}</label>`,
  )}
  </fieldset>
  <p class="hint">${mails ? "" : "This Seedcast sends no email yet (SMTP is not set up); your choices apply once it does. "}Every notice also shows on your <a href="${NOTICES_PATH}">Notices</a> page. With password reset links off, “Forgot password” sends you nothing; an owner can still make you a link.</p>
  <button type="submit">Save email choices</button>
</form>`;
}

async function accountPage(
  ctx: DashboardCtx,
  s: SessionContext,
  notices: Notice[],
  errors: FieldErrors = {},
  typed?: string,
  pwErrors: FieldErrors = {},
): Promise<Html> {
  const zone = typed ?? zoneOf(s);
  const chosen = await storedTimeZone(ctx.deps, s.userId);
  const f = new FormState(errors);
  const now = zonedParts(ctx.deps.clock.now(), zoneOf(s));
  return page(
    s,
    { title: "Your settings", current: ACCOUNT_PATH, notices },
    html`<p class="muted">Signed in as ${s.email}.</p>
<form method="post" action="${ACCOUNT_PATH}/time-zone" class="card form-card" aria-labelledby="tz-title">
  <h2 id="tz-title">Time zone</h2>
  ${csrfField(s.csrfToken)}
  ${f.select({
    name: "timeZone",
    label: "Show and enter times in",
    value: zone,
    options: timeZones().map((z) => [z, z.replace(/_/g, " ")] as const),
    hint: `It is ${now.date} ${now.time} there now.${chosen ? "" : " Not chosen yet: taken from your browser when script runs, UTC until then."}`,
  })}
  <button type="submit">Save time zone</button>
</form>
${passwordForm(s, pwErrors)}
${await emailForm(ctx, s)}`,
  );
}

/** GET /dashboard/account */
export async function getAccount(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  return htmlResponse(await accountPage(ctx, s, noticeFrom(request)));
}

/** POST /dashboard/account/time-zone (the form, or the page script's first-visit call). */
export async function postTimeZone(ctx: DashboardCtx, s: SessionContext, form: Form | undefined, request: Request): Promise<Response> {
  const scripted = request.headers.get("x-requested-with") === "fetch";
  const zone = field(form, "timeZone").trim();
  if (!isTimeZone(zone)) {
    if (scripted) return new Response("unknown time zone", { status: 400, headers: { "cache-control": "no-store" } });
    return htmlResponse(await accountPage(ctx, s, [], { timeZone: "Choose a time zone from the list." }, zone), 400);
  }
  await saveTimeZone(ctx.deps, s.userId, zone);
  if (scripted) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  return redirect(`${ACCOUNT_PATH}?notice=zone-saved`);
}

/** POST /dashboard/account/password: current + new (twice); other sessions of the person end. */
export async function postPassword(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const current = field(form, "currentPassword");
  const next = field(form, "newPassword");
  const errors: FieldErrors = {};
  if (!current) errors.currentPassword = "Enter your current password.";
  if (next.length < MIN_PASSWORD) errors.newPassword = `Choose a new password of at least ${MIN_PASSWORD} characters.`;
  else if (next !== field(form, "confirmPassword")) errors.confirmPassword = "The two new passwords differ.";
  if (Object.keys(errors).length === 0) {
    try {
      await changeOwnPassword(ctx.deps, s.userId, current, next);
      await endOtherSessions(ctx.deps, s.userId, s.sessionId);
      return redirect(`${ACCOUNT_PATH}?notice=password-changed`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: string }[]) : [];
      if (details[0]?.field === "currentPassword") errors.currentPassword = "That is not your current password.";
      else errors.newPassword = `Choose a new password of at least ${MIN_PASSWORD} characters.`;
    }
  }
  return htmlResponse(await accountPage(ctx, s, [], {}, undefined, errors), 400);
}

/** POST /dashboard/account/notices: the kinds checked are emailed, the others not. */
export async function postNoticeSwitches(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  await setMailedKinds(ctx.deps, s.userId, new Set(fields(form, "mail")));
  return redirect(`${ACCOUNT_PATH}?notice=notices-saved`);
}
