/**
 * The one connect flow for every network that signs in (decisions.md §12):
 * - `startSignIn`: the network's app (Mastodon registers Seedcast at the typed server once), a `state` stored in the
 *   database (state.ts), PKCE S256 where the network takes it; answers the authorization URL for the 303.
 * - `finishSignIn`: the callback. The state is taken first (once, by the session and account that started it, within
 *   10 minutes); then a denied consent, a missing code, or a refused code exchange each end with one sentence and
 *   nothing stored. Otherwise the network says who signed in, the connector checks the new credentials, and one
 *   write stores them: the same network account in the same Seedcast account **reconnects** (the connection keeps
 *   its id, so pending posts keep it as a target; its credentials and check are replaced), any other is added.
 */
import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { forUpdate } from "../../db/portable-sql";
import { accounts, connections } from "../../db/tables";
import type { Deps } from "../../deps";
import { newId } from "../../lib/ids";
import { type ConnectionMeta, type ConnectionRow, type OpenConnection, openConnection } from "../../store/connections";
import { sealJson } from "../../store/sealing";
import { routedUrl } from "../outbound";
import { connectorFor } from "../registry";
import { type SignInApp, type SignInChoice, type SignInNetwork, SignInRefused, type SignedInAccount, type TokenSet } from "./network";
import { randomVerifier, s256Challenge } from "./pkce";
import { type SignInOwner, createSignInState, takeSignInState } from "./state";
import { redirectUriFor } from "./redirect-uri";
import { requestToken } from "./token-endpoint";


