/**
 * First-run setup, sign-in and sign-out. Before a session exists, forms are bound to a nonce the server issued in an
 * HttpOnly cookie: the form carries csrfToken(nonce), an HMAC under the instance secret (csrf.ts), so a cookie and
 * field an attacker planted together (double submit with a value of their choosing) are refused.
 */
import { AppError } from "../../../lib/errors";
import { createAccount } from "../../accounts/service";
import { csrfToken, currentNonce, formNonce, verifyCsrf } from "../../../web/csrf";
import { type DashboardCtx, csrfRefused, postedFromElsewhere, safeNext } from "../../../web/guard";
import { html } from "../../../lib/html";
import { type Form, cookieNames, field, htmlResponse, readCookies, redirect, setCookie } from "../../../web/http";
import { adoptBrowserZone } from "../../../web/preferences";
import { type Notice, publicPage } from "../../../web/layout";
import { beginLoginAttempt, loginSucceeded } from "../login-limit";
import { SESSION_ABSOLUTE_MS, createSession, destroySession, needsSetup, resolveSession, verifyLogin } from "../../../web/session";

/** The token a pre-session form carries, and the nonce cookie to set when the request had none (or a stale one). */
function formToken(ctx: DashboardCtx, request: Request): { token: string; cookie: string[] } {
  const { nonce, cookie } = formNonce(ctx.deps, request, ctx.deps.clock.now());
  return { token: csrfToken(ctx.deps, nonce), cookie };
}

/** The form echoes the token of the nonce in its cookie, a nonce this server issued within the hour. */
function formTokenValid(ctx: DashboardCtx, request: Request, form: Form | undefined): boolean {
  if (postedFromElsewhere(ctx.deps.config, request)) return false;
  const nonce = currentNonce(ctx.deps.config, request, ctx.deps.clock.now());
  return nonce !== null && verifyCsrf(ctx.deps, nonce, field(form, "_csrf"));
}

function sessionCookie(ctx: DashboardCtx, token: string): string {
  return setCookie(ctx.deps.config, cookieNames(ctx.deps.config).session, token, Math.floor(SESSION_ABSOLUTE_MS / 1000));
}

/** What the setup form sends back on a refusal (never the passwords). */
interface SetupValues {
  name?: string;
  ownerName?: string;
  email?: string;
}

/** The setup fields an error can sit beside. */
const SETUP_FIELDS = ["name", "ownerName", "email", "password", "confirm"] as const;
type SetupField = (typeof SETUP_FIELDS)[number];

/** A refusal shown under the field it is about (aria-invalid, aria-describedby, focus there). */
interface SetupError {
  field: SetupField;
  text: string;
}

/** The attributes and the error line of `name` when `error` is about it. */
function errorFor(name: SetupField, error: SetupError | undefined, hint?: string) {
  const mine = error?.field === name;
  const describedBy = [hint, mine ? `${name}-error` : undefined].filter(Boolean).join(" ");
  return {
    attrs: html`${describedBy ? html` aria-describedby="${describedBy}"` : ""}${mine ? html` aria-invalid="true" autofocus` : ""}`,
    line: mine ? html`<p class="field-error" id="${name}-error">${error?.text ?? ""}</p>` : "",
  };
}

