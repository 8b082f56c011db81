/**
 * The consent page and the authorization error page, in the dashboard's look (its layout, html tag and CSRF field).
 * Every string from the client (its name, host) is escaped by the html tag.
 */
import { type Role, type Scope, ROLE_SCOPES, SCOPES, SCOPE_LABELS } from "../auth/scopes";
import { type Html, html } from "../dashboard/html";
import { csrfField, type Notice, publicPage } from "../dashboard/layout";
import type { SessionContext } from "../dashboard/session";
import type { AuthorizationRequest } from "./authorize-request";
import { displayName } from "./clients";

/** What each group lets an app do, in plain words. */
export const SCOPE_POWERS: Record<Scope, string> = {
  read: "See your seeds, creations, image library, scheduled posts, posting targets and credit balance.",
  create: "Create, change and delete seeds; add and delete images; generate and regenerate posts, which spends credits.",
  schedule: "Schedule posts to your connected social accounts and cancel scheduled posts.",
  voice: "See and change your brand voice.",
};

/** The host the person is sent back to, for people: `host` for web addresses, the scheme for app links. */
export function redirectHost(uri: string): string {
  const url = new URL(uri);
  return url.host || `${url.protocol}`;
}

function hiddenParams(request: AuthorizationRequest): Html {
  return html`${Object.entries(request.params).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}`;
}

/** The page shown for a request that cannot go on and must not redirect (unknown client, redirect URI mismatch). */
export function authorizeErrorPage(message: string): Html {
  return publicPage(
    "This app cannot connect",
    html`<div class="card">
  <p>${message}</p>
  <p class="hint">Nothing was shared with the app. If you were setting up an AI assistant, remove the connector there and add it again with the address shown on your Seedcast overview page.</p>
  <p><a class="button secondary" href="/dashboard">Go to the dashboard</a></p>
</div>`,
  );
}

/**
 * The consent page: the app's name and where it returns, the account (a picker when the person is in several), the
 * groups as checkboxes pre-checked as requested and limited to what the role allows, Allow and Deny.
 */
export function consentPage(
  s: SessionContext,
  request: AuthorizationRequest,
  account: { accountId: string; accountName: string; role: Role },
  checked: readonly Scope[],
  notices: Notice[] = [],
): Html {
  const name = displayName(request.client);
  const allowed = ROLE_SCOPES[account.role];
  const host = redirectHost(request.redirectUri);
  const picker =
    s.memberships.length > 1
      ? html`<form method="get" action="/oauth/authorize" class="card">
  ${hiddenParams(request)}
  <div class="row"><label for="account">Account</label>
    <select id="account" name="account">
      ${s.memberships.map(
        (m) => html`<option value="${m.accountId}"${m.accountId === account.accountId ? html` selected` : ""}>${m.accountName} (${m.role})</option>`,
      )}
    </select>
    <p class="hint">You belong to several accounts; the app will act in the one you choose.</p></div>
  <button type="submit" class="secondary">Use this account</button>
</form>`
      : "";
  return publicPage(
    `Connect ${name}?`,
    html`<p><strong>${name}</strong> wants to use Seedcast as you (<span class="mono">${s.email}</span>) in the account <strong>${account.accountName}</strong>, where your role is ${account.role}.</p>
${request.client.kind === "registered" ? html`<p class="hint">Seedcast has not verified this app. Only continue if you just asked it to connect to Seedcast yourself.</p>` : html`<p class="hint">This app is identified by <span class="mono">${request.client.id}</span>.</p>`}
${picker}
<form method="post" action="/oauth/authorize" class="card">
  ${csrfField(s.csrfToken)}
  ${hiddenParams(request)}
  <input type="hidden" name="account" value="${account.accountId}">
  <fieldset><legend>It will be able to</legend>
    ${SCOPES.filter((sc) => allowed.includes(sc)).map(
      (sc) => html`<label><input type="checkbox" name="groups" value="${sc}"${checked.includes(sc) ? html` checked` : ""}> <span><strong>${SCOPE_LABELS[sc]}</strong>: ${SCOPE_POWERS[sc]}</span></label>`,
    )}
    ${allowed.length < SCOPES.length ? html`<p class="hint">Your role (${account.role}) allows only ${allowed.map((sc) => SCOPE_LABELS[sc]).join(", ")}, so the app cannot get more.</p>` : ""}
  </fieldset>
  <p class="hint">Untick what you do not want to allow. After you decide, you go back to <strong>${host}</strong>. You can disconnect the app at any time under Connected apps in the dashboard.</p>
  <div class="actions">
    <button type="submit" name="decision" value="allow">Allow</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>`,
    notices,
  );
}
