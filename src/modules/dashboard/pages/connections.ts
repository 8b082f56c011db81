/**
 * Connections (the API's manageUrl): connect Bluesky, Mastodon or a webhook; each shows ready or what to fix;
 * re-check, reconnect (new credentials replace the old ones in place: the connection keeps its id, so posts already
 * scheduled to it go out with them), remove. Owners and editors
 * manage them; viewers see them. Credentials are never rendered back.
 */
import { isoAt } from "../../../lib/clock";
import { BLUESKY_DEFAULT_SERVICE } from "../../../publishing/bluesky";
import { ROLE_SCOPES } from "../../auth/scopes";
import {
  type AddConnectionInput,
  type ConnectionRow,
  addConnection,
  checkConnection,
  getConnection,
  listConnections,
  removeConnection,
  replaceConnectionCredentials,
} from "../../connections/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../guard";
import { type Html, html, timeTag } from "../html";
import { type Form, field, htmlResponse, redirect } from "../http";
import { type Notice, confirmPage, csrfField, page } from "../layout";
import type { Membership, SessionContext } from "../session";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/connections";
const PLATFORM_LABELS = { bluesky: "Bluesky", mastodon: "Mastodon", webhook: "Webhook" } as const;
type Platform = keyof typeof PLATFORM_LABELS;

function canManage(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

function connectionCard(s: SessionContext, c: ConnectionRow): Html {
  return html`<li class="post" id="connection-${c.id}">
  <h3>${PLATFORM_LABELS[c.platform]} · ${c.label}</h3>
  <p>${
    c.readyToPost
      ? html`<span class="badge state-ready">ready</span> Ready to post.`
      : html`<span class="badge state-blocked">needs attention</span> ${c.blockedReason ?? "Not ready."}`
  }</p>
  <p class="hint">${c.endpoint} · last checked ${timeTag(c.checkedAt === null ? null : isoAt(c.checkedAt), "never")} · target id <code>${c.id}</code></p>
  ${
    canManage(s)
      ? html`<div class="actions">
    <form method="post" action="${CURRENT}/${c.id}/check">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Check again<span class="sr-only"> ${c.label}</span></button></form>
    <a class="button small secondary" href="${CURRENT}/${c.id}/reconnect">Reconnect<span class="sr-only"> ${c.label}</span></a>
    <a class="button small danger" href="${CURRENT}/${c.id}/remove">Remove<span class="sr-only"> ${c.label}</span></a>
  </div>`
      : ""
  }
</li>`;
}

function platformFields(platform: Platform, values: Record<string, string>, prefix: string): Html {
  const id = (name: string) => `${prefix}-${name}`;
  switch (platform) {
    case "bluesky":
      return html`<div class="row"><label for="${id("handle")}">Handle</label><input id="${id("handle")}" name="handle" type="text" required placeholder="alice.bsky.social" value="${values.handle ?? ""}" autocomplete="off"></div>
  <div class="row"><label for="${id("appPassword")}">App password</label><input id="${id("appPassword")}" name="appPassword" type="password" required autocomplete="off" aria-describedby="${id("ap-hint")}">
    <p class="hint" id="${id("ap-hint")}">Create one in Bluesky under Settings → Privacy and security → App passwords. Never your main password.</p></div>
  <div class="row"><label for="${id("service")}">Service URL</label><input id="${id("service")}" name="service" type="url" value="${values.service ?? BLUESKY_DEFAULT_SERVICE}"></div>`;
    case "mastodon":
      return html`<div class="row"><label for="${id("instance")}">Instance URL</label><input id="${id("instance")}" name="instance" type="url" required placeholder="https://mastodon.social" value="${values.instance ?? ""}"></div>
  <div class="row"><label for="${id("token")}">Access token</label><input id="${id("token")}" name="token" type="password" required autocomplete="off" aria-describedby="${id("tok-hint")}">
    <p class="hint" id="${id("tok-hint")}">From Preferences → Development → New application, with the write:statuses and write:media scopes.</p></div>`;
    case "webhook":
      return html`<div class="row"><label for="${id("url")}">Webhook URL</label><input id="${id("url")}" name="url" type="url" required placeholder="https://hooks.example.com/seedcast" value="${values.url ?? ""}"></div>
  <div class="row"><label for="${id("secret")}">Signing secret</label><input id="${id("secret")}" name="secret" type="password" required minlength="16" autocomplete="off" aria-describedby="${id("sec-hint")}">
    <p class="hint" id="${id("sec-hint")}">At least 16 characters. Each delivery carries X-Seedcast-Signature: sha256=HMAC of the body under it. A signed ping is sent now to check it.</p></div>`;
  }
}

function connectForm(s: SessionContext, platform: Platform, values: Record<string, string>, action = CURRENT, title?: string): Html {
  return html`<form method="post" action="${action}" class="card" aria-labelledby="connect-${platform}-title">
  <h3 id="connect-${platform}-title">${title ?? `Connect ${PLATFORM_LABELS[platform]}`}</h3>
  ${csrfField(s.csrfToken)}
  <input type="hidden" name="platform" value="${platform}">
  ${platformFields(platform, values, platform)}
  <button type="submit">${title ? "Reconnect" : "Connect"}</button>
</form>`;
}

function connectionsPage(ctx: DashboardCtx, s: SessionContext, account: Membership, notices: Notice[], values: Record<string, string> = {}): Html {
  const rows = listConnections(ctx.deps, account.accountId);
  const failedPlatform = values.platform as Platform | undefined;
  return page(
    s,
    { title: "Connections", current: CURRENT, notices },
    html`<p class="muted">Posts go to the accounts connected here. The API lists them as scheduling targets but never connects them.</p>
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Connected</h2>
  ${rows.length === 0 ? html`<p class="muted">Nothing connected yet.</p>` : html`<ul class="plain">${rows.map((c) => connectionCard(s, c))}</ul>`}
</section>
${
  canManage(s)
    ? html`<section aria-labelledby="add-title">
  <h2 id="add-title">Add a connection</h2>
  <div class="grid2">
    ${(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) => connectForm(s, p, failedPlatform === p ? values : {}))}
  </div>
</section>`
    : html`<p class="hint">Only owners and editors add or change connections.</p>`
}`,
  );
}

