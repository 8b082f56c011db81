/**
 * Connected apps: the account's OAuth grants (AI assistants signed in through the connector), with the client, the
 * groups it holds now (capped by the member's current role), who granted it, when, when last used, and Revoke, which
 * applies at the app's next request. Owners may revoke any; other members their own.
 */
import { SCOPE_LABELS } from "../../../auth/scopes";
import { type GrantView, listGrants, revokeAccountGrant } from "../../oauth/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { zoneOf } from "../../../web/preferences";
import { htmlResponse, redirect } from "../../../web/http";
import { confirmPage, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";

export const CONNECTED_APPS_PATH = "/dashboard/apps";

function canRevoke(s: SessionContext, grant: GrantView): boolean {
  return s.account?.role === "owner" || grant.userId === s.userId;
}

function appsTable(s: SessionContext, grants: GrantView[]): Html {
  if (grants.length === 0) {
    return html`<p class="muted">No app is connected to this account. Paste the connector address from the <a href="/dashboard">overview</a> into an AI assistant to connect one.</p>`;
  }
  return html`<div class="table-wrap"><table class="stack">
<caption class="sr-only">Apps connected to this account</caption>
<thead><tr><th scope="col">App</th><th scope="col">Can</th><th scope="col">Granted by</th><th scope="col">Connected</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody>
${grants.map(
  (g) => html`<tr>
  <td data-label="App"><strong>${g.clientName || g.clientHost}</strong><br><span class="hint mono">${g.clientHost}</span></td>
  <td data-label="Can">${g.scopes.length > 0 ? g.scopes.map((sc) => SCOPE_LABELS[sc]).join(", ") : html`<span class="muted">nothing (role no longer allows its groups)</span>`}</td>
  <td data-label="Granted by">${g.userId === s.userId ? "you" : g.userName ? `${g.userName} (${g.userEmail})` : g.userEmail}</td>
  <td data-label="Connected">${timeTag(g.createdAt, "—", zoneOf(s))}</td>
  <td data-label="Last used">${timeTag(g.lastUsedAt, "never", zoneOf(s))}</td>
  <td data-label="Actions">${canRevoke(s, g) ? html`<a class="button small danger" href="${CONNECTED_APPS_PATH}/${g.id}/revoke">Revoke<span class="sr-only"> ${g.clientName}</span></a>` : ""}</td>
</tr>`,
)}
</tbody></table></div>`;
}

/** GET /dashboard/apps */
export async function getConnectedApps(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const revoked = new URL(request.url).searchParams.get("notice") === "app-revoked";
  return htmlResponse(
    page(
      s,
      {
        title: "Connected apps",
        current: CONNECTED_APPS_PATH,
        notices: revoked ? [{ kind: "ok", text: "The app was disconnected. Its next request is refused." }] : [],
      },
      html`<p class="muted">AI assistants and other apps you signed in to Seedcast. Each acts as the person who connected it, with the groups shown, never more than that person's role allows.</p>
${appsTable(s, await listGrants(ctx.deps, account.accountId))}`,
    ),
  );
}

async function findGrant(ctx: DashboardCtx, s: SessionContext, accountId: string, grantId: string): Promise<GrantView | Response> {
  const grant = (await listGrants(ctx.deps, accountId)).find((g) => g.id === grantId);
  if (!grant) return htmlResponse(page(s, { title: "App not found", current: CONNECTED_APPS_PATH }, html`<p class="card">No such connected app in this account.</p>`), 404);
  if (!canRevoke(s, grant)) return forbiddenPage(s, "Only the account's owners and the person who connected an app can disconnect it.");
  return grant;
}

/** GET /dashboard/apps/:id/revoke: the confirmation step. */
export async function getRevokeApp(ctx: DashboardCtx, s: SessionContext, grantId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const grant = await findGrant(ctx, s, account.accountId, grantId);
  if (grant instanceof Response) return grant;
  return htmlResponse(
    confirmPage(s, {
      title: "Disconnect app",
      current: CONNECTED_APPS_PATH,
      question: html`Disconnect <strong>${grant.clientName || grant.clientHost}</strong>? Its next request is refused, and it must ask someone to sign in again to reconnect.`,
      action: `${CONNECTED_APPS_PATH}/${grant.id}/revoke`,
      confirmLabel: "Disconnect",
      cancelHref: CONNECTED_APPS_PATH,
    }),
  );
}

/** POST /dashboard/apps/:id/revoke */
export async function postRevokeApp(ctx: DashboardCtx, s: SessionContext, grantId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const grant = await findGrant(ctx, s, account.accountId, grantId);
  if (grant instanceof Response) return grant;
  await revokeAccountGrant(ctx.deps, account.accountId, grant.id);
  return redirect(`${CONNECTED_APPS_PATH}?notice=app-revoked`);
}