function setupForm(token: string, values: SetupValues, notices: Notice[] = [], error?: SetupError) {
  const e = (name: SetupField, hint?: string) => errorFor(name, error, hint);
  const [name, owner, email, password, confirm] = [e("name"), e("ownerName", "owner-hint"), e("email"), e("password", "pw-hint"), e("confirm")];
  return publicPage(
    "Set up Seedcast",
    html`<p>Create the first account. Its owner is also the administrator of this instance.</p>
<form method="post" action="/setup" class="card">
  <input type="hidden" name="_csrf" value="${token}">
  <input type="hidden" name="timeZone" value="" data-browser-zone>
  <div class="row"><label for="name">Account name</label>
    <input id="name" name="name" type="text" required maxlength="120" autocomplete="organization" value="${values.name ?? ""}"${name.attrs}>${name.line}</div>
  <div class="row"><label for="ownerName">Your name</label>
    <input id="ownerName" name="ownerName" type="text" maxlength="120" autocomplete="name" value="${values.ownerName ?? ""}"${owner.attrs}>${owner.line}
    <p class="hint" id="owner-hint">How other members see you. Left empty, the account name is used.</p></div>
  <div class="row"><label for="email">Your email</label>
    <input id="email" name="email" type="email" required autocomplete="email" value="${values.email ?? ""}"${email.attrs}>${email.line}</div>
  <div class="row"><label for="password">Password</label>
    <input id="password" name="password" type="password" required minlength="8" autocomplete="new-password"${password.attrs}>${password.line}
    <p class="hint" id="pw-hint">At least 8 characters.</p></div>
  <div class="row"><label for="confirm">Password again</label>
    <input id="confirm" name="confirm" type="password" required minlength="8" autocomplete="new-password"${confirm.attrs}>${confirm.line}</div>
  <button type="submit">Create account</button>
</form>`,
    notices,
  );
}

function loginForm(token: string, email: string, notices: Notice[] = [], next: string | null = null) {
  return publicPage(
    "Sign in",
    html`<form method="post" action="/login" class="card">
  <input type="hidden" name="_csrf" value="${token}">
  ${next ? html`<input type="hidden" name="next" value="${next}">` : ""}
  <input type="hidden" name="timeZone" value="" data-browser-zone>
  <div class="row"><label for="email">Email</label>
    <input id="email" name="email" type="email" required autocomplete="username" value="${email}"></div>
  <div class="row"><label for="password">Password</label>
    <input id="password" name="password" type="password" required autocomplete="current-password"></div>
  <button type="submit">Sign in</button>
</form>`,
    notices,
  );
}

const STALE_FORM: Notice = { kind: "error", text: "The form had expired. Please try again." };

/** GET /setup: the first-run form, only while the instance has no users. */
export async function getSetup(ctx: DashboardCtx, request: Request): Promise<Response> {
  if (!(await needsSetup(ctx.deps))) return redirect("/login");
  const { token, cookie } = formToken(ctx, request);
  return htmlResponse(setupForm(token, {}), 200, { "set-cookie": cookie });
}

