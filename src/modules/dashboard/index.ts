/**
 * The dashboard: server-rendered pages under /dashboard plus /setup, /login and /logout. Every page needs a session
 * (otherwise a redirect to /login); every POST also needs the session's CSRF token. Pages call the same services the
 * API and CLI use; nothing here writes to a table another module owns.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { clientAddress } from "../../http/client-address";
import { BodyRefused, formParser } from "../../http/form-body";
import { type DashboardCtx, bodyRefusedPage, postSession, session } from "../../web/guard";
import { html } from "../../lib/html";
import { type Form, cookieNames, field, htmlResponse, readCookies, redirect } from "../../web/http";
import { page } from "../../web/layout";
import { getLogin, getSetup, postLogin, postLogout, postSetup } from "./pages/auth";
import { getInvite, postInvite } from "./pages/join";
import { getForgot, getReset, postForgot, postReset } from "./pages/reset";
import { getCredits, postGrant } from "./pages/credits";
import { getInstance, getDisable, postAppCredentials, postAppCredentialsClear, postCreateAccount, postGrantTo, postModel, postModelClear, postModelTest, postSetDisabled } from "./pages/instance";
import { getKeys, getRevoke, getRotate, postMint, postRevoke, postRotate } from "./pages/keys";
import { getMembers, getRemoveMember, postAddMember, postInvite as postInviteMember, postRemoveMember, postResetLink, postRevokeInvitation, postSetRole } from "./pages/members";
import { getOverview } from "./pages/overview";
import { getSettings } from "./pages/settings";
import { getConnectedApps, getRevokeApp, postRevokeApp } from "./pages/connected-apps";
import { EXPORT_PATH, getExport, getImport, IMPORT_FORM_MAX_BYTES, IMPORT_PAGE_PATH, IMPORT_PREVIEW_PATH, postImport, postImportPreview } from "./pages/import";
import { getCalendar, getCancel, getPostPage, postCancel, postContent, postReschedule, postResolve, postRetry } from "./pages/calendar";
import { getCreationPage, getCreations, getDeleteCreation, postDeleteCreation, postEditCreation, postRegenerate, postRestoreVersion, postScheduleCreation } from "./pages/creations";
import { getVoicePage, postVoice } from "./pages/voice";
import { COMPOSE_PATH, getComposer, getEditComposer, postComposer, postEditComposer } from "./pages/composer";
import { getConnections, getReconnect, getRemoveConnection, postCheck, postConnect, postReconnect, postRemoveConnection } from "./pages/connections";
import { getSignInCallback, postSignInChoice, postSignInStart } from "./pages/sign-in";
import { getAccount, postNoticeSwitches, postPassword, postTimeZone } from "./pages/account";
import { getNotices } from "./pages/notices";
import { getQueue, getScheduleEditor, postMove, postPostNow, postScheduleEditor } from "./pages/queue";
import { getApprovals, postApprove, postReject } from "./pages/approvals";
import { getDeleteSeed, getSeedPage, getSeeds, postDeleteSeed, postEditSeed, postGenerate, postSeed } from "./pages/seeds";
import { getFeeds, getRemoveFeed, postFeed, postPollFeed, postRemoveFeed } from "./pages/feeds";
import { getDeleteAsset, getLibrary, postDeleteAsset, postFromUrl, postUpload, postUploadLink } from "./pages/library";
import type { SessionContext } from "../../web/session";
import { sessionExists, switchAccount } from "../../web/session";
import { staticFiles } from "./static/assets";
import { rememberZone } from "../../web/preferences";

type Params = Record<string, string>;
type Answer = Response | Promise<Response>;
interface RouteContext {
  request: Request;
  params: Params;
  body: unknown;
}

/** Every dashboard form but the image upload: a few short text fields (the longest, brand voice, is under 8 KiB). */
export const FORM_MAX_BYTES = 16 * 1024;
/**
 * The forms that carry a caption written by hand (a post's edit, a scheduled post's text): up to 63,206 characters
 * (decisions.md §13), URL-encoded (a 4-byte character is 12 bytes), plus the alt text.
 */
const CAPTION_FORM_MAX_BYTES = 1024 * 1024;
/** Room for the multipart framing around the image of the library upload. */
const UPLOAD_FRAMING_BYTES = 64 * 1024;
/**
 * The composer's form (multipart: it may carry an upload): every text of a post plus an image, within the server's own
 * body limit (the image cap plus 1 MiB, cli/serve.ts).
 */
