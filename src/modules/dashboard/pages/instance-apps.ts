/**
 * The Instance page's network apps (decisions.md §12): per network, the redirect URI to register, the scopes and
 * products to enable, the developer console, what the network demands, the setup step by step, and the app's id and
 * secret (entered here, sealed, shown only as "set" / "not set"; the environment's pair wins).
 */
import { type AppNetwork, NETWORK_APP_ENV } from "../../../config";
import { type Html, html } from "../../../lib/html";
import { type AppCredentialsView, appCredentialsViews } from "../../../publishing/sign-in/app-credentials";
import { NETWORK_APP_GUIDES } from "../../../publishing/sign-in/network-apps";
import { redirectUriFor } from "../../../publishing/sign-in/redirect-uri";
import type { DashboardCtx } from "../../../web/guard";
import { csrfField } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";

/** Where a network's setup is on the Instance page (the Connect card links there for the admin). */
export function appSetupHref(network: AppNetwork): string {
  return `/dashboard/instance#app-${network}`;
}

function stateText(view: AppCredentialsView): Html {
  const [idVar, secretVar] = NETWORK_APP_ENV[view.network];
  if (view.source === "environment") {
    return html`<span class="badge state-active">set</span> in the environment (${idVar}, ${secretVar}), which wins over the fields below.`;
  }
  return view.source === "instance" ? html`<span class="badge state-active">set</span> here.` : html`<span class="badge state-disabled">not set</span>: nobody can connect ${NETWORK_APP_GUIDES[view.network].name} yet.`;
}

function networkSection(ctx: DashboardCtx, s: SessionContext, view: AppCredentialsView): Html {
  const network = view.network;
  const guide = NETWORK_APP_GUIDES[network];
  const redirect = redirectUriFor(ctx.deps, network);
  const steps = guide.steps.map((step) => {
    const [before, after] = step.split("{redirect}");
    return after === undefined ? html`<li>${step}</li>` : html`<li>${before}<code>${redirect}</code>${after}</li>`;
  });
  const set = view.storedOnPage;
  return html`<section class="network-app" id="app-${network}" aria-labelledby="app-${network}-title">
  <h3 id="app-${network}-title">${guide.name}</h3>
  <p>App: ${stateText(view)}</p>
  <dl class="facts">
    <dt>Redirect URI to register</dt><dd><code class="copyable">${redirect}</code></dd>
    <dt>Scopes</dt><dd>${guide.scopes.map((scope, i) => html`${i > 0 ? " " : ""}<code>${scope}</code>`)}</dd>
    <dt>Products to enable</dt><dd>${guide.products.join("; ")}</dd>
    <dt>Developer console</dt><dd><a href="${guide.consoleUrl}" rel="noopener noreferrer" target="_blank">${guide.consoleUrl}</a></dd>
  </dl>
  <ul class="hint">${guide.demands.map((d) => html`<li>${d}</li>`)}</ul>
  <details><summary>Set up ${guide.name}, step by step</summary><ol>${steps}</ol></details>
  <form method="post" action="/dashboard/instance/apps/${network}" class="form-card">
    ${csrfField(s.csrfToken)}
    <div class="row"><label for="app-${network}-id">${guide.idLabel} <span class="muted">(${set ? "set" : "not set"})</span></label><input id="app-${network}-id" name="clientId" type="password" autocomplete="off" maxlength="500"${set ? "" : " required"}></div>
    <div class="row"><label for="app-${network}-secret">${guide.secretLabel} <span class="muted">(${set ? "set" : "not set"})</span></label><input id="app-${network}-secret" name="clientSecret" type="password" autocomplete="off" maxlength="500"${set ? "" : " required"}>${set ? html`<p class="hint">Leave a field empty to keep what is set.</p>` : ""}</div>
    <div class="actions">
      <button type="submit">Save ${guide.name} app</button>
      ${set ? html`<button type="submit" class="secondary danger" formaction="/dashboard/instance/apps/${network}/clear" formnovalidate>Remove</button>` : ""}
    </div>
  </form>
</section>`;
}

/** The "Network apps" card of the Instance page. */
export async function networkAppsPart(ctx: DashboardCtx, s: SessionContext): Promise<Html> {
  const views = await appCredentialsViews(ctx.deps);
  return html`<section class="card" aria-labelledby="apps-title">
  <h2 id="apps-title">Network apps</h2>
  <p>People connect X, LinkedIn, Facebook Pages, Instagram, Threads and Pinterest by signing in there. Each network needs an app of this instance, made once by you in the network's developer console: follow its steps, then paste its id and secret here. They are sealed and never shown again.</p>
  ${views.map((view) => networkSection(ctx, s, view))}
</section>`;
}