/** POST /setup: creates the first account and its owner (the instance admin), then signs them in. */
export async function postSetup(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<Response> {
  if (!(await needsSetup(ctx.deps))) return redirect("/login");
  const { token, cookie } = formToken(ctx, request);
  const values = { name: field(form, "name"), ownerName: field(form, "ownerName"), email: field(form, "email") };
  if (!formTokenValid(ctx, request, form)) return htmlResponse(setupForm(token, values, [STALE_FORM]), 403, { "set-cookie": cookie });
  const password = field(form, "password");
  if (password !== field(form, "confirm")) {
    return htmlResponse(setupForm(token, values, [], { field: "confirm", text: "The two passwords differ: type the same password twice." }), 400);
  }
  // NB: hashing the password awaits; without this guard two simultaneous first-run posts could both pass the
  // "no users yet" check and create two accounts. One process serves the dashboard, so an in-process flag suffices.
  if (setupInFlight) return redirect("/login");
  setupInFlight = true;
  try {
    if (!(await needsSetup(ctx.deps))) return redirect("/login");
    const created = await createAccount(ctx.deps, { name: values.name, ownerName: values.ownerName, email: values.email, password });
    await adoptBrowserZone(ctx.deps, created.userId, field(form, "timeZone"));
    const { token: sessionToken } = await createSession(ctx.deps, created.userId);
    return redirect("/dashboard", [sessionCookie(ctx, sessionToken)]);
  } catch (error) {
    if (error instanceof AppError) {
      // A refusal about one field sits beside it; any other stays a notice at the top.
      const detail = (error.extra.details as { field?: string; problem?: string }[] | undefined)?.[0];
      const field = SETUP_FIELDS.find((f) => f === detail?.field);
      const page = field
        ? setupForm(token, values, [], { field, text: `${error.message}` })
        : setupForm(token, values, [{ kind: "error", text: error.message }]);
      return htmlResponse(page, 400);
    }
    throw error;
  } finally {
    setupInFlight = false;
  }
}

let setupInFlight = false;

/** GET /login: the sign-in form (with the expired-session or signed-out notice). */
export async function getLogin(ctx: DashboardCtx, request: Request): Promise<Response> {
  if (await needsSetup(ctx.deps)) return redirect("/setup");
  const params = new URL(request.url).searchParams;
  const existing = readCookies(request).get(cookieNames(ctx.deps.config).session);
  if (existing && typeof (await resolveSession(ctx.deps, existing)) === "object") return redirect(safeNext(params.get("next")) ?? "/dashboard");
  const notices: Notice[] = [];
  if (params.get("expired") === "1") {
    notices.push({ kind: "warn", text: "Your session has expired, so you were signed out. Sign in again to continue." });
  }
  if (params.get("out") === "1") notices.push({ kind: "ok", text: "You are signed out." });
  if (safeNext(params.get("next"))?.startsWith("/oauth/authorize")) {
    notices.push({ kind: "ok", text: "An app asked to connect to Seedcast. Sign in to see what it asks for and decide." });
  }
  const { token, cookie } = formToken(ctx, request);
  return htmlResponse(loginForm(token, "", notices, safeNext(params.get("next"))), 200, { "set-cookie": cookie });
}

/** POST /login: checks the rate limit, then the password; a new session token on every sign-in. */
export async function postLogin(ctx: DashboardCtx, request: Request, form: Form | undefined, address: string): Promise<Response> {
  const { token, cookie } = formToken(ctx, request);
  const email = field(form, "email").trim();
  const next = safeNext(field(form, "next"));
  if (!formTokenValid(ctx, request, form)) return htmlResponse(loginForm(token, email, [STALE_FORM], next), 403, { "set-cookie": cookie });
  const limited = await beginLoginAttempt(ctx.deps, email, address);
  if (limited) {
    const minutes = Math.ceil(limited.retryAfterSeconds / 60);
    const wait = `Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`;
    const text =
      limited.reason === "email" ? `Too many failed attempts for this email. ${wait}` : `Too many failed sign-ins from your network. ${wait}`;
    return htmlResponse(loginForm(token, email, [{ kind: "error", text }], next), 429, { "retry-after": String(limited.retryAfterSeconds) });
  }
  const userId = await verifyLogin(ctx.deps, email, field(form, "password"));
  if (!userId) {
    return htmlResponse(loginForm(token, email, [{ kind: "error", text: "That email and password do not match." }], next), 401);
  }
  await loginSucceeded(ctx.deps, email, address);
  await adoptBrowserZone(ctx.deps, userId, field(form, "timeZone"));
  const { token: sessionToken } = await createSession(ctx.deps, userId);
  return redirect(next ?? "/dashboard", [sessionCookie(ctx, sessionToken)]);
}

/**
 * POST /logout: ends the session, only with the session's CSRF token. Without it nothing happens, not even a cookie
 * change: a cross-site form post (which under SameSite=Lax arrives without the session cookie) must not be able to
 * clear the browser's session cookie either.
 */
export async function postLogout(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<Response> {
  const token = readCookies(request).get(cookieNames(ctx.deps.config).session);
  const s = token ? await resolveSession(ctx.deps, token) : "missing";
  if (typeof s !== "object") return redirect("/login");
  if (postedFromElsewhere(ctx.deps.config, request) || !verifyCsrf(ctx.deps, s.sessionId, field(form, "_csrf"))) return csrfRefused();
  await destroySession(ctx.deps, s.sessionId);
  return redirect("/login?out=1", [setCookie(ctx.deps.config, cookieNames(ctx.deps.config).session, "", 0)]);
}
