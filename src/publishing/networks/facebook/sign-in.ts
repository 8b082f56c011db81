/**
 * Facebook Pages by sign-in (decisions.md §12): Facebook Login
 * (https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow): the person authorizes at
 * `https://www.facebook.com/<v>/dialog/oauth` (scopes comma-separated, `pages_show_list pages_manage_posts
 * pages_read_engagement`); the code is exchanged at `GET https://graph.facebook.com/<v>/oauth/access_token` for a
 * short-lived user token, at once exchanged for a long-lived one (`grant_type=fb_exchange_token`,
 * https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived). The person then ticks the
 * Pages to connect (`GET /me/accounts`): one connection per Page, each holding its Page token, which does not expire
 * when it comes from a long-lived user token (so nothing is refreshed; a revoked one makes the check not ready).
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInChoice, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import type { TokenAnswer } from "../../sign-in/token-endpoint";
import { graphCall } from "../meta/graph";
import { metaTokenCall } from "../meta/tokens";
import { FACEBOOK_API_VERSION, FACEBOOK_GRAPH, managedPages } from "./client";

/** Where Facebook asks the person to authorize. */
export const FACEBOOK_AUTHORIZE = `https://www.facebook.com/${FACEBOOK_API_VERSION}/dialog/oauth`;
/** The code exchange (and the long-lived exchange). */
export const FACEBOOK_TOKEN = `${FACEBOOK_GRAPH}/${FACEBOOK_API_VERSION}/oauth/access_token`;

async function facebookApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "facebook");
  if (!app) throw new SignInRefused("Your instance admin has not set up Facebook Pages yet: Facebook Pages cannot be connected until its app is entered on the Instance page.");
  return {
    authorizationEndpoint: FACEBOOK_AUTHORIZE,
    tokenEndpoint: FACEBOOK_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "body",
    pkce: false,
    scopes: NETWORK_APP_GUIDES.facebook.scopes,
    scopeSeparator: ",",
    endpoint: FACEBOOK_GRAPH,
  };
}

/** The Facebook Pages sign-in declaration. */
export const facebookSignIn: SignInNetwork = {
  platform: "facebook",
  name: "Facebook",
  choiceNoun: "Page",
  app: (deps) => facebookApp(deps),
  appOf: (deps) => facebookApp(deps),
  async exchangeCode(deps, app, params): Promise<TokenAnswer> {
    const short = await metaTokenCall(deps, "GET", app.tokenEndpoint, {
      client_id: app.clientId,
      client_secret: app.clientSecret ?? "",
      redirect_uri: params.redirect_uri ?? "",
      code: params.code ?? "",
    });
    if (!short.ok) return short;
    return metaTokenCall(deps, "GET", app.tokenEndpoint, {
      grant_type: "fb_exchange_token",
      client_id: app.clientId,
      client_secret: app.clientSecret ?? "",
      fb_exchange_token: short.tokens.accessToken,
    });
  },
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const answer = await graphCall(deps, "GET", `${FACEBOOK_GRAPH}/${FACEBOOK_API_VERSION}/me`, { fields: "id,name" }, tokens.accessToken);
    const id = answer.body?.id;
    const name = answer.body?.name;
    if (typeof id !== "string" || typeof name !== "string") throw new SignInRefused("Facebook did not say who signed in. Nothing was connected: try again.");
    return { networkAccountId: id, label: name };
  },
  async choices(deps, _app, tokens: TokenSet): Promise<SignInChoice[]> {
    const pages = await managedPages(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`Facebook did not list your Pages (${error.message}). Nothing was connected: try again.`);
    });
    return pages.map((p) => ({ account: { networkAccountId: p.id, label: p.name }, tokens: { accessToken: p.token, refreshToken: null, expiresAt: null } }));
  },
};
