/**
 * Mastodon by sign-in (decisions.md §12): the person types their server; Seedcast registers itself there once
 * (`POST /api/v1/apps`, https://docs.joinmastodon.org/methods/apps/#create, with the redirect URI
 * `{base_url}/dashboard/connections/callback/mastodon` and the scopes `read:accounts write:statuses write:media`) and
 * keeps that registration (table `sign_in_apps`, the client secret sealed); then OAuth's authorization code flow
 * (https://docs.joinmastodon.org/methods/oauth/), with PKCE S256 where the server says it takes it
 * (`/.well-known/oauth-authorization-server`, Mastodon ≥ 4.3). Mastodon's tokens do not expire: no refresh.
 * Any server speaking Mastodon's API (GoToSocial, Pleroma, Akkoma…) signs in the same way.
 */
import { and, eq } from "drizzle-orm";
import { signInApps } from "../../../db/tables";
import type { Deps } from "../../../deps";
import { newId } from "../../../lib/ids";
import { openJson, sealJson } from "../../../store/sealing";
import { DeliveryError } from "../../connector";
import { outboundProblem, providerFetch, providerMessage } from "../../outbound";
import { redirectUriFor } from "../../sign-in/redirect-uri";
import { type SignInApp, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "../../sign-in/network";
import { NOT_MASTODON, detectServer } from "./server";

/** `credentials.via` of a connection made by signing in (its check says "reconnect", not "paste a new token"). */
export const SIGNED_IN = "sign-in";

/** The scopes Seedcast asks for: who the account is, post statuses, upload media. */
export const MASTODON_SCOPES = ["read:accounts", "write:statuses", "write:media"] as const;
const CLIENT_NAME = "Seedcast";
const SECRET_LABEL = "sign-in:apps:client-secret:v1";
/** An address typed without a scheme ("mastodon.social") means https. */
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The server's origin from what the person typed; throws SignInRefused with what to fix. */
export function serverOrigin(deps: Pick<Deps, "config">, typed: string): string {
  const text = typed.trim();
  if (text === "") throw new SignInRefused("Enter the address of your Mastodon server, such as mastodon.social.");
  let url: URL;
  try {
    url = new URL(HAS_SCHEME.test(text) ? text : `https://${text}`);
  } catch {
    throw new SignInRefused(`"${text}" is not a server address. Enter the address of your Mastodon server, such as mastodon.social.`);
  }
  const problem = outboundProblem(deps, url.origin);
  if (problem !== null) throw new SignInRefused(`The Mastodon server address cannot be used: ${problem}`);
  return url.origin;
}

function unreachable(origin: string, error: unknown): SignInRefused {
  const why = error instanceof DeliveryError ? error.message : (error as Error).message;
  return new SignInRefused(`${new URL(origin).host} could not be reached (${why}). Check the address, or try again in a moment.`);
}

/** The server's OAuth endpoints and whether it takes PKCE; the documented paths on servers without the metadata. */
async function oauthEndpoints(deps: Pick<Deps, "config">, origin: string): Promise<{ authorize: string; token: string; pkce: boolean }> {
  const fallback = { authorize: `${origin}/oauth/authorize`, token: `${origin}/oauth/token`, pkce: false };
  const res = await providerFetch(deps, `${origin}/.well-known/oauth-authorization-server`);
  if (!res.ok) {
    await res.body?.cancel();
    return fallback;
  }
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  const authorize = typeof body?.authorization_endpoint === "string" ? body.authorization_endpoint : null;
  const token = typeof body?.token_endpoint === "string" ? body.token_endpoint : null;
  // The endpoints must be the server's own: the person typed this server, not another.
  const sameOrigin = (u: string | null) => u !== null && URL.canParse(u) && new URL(u).origin === origin;
  if (!sameOrigin(authorize) || !sameOrigin(token)) return fallback;
  const methods = Array.isArray(body?.code_challenge_methods_supported) ? body.code_challenge_methods_supported : [];
  return { authorize: authorize!, token: token!, pkce: methods.includes("S256") };
}

/** Seedcast's registration at `origin`: the one kept, else a new one (`POST /api/v1/apps`), kept from now on. */
async function registration(deps: Deps, origin: string): Promise<{ clientId: string; clientSecret: string }> {
  const redirectUri = redirectUriFor(deps, "mastodon");
  const scopes = MASTODON_SCOPES.join(" ");
  const find = async () =>
    deps.store.db
      .select()
      .from(signInApps)
      .where(and(eq(signInApps.platform, "mastodon"), eq(signInApps.server, origin), eq(signInApps.redirectUri, redirectUri), eq(signInApps.scopes, scopes)))
      .get();
  const open = (row: typeof signInApps.$inferSelect) => ({
    clientId: row.clientId,
    clientSecret: openJson<{ clientSecret: string }>(deps.instanceSecret, row.id, row.clientSecretSealed, SECRET_LABEL).clientSecret,
  });
  const kept = await find();
  if (kept) return open(kept);
  const res = await providerFetch(deps, `${origin}/api/v1/apps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: CLIENT_NAME, redirect_uris: redirectUri, scopes, website: deps.config.baseUrl }),
  });
  if (!res.ok) throw new SignInRefused(`${new URL(origin).host} would not register Seedcast as an app (${await providerMessage(res)}).`);
  const app = (await res.json().catch(() => null)) as { client_id?: unknown; client_secret?: unknown } | null;
  if (typeof app?.client_id !== "string" || typeof app.client_secret !== "string") {
    throw new SignInRefused(`${new URL(origin).host} answered the app registration without a client id and secret.`);
  }
  const id = newId();
  await deps.store.write((tx) =>
    tx
      .insert(signInApps)
      .values({
        id,
        platform: "mastodon",
        server: origin,
        redirectUri,
        scopes,
        clientId: app.client_id as string,
        clientSecretSealed: sealJson(deps.instanceSecret, id, { clientSecret: app.client_secret }, SECRET_LABEL),
        createdAt: deps.clock.now(),
      })
      .onConflictDoNothing()
      .run(),
  );
  // Two sign-ins racing at a new server: the first registration stored is the one everybody uses.
  const stored = await find();
  if (!stored) throw new SignInRefused(`The registration at ${new URL(origin).host} could not be kept; try again.`);
  return open(stored);
}

async function appAt(deps: Deps, origin: string, firstTime: boolean): Promise<SignInApp> {
  try {
    if (firstTime) {
      const facts = await detectServer(deps, origin);
      if (facts === NOT_MASTODON) {
        throw new SignInRefused(`${origin} does not answer like a Mastodon server. Enter the address of your Mastodon server, the one you sign in at (such as mastodon.social).`);
      }
    }
    const endpoints = await oauthEndpoints(deps, origin);
    const { clientId, clientSecret } = await registration(deps, origin);
    return {
      authorizationEndpoint: endpoints.authorize,
      tokenEndpoint: endpoints.token,
      clientId,
      clientSecret,
      clientAuth: "body",
      pkce: endpoints.pkce,
      scopes: MASTODON_SCOPES,
      endpoint: origin,
    };
  } catch (error) {
    if (error instanceof SignInRefused) throw error;
    throw unreachable(origin, error);
  }
}

/** The Mastodon sign-in declaration. */
export const mastodonSignIn: SignInNetwork = {
  platform: "mastodon",
  name: "Mastodon",
  app: (deps, input) => appAt(deps, serverOrigin(deps, input.server ?? ""), true),
  appOf: (deps, endpoint) => appAt(deps, new URL(endpoint).origin, false),
  async identify(deps, app: SignInApp, tokens: TokenSet): Promise<SignedInAccount> {
    const res = await providerFetch(deps, `${app.endpoint}/api/v1/accounts/verify_credentials`, {
      headers: { authorization: `Bearer ${tokens.accessToken}` },
    }).catch((error: unknown) => {
      throw unreachable(app.endpoint, error);
    });
    if (!res.ok) throw new SignInRefused(`Mastodon did not say which account signed in (${await providerMessage(res)}). Nothing was connected: try again.`);
    const body = (await res.json().catch(() => null)) as { id?: unknown; acct?: unknown; username?: unknown } | null;
    const acct = typeof body?.acct === "string" && body.acct !== "" ? body.acct : typeof body?.username === "string" ? body.username : "";
    if (typeof body?.id !== "string" || body.id === "" || acct === "") {
      throw new SignInRefused("Mastodon did not say which account signed in. Nothing was connected: try again.");
    }
    const host = new URL(app.endpoint).host;
    return { networkAccountId: body.id, label: `@${acct.includes("@") ? acct : `${acct}@${host}`}`, credentials: { via: SIGNED_IN } };
  },
};
