/**
 * LinkedIn by sign-in (decisions.md §12): OAuth 2.0 authorization code flow, 3-legged
 * (https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow), scopes
 * `openid profile w_member_social`, the client secret in the form body. LinkedIn's standard web apps take no PKCE
 * (PKCE is for its native clients only). Access tokens last 60 days; ordinary apps get no refresh token, so the
 * connection shows its expiry and is warned about from 7 days before (the refresh machinery leaves such a token as
 * it is). Who signed in: OpenID Connect userinfo (`sub`, `name`).
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import { LINKEDIN_API, userinfo } from "./client";

/** Where LinkedIn asks the person to authorize. */
export const LINKEDIN_AUTHORIZE = "https://www.linkedin.com/oauth/v2/authorization";
/** LinkedIn's token endpoint. */
export const LINKEDIN_TOKEN = "https://www.linkedin.com/oauth/v2/accessToken";

async function linkedinApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "linkedin");
  if (!app) throw new SignInRefused("Your instance admin has not set up LinkedIn yet: LinkedIn cannot be connected until its app is entered on the Instance page.");
  return {
    authorizationEndpoint: LINKEDIN_AUTHORIZE,
    tokenEndpoint: LINKEDIN_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "body",
    pkce: false,
    scopes: NETWORK_APP_GUIDES.linkedin.scopes,
    endpoint: LINKEDIN_API,
  };
}

/** The LinkedIn sign-in declaration. */
export const linkedinSignIn: SignInNetwork = {
  platform: "linkedin",
  name: "LinkedIn",
  app: (deps) => linkedinApp(deps),
  appOf: (deps) => linkedinApp(deps),
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const who = await userinfo(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`LinkedIn could not be reached (${error.message}). Nothing was connected: try again in a moment.`);
    });
    if (!who.ok) throw new SignInRefused(`LinkedIn did not say who signed in (${who.words}). Nothing was connected: try again.`);
    return { networkAccountId: who.sub, label: who.name, meta: { providerAccountId: who.sub } };
  },
  // LinkedIn's words for "the member said no" (authorization code flow, "Failed Requests").
  deniedErrors: ["access_denied", "user_cancelled_authorize", "user_cancelled_login"],
};
