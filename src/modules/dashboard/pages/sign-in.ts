/**
 * The dashboard's side of the sign-in flow (src/publishing/sign-in/flow.ts):
 * - `POST /dashboard/connections/connect/:platform` (session + CSRF, owners and editors): 303 to the network's
 *   authorization page; what cannot start (a server that is not Mastodon, unreachable) comes back beside the field.
 * - `GET /dashboard/connections/callback/:platform`: the network sends the browser back here. Connected or reconnected:
 *   303 to the connections page with the card highlighted; anything else: the connections page with one sentence,
 *   nothing stored. A network with a chooser (Facebook Pages, Pinterest boards) shows it instead: one checkbox per
 *   account the sign-in opened, none ticked.
 * - `POST /dashboard/connections/choose/:platform`: the ticked accounts connected, one connection each.
 */
import { type DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, fields, redirect } from "../../../web/http";
import { csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { getConnection } from "../../connections/service";
import { type SignInChooser, finishChoice, finishSignIn, startSignIn } from "../../../publishing/sign-in/flow";
import { SignInRefused, type SignInNetwork } from "../../../publishing/sign-in/network";
import { signInNetworkFor } from "../../../publishing/sign-in/registry";
import { connectionsPage, managed, missing } from "./connections";
import { signInPageResponse } from "./sign-in-form";

const CURRENT = "/dashboard/connections";

/** POST /dashboard/connections/connect/:platform */
export async function postSignInStart(ctx: DashboardCtx, s: SessionContext, platform: string, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const network = signInNetworkFor(platform);
  if (!network) return missing(s);
  const reconnectId = field(form, "connection") || null;
  if (reconnectId !== null && !(await getConnection(ctx.deps, account.accountId, reconnectId))) return missing(s);
  const server = field(form, "server");
  try {
    const url = await startSignIn(ctx.deps, network, { sessionId: s.sessionId, accountId: account.accountId }, { server }, reconnectId);
    return new Response(null, { status: 303, headers: { location: url, "cache-control": "no-store" } });
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    // Mastodon's refusals are about the server typed: said beside that field. The other networks have no field: the sentence is the notice.
    const page =
      platform === "mastodon"
        ? await connectionsPage(ctx, s, account, [{ kind: "error", text: `Not connected: the sign-in could not start. See what to fix in the ${network.name} form below.` }], { platform: `${platform}-signin`, server }, { server: error.message })
        : await connectionsPage(ctx, s, account, [{ kind: "error", text: `Not connected: ${error.message}` }]);
    return signInPageResponse(ctx.deps.config, page, 400);
  }
}

/** GET /dashboard/connections/callback/:platform */
export async function getSignInCallback(ctx: DashboardCtx, s: SessionContext, platform: string, request: Request): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const network = signInNetworkFor(platform);
  if (!network) return missing(s);
  const query = new URL(request.url).searchParams;
  try {
    const outcome = await finishSignIn(ctx.deps, network, { sessionId: s.sessionId, accountId: account.accountId }, query);
    if (outcome.kind === "choose") return signInPageResponse(ctx.deps.config, chooserPage(s, network, outcome));
    return redirect(`${CURRENT}?notice=${outcome.reconnected ? "signed-in-again" : "signed-in"}#connection-${outcome.connectionId}`);
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [{ kind: "error", text: html`${error.message}` }]), 400);
  }
}

/** The chooser: one checkbox per account the sign-in opened (Pages, boards), none ticked, and one button. */
function chooserPage(s: SessionContext, network: SignInNetwork, chooser: SignInChooser): Html {
  const noun = network.choiceNoun ?? "account";
  return page(
    s,
    { title: `Choose the ${noun}s to connect`, current: CURRENT },
    html`<p class="muted">You are signed in to ${network.name}, which lets Seedcast post to these ${noun}s. Tick each one Seedcast should post to: each becomes its own connection. This choice is open for 10 minutes.</p>
<form method="post" action="${CURRENT}/choose/${network.platform}" class="card" aria-labelledby="chooser-title">
  <h2 id="chooser-title">${network.name}: choose</h2>
  ${csrfField(s.csrfToken)}<input type="hidden" name="chooser" value="${chooser.chooser}">
  <fieldset><legend>${network.name} ${noun}s</legend>
  ${chooser.accounts.map((a, i) => html`<label><input type="checkbox" name="account" value="${a.id}" id="choice-${i}"> ${a.label}</label><br>`)}
  </fieldset>
  <button type="submit">Connect the ticked ${noun}s</button>
</form>
<p><a href="${CURRENT}">Cancel</a></p>`,
  );
}

/** POST /dashboard/connections/choose/:platform */
export async function postSignInChoice(ctx: DashboardCtx, s: SessionContext, platform: string, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const network = signInNetworkFor(platform);
  if (!network?.choices) return missing(s);
  try {
    const outcomes = await finishChoice(ctx.deps, network, { sessionId: s.sessionId, accountId: account.accountId }, field(form, "chooser"), fields(form, "account"));
    const again = outcomes.every((o) => o.reconnected);
    return redirect(`${CURRENT}?notice=${again ? "signed-in-again" : "signed-in"}#connection-${outcomes[0]?.connectionId ?? ""}`);
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [{ kind: "error", text: html`${error.message}` }]), 400);
  }
}
