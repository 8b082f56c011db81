/**
 * "Forgot password" and the reset link's page (decisions.md §15). Public pages: their forms carry the pre-session
 * CSRF token (auth.ts). The answer to "Forgot password" is the same words whether or not a login uses the address.
 * Using a link sets the password, ends every other session of the person and signs them in here.
 */
import { AppError } from "../../../lib/errors";
import { MIN_PASSWORD } from "../../accounts/service";
import { type LinkRefusal } from "../../accounts/one-time-links";
import { RESET_PATH, openReset, requestPasswordReset, useReset } from "../../accounts/password-resets";
import type { DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, publicPage } from "../../../web/layout";
import { createSession } from "../../../web/session";
import { type FieldErrors, FormState } from "../fields";
import { FORGOT_PATH, STALE_FORM, formToken, formTokenValid, sessionCookie } from "./auth";

const ASK_AN_OWNER = "Ask an owner of your account: they can make you a reset link on the Members page.";

function forgotForm(token: string, notices: Notice[] = []): Html {
  return publicPage(
    "Forgot your password?",
    html`<p>Enter the email you sign in with. If a Seedcast login uses it, we send it a link to choose a new password.</p>
<form method="post" action="${FORGOT_PATH}" class="card">
  <input type="hidden" name="_csrf" value="${token}">
  <div class="row"><label for="email">Email</label>
    <input id="email" name="email" type="email" required autocomplete="username"></div>
  <button type="submit">Send me a link</button>
</form>
<p><a href="/login">Back to sign in</a></p>`,
    notices,
  );
}

/** GET /forgot-password: the form, or (without SMTP) who to ask. */
export function getForgot(ctx: DashboardCtx, request: Request): Response {
  if (!ctx.deps.config.smtp) {
    return htmlResponse(
      publicPage("Forgot your password?", html`<p class="card">This Seedcast cannot send email, so it cannot mail you a link. ${ASK_AN_OWNER}</p><p><a href="/login">Back to sign in</a></p>`),
    );
  }
  const { token, cookie } = formToken(ctx, request);
  return htmlResponse(forgotForm(token), 200, { "set-cookie": cookie });
}

/** POST /forgot-password: mails a link when a login uses the address; the same answer either way. */
export async function postForgot(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<Response> {
  const { token, cookie } = formToken(ctx, request);
  if (!ctx.deps.config.smtp) return getForgot(ctx, request);
  if (!formTokenValid(ctx, request, form)) return htmlResponse(forgotForm(token, [STALE_FORM]), 403, { "set-cookie": cookie });
  await requestPasswordReset(ctx.deps, field(form, "email"));
  return htmlResponse(
    publicPage(
      "Check your email",
      html`<p class="card">If a Seedcast login uses that address, a link to choose a new password is on its way to it. The link works once, for one hour.</p>
<p>Nothing after a few minutes? Look in your spam folder, or ${ASK_AN_OWNER.charAt(0).toLowerCase()}${ASK_AN_OWNER.slice(1)}</p>
<p><a href="/login">Back to sign in</a></p>`,
    ),
  );
}

/** A link that cannot be used, in plain words. */
function refusedLink(state: LinkRefusal): Response {
  const text: Record<LinkRefusal, string> = {
    unknown: "This reset link is not valid. Check that you opened the whole link from the email, or ask for a new one.",
    used: "This reset link was already used. Each link works once. If you still cannot sign in, ask for a new one.",
    expired: "This reset link has expired: links work for one hour. Ask for a new one.",
    revoked: "This reset link was withdrawn. Ask for a new one.",
  };
  return htmlResponse(
    publicPage("Reset link cannot be used", html`<p class="card">${text[state]}</p><p><a href="${FORGOT_PATH}">Ask for a new link</a> · <a href="/login">Sign in</a></p>`),
    state === "unknown" ? 404 : 410,
  );
}

function resetForm(token: string, linkToken: string, email: string, errors: FieldErrors = {}, notices: Notice[] = []): Html {
  const f = new FormState(errors);
  return publicPage(
    "Choose a new password",
    html`<p>For the login <strong>${email}</strong>. Other browsers signed in as you are signed out.</p>
<form method="post" action="${RESET_PATH}/${linkToken}" class="card" novalidate>
  <input type="hidden" name="_csrf" value="${token}">
  <input type="text" name="username" value="${email}" autocomplete="username" hidden>
  ${f.input({ name: "password", label: "New password", type: "password", required: true, hint: `At least ${MIN_PASSWORD} characters.`, attrs: html` minlength="${String(MIN_PASSWORD)}" autocomplete="new-password"` })}
  ${f.input({ name: "confirm", label: "New password again", type: "password", required: true, attrs: html` autocomplete="new-password"` })}
  <button type="submit">Set password and sign in</button>
</form>`,
    notices,
  );
}

/** GET /reset/:token */
export async function getReset(ctx: DashboardCtx, request: Request, linkToken: string): Promise<Response> {
  const opened = await openReset(ctx.deps, linkToken);
  if (opened.state !== "valid") return refusedLink(opened.state);
  const { token, cookie } = formToken(ctx, request);
  return htmlResponse(resetForm(token, linkToken, opened.email), 200, { "set-cookie": cookie });
}

/** POST /reset/:token: sets the password (once), ends the person's sessions, signs them in here. */
export async function postReset(ctx: DashboardCtx, request: Request, form: Form | undefined, linkToken: string): Promise<Response> {
  const opened = await openReset(ctx.deps, linkToken);
  if (opened.state !== "valid") return refusedLink(opened.state);
  const { token, cookie } = formToken(ctx, request);
  if (!formTokenValid(ctx, request, form)) return htmlResponse(resetForm(token, linkToken, opened.email, {}, [STALE_FORM]), 403, { "set-cookie": cookie });
  const password = field(form, "password");
  const errors: FieldErrors = {};
  if (password.length < MIN_PASSWORD) errors.password = `Choose a password of at least ${MIN_PASSWORD} characters.`;
  else if (password !== field(form, "confirm")) errors.confirm = "The two passwords differ: type the same password twice.";
  if (Object.keys(errors).length > 0) return htmlResponse(resetForm(token, linkToken, opened.email, errors), 400);
  try {
    const used = await useReset(ctx.deps, linkToken, password);
    if (!used.ok) return refusedLink(used.refusal);
    const { token: sessionToken } = await createSession(ctx.deps, used.userId);
    return redirect("/dashboard?notice=password-reset", [sessionCookie(ctx, sessionToken)]);
  } catch (error) {
    if (error instanceof AppError) return htmlResponse(resetForm(token, linkToken, opened.email, { password: `Choose a password of at least ${MIN_PASSWORD} characters.` }), 400);
    throw error;
  }
}
