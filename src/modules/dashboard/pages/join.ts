/**
 * The invitation link's page (decisions.md §15): the invitee chooses their password and name and lands in the
 * dashboard; an address that has a login already signs in first and joins as that person. A link that cannot be used
 * says why in plain words. Public page: its form carries the pre-session CSRF token (auth.ts).
 */
import { AppError } from "../../../lib/errors";
import { type AcceptResult, INVITE_PATH, acceptAsNewUser, acceptAsUser, openInvitation } from "../../accounts/invitations";
import { MIN_PASSWORD } from "../../accounts/service";
import type { DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, cookieNames, field, htmlResponse, readCookies, redirect } from "../../../web/http";
import { type Notice, publicPage } from "../../../web/layout";
import { type SessionContext, createSession, resolveSession, switchAccount } from "../../../web/session";
import { type FieldErrors, FormState } from "../fields";
import { STALE_FORM, formToken, formTokenValid, sessionCookie } from "./auth";

function roleWords(role: string): string {
  return role === "owner" ? "an owner" : role === "editor" ? "an editor" : "a viewer";
}

/** Why a link cannot be used, in plain words, with where to go next. */
function refused(refusal: Exclude<AcceptResult, { ok: true }>["refusal"], accountName: string | null, email?: string): Response {
  const of = accountName ? ` of ${accountName}` : "";
  const text: Record<typeof refusal, string> = {
    unknown: "This invitation link is not valid. Check that you opened the whole link, or ask the person who invited you for a new one.",
    used: `This invitation was already used. Each invitation works once. If you accepted it, sign in; otherwise ask an owner${of} for a new one.`,
    expired: `This invitation has expired: invitations work for 7 days. Ask an owner${of} to invite you again.`,
    revoked: `This invitation was withdrawn by an owner${of}. Ask them if you think that is a mistake.`,
    has_login: `There is a Seedcast login for ${email ?? "this address"} already. Sign in with it to accept the invitation.`,
    other_email: `This invitation is for ${email ?? "another address"}, and you are signed in as someone else. Sign out, then open the link again.`,
  };
  return htmlResponse(
    publicPage("Invitation cannot be used", html`<p class="card">${text[refusal]}</p><p><a href="/login">Sign in</a></p>`),
    refusal === "unknown" ? 404 : refusal === "has_login" || refusal === "other_email" ? 409 : 410,
  );
}

/** The signed-in person on this request (read afresh on each call), or null. */
async function signedIn(ctx: DashboardCtx, request: Request): Promise<SessionContext | null> {
  const token = readCookies(request).get(cookieNames(ctx.deps.config).session);
  if (!token) return null;
  const resolved = await resolveSession(ctx.deps, token);
  return typeof resolved === "object" ? resolved : null;
}

interface JoinValues {
  name?: string;
}

function joinForm(csrf: string, linkToken: string, offer: { accountName: string; email: string; role: string }, values: JoinValues, errors: FieldErrors = {}, notices: Notice[] = []): Html {
  const f = new FormState(errors);
  return publicPage(
    `Join ${offer.accountName}`,
    html`<p>You are invited to join <strong>${offer.accountName}</strong> on Seedcast as ${roleWords(offer.role)}. Choose your password to accept.</p>
<form method="post" action="${INVITE_PATH}/${linkToken}" class="card" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="row"><label for="email">Email</label>
    <input id="email" type="email" value="${offer.email}" readonly autocomplete="username" aria-describedby="email-hint">
    <p class="hint" id="email-hint">The address you were invited at; you sign in with it.</p></div>
  ${f.input({ name: "name", label: "Your name", value: values.name ?? "", hint: "How the others in the account see you.", attrs: html` maxlength="120" autocomplete="name"` })}
  ${f.input({ name: "password", label: "Password", type: "password", required: true, hint: `At least ${MIN_PASSWORD} characters.`, attrs: html` minlength="${String(MIN_PASSWORD)}" autocomplete="new-password"` })}
  ${f.input({ name: "confirm", label: "Password again", type: "password", required: true, attrs: html` autocomplete="new-password"` })}
  <button type="submit">Join ${offer.accountName}</button>
</form>`,
    notices,
  );
}