/** Starts a sign-in; answers the network's authorization URL. Throws SignInRefused with a sentence. */
export async function startSignIn(
  deps: Deps,
  network: SignInNetwork,
  owner: Omit<SignInOwner, "platform">,
  input: Record<string, string>,
  reconnectId: string | null = null,
): Promise<string> {
  const app = await network.app(deps, input);
  const verifier = app.pkce ? randomVerifier() : null;
  const redirectUri = redirectUriFor(deps, network.platform);
  const state = await createSignInState(deps, { ...owner, platform: network.platform }, { verifier, input, reconnectId, redirectUri });
  const url = new URL(app.authorizationEndpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", app.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("scope", app.scopes.join(app.scopeSeparator ?? " "));
  url.searchParams.set("state", state);
  if (verifier !== null) {
    url.searchParams.set("code_challenge", s256Challenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
  }
  for (const [k, v] of Object.entries(app.extraAuthorizationParams ?? {})) url.searchParams.set(k, v);
  // The browser goes where PLATFORM_ORIGIN_OVERRIDES sends this network's host (tests, private mirrors).
  return routedUrl(deps, url.toString());
}

/** A finished sign-in. */
export interface SignInOutcome {
  kind?: "connected";
  connectionId: string;
  label: string;
  /** True when an existing connection was reconnected (same id). */
  reconnected: boolean;
  readyToPost: boolean;
  blockedReason: string | null;
}

/** Sentences for the person, one per way a callback ends without a connection. */
export const SIGN_IN_WORDS = {
  badState: (name: string) =>
    `That ${name} sign-in link is no longer valid (it was used already, is older than 10 minutes, or was started elsewhere). Nothing was connected: press Connect ${name} again.`,
  denied: (name: string) => `You did not allow Seedcast on ${name}, so nothing was connected. Press Connect ${name} again if you change your mind.`,
  networkError: (name: string, words: string) => `${name} did not finish the sign-in (${words}). Nothing was connected: press Connect ${name} again.`,
  refused: (name: string, words: string) => `${name} refused to finish the sign-in (${words}). Nothing was connected: press Connect ${name} again.`,
  nothingToChoose: (name: string, noun: string) => `Your ${name} account has no ${noun}s Seedcast can post to yet. Create one on ${name}, then press Connect ${name} again.`,
  noneChosen: (name: string) => `Nothing was ticked, so nothing was connected. Press Connect ${name} again and tick at least one.`,
  unreachable: (name: string) => `${name} could not be reached to finish the sign-in. Nothing was connected: try again in a moment.`,
} as const;

/**
 * A sign-in that waits for the person to choose what to connect (decisions.md §12: Facebook Pages, Pinterest boards).
 */
export interface SignInChooser {
  kind: "choose";
  /** The chooser's own single-use token (a sign-in state of its own, 10 minutes). */
  chooser: string;
  /** What may be ticked: each account's network id and label. */
  accounts: { id: string; label: string }[];
}

/** The platform name a chooser's state is kept under (apart from the network's sign-in states). */
export function chooserPlatform(platform: string): string {
  return `${platform}:choose`;
}

/**
 * Finishes a sign-in from the callback's query. Throws SignInRefused with one sentence; then nothing was stored.
 * A network with `choices` answers a chooser instead (nothing stored yet: finishChoice stores what is ticked).
 */
export async function finishSignIn(deps: Deps, network: SignInNetwork, owner: Omit<SignInOwner, "platform">, query: URLSearchParams): Promise<SignInOutcome | SignInChooser> {
  const name = network.name;
  const pending = await takeSignInState(deps, { ...owner, platform: network.platform }, query.get("state") ?? "");
  // A chooser's state is kept under its own platform name: it is never a callback's.
  if (!pending) throw new SignInRefused(SIGN_IN_WORDS.badState(name));
  const error = query.get("error");
  if (error !== null && (network.deniedErrors ?? ["access_denied"]).includes(error)) throw new SignInRefused(SIGN_IN_WORDS.denied(name));
  if (error !== null) throw new SignInRefused(SIGN_IN_WORDS.networkError(name, wordsOf(error, query.get("error_description"))));
  const code = query.get("code");
  if (!code) throw new SignInRefused(SIGN_IN_WORDS.networkError(name, "no authorization code came back"));
  const app = await network.app(deps, pending.input);
  const params: Record<string, string> = { grant_type: "authorization_code", code, redirect_uri: pending.redirectUri };
  if (pending.verifier !== null) params.code_verifier = pending.verifier;
  const answer = network.exchangeCode ? await network.exchangeCode(deps, app, params) : await requestToken(deps, app, params, network.deadGrantErrors);
  if (!answer.ok) {
    if (answer.kind === "transient") throw new SignInRefused(SIGN_IN_WORDS.unreachable(name));
    throw new SignInRefused(SIGN_IN_WORDS.refused(name, answer.words));
  }
  const who = await network.identify(deps, app, answer.tokens);
  if (!network.choices) return storeSignedIn(deps, network, owner.accountId, app, answer.tokens, who, pending.reconnectId);
  const items = await network.choices(deps, app, answer.tokens, who);
  if (items.length === 0) throw new SignInRefused(SIGN_IN_WORDS.nothingToChoose(name, nounOf(network)));
  // The choices and their tokens wait, sealed, in a chooser state of their own bound to the same session.
  const chooser = await createSignInState(
    deps,
    { ...owner, platform: chooserPlatform(network.platform) },
    { verifier: null, input: pending.input, reconnectId: pending.reconnectId, redirectUri: pending.redirectUri, choices: { endpoint: app.endpoint, items } },
  );
  return { kind: "choose", chooser, accounts: items.map((c) => ({ id: c.account.networkAccountId, label: c.account.label })) };
}

function nounOf(network: SignInNetwork): string {
  return network.choiceNoun ?? "account";
}

/**
 * Connects the accounts ticked in a chooser (`chosen`: their network ids), each as its own connection (one written
 * per account; an account connected before reconnects, keeping its id), each with the tokens of its choice. Choices
 * that carry the same tokens (Pinterest boards: the person's) share one `grant`, so a refresh of one renews them all
 * (refresh.ts). The chooser is taken once. Throws SignInRefused when it is no longer valid or nothing was ticked
 * (then the chooser is spent and nothing was stored).
 */
export async function finishChoice(deps: Deps, network: SignInNetwork, owner: Omit<SignInOwner, "platform">, chooser: string, chosen: readonly string[]): Promise<SignInOutcome[]> {
  const pending = await takeSignInState(deps, { ...owner, platform: chooserPlatform(network.platform) }, chooser);
  if (!pending?.choices) throw new SignInRefused(SIGN_IN_WORDS.badState(network.name));
  if (chosen.length === 0) throw new SignInRefused(SIGN_IN_WORDS.noneChosen(network.name));
  const picked = pending.choices.items.filter((c) => chosen.includes(c.account.networkAccountId));
  if (picked.length === 0) throw new SignInRefused(`None of the ticked ${nounOf(network)}s came from ${network.name}. Nothing was connected.`);
  const app = { ...(await network.app(deps, pending.input)), endpoint: pending.choices.endpoint };
  const grants = sharedGrants(picked);
  const outcomes: SignInOutcome[] = [];
  for (const choice of picked) {
    const grant = grants.get(choice.tokens.accessToken);
    const who: SignedInAccount = grant === undefined ? choice.account : { ...choice.account, credentials: { ...choice.account.credentials, grant } };
    // A reconnect names one connection: it applies when one choice was ticked; otherwise each is matched by its id.
    outcomes.push(await storeSignedIn(deps, network, owner.accountId, app, choice.tokens, who, picked.length === 1 ? pending.reconnectId : null));
  }
  return outcomes;
}

/** A new grant name per access token that several picked choices share (their connections then refresh together). */
function sharedGrants(picked: readonly SignInChoice[]): Map<string, string> {
  const counts = new Map<string, number>();
  for (const c of picked) counts.set(c.tokens.accessToken, (counts.get(c.tokens.accessToken) ?? 0) + 1);
  const grants = new Map<string, string>();
  for (const [token, count] of counts) if (count > 1) grants.set(token, randomBytes(16).toString("base64url"));
  return grants;
}

/** An error code and description from the network, clipped: they end up in a sentence. */
function wordsOf(error: string, description: string | null): string {
  const text = description ? `${error}: ${description}` : error;
  return text.replace(/\s+/g, " ").slice(0, 200);
}

function sameNetworkAccount(row: ConnectionRow, endpoint: string, who: SignedInAccount): boolean {
  if (row.endpoint !== endpoint) return false;
  const meta = JSON.parse(row.meta) as ConnectionMeta;
  if (meta.providerAccountId !== undefined) return meta.providerAccountId === who.networkAccountId;
  return row.label.toLowerCase() === who.label.toLowerCase();
}

/**
 * Stores a signed-in account: reconnects its existing connection (same id) or adds one. The connector checks the
 * credentials first; the check's outcome is stored with them in the same write.
 */
async function storeSignedIn(
  deps: Deps,
  network: SignInNetwork,
  accountId: string,
  app: SignInApp,
  tokens: TokenSet,
  who: SignedInAccount,
  reconnectId: string | null,
): Promise<SignInOutcome> {
  const rows = await deps.store.db
    .select()
    .from(connections)
    .where(and(eq(connections.accountId, accountId), eq(connections.platform, network.platform)))
    .all();
  let existing = rows.find((r) => sameNetworkAccount(r, app.endpoint, who)) ?? null;
  if (reconnectId !== null) {
    const chosen = rows.find((r) => r.id === reconnectId);
    if (!chosen) throw new SignInRefused(`The connection to reconnect was removed meanwhile. Nothing was changed: press Connect ${network.name} to add it again.`);
    if (existing && existing.id !== chosen.id) {
      throw new SignInRefused(`You signed in as ${who.label}, which is already connected here separately. Nothing was changed.`);
    }
    if (!existing && (JSON.parse(chosen.meta) as ConnectionMeta).providerAccountId !== undefined) {
      throw new SignInRefused(`You signed in as ${who.label}, but this connection is ${chosen.label}. Nothing was changed: sign in as ${chosen.label}, or connect ${who.label} as a new connection.`);
    }
    existing = chosen;
  }
  const previous = existing ? openConnection(deps, existing) : null;
  const credentials: Record<string, string> = { ...who.credentials, token: tokens.accessToken };
  // A sign-in whose answer carries no refresh token keeps the one stored (some networks send it only the first time).
  const refreshToken = tokens.refreshToken ?? previous?.credentials.refreshToken;
  if (refreshToken) credentials.refreshToken = refreshToken;
  const id = existing?.id ?? newId();
  const meta: ConnectionMeta = { ...(previous?.meta ?? {}), ...who.meta, providerAccountId: who.networkAccountId };
  const open: OpenConnection = { id, accountId, platform: network.platform, label: who.label, endpoint: app.endpoint, credentials, session: null, meta };
  const result = await connectorFor(network.platform).check(deps, open);
  const now = deps.clock.now();
  const values = {
    label: result.label ?? who.label,
    endpoint: app.endpoint,
    credentialsSealed: sealJson(deps.instanceSecret, id, credentials),
    sessionSealed: result.session ? sealJson(deps.instanceSecret, id, result.session) : null,
    meta: JSON.stringify({ ...meta, ...(result.meta ?? {}), providerAccountId: who.networkAccountId }),
    tokenExpiresAt: tokens.expiresAt,
    refreshLeaseToken: null,
    refreshLeaseExpiresAt: null,
    readyToPost: result.ready,
    blockedReason: result.ready ? null : (result.blockedReason ?? "The connection needs attention."),
    checkedAt: now,
    updatedAt: now,
  };
  const outcome = await deps.store.write(async (tx) => {
    // The account row locked (PostgreSQL; SQLite has one writer): two callbacks for one network account cannot both add it.
    await forUpdate(deps.store.dialect, tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId))).all();
    const current = await tx.select().from(connections).where(and(eq(connections.accountId, accountId), eq(connections.platform, network.platform))).all();
    const target = existing ? current.find((r) => r.id === existing.id) : current.find((r) => sameNetworkAccount(r, app.endpoint, who));
    if (target) {
      const sealedFor = target.id === id ? values : { ...values, credentialsSealed: sealJson(deps.instanceSecret, target.id, credentials), sessionSealed: null };
      await tx.update(connections).set(sealedFor).where(eq(connections.id, target.id)).run();
      return { connectionId: target.id, reconnected: true };
    }
    if (existing) throw new SignInRefused(`The connection to reconnect was removed meanwhile. Nothing was changed: press Connect ${network.name} to add it again.`);
    await tx.insert(connections).values({ id, accountId, platform: network.platform, createdAt: now, ...values }).run();
    return { connectionId: id, reconnected: false };
  });
  return { ...outcome, label: values.label, readyToPost: values.readyToPost, blockedReason: values.blockedReason };
}
