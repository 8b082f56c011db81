/**
 * What a network declares to be connected by sign-in (decisions.md §12): the one flow in this folder does the rest
 * (state, PKCE, the callback, reconnect, token refresh, single flight). A network only says where its endpoints are,
 * how its app is found, who signed in, and which token-endpoint refusals mean the grant is gone.
 */
import type { ConnectionPlatform } from "../../db/schema/connections";
import type { Deps } from "../../deps";
import type { ConnectionMeta } from "../../store/connections";
import type { TokenAnswer } from "./token-endpoint";

/** The app Seedcast signs in with at one network (or one server of it), and that network's endpoints. */
export interface SignInApp {
  authorizationEndpoint: string;
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string | null;
  /** RFC 6749 §2.3.1: HTTP Basic (`client_secret_basic`) or the form body (`client_secret_post`). */
  clientAuth: "basic" | "body";
  /** True when the network takes PKCE (RFC 7636, S256). */
  pkce: boolean;
  scopes: readonly string[];
  /** Where the connection points (a Mastodon server's origin; the network's API for the others). */
  endpoint: string;
  /** Further authorization request parameters the network wants. */
  extraAuthorizationParams?: Readonly<Record<string, string>>;
  /** How the scopes are joined in the authorization URL: a space (RFC 6749 §3.3, the default) or a comma (Meta's networks). */
  scopeSeparator?: " " | ",";
}

/** A token endpoint's successful answer (RFC 6749 §5.1). */
export interface TokenSet {
  accessToken: string;
  /** Null when the answer carried none (a refresh answer without one keeps the stored one). */
  refreshToken: string | null;
  /** When the access token stops working (`expires_in` from the answer's time), null when the network named none. */
  expiresAt: number | null;
}

/** Who signed in, as the network tells it. */
export interface SignedInAccount {
  /** The network's stable id of the account: a second sign-in with the same id reconnects. */
  networkAccountId: string;
  label: string;
  /** Credentials beyond the tokens (stored sealed with them). */
  credentials?: Record<string, string>;
  meta?: ConnectionMeta;
}

/**
 * One account a sign-in may connect (a Facebook Page, a Pinterest board), with the tokens it is used with: a Page's
 * own token, or the signed-in person's tokens for a board (then the boards chosen together share one grant).
 */
export interface SignInChoice {
  account: SignedInAccount;
  tokens: TokenSet;
}

/** The declaration of one network's sign-in. */
export interface SignInNetwork {
  platform: ConnectionPlatform;
  /** The network's name in sentences ("Mastodon", "X"). */
  name: string;
  /**
   * The app for a sign-in started with `input` (Mastodon: the server the person typed; it registers Seedcast there
   * once). Throws SignInRefused with a sentence for the person when it cannot start.
   */
  app(deps: Deps, input: Readonly<Record<string, string>>): Promise<SignInApp>;
  /** The app of an existing connection (for a token refresh). */
  appOf(deps: Deps, endpoint: string): Promise<SignInApp>;
  /** Reads who signed in with `tokens`. Throws SignInRefused when the network will not say. */
  identify(deps: Deps, app: SignInApp, tokens: TokenSet): Promise<SignedInAccount>;
  /**
   * For a network whose connections are things inside the signed-in account (Facebook Pages, Pinterest boards): what
   * the person chooses from, each with the tokens it is used with (`who`: the account that signed in). The callback
   * then shows a chooser instead of storing; an empty list is answered with SignInRefused.
   */
  choices?(deps: Deps, app: SignInApp, tokens: TokenSet, who: SignedInAccount): Promise<SignInChoice[]>;
  /** What one choice is called in sentences ("Page", "board"). */
  choiceNoun?: string;
  /** Token-endpoint `error` codes that mean the grant is gone (default `invalid_grant`, RFC 6749 §5.2). */
  deadGrantErrors?: readonly string[];
  /**
   * The code exchange, for a network whose token endpoint is not plain RFC 6749 (Instagram and Threads answer a
   * short-lived token that is then exchanged for a long-lived one). Default: requestToken with `params`.
   */
  exchangeCode?(deps: Deps, app: SignInApp, params: Readonly<Record<string, string>>): Promise<TokenAnswer>;
  /**
   * The refresh, for a network that renews the access token itself instead of a refresh token (Instagram's
   * `ig_refresh_token`, Threads' `th_refresh_token`). Default: RFC 6749 §6 with the stored refresh token.
   */
  refreshAccessToken?(deps: Deps, app: SignInApp, accessToken: string): Promise<TokenAnswer>;
  /** Callback `error` codes that mean the person said no (default `access_denied`, RFC 6749 §4.1.2.1). */
  deniedErrors?: readonly string[];
}

/** The blockedReason of a connection whose grant is gone (decisions.md §12). */
export function deadGrantReason(network: Pick<SignInNetwork, "name">): string {
  return `${network.name} no longer accepts Seedcast's sign-in: reconnect ${network.name}`;
}

/** A sign-in that cannot go on; `message` is one sentence for the person (no secret in it). */
export class SignInRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SignInRefused";
  }
}
