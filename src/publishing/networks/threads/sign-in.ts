/**
 * Threads by sign-in (decisions.md §12; https://developers.facebook.com/docs/threads/get-started/get-access-tokens-and-permissions
 * and .../long-lived-tokens): the person authorizes at `https://threads.net/oauth/authorize` (scopes comma-separated,
 * no PKCE), the code is exchanged at `POST https://graph.threads.net/oauth/access_token` for a short-lived token,
 * at once exchanged for a long-lived one (60 days, `GET https://graph.threads.net/access_token?grant_type=th_exchange_token`),
 * which renews itself (`GET https://graph.threads.net/refresh_access_token?grant_type=th_refresh_token`).
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import type { TokenAnswer } from "../../sign-in/token-endpoint";
import { metaTokenCall } from "../meta/tokens";
import { THREADS_GRAPH, threadsMe } from "./client";

/** Where Threads asks the person to authorize. */
export const THREADS_AUTHORIZE = "https://threads.net/oauth/authorize";
/** The code exchange. */
export const THREADS_TOKEN = `${THREADS_GRAPH}/oauth/access_token`;

async function threadsApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "threads");
  if (!app) throw new SignInRefused("Your instance admin has not set up Threads yet: Threads cannot be connected until its app is entered on the Instance page.");
  return {
    authorizationEndpoint: THREADS_AUTHORIZE,
    tokenEndpoint: THREADS_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "body",
    pkce: false,
    scopes: NETWORK_APP_GUIDES.threads.scopes,
    scopeSeparator: ",",
    endpoint: THREADS_GRAPH,
  };
}

/** The Threads sign-in declaration. */
export const threadsSignIn: SignInNetwork = {
  platform: "threads",
  name: "Threads",
  app: (deps) => threadsApp(deps),
  appOf: (deps) => threadsApp(deps),
  async exchangeCode(deps, app, params): Promise<TokenAnswer> {
    const short = await metaTokenCall(deps, "POST", app.tokenEndpoint, { ...params, client_id: app.clientId, client_secret: app.clientSecret ?? "" });
    if (!short.ok) return short;
    return metaTokenCall(deps, "GET", `${THREADS_GRAPH}/access_token`, { grant_type: "th_exchange_token", client_secret: app.clientSecret ?? "", access_token: short.tokens.accessToken });
  },
  refreshAccessToken: (deps, _app, accessToken) => metaTokenCall(deps, "GET", `${THREADS_GRAPH}/refresh_access_token`, { grant_type: "th_refresh_token", access_token: accessToken }),
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const who = await threadsMe(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`Threads could not be reached (${error.message}). Nothing was connected: try again in a moment.`);
    });
    if (!who.ok) throw new SignInRefused(`Threads did not say which account signed in (${who.words}). Nothing was connected: try again.`);
    return { networkAccountId: who.userId, label: `@${who.username}` };
  },
};