function inputFrom(accountId: string, form: Form | undefined): AddConnectionInput | null {
  const platform = field(form, "platform");
  switch (platform) {
    case "bluesky":
      return { accountId, platform, handle: field(form, "handle"), appPassword: field(form, "appPassword"), service: field(form, "service") || undefined };
    case "mastodon":
      return { accountId, platform, instance: field(form, "instance"), token: field(form, "token") };
    case "webhook":
      return { accountId, platform, url: field(form, "url"), secret: field(form, "secret") };
    default:
      return null;
  }
}

/** Non-secret fields to refill the form with after a refusal. */
function safeValues(form: Form | undefined): Record<string, string> {
  return {
    platform: field(form, "platform"),
    handle: field(form, "handle"),
    service: field(form, "service"),
    instance: field(form, "instance"),
    url: field(form, "url"),
  };
}

function managed(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canManage(s)) return forbiddenPage(s, "Only owners and editors add or change connections.");
  return account;
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such connection in this account.</p>`), 404);
}

/** GET /dashboard/connections */
export function getConnections(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(connectionsPage(ctx, s, account, noticeFrom(request)));
}

/** POST /dashboard/connections: adds and checks a connection (a refused check still stores it, with the reason). */
export async function postConnect(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const input = inputFrom(account.accountId, form);
  if (!input) return htmlResponse(connectionsPage(ctx, s, account, [{ kind: "error", text: "Choose Bluesky, Mastodon or Webhook." }]), 400);
  try {
    const added = await addConnection(ctx.deps, input);
    // A connection whose first check failed is stored, but it is not "added" in the sense a person means.
    if (!added.readyToPost) return redirect(`${CURRENT}?notice=connected-attention#connection-${added.accountId}`);
    return redirect(`${CURRENT}?notice=connected`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(connectionsPage(ctx, s, account, [notice], safeValues(form)), status);
  }
}

/** POST /dashboard/connections/:id/check */
export async function postCheck(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  if (!getConnection(ctx.deps, account.accountId, id)) return missing(s);
  await checkConnection(ctx.deps, id);
  return redirect(`${CURRENT}?notice=checked#connection-${id}`);
}

/** GET /dashboard/connections/:id/reconnect: the platform's form for new credentials. */
export function getReconnect(ctx: DashboardCtx, s: SessionContext, id: string): Response {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  const values: Record<string, string> =
    row.platform === "bluesky" ? { handle: row.label.replace(/^@/, ""), service: row.endpoint } : row.platform === "mastodon" ? { instance: row.endpoint } : { url: row.endpoint };
  return htmlResponse(
    page(
      s,
      { title: `Reconnect ${row.label}`, current: CURRENT },
      html`<p class="muted">Enter the credentials again. They replace the old ones and are checked at once; the connection keeps its target id, so posts already scheduled to it go out with the new credentials.</p>
${connectForm(s, row.platform, values, `${CURRENT}/${row.id}/reconnect`, `Reconnect ${PLATFORM_LABELS[row.platform]}`)}
<p><a href="${CURRENT}">Back to connections</a></p>`,
    ),
  );
}

/**
 * POST /dashboard/connections/:id/reconnect: replaces the credentials in place (never remove + add, which would
 * change the id and orphan the posts scheduled to it). A failed check keeps the new credentials, not ready, and says why.
 */
export async function postReconnect(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  const input = inputFrom(account.accountId, { ...form, platform: row.platform });
  if (!input) return missing(s);
  try {
    const replaced = await replaceConnectionCredentials(ctx.deps, account.accountId, row.id, input);
    if (!replaced.readyToPost) {
      const reason = replaced.blockedReason ?? "the check failed";
      return htmlResponse(connectionsPage(ctx, s, account, [{ kind: "error", text: `The new credentials were saved but do not work yet: ${reason}` }]), 400);
    }
    return redirect(`${CURRENT}?notice=connected`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(connectionsPage(ctx, s, account, [notice]), status);
  }
}

/** GET /dashboard/connections/:id/remove: the confirmation step. */
export function getRemoveConnection(ctx: DashboardCtx, s: SessionContext, id: string): Response {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  return htmlResponse(
    confirmPage(s, {
      title: "Remove connection",
      current: CURRENT,
      question: html`Remove <strong>${PLATFORM_LABELS[row.platform]} ${row.label}</strong>? Posts still scheduled to it will not be sent; posts Mastodon holds are withdrawn from it first.`,
      action: `${CURRENT}/${row.id}/remove`,
      confirmLabel: "Remove connection",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/connections/:id/remove */
export async function postRemoveConnection(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  if (!getConnection(ctx.deps, account.accountId, id)) return missing(s);
  try {
    await removeConnection(ctx.deps, account.accountId, id);
  } catch (error) {
    // e.g. Mastodon unreachable while withdrawing a post it holds: nothing was removed; say so and why.
    const { notice, status } = refusal(error);
    return htmlResponse(connectionsPage(ctx, s, account, [notice]), status);
  }
  return redirect(`${CURRENT}?notice=connection-removed`);
}
