/**
 * Who may see what: every dashboard route goes through `session()` (no session → /login; an expired one → the
 * expired page) and every POST through `postSession()` (plus the CSRF synchronizer token, and no foreign Origin). Role
 * gates answer a 403 page, never the data.
 */
import type { Config } from "../config";
import type { Deps } from "../deps";
import { html } from "../lib/html";
import type { BodyRefused } from "../http/form-body";
import { verifyCsrf } from "./csrf";
import { type Form, cookieNames, field, htmlResponse, readCookies, redirect, setCookie } from "./http";
import { page, publicPage } from "./layout";
import { type Membership, type SessionContext, resolveSession } from "./session";

/** What every dashboard handler gets. */
export interface DashboardCtx {
  deps: Deps;
}

/**
 * Pages a sign-in may return to: dashboard paths and the OAuth authorization page (whose query the oauth module
 * percent-encodes to fit), never another origin (no open redirect).
 */
const SAFE_NEXT = /^\/(?:dashboard(?:\/[A-Za-z0-9\-._~/]*)?|oauth\/authorize)(?:\?[A-Za-z0-9\-._~=&%]*)?$/;

/** `next` when it is a dashboard path we would redirect to, else null. */
export function safeNext(next: string | null | undefined): string | null {
  return next && SAFE_NEXT.test(next) && !next.includes("//") ? next : null;
}

/** /login (or the expired page), remembering the page asked for when it was a plain GET. */
function loginRedirect(request: Request, expired: boolean): string {
  const url = new URL(request.url);
  const next = request.method === "GET" ? safeNext(url.pathname + url.search) : null;
  const params = new URLSearchParams();
  if (expired) params.set("expired", "1");
  if (next && next !== "/dashboard") params.set("next", next);
  const query = params.toString();
  return query ? `/login?${query}` : "/login";
}

/** The session of a request, or the answer to send instead (redirect to /login, or to the expired page). */
export async function session(ctx: DashboardCtx, request: Request): Promise<SessionContext | Response> {
  const names = cookieNames(ctx.deps.config);
  const token = readCookies(request).get(names.session);
  if (!token) return redirect(loginRedirect(request, false));
  const resolved = await resolveSession(ctx.deps, token);
  if (resolved === "missing") return redirect(loginRedirect(request, false), [setCookie(ctx.deps.config, names.session, "", 0)]);
  if (resolved === "expired") return redirect(loginRedirect(request, true), [setCookie(ctx.deps.config, names.session, "", 0)]);
  return resolved;
}

/** The page answered when a form's CSRF token is missing or wrong. */
export function csrfRefused(): Response {
  return htmlResponse(
    publicPage(
      "This form has expired",
      html`<p>The form was missing its security token or it no longer matches your session, so nothing was changed.</p>
<p><a class="button" href="/dashboard">Back to the dashboard</a></p>`,
    ),
    403,
  );
}

const ownOrigins = new WeakMap<object, string>();

/** base_url's origin (scheme, host and port), worked out once per config. */
function ownOrigin(config: Pick<Config, "baseUrl">): string {
  let origin = ownOrigins.get(config);
  if (origin === undefined) {
    origin = new URL(config.baseUrl).origin;
    ownOrigins.set(config, origin);
  }
  return origin;
}

/**
 * True for a form the browser says another site posted: `Sec-Fetch-Site: cross-site`, or an `Origin` that is present
 * and is not base_url's (another host, port or scheme, or `null` from a sandboxed or privacy-sensitive context). No
 * dashboard form is ever posted from elsewhere, whatever token it carries. Without either header (older browsers,
 * scripts) the token alone decides (decisions.md §10).
 */
export function postedFromElsewhere(config: Pick<Config, "baseUrl">, request: Request): boolean {
  if (request.headers.get("sec-fetch-site") === "cross-site") return true;
  const origin = request.headers.get("origin");
  return origin !== null && origin !== ownOrigin(config);
}

/** The session of a POST whose form carries the session's CSRF token, or the answer to send instead. */
export async function postSession(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<SessionContext | Response> {
  const s = await session(ctx, request);
  if (s instanceof Response) return s;
  const sent = field(form, "_csrf") || request.headers.get("x-csrf-token") || "";
  if (postedFromElsewhere(ctx.deps.config, request) || !verifyCsrf(ctx.deps, s.sessionId, sent)) return csrfRefused();
  return s;
}

/** The page answered when a form's body was refused before it was read (too large, malformed). */
export function bodyRefusedPage(refused: BodyRefused): Response {
  const tooLarge = refused.error.code === "payload_too_large";
  return htmlResponse(
    publicPage(
      tooLarge ? "This form is too large" : "This form could not be read",
      html`<p>${tooLarge ? "The form sent more than this page ever needs, so it was not read and nothing was changed." : `${refused.error.message} Nothing was changed.`}</p>
<p><a class="button" href="/dashboard">Back to the dashboard</a></p>`,
    ),
    refused.error.status,
  );
}

/** A 403 page for a signed-in person whose role does not open this page. */
export function forbiddenPage(s: SessionContext, what: string): Response {
  return htmlResponse(
    page(s, { title: "Not available", current: "" }, html`<p class="card">${what}</p>`),
    403,
  );
}

/** The current account, or a page saying there is none (an admin who belongs to no account). */
export function requireAccount(s: SessionContext): Membership | Response {
  if (s.account) return s.account;
  return htmlResponse(
    page(
      s,
      { title: "No account", current: "" },
      html`<p class="card">You are not a member of any account yet.${s.isAdmin ? html` Create one on the <a href="/dashboard/instance">Instance</a> page.` : ""}</p>`,
    ),
    200,
  );
}


