/**
 * The dashboard: server-rendered pages under /dashboard plus /setup, /login and /logout. Every page needs a session
 * (otherwise a redirect to /login); every POST also needs the session's CSRF token. Pages call the same services the
 * API and CLI use; nothing here writes to a table another module owns.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { type DashboardCtx, clientAddress, postSession, session } from "./guard";
import { html } from "./html";
import { type Form, field, htmlResponse, redirect } from "./http";
import { page } from "./layout";
import { LoginLimiter } from "./login-limit";
import { getLogin, getSetup, postLogin, postLogout, postSetup } from "./pages/auth";
import { getCredits, postGrant } from "./pages/credits";
import { getInstance, getDisable, postCreateAccount, postGrantTo, postSetDisabled } from "./pages/instance";
import { getKeys, getRevoke, postMint, postRevoke, postRotate } from "./pages/keys";
import { getMembers, getRemoveMember, postAddMember, postRemoveMember, postSetRole } from "./pages/members";
import { getOverview } from "./pages/overview";
import { getConnectedApps, getRevokeApp, postRevokeApp } from "./pages/connected-apps";
import { getCalendar, getCancel, postCancel } from "./pages/calendar";
import { getCreationPage, getCreations } from "./pages/creations";
import { getVoicePage, postVoice } from "./pages/voice";
import { getConnections, getReconnect, getRemoveConnection, postCheck, postConnect, postReconnect, postRemoveConnection } from "./pages/connections";
import { getDeleteAsset, getLibrary, postDeleteAsset, postUpload } from "./pages/library";
import type { SessionContext } from "./session";
import { switchAccount } from "./session";
import { staticFiles } from "./static/assets";

type Params = Record<string, string>;
type Answer = Response | Promise<Response>;
interface RouteContext {
  request: Request;
  params: Params;
  body: unknown;
}

/** Builds the dashboard module. */
export function dashboardModule(deps: Deps) {
  const ctx: DashboardCtx = { deps, limiter: new LoginLimiter(deps.clock) };

  /** A GET page: session or redirect. */
  const view =
    (fn: (s: SessionContext, request: Request, params: Params) => Answer) =>
    ({ request, params }: RouteContext): Answer => {
      const s = session(ctx, request);
      return s instanceof Response ? s : fn(s, request, params);
    };
  /** A POST action: session, CSRF, then the action. */
  const action =
    (fn: (s: SessionContext, form: Form | undefined, params: Params, request: Request) => Answer) =>
    ({ request, params, body }: RouteContext): Answer => {
      const form = (body ?? undefined) as Form | undefined;
      const s = postSession(ctx, request, form);
      return s instanceof Response ? s : fn(s, form, params, request);
    };

  const notFoundPage = (s: SessionContext) =>
    htmlResponse(page(s, { title: "Page not found", current: "" }, html`<p class="card">There is no such page. <a href="/dashboard">Back to the overview</a>.</p>`), 404);

  const detail = { hide: true } as const;

  return new Elysia({ name: "seedcast.dashboard" })
    .get("/", ({ request }) => { const s = session(ctx, request); return s instanceof Response ? redirect("/login") : redirect("/dashboard"); }, { detail })
    .get("/setup", ({ request }) => getSetup(ctx, request), { detail })
    .post("/setup", ({ request, body }) => postSetup(ctx, request, body as Form), { detail })
    .get("/login", ({ request }) => getLogin(ctx, request), { detail })
    .post("/login", ({ request, body, server }) => postLogin(ctx, request, body as Form, clientAddress(server, request)), { detail })
    .post("/logout", ({ request, body }) => postLogout(ctx, request, body as Form), { detail })
    .get(
      "/dashboard/static/:name",
      async ({ params, request }) => {
        const file = (await staticFiles()).get(params.name);
        if (!file) return new Response("Not found", { status: 404 });
        const headers = { "content-type": file.type, etag: file.etag, "cache-control": "no-cache", "x-content-type-options": "nosniff" };
        if (request.headers.get("if-none-match") === file.etag) return new Response(null, { status: 304, headers });
        return new Response(file.body, { headers });
      },
      { detail },
    )
    .get("/dashboard", view((s) => getOverview(ctx, s)), { detail })
    .post(
      "/dashboard/switch-account",
      action((s, form) => {
        switchAccount(ctx.deps, s, field(form, "accountId"));
        return redirect("/dashboard");
      }),
      { detail },
    )
    // API keys
    .get("/dashboard/keys", view((s, r) => getKeys(ctx, s, r)), { detail })
    .post("/dashboard/keys", action((s, f) => postMint(ctx, s, f)), { detail })
    .post("/dashboard/keys/:id/rotate", action((s, _f, p) => postRotate(ctx, s, p.id ?? "")), { detail })
    .get("/dashboard/keys/:id/revoke", view((s, _r, p) => getRevoke(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/keys/:id/revoke", action((s, _f, p) => postRevoke(ctx, s, p.id ?? "")), { detail })
    // Connected apps (OAuth grants)
    .get("/dashboard/apps", view((s, r) => getConnectedApps(ctx, s, r)), { detail })
    .get("/dashboard/apps/:id/revoke", view((s, _r, p) => getRevokeApp(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/apps/:id/revoke", action((s, _f, p) => postRevokeApp(ctx, s, p.id ?? "")), { detail })
    // Members
    .get("/dashboard/members", view((s, r) => getMembers(ctx, s, r)), { detail })
    .post("/dashboard/members", action((s, f) => postAddMember(ctx, s, f)), { detail })
    .post("/dashboard/members/:userId/role", action((s, f, p) => postSetRole(ctx, s, p.userId ?? "", f)), { detail })
    .get("/dashboard/members/:userId/remove", view((s, _r, p) => getRemoveMember(ctx, s, p.userId ?? "")), { detail })
    .post("/dashboard/members/:userId/remove", action((s, _f, p) => postRemoveMember(ctx, s, p.userId ?? "")), { detail })
    // Credits
    .get("/dashboard/credits", view((s, r) => getCredits(ctx, s, r)), { detail })
    .post("/dashboard/credits/grant", action((s, f) => postGrant(ctx, s, f)), { detail })
    // Instance
    .get("/dashboard/instance", view((s, r) => getInstance(ctx, s, r)), { detail })
    .post("/dashboard/instance/accounts", action((s, f) => postCreateAccount(ctx, s, f)), { detail })
    .post("/dashboard/instance/accounts/:id/grant", action((s, f, p) => postGrantTo(ctx, s, p.id ?? "", f)), { detail })
    .get("/dashboard/instance/accounts/:id/disable", view((s, _r, p) => getDisable(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/instance/accounts/:id/disable", action((s, _f, p) => postSetDisabled(ctx, s, p.id ?? "", true)), { detail })
    .post("/dashboard/instance/accounts/:id/enable", action((s, _f, p) => postSetDisabled(ctx, s, p.id ?? "", false)), { detail })
    // Brand voice
    .get("/dashboard/voice", view((s, r) => getVoicePage(ctx, s, r)), { detail })
    .post("/dashboard/voice", action((s, f) => postVoice(ctx, s, f)), { detail })
    // Connections (the API's manageUrl)
    .get("/dashboard/connections", view((s, r) => getConnections(ctx, s, r)), { detail })
    .post("/dashboard/connections", action((s, f) => postConnect(ctx, s, f)), { detail })
    .post("/dashboard/connections/:id/check", action((s, _f, p) => postCheck(ctx, s, p.id ?? "")), { detail })
    .get("/dashboard/connections/:id/reconnect", view((s, _r, p) => getReconnect(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/connections/:id/reconnect", action((s, f, p) => postReconnect(ctx, s, p.id ?? "", f)), { detail })
    .get("/dashboard/connections/:id/remove", view((s, _r, p) => getRemoveConnection(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/connections/:id/remove", action((s, _f, p) => postRemoveConnection(ctx, s, p.id ?? "")), { detail })
    // Library
    .get("/dashboard/library", view((s, r) => getLibrary(ctx, s, r)), { detail })
    .post("/dashboard/library/upload", action((s, f, _p, r) => postUpload(ctx, s, f, r)), { detail })
    .get("/dashboard/library/:id/delete", view((s, _r, p) => getDeleteAsset(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/library/:id/delete", action((s, _f, p) => postDeleteAsset(ctx, s, p.id ?? "")), { detail })
    // Calendar
    .get("/dashboard/calendar", view((s, r) => getCalendar(ctx, s, r)), { detail })
    .get("/dashboard/calendar/:id/cancel", view((s, _r, p) => getCancel(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/calendar/:id/cancel", action((s, _f, p, r) => postCancel(ctx, s, p.id ?? "", r)), { detail })
    // Seeds and creations
    .get("/dashboard/creations", view((s, r) => getCreations(ctx, s, r)), { detail })
    .get("/dashboard/creations/:id", view((s, _r, p) => getCreationPage(ctx, s, p.id ?? "")), { detail })
    // Anything else under /dashboard: still no answer without a session.
    .get("/dashboard/*", view((s) => notFoundPage(s)), { detail })
    .post("/dashboard/*", action((s) => notFoundPage(s)), { detail });
}
