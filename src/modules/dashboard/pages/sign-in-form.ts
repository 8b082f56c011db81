/**
 * The "Connect <network>" card of a network connected by sign-in (decisions.md §12): what the network needs typed
 * first (Mastodon: the server), one button that leaves for the network's own sign-in page, and, where the network
 * also takes a pasted token (Mastodon), that form folded away beneath it.
 */
import type { Config } from "../../../config";
import { type Html, html } from "../../../lib/html";
import { CSP, htmlResponse } from "../../../web/http";
import { csrfField } from "../../../web/layout";
import { FormState, type FieldErrors } from "../fields";

/** Where the sign-in form posts. */
export function connectPath(platform: string): string {
  return `/dashboard/connections/connect/${platform}`;
}

/** The Mastodon sign-in form: the server, then "Sign in with Mastodon". `reconnectId` names the connection to reconnect. */
export function mastodonSignInForm(csrfToken: string, values: Record<string, string>, errors: FieldErrors = {}, reconnectId: string | null = null): Html {
  const f = new FormState(errors);
  return html`<form method="post" action="${connectPath("mastodon")}" novalidate>
  ${csrfField(csrfToken)}
  ${reconnectId ? html`<input type="hidden" name="connection" value="${reconnectId}">` : ""}
  ${f.input({
    name: "server",
    id: "mastodon-signin-server",
    label: "Your server",
    value: values.server ?? "",
    required: true,
    hint: "The server you sign in at, such as mastodon.social. You sign in there and allow Seedcast to post; no password or token is typed here.",
    attrs: html` placeholder="mastodon.social" inputmode="url" autocomplete="off"`,
  })}
  <button type="submit">Sign in with Mastodon</button>
</form>`;
}

/**
 * The "Connect <network>" card of a network with an instance-wide app (X, LinkedIn, Facebook, Instagram, Threads,
 * Pinterest): one button that leaves for the network's sign-in; disabled with "Your instance admin has not set up …
 * yet" while the app is missing (the admin gets a link to its setup on the Instance page).
 */
export function appNetworkCard(csrfToken: string, card: { platform: string; name: string; appSet: boolean; isAdmin: boolean; setupHref: string; hint?: string }): Html {
  const id = `connect-${card.platform}-title`;
  if (!card.appSet) {
    return html`<section class="card" aria-labelledby="${id}">
  <h3 id="${id}">Connect ${card.name}</h3>
  <p class="hint" id="${card.platform}-missing">Your instance admin has not set up ${card.name} yet.${card.isAdmin ? html` <a href="${card.setupHref}">Set up ${card.name}</a> on the Instance page.` : ""}</p>
  <button type="button" disabled aria-describedby="${card.platform}-missing">Connect ${card.name}</button>
</section>`;
  }
  return html`<form method="post" action="${connectPath(card.platform)}" class="card" aria-labelledby="${id}">
  <h3 id="${id}">Connect ${card.name}</h3>
  ${csrfField(csrfToken)}
  ${card.hint ? html`<p class="hint">${card.hint}</p>` : ""}
  <button type="submit">Connect ${card.name}</button>
</form>`;
}

/**
 * The CSP of a page holding a sign-in form: the dashboard's, with https servers allowed as form targets (and plain
 * http for the hosts in ALLOW_PRIVATE_HOSTS). NB: the browser applies `form-action` to the redirect that follows the
 * POST too, and a Mastodon server is any address a person types, so it cannot be named in advance.
 */
export function signInCsp(config: Pick<Config, "allowPrivateHosts" | "platformOriginOverrides">): string {
  const privateHosts = [...config.allowPrivateHosts].map((h) => `http://${h.includes(":") ? `[${h}]` : h}:*`);
  // The origins PLATFORM_ORIGIN_OVERRIDES sends a network's sign-in page to (decisions.md §12: browser redirects too).
  const overridden = [...new Set(config.platformOriginOverrides.values())].filter((o) => o.startsWith("http://"));
  return CSP.replace("form-action 'self'", ["form-action 'self' https:", ...privateHosts, ...overridden].join(" "));
}

/** htmlResponse with signInCsp: for the pages that hold a sign-in form (connections, reconnect). */
export function signInPageResponse(config: Pick<Config, "allowPrivateHosts" | "platformOriginOverrides">, page: Html, status = 200): Response {
  const response = htmlResponse(page, status);
  response.headers.set("content-security-policy", signInCsp(config));
  return response;
}