function acceptAsMeForm(csrf: string, linkToken: string, offer: { accountName: string; role: string }, s: SessionContext, notices: Notice[] = []): Html {
  return publicPage(
    `Join ${offer.accountName}`,
    html`<p>You are invited to join <strong>${offer.accountName}</strong> as ${roleWords(offer.role)}. You are signed in as ${s.email}.</p>
<form method="post" action="${INVITE_PATH}/${linkToken}" class="card">
  <input type="hidden" name="_csrf" value="${csrf}">
  <button type="submit">Join ${offer.accountName}</button>
</form>`,
    notices,
  );
}

/** GET /invite/:token */
export async function getInvite(ctx: DashboardCtx, request: Request, linkToken: string): Promise<Response> {
  const opened = await openInvitation(ctx.deps, linkToken);
  if (opened.state !== "valid") return refused(opened.state, opened.accountName);
  const s = await signedIn(ctx, request);
  const { token, cookie } = formToken(ctx, request);
  const headers = { "set-cookie": cookie };
  if (s) {
    if (s.email.toLowerCase() !== opened.email.toLowerCase()) return refused("other_email", opened.accountName, opened.email);
    return htmlResponse(acceptAsMeForm(token, linkToken, opened, s), 200, headers);
  }
  if (opened.hasLogin) return redirect(`/login?next=${encodeURIComponent(`${INVITE_PATH}/${linkToken}`)}`);
  return htmlResponse(joinForm(token, linkToken, opened, {}), 200, headers);
}

/** POST /invite/:token: joins as the signed-in person, or creates the invitee's login; then the dashboard. */
export async function postInvite(ctx: DashboardCtx, request: Request, form: Form | undefined, linkToken: string): Promise<Response> {
  const opened = await openInvitation(ctx.deps, linkToken);
  if (opened.state !== "valid") return refused(opened.state, opened.accountName);
  const s = await signedIn(ctx, request);
  const { token, cookie } = formToken(ctx, request);
  const values = { name: field(form, "name") };
  if (!formTokenValid(ctx, request, form)) {
    const again = s ? acceptAsMeForm(token, linkToken, opened, s, [STALE_FORM]) : joinForm(token, linkToken, opened, values, {}, [STALE_FORM]);
    return htmlResponse(again, 403, { "set-cookie": cookie });
  }
  if (s) {
    const accepted = await acceptAsUser(ctx.deps, linkToken, s.userId);
    if (!accepted.ok) return refused(accepted.refusal, opened.accountName, opened.email);
    // The session read before joining does not list the new account yet: read it again to switch to it.
    const joined = await signedIn(ctx, request);
    if (joined) await switchAccount(ctx.deps, joined, accepted.accountId);
    return redirect("/dashboard?notice=joined");
  }
  const password = field(form, "password");
  const errors: FieldErrors = {};
  if (values.name.trim().length > 120) errors.name = "Keep your name to at most 120 characters.";
  if (password.length < MIN_PASSWORD) errors.password = `Choose a password of at least ${MIN_PASSWORD} characters.`;
  else if (password !== field(form, "confirm")) errors.confirm = "The two passwords differ: type the same password twice.";
  if (Object.keys(errors).length > 0) return htmlResponse(joinForm(token, linkToken, opened, values, errors), 400);
  try {
    const accepted = await acceptAsNewUser(ctx.deps, linkToken, { name: values.name, password });
    if (!accepted.ok) return refused(accepted.refusal, opened.accountName, opened.email);
    const { token: sessionToken } = await createSession(ctx.deps, accepted.userId);
    return redirect("/dashboard?notice=joined", [sessionCookie(ctx, sessionToken)]);
  } catch (error) {
    if (error instanceof AppError) return htmlResponse(joinForm(token, linkToken, opened, values, { password: error.message }), 400);
    throw error;
  }
}
