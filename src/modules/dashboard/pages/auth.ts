/**
 * First-run setup, sign-in and sign-out. Before a session exists, forms are protected by a double-submit token: a
 * random value in an HttpOnly cookie that the form must echo (a cross-site page can neither read nor set it).
 */
import { AppError } from "../../../lib/errors";
import { createAccount } from "../../accounts/service";
import { type DashboardCtx, safeNext, session } from "../guard";
import { html } from "../html";
import { type Form, cookieNames, field, htmlResponse, readCookies, redirect, sameToken, setCookie } from "../http";
import { type Notice, publicPage } from "../layout";
import { SESSION_ABSOLUTE_MS, createSession, destroySession, needsSetup, randomToken, resolveSession, verifyLogin } from "../session";

/** Lifetime of the pre-login form cookie. */
const FORM_COOKIE_SECONDS = 60 * 60;

function formToken(ctx: DashboardCtx, request: Request): { token: string; cookie: string[] } {
  const name = cookieNames(ctx.deps.config).preLogin;
  const existing = readCookies(request).get(name);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, cookie: [] };
  const token = randomToken();
  return { token, cookie: [setCookie(ctx.deps.config, name, token, FORM_COOKIE_SECONDS)] };
}

function formTokenValid(ctx: DashboardCtx, request: Request, form: Form | undefined): boolean {
  const cookie = readCookies(request).get(cookieNames(ctx.deps.config).preLogin) ?? "";
  return sameToken(field(form, "_csrf"), cookie);
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

function setupForm(token: string, values: SetupValues, notices: Notice[] = []) {
  return publicPage(
    "Set up Seedcast",
    html`<p>Create the first account. Its owner is also the administrator of this instance.</p>
<form method="post" action="/setup" class="card">
  <input type="hidden" name="_csrf" value="${token}">
  <div class="row"><label for="name">Account name</label>
    <input id="name" name="name" type="text" required maxlength="120" autocomplete="organization" value="${values.name ?? ""}"></div>
  <div class="row"><label for="ownerName">Your name</label>
    <input id="ownerName" name="ownerName" type="text" maxlength="120" autocomplete="name" aria-describedby="owner-hint" value="${values.ownerName ?? ""}">
    <p class="hint" id="owner-hint">How other members see you. Left empty, the account name is used.</p></div>
  <div class="row"><label for="email">Your email</label>
    <input id="email" name="email" type="email" required autocomplete="email" value="${values.email ?? ""}"></div>
  <div class="row"><label for="password">Password</label>
    <input id="password" name="password" type="password" required minlength="8" autocomplete="new-password" aria-describedby="pw-hint">
    <p class="hint" id="pw-hint">At least 8 characters.</p></div>
  <div class="row"><label for="confirm">Password again</label>
    <input id="confirm" name="confirm" type="password" required minlength="8" autocomplete="new-password"></div>
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
export function getSetup(ctx: DashboardCtx, request: Request): Response {
  if (!needsSetup(ctx.deps)) return redirect("/login");
  const { token, cookie } = formToken(ctx, request);
  return htmlResponse(setupForm(token, {}), 200, { "set-cookie": cookie });
}

/** POST /setup: creates the first account and its owner (the instance admin), then signs them in. */
export async function postSetup(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<Response> {
  if (!needsSetup(ctx.deps)) return redirect("/login");
  const { token, cookie } = formToken(ctx, request);
  const values = { name: field(form, "name"), ownerName: field(form, "ownerName"), email: field(form, "email") };
  if (!formTokenValid(ctx, request, form)) return htmlResponse(setupForm(token, values, [STALE_FORM]), 403, { "set-cookie": cookie });
  const password = field(form, "password");
  if (password !== field(form, "confirm")) {
    return htmlResponse(setupForm(token, values, [{ kind: "error", text: "The two passwords differ." }]), 400);
  }
  // NB: hashing the password awaits; without this guard two simultaneous first-run posts could both pass the
  // "no users yet" check and create two accounts. One process serves the dashboard, so an in-process flag suffices.
  if (setupInFlight) return redirect("/login");
  setupInFlight = true;
  try {
    if (!needsSetup(ctx.deps)) return redirect("/login");
    const created = await createAccount(ctx.deps, { name: values.name, ownerName: values.ownerName, email: values.email, password });
    const { token: sessionToken } = createSession(ctx.deps, created.userId);
    return redirect("/dashboard", [sessionCookie(ctx, sessionToken)]);
  } catch (error) {
    if (error instanceof AppError) return htmlResponse(setupForm(token, values, [{ kind: "error", text: error.message }]), 400);
    throw error;
  } finally {
    setupInFlight = false;
  }
}

let setupInFlight = false;

/** GET /login: the sign-in form (with the expired-session or signed-out notice). */
export function getLogin(ctx: DashboardCtx, request: Request): Response {
  if (needsSetup(ctx.deps)) return redirect("/setup");
  const params = new URL(request.url).searchParams;
  const existing = readCookies(request).get(cookieNames(ctx.deps.config).session);
  if (existing && typeof resolveSession(ctx.deps, existing) === "object") return redirect(safeNext(params.get("next")) ?? "/dashboard");
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
  const wait = ctx.limiter.retryAfter(email, address);
  if (wait > 0) {
    const minutes = Math.ceil(wait / 60);
    return htmlResponse(
      loginForm(token, email, [
        { kind: "error", text: `Too many failed attempts for this email. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.` },
      ], next),
      429,
      { "retry-after": String(wait) },
    );
  }
  const userId = await verifyLogin(ctx.deps, email, field(form, "password"));
  if (!userId) {
    ctx.limiter.fail(email, address);
    return htmlResponse(loginForm(token, email, [{ kind: "error", text: "That email and password do not match." }], next), 401);
  }
  ctx.limiter.succeed(email, address);
  const { token: sessionToken } = createSession(ctx.deps, userId);
  return redirect(next ?? "/dashboard", [sessionCookie(ctx, sessionToken)]);
}

/** POST /logout: ends the session (CSRF-checked so no other site can sign a person out). */
export function postLogout(ctx: DashboardCtx, request: Request, form: Form | undefined): Response {
  const s = session(ctx, request);
  const clear = setCookie(ctx.deps.config, cookieNames(ctx.deps.config).session, "", 0);
  if (s instanceof Response) return redirect("/login", [clear]);
  if (!sameToken(field(form, "_csrf"), s.csrfToken)) return redirect("/dashboard");
  destroySession(ctx.deps, s.sessionId);
  return redirect("/login?out=1", [clear]);
}
