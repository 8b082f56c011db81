/**
 * X by sign-in (decisions.md §12): OAuth 2.0 Authorization Code with PKCE S256, as a confidential client (HTTP Basic
 * at the token endpoint), scopes `tweet.read tweet.write users.read media.write offline.access`
 * (https://docs.x.com/fundamentals/authentication/oauth-2-0/authorization-code). The app is the instance's
 * (X_CLIENT_ID/X_CLIENT_SECRET or the Instance page). Access tokens last 2 hours; refresh tokens rotate (each refresh
 * answers a new one). X answers `invalid_request` for a revoked or spent refresh token: for X that is a dead grant.
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import { X_API, me } from "./client";

/** Where X asks the person to authorize (the browser goes there). */
export const X_AUTHORIZE = "https://x.com/i/oauth2/authorize";
/** X's token endpoint. */
export const X_TOKEN = `${X_API}/2/oauth2/token`;

async function xApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "x");
  if (!app) throw new SignInRefused("Your instance admin has not set up X yet: X cannot be connected until its app is entered on the Instance page.");
  return {
    authorizationEndpoint: X_AUTHORIZE,
    tokenEndpoint: X_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "basic",
    pkce: true,
    scopes: NETWORK_APP_GUIDES.x.scopes,
    endpoint: X_API,
  };
}

/** The X sign-in declaration. */
export const xSignIn: SignInNetwork = {
  platform: "x",
  name: "X",
  app: (deps) => xApp(deps),
  appOf: (deps) => xApp(deps),
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const who = await me(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`X could not be reached (${error.message}). Nothing was connected: try again in a moment.`);
    });
    if (!who.ok) throw new SignInRefused(`X did not say which account signed in (${who.words}). Nothing was connected: try again.`);
    return { networkAccountId: who.id, label: `@${who.username}` };
  },
  // X's word for a refresh token that was revoked or already used.
  deadGrantErrors: ["invalid_grant", "invalid_request"],
};