const COMPOSER_TEXT_BYTES = 1024 * 1024;

/** Builds the dashboard module. */
export function dashboardModule(deps: Deps) {
  const ctx: DashboardCtx = { deps };
  /**
   * Signed-in forms are read only for a request whose cookie names a session: without one, not a byte of the body is
   * (the answer is the redirect to /login). Read-only on purpose: the handler still tells an expired session apart.
   */
  const signedIn = async (request: Request) => {
    const token = readCookies(request).get(cookieNames(deps.config).session);
    return token !== undefined && (await sessionExists(deps, token));
  };
  const signedInForm = { detail: { hide: true } as const, parse: formParser(FORM_MAX_BYTES, signedIn) };
  const captionForm = { detail: { hide: true } as const, parse: formParser(CAPTION_FORM_MAX_BYTES, signedIn) };
  const publicForm = { detail: { hide: true } as const, parse: formParser(FORM_MAX_BYTES) };
  const importForm = { detail: { hide: true } as const, parse: formParser(IMPORT_FORM_MAX_BYTES, signedIn) };
  const composerForm = { detail: { hide: true } as const, parse: formParser(deps.config.maxImageBytes + COMPOSER_TEXT_BYTES, signedIn) };
  const uploadForm = { detail: { hide: true } as const, parse: formParser(deps.config.maxImageBytes + UPLOAD_FRAMING_BYTES, signedIn) };

  /** A GET page: session or redirect. */
  const view =
    (fn: (s: SessionContext, request: Request, params: Params) => Answer) =>
    async ({ request, params }: RouteContext): Promise<Response> => {
      const s = await session(ctx, request);
      if (s instanceof Response) return s;
      await rememberZone(deps, s);
      return fn(s, request, params);
    };
  /** A POST action: session, CSRF, then the action. */
  const action =
    (fn: (s: SessionContext, form: Form | undefined, params: Params, request: Request) => Answer) =>
    async ({ request, params, body }: RouteContext): Promise<Response> => {
      if (body instanceof BodyRefused) {
        // The token was in the body that was not read: nothing is done either way; a signed-in person learns why.
        const s = await session(ctx, request);
        return s instanceof Response ? s : bodyRefusedPage(body);
      }
      const form = (body ?? undefined) as Form | undefined;
      const s = await postSession(ctx, request, form);
      if (s instanceof Response) return s;
      await rememberZone(deps, s);
      return fn(s, form, params, request);
    };
  /** A public form (setup, login, logout): its body refusal, or the handler. */
  const publicAction =
    (fn: (request: Request, form: Form, params: Params) => Answer) =>
    ({ request, params, body }: RouteContext): Answer =>
      body instanceof BodyRefused ? bodyRefusedPage(body) : fn(request, (body ?? {}) as Form, params);

  const notFoundPage = (s: SessionContext) =>
    htmlResponse(page(s, { title: "Page not found", current: "" }, html`<p class="card">There is no such page. <a href="/dashboard">Back to the overview</a>.</p>`), 404);

  const detail = { hide: true } as const;

  return new Elysia({ name: "seedcast.dashboard" })
    .get("/", async ({ request }) => { const s = await session(ctx, request); return s instanceof Response ? redirect("/login") : redirect("/dashboard"); }, { detail })
    .get("/setup", ({ request }) => getSetup(ctx, request), { detail })
    .post("/setup", publicAction((request, f) => postSetup(ctx, request, f)), publicForm)
    .get("/login", ({ request }) => getLogin(ctx, request), { detail })
    .post("/login", publicAction((request, f) => postLogin(ctx, request, f, clientAddress(deps.config, request))), publicForm)
    .post("/logout", publicAction((request, f) => postLogout(ctx, request, f)), signedInForm)
    // Invitations and password resets (pages/join.ts, pages/reset.ts): public, the link's token is the credential.
    .get("/forgot-password", ({ request }) => getForgot(ctx, request), { detail })
    .post("/forgot-password", publicAction((request, f) => postForgot(ctx, request, f)), publicForm)
    .get("/reset/:token", ({ request, params }) => getReset(ctx, request, params.token), { detail })
    .post("/reset/:token", publicAction((request, f, p) => postReset(ctx, request, f, p.token ?? "")), publicForm)
    .get("/invite/:token", ({ request, params }) => getInvite(ctx, request, params.token), { detail })
    .post("/invite/:token", publicAction((request, f, p) => postInvite(ctx, request, f, p.token ?? "")), publicForm)
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
    .get("/dashboard", view((s, r) => getOverview(ctx, s, r)), { detail })
    .get("/dashboard/settings", view((s) => getSettings(s)), { detail })
    .post(
      "/dashboard/switch-account",
      action(async (s, form) => {
        await switchAccount(ctx.deps, s, field(form, "accountId"));
        return redirect("/dashboard");
      }),
      signedInForm,
    )
    // API keys
    .get("/dashboard/keys", view((s, r) => getKeys(ctx, s, r)), { detail })
    .post("/dashboard/keys", action((s, f) => postMint(ctx, s, f)), signedInForm)
    .get("/dashboard/keys/:id/rotate", view((s, _r, p) => getRotate(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/keys/:id/rotate", action((s, _f, p) => postRotate(ctx, s, p.id ?? "")), signedInForm)
    .get("/dashboard/keys/:id/revoke", view((s, _r, p) => getRevoke(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/keys/:id/revoke", action((s, _f, p) => postRevoke(ctx, s, p.id ?? "")), signedInForm)
    // Connected apps (OAuth grants)
    .get("/dashboard/apps", view((s, r) => getConnectedApps(ctx, s, r)), { detail })
    .get("/dashboard/apps/:id/revoke", view((s, _r, p) => getRevokeApp(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/apps/:id/revoke", action((s, _f, p) => postRevokeApp(ctx, s, p.id ?? "")), signedInForm)
    // Members
    .get("/dashboard/members", view((s, r) => getMembers(ctx, s, r)), { detail })
    .post("/dashboard/members", action((s, f) => postAddMember(ctx, s, f)), signedInForm)
    .post("/dashboard/members/invite", action((s, f) => postInviteMember(ctx, s, f)), signedInForm)
    .post("/dashboard/members/invitations/:id/revoke", action((s, _f, p) => postRevokeInvitation(ctx, s, p.id ?? "")), signedInForm)
    .post("/dashboard/members/:userId/reset-link", action((s, _f, p) => postResetLink(ctx, s, p.userId ?? "")), signedInForm)
    .post("/dashboard/members/:userId/role", action((s, f, p) => postSetRole(ctx, s, p.userId ?? "", f)), signedInForm)
    .get("/dashboard/members/:userId/remove", view((s, _r, p) => getRemoveMember(ctx, s, p.userId ?? "")), { detail })
    .post("/dashboard/members/:userId/remove", action((s, _f, p) => postRemoveMember(ctx, s, p.userId ?? "")), signedInForm)
    // Credits
    .get("/dashboard/credits", view((s, r) => getCredits(ctx, s, r)), { detail })
    .post("/dashboard/credits/grant", action((s, f) => postGrant(ctx, s, f)), signedInForm)
    // Instance
    .get("/dashboard/instance", view((s, r) => getInstance(ctx, s, r)), { detail })
    .post("/dashboard/instance/accounts", action((s, f) => postCreateAccount(ctx, s, f)), signedInForm)
    .post("/dashboard/instance/model", action((s, f) => postModel(ctx, s, f)), signedInForm)
    .post("/dashboard/instance/model/test", action((s, f) => postModelTest(ctx, s, f)), signedInForm)
    .post("/dashboard/instance/model/clear", action((s) => postModelClear(ctx, s)), signedInForm)
    .post("/dashboard/instance/apps/:network", action((s, f, p) => postAppCredentials(ctx, s, p.network ?? "", f)), signedInForm)
    .post("/dashboard/instance/apps/:network/clear", action((s, _f, p) => postAppCredentialsClear(ctx, s, p.network ?? "")), signedInForm)
    .post("/dashboard/instance/accounts/:id/grant", action((s, f, p) => postGrantTo(ctx, s, p.id ?? "", f)), signedInForm)
    .get("/dashboard/instance/accounts/:id/disable", view((s, _r, p) => getDisable(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/instance/accounts/:id/disable", action((s, _f, p) => postSetDisabled(ctx, s, p.id ?? "", true)), signedInForm)
    .post("/dashboard/instance/accounts/:id/enable", action((s, _f, p) => postSetDisabled(ctx, s, p.id ?? "", false)), signedInForm)
    // Brand voice
    .get("/dashboard/voice", view((s, r) => getVoicePage(ctx, s, r)), { detail })
    .post("/dashboard/voice", action((s, f) => postVoice(ctx, s, f)), signedInForm)
    // Connections (the API's manageUrl)
    .get("/dashboard/connections", view((s, r) => getConnections(ctx, s, r)), { detail })
    .post("/dashboard/connections", action((s, f) => postConnect(ctx, s, f)), signedInForm)
    // Networks connected by sign-in (pages/sign-in.ts, src/publishing/sign-in/)
    .post("/dashboard/connections/connect/:platform", action((s, f, p) => postSignInStart(ctx, s, p.platform ?? "", f)), signedInForm)
    .post("/dashboard/connections/choose/:platform", action((s, f, p) => postSignInChoice(ctx, s, p.platform ?? "", f)), signedInForm)
    .get("/dashboard/connections/callback/:platform", view((s, r, p) => getSignInCallback(ctx, s, p.platform ?? "", r)), { detail })
    .post("/dashboard/connections/choose/:platform", action((s, f, p) => postSignInChoice(ctx, s, p.platform ?? "", f)), signedInForm)
    .post("/dashboard/connections/:id/check", action((s, _f, p) => postCheck(ctx, s, p.id ?? "")), signedInForm)
    .get("/dashboard/connections/:id/reconnect", view((s, _r, p) => getReconnect(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/connections/:id/reconnect", action((s, f, p) => postReconnect(ctx, s, p.id ?? "", f)), signedInForm)
    .get("/dashboard/connections/:id/remove", view((s, _r, p) => getRemoveConnection(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/connections/:id/remove", action((s, _f, p) => postRemoveConnection(ctx, s, p.id ?? "")), signedInForm)
    // Library
    .get("/dashboard/library", view((s, r) => getLibrary(ctx, s, r)), { detail })
    .post("/dashboard/library/upload", action((s, f, _p, r) => postUpload(ctx, s, f, r)), uploadForm)
    .post("/dashboard/library/from-url", action((s, f) => postFromUrl(ctx, s, f)), signedInForm)
    .post("/dashboard/library/upload-link", action((s, f) => postUploadLink(ctx, s, f)), signedInForm)
    .get("/dashboard/library/:id/delete", view((s, _r, p) => getDeleteAsset(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/library/:id/delete", action((s, _f, p) => postDeleteAsset(ctx, s, p.id ?? "")), signedInForm)
    // Calendar
    .get("/dashboard/calendar", view((s, r) => getCalendar(ctx, s, r)), { detail })
    // Bulk import (with a preview) and export (pages/import.ts)
    .get(IMPORT_PAGE_PATH, view((s, r) => getImport(ctx, s, r)), { detail })
    .post(IMPORT_PREVIEW_PATH, action((s, f) => postImportPreview(ctx, s, f)), importForm)
    .post(IMPORT_PAGE_PATH, action((s, f) => postImport(ctx, s, f)), importForm)
    .get(EXPORT_PATH, view((s) => getExport(ctx, s)), { detail })
    .get("/dashboard/calendar/posts/:id", view((s, r, p) => getPostPage(ctx, s, p.id ?? "", r)), { detail })
    .post("/dashboard/calendar/posts/:id/reschedule", action((s, f, p) => postReschedule(ctx, s, p.id ?? "", f)), signedInForm)
    .post("/dashboard/calendar/posts/:id/content", action((s, f, p) => postContent(ctx, s, p.id ?? "", f)), captionForm)
    .post("/dashboard/calendar/posts/:id/retry", action((s, f, p) => postRetry(ctx, s, p.id ?? "", f)), signedInForm)
    .post("/dashboard/calendar/posts/:id/targets/:accountId/resolve", action((s, f, p) => postResolve(ctx, s, p.id ?? "", p.accountId ?? "", f)), signedInForm)
    .get("/dashboard/calendar/:id/cancel", view((s, _r, p) => getCancel(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/calendar/:id/cancel", action((s, _f, p, r) => postCancel(ctx, s, p.id ?? "", r)), signedInForm)
    // Approvals, for owners (pages/approvals.ts)
    .get("/dashboard/approvals", view((s, r) => getApprovals(ctx, s, r)), { detail })
    .post("/dashboard/approvals/:id/approve", action((s, _f, p) => postApprove(ctx, s, p.id ?? "")), signedInForm)
    .post("/dashboard/approvals/:id/reject", action((s, f, p) => postReject(ctx, s, p.id ?? "", f)), signedInForm)
    // Queue and posting schedule (pages/queue.ts)
    .get("/dashboard/queue", view((s, r) => getQueue(ctx, s, r)), { detail })
    .get("/dashboard/queue/schedule", view((s, r) => getScheduleEditor(ctx, s, r)), { detail })
    .post("/dashboard/queue/schedule", action((s, f) => postScheduleEditor(ctx, s, f)), signedInForm)
    .post("/dashboard/queue/posts/:id/move", action((s, f, p) => postMove(ctx, s, p.id ?? "", f)), signedInForm)
    .post("/dashboard/queue/posts/:id/now", action((s, _f, p) => postPostNow(ctx, s, p.id ?? "")), signedInForm)
    // Your settings (pages/account.ts)
    .get("/dashboard/account", view((s, r) => getAccount(ctx, s, r)), { detail })
    .post("/dashboard/account/password", action((s, f) => postPassword(ctx, s, f)), signedInForm)
    .post("/dashboard/account/time-zone", action((s, f, _p, r) => postTimeZone(ctx, s, f, r)), signedInForm)
    .post("/dashboard/account/notices", action((s, f) => postNoticeSwitches(ctx, s, f)), signedInForm)
    .get("/dashboard/notices", view((s) => getNotices(ctx, s)), { detail })
    // Seeds (pages/seeds.ts)
    .get("/dashboard/seeds", view((s, r) => getSeeds(ctx, s, r)), { detail })
    .post("/dashboard/seeds", action((s, f, _p, r) => postSeed(ctx, s, f, r)), signedInForm)
    .get("/dashboard/seeds/:id", view((s, r, p) => getSeedPage(ctx, s, r, p.id ?? "")), { detail })
    .post("/dashboard/seeds/:id", action((s, f, p) => postEditSeed(ctx, s, p.id ?? "", f)), signedInForm)
    .get("/dashboard/seeds/:id/delete", view((s, _r, p) => getDeleteSeed(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/seeds/:id/delete", action((s, _f, p) => postDeleteSeed(ctx, s, p.id ?? "")), signedInForm)
    .post("/dashboard/seeds/:id/generate", action((s, f, p) => postGenerate(ctx, s, p.id ?? "", f)), signedInForm)
    // The composer (pages/composer.ts): a new post, or an existing one edited
    .get(COMPOSE_PATH, view((s, r) => getComposer(ctx, s, r)), { detail })
    .post(COMPOSE_PATH, action((s, f) => postComposer(ctx, s, f)), composerForm)
    .get("/dashboard/creations/:id/edit", view((s, _r, p) => getEditComposer(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/creations/:id/edit", action((s, f, p) => postEditComposer(ctx, s, p.id ?? "", f)), composerForm)
    // Feeds (pages/feeds.ts)
    .get("/dashboard/feeds", view((s, r) => getFeeds(ctx, s, r)), { detail })
    .post("/dashboard/feeds", action((s, f, _p, r) => postFeed(ctx, s, f, r)), signedInForm)
    .post("/dashboard/feeds/:id/poll", action((s, _f, p) => postPollFeed(ctx, s, p.id ?? "")), signedInForm)
    .get("/dashboard/feeds/:id/remove", view((s, _r, p) => getRemoveFeed(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/feeds/:id/remove", action((s, _f, p) => postRemoveFeed(ctx, s, p.id ?? "")), signedInForm)
    // Creations
    .get("/dashboard/creations", view((s, r) => getCreations(ctx, s, r)), { detail })
    .get("/dashboard/creations/:id", view((s, r, p) => getCreationPage(ctx, s, p.id ?? "", r)), { detail })
    .post("/dashboard/creations/:id", action((s, f, p) => postEditCreation(ctx, s, p.id ?? "", f)), captionForm)
    .post("/dashboard/creations/:id/schedule", action((s, f, p) => postScheduleCreation(ctx, s, p.id ?? "", f)), signedInForm)
    .post("/dashboard/creations/:id/regenerate", action((s, f, p) => postRegenerate(ctx, s, p.id ?? "", f)), signedInForm)
    .post("/dashboard/creations/:id/versions/:versionId/restore", action((s, _f, p) => postRestoreVersion(ctx, s, p.id ?? "", p.versionId ?? "")), signedInForm)
    .get("/dashboard/creations/:id/delete", view((s, _r, p) => getDeleteCreation(ctx, s, p.id ?? "")), { detail })
    .post("/dashboard/creations/:id/delete", action((s, _f, p) => postDeleteCreation(ctx, s, p.id ?? "")), signedInForm)
    // Anything else under /dashboard: still no answer without a session.
    .get("/dashboard/*", view((s) => notFoundPage(s)), { detail })
    .post("/dashboard/*", action((s) => notFoundPage(s)), signedInForm);
}
