/**
 * GET and POST /oauth/authorize: validate the request (authorize-request.ts), make sure a person is signed in to the
 * dashboard (else the login page, which returns here), show the consent page, and on Allow redirect to the client
 * with a code, `state` and `iss`; on Deny with error=access_denied. Any error before that is a page, never a redirect. The POST carries the dashboard session's CSRF
 * token and re-validates everything, so nothing about the request is trusted from the form but the person's choice.
 */
import type { Deps } from "../../deps";
import { clientAddress } from "../../http/client-address";
import { ROLE_SCOPES, type Scope, isScope } from "../../auth/scopes";
import { type DashboardCtx, postSession } from "../../web/guard";
import { type Form, CSP, cookieNames, field, fields, htmlResponse, readCookies, redirect, setCookie } from "../../web/http";
import type { Html } from "../../lib/html";
import { type Membership, type SessionContext, resolveSession } from "../../web/session";
import { type AuthorizationRequest, type RequestParams, errorRedirect, readParams, validateAuthorization, withQuery } from "./authorize-request";
import { storeFetchedClient } from "./client-metadata";
import { issueCode } from "./codes";
import { authorizeErrorPage, consentPage } from "./consent-page";

/** Percent-encodes everything but unreserved characters, so the login page's return address check accepts it. */
function strictEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** This request's own address, rebuilt from its validated parameters, for the login page to return to. */
export function authorizeReturnPath(params: RequestParams): string {
  const query = Object.entries(params)
    .map(([name, value]) => `${strictEncode(name)}=${strictEncode(value ?? "")}`)
    .join("&");
  return `/oauth/authorize?${query}`;
}

/** The CSP of the consent page: the dashboard's, with the client's return address allowed as a form target. */
function consentCsp(redirectUri: string): string {
  const url = new URL(redirectUri);
  const target = url.protocol === "http:" || url.protocol === "https:" ? url.origin : url.protocol;
  return CSP.replace("form-action 'self'", `form-action 'self' ${target}`);
}

function consentResponse(page: Html, redirectUri: string, status = 200): Response {
  const response = htmlResponse(page, status);
  response.headers.set("content-security-policy", consentCsp(redirectUri));
  return response;
}

function pageError(status: number, message: string, retryAfterSeconds?: number): Response {
  const response = htmlResponse(authorizeErrorPage(message), status);
  if (retryAfterSeconds !== undefined) response.headers.set("retry-after", String(retryAfterSeconds));
  return response;
}

function noAccount(): Response {
  return pageError(403, "You are not a member of any active account, so there is nothing to connect this app to.");
}

/** The account the person acts in: the one asked for when they belong to it, else the session's current one. */
function chooseAccount(s: SessionContext, asked: string): Membership | null {
  return s.memberships.find((m) => m.accountId === asked) ?? (asked ? null : (s.account ?? s.memberships[0] ?? null));
}

/** The groups to pre-check: as requested (all when `scope` was absent), capped by the role. */
function initialGroups(request: AuthorizationRequest, account: Membership): Scope[] {
  const allowed = ROLE_SCOPES[account.role];
  return (request.requested ?? [...allowed]).filter((s) => allowed.includes(s));
}

/** GET /oauth/authorize. */
export async function getAuthorize(ctx: DashboardCtx, request: Request): Promise<Response> {
  const deps = ctx.deps;
  const search = new URL(request.url).searchParams;
  const validated = await validateAuthorization(deps, readParams(search), clientAddress(deps.config, request));
  if (validated.kind === "page") return pageError(validated.status, validated.message, validated.retryAfterSeconds);
  const authz = validated.request;

  const names = cookieNames(deps.config);
  const token = readCookies(request).get(names.session);
  const s = token ? await resolveSession(deps, token) : "missing";
  if (typeof s !== "object") {
    const next = strictEncode(authorizeReturnPath(authz.params));
    const expired = s === "expired" ? "expired=1&" : "";
    const clear = token ? [setCookie(deps.config, names.session, "", 0)] : [];
    return redirect(`/login?${expired}next=${next}`, clear);
  }
  if (s.memberships.length === 0) return noAccount();
  const account = chooseAccount(s, search.get("account") ?? "");
  if (!account) return pageError(403, "You are not a member of that account.");
  return consentResponse(consentPage(s, authz, account, initialGroups(authz, account)), authz.redirectUri);
}

/** POST /oauth/authorize: the consent form. */
export async function postAuthorize(ctx: DashboardCtx, request: Request, form: Form | undefined): Promise<Response> {
  const deps: Deps = ctx.deps;
  const s = await postSession(ctx, request, form);
  if (s instanceof Response) return s;
  const validated = await validateAuthorization(deps, readParams((name) => fields(form, name)), clientAddress(deps.config, request));
  if (validated.kind === "page") return pageError(validated.status, validated.message, validated.retryAfterSeconds);
  const authz = validated.request;
  if (s.memberships.length === 0) return noAccount();
  const account = s.memberships.find((m) => m.accountId === field(form, "account"));
  if (!account) return pageError(403, "You are not a member of that account.");

  if (field(form, "decision") !== "allow") {
    return redirect(errorRedirect(deps, authz.redirectUri, authz.state, "access_denied", "The person declined to connect the app."));
  }
  const allowed = ROLE_SCOPES[account.role];
  const groups = fields(form, "groups").filter(isScope).filter((g) => allowed.includes(g));
  if (groups.length === 0) {
    const page = consentPage(s, authz, account, initialGroups(authz, account), [
      { kind: "error", text: "Tick at least one thing the app may do, or choose Deny." },
    ]);
    return consentResponse(page, authz.redirectUri, 400);
  }
  // A metadata document's client is stored only now that the person allowed it (nothing anonymous ever stores one).
  if (authz.fetched) await storeFetchedClient(deps, authz.fetched);
  const code = await issueCode(deps, {
    clientId: authz.client.id,
    accountId: account.accountId,
    userId: s.userId,
    scopes: groups,
    redirectUri: authz.redirectUri,
    codeChallenge: authz.codeChallenge,
    resource: authz.resource,
  });
  return redirect(withQuery(authz.redirectUri, { code, state: authz.state, iss: deps.config.baseUrl }));
}
