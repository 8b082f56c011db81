/**
 * The "Connect <network>" card of a network connected by sign-in (decisions.md §12): what the network needs typed
 * first (Mastodon: the server), one button that leaves for the network's own sign-in page, and, where the network
 * also takes a pasted token (Mastodon), that form folded away beneath it.
 */
import { type Html, html } from "../../../lib/html";
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
