/**
 * Pinterest by sign-in (decisions.md §12), https://developers.pinterest.com/docs/getting-started/authentication-and-scopes/:
 * the authorization code flow at https://www.pinterest.com/oauth/ (scopes comma-separated:
 * `boards:read,pins:read,pins:write`), the code exchanged at `POST /v5/oauth/token` with HTTP Basic (the description's
 * `basic` security). Access tokens last 30 days; refresh tokens are continuous (each refresh answers a new one, the
 * old one then refused). Pinterest's word for a dead grant is `{code: 283, message: "The authorization grant is
 * invalid"}`. After the sign-in, the person ticks boards: one connection per board (the chooser).
 */
import type { Deps } from "../../../deps";
import { appCredentials } from "../../sign-in/app-credentials";
import { type SignInApp, type SignInChoice, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NETWORK_APP_GUIDES } from "../../sign-in/network-apps";
import { PINTEREST_API, listBoards, userAccount } from "./client";

/** Where Pinterest asks the person to authorize. */
export const PINTEREST_AUTHORIZE = "https://www.pinterest.com/oauth/";
/** Pinterest's token endpoint. */
export const PINTEREST_TOKEN = `${PINTEREST_API}/oauth/token`;
/** Pinterest's error code for an authorization grant (code or refresh token) that is invalid. */
export const PINTEREST_DEAD_GRANT = "283";

async function pinterestApp(deps: Deps): Promise<SignInApp> {
  const app = await appCredentials(deps, "pinterest");
  if (!app) throw new SignInRefused("Your instance admin has not set up Pinterest yet: Pinterest cannot be connected until its app is entered on the Instance page.");
  const scopes = NETWORK_APP_GUIDES.pinterest.scopes;
  return {
    authorizationEndpoint: PINTEREST_AUTHORIZE,
    tokenEndpoint: PINTEREST_TOKEN,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    clientAuth: "basic",
    pkce: false,
    scopes,
    endpoint: PINTEREST_API,
    // Pinterest separates scopes with commas.
    extraAuthorizationParams: { scope: scopes.join(",") },
  };
}

/** The Pinterest sign-in declaration. */
export const pinterestSignIn: SignInNetwork = {
  platform: "pinterest",
  name: "Pinterest",
  app: (deps) => pinterestApp(deps),
  appOf: (deps) => pinterestApp(deps),
  async identify(deps, _app, tokens: TokenSet): Promise<SignedInAccount> {
    const who = await userAccount(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`Pinterest could not be reached (${error.message}). Nothing was connected: try again in a moment.`);
    });
    if (!who.ok || !who.account.username) throw new SignInRefused(`Pinterest did not say who signed in (${who.ok ? "no username" : who.words}). Nothing was connected: try again.`);
    return { networkAccountId: who.account.id ?? who.account.username, label: `@${who.account.username}` };
  },
  // Each board is used with the person's tokens: the boards ticked together then share one grant (flow.ts).
  async choices(deps, _app, tokens: TokenSet, who: SignedInAccount): Promise<SignInChoice[]> {
    const boards = await listBoards(deps, tokens.accessToken).catch((error: Error) => {
      throw new SignInRefused(`Pinterest did not list your boards (${error.message}). Nothing was connected: try again in a moment.`);
    });
    return boards.map((b) => ({ account: { networkAccountId: b.id, label: `${b.name} (${who.label})`, meta: { providerAccountId: b.id } }, tokens }));
  },
  choiceNoun: "board",
  deadGrantErrors: ["invalid_grant", PINTEREST_DEAD_GRANT],
};
