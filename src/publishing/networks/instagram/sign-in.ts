/**
 * Instagram by sign-in (decisions.md §12): the Instagram API with Instagram Login
 * (https://developers.facebook.com/docs/instagram-platform/instagram-api-with-instagram-login/business-login):
 * the person authorizes at `https://www.instagram.com/oauth/authorize` (scopes comma-separated, no PKCE), the code
 * is exchanged at `POST https://api.instagram.com/oauth/access_token` (client id and secret in the form) for a
 * short-lived token (1 hour), which is exchanged at once for a long-lived one (60 days, `GET
 * https://graph.instagram.com/access_token?grant_type=ig_exchange_token`). Long-lived tokens renew themselves
 * (`GET https://graph.instagram.com/refresh_access_token?grant_type=ig_refresh_token`): there is no refresh token.
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import type { TokenAnswer } from "../../sign-in/token-endpoint";
import { metaTokenCall } from "../meta/tokens";
import { INSTAGRAM_GRAPH, instagramMe } from "./client";

/** Where Instagram asks the person to authorize. */
export const INSTAGRAM_AUTHORIZE = "https://www.instagram.com/oauth/authorize";
/** The code exchange. */
export const INSTAGRAM_TOKEN = "https://api.instagram.com/oauth/access_token";

async function instagramApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "instagram");
  if (!app) throw new SignInRefused("Your instance admin has not set up Instagram yet: Instagram cannot be connected until its app is entered on the Instance page.");
  return {
    authorizationEndpoint: INSTAGRAM_AUTHORIZE,
    tokenEndpoint: INSTAGRAM_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "body",
    pkce: false,
    scopes: NETWORK_APP_GUIDES.instagram.scopes,
    scopeSeparator: ",",
    endpoint: INSTAGRAM_GRAPH,
  };
}

/** The Instagram sign-in declaration. */
export const instagramSignIn: SignInNetwork = {
  platform: "instagram",
  name: "Instagram",
  app: (deps) => instagramApp(deps),
  appOf: (deps) => instagramApp(deps),
  async exchangeCode(deps, app, params): Promise<TokenAnswer> {
    const short = await metaTokenCall(deps, "POST", app.tokenEndpoint, { ...params, client_id: app.clientId, client_secret: app.clientSecret ?? "" });
    if (!short.ok) return short;
    // The short-lived token (1 hour) becomes a long-lived one (60 days) at once.
    return metaTokenCall(deps, "GET", `${INSTAGRAM_GRAPH}/access_token`, {
      grant_type: "ig_exchange_token",
      client_secret: app.clientSecret ?? "",
      access_token: short.tokens.accessToken,
    });
  },
  refreshAccessToken: (deps, _app, accessToken) =>
    metaTokenCall(deps, "GET", `${INSTAGRAM_GRAPH}/refresh_access_token`, { grant_type: "ig_refresh_token", access_token: accessToken }),
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const who = await instagramMe(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`Instagram could not be reached (${error.message}). Nothing was connected: try again in a moment.`);
    });
    if (!who.ok) throw new SignInRefused(`Instagram did not say which account signed in (${who.words}). Nothing was connected: try again.`);
    return { networkAccountId: who.userId, label: `@${who.username}` };
  },
};
