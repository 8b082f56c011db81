/**
 * Validating an authorization request (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707, decisions.md §9). The client and its
 * redirect URI are checked first. Every problem found before the person has seen the consent page is answered with
 * an error page, never a redirect: every client here registered itself (RFC 7591) or is a metadata document anyone can
 * publish, so its redirect URI proves nothing, and redirecting errors to it would make this endpoint an open
 * redirector (RFC 9700 §4.11.2). Only the person's own decision (Deny) goes back to the client, with `state` and `iss`
 * (RFC 9207).
 */
import type { Deps } from "../../deps";
import { type Scope, SCOPES, isScope } from "../../auth/scopes";
import { ClientResolutionError, type FetchedDocument, resolveClient } from "./client-metadata";
import type { OAuthClient } from "./clients";
import { mcpResource } from "./service";

const CHALLENGE_RE = /^[A-Za-z0-9\-_]{43}$/;
/** Parameters of the authorization request, as the consent form carries them back. */
export const REQUEST_PARAMS = [
  "response_type",
  "client_id",
  "redirect_uri",
  "state",
  "scope",
  "code_challenge",
  "code_challenge_method",
  "resource",
] as const;

export type RequestParams = Partial<Record<(typeof REQUEST_PARAMS)[number], string>>;

/** A request that passed every check. */
export interface AuthorizationRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  /** The groups asked for; null when `scope` was absent (= every group the role allows). */
  requested: Scope[] | null;
  resource: string | null;
  params: RequestParams;
  /** A metadata document fetched for this request, stored once the person allows; null when the client is stored. */
  fetched: FetchedDocument | null;
}

/** The outcome of validation: the request, or the error page to show (with Retry-After when rate-limited). */
export type Validated =
  | { kind: "ok"; request: AuthorizationRequest }
  | { kind: "page"; status: number; message: string; retryAfterSeconds?: number };

/** `redirectUri` with `params` appended to its query (an existing query is kept). */
export function withQuery(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value);
  return url.href;
}

/** The error redirect of RFC 6749 §4.1.2.1, with `iss` (RFC 9207). */
export function errorRedirect(deps: Pick<Deps, "config">, redirectUri: string, state: string | null, error: string, description: string): string {
  return withQuery(redirectUri, { error, error_description: description, state, iss: deps.config.baseUrl });
}

/** Reads the parameters, refusing repeats (RFC 6749 §3.1). */
export function readParams(source: URLSearchParams | ((name: string) => string[])): RequestParams | "repeated" {
  const all = typeof source === "function" ? source : (name: string) => source.getAll(name);
  const out: RequestParams = {};
  for (const name of REQUEST_PARAMS) {
    const values = all(name);
    if (values.length > 1) return "repeated";
    if (values.length === 1 && values[0] !== "") out[name] = values[0];
  }
  return out;
}

/** Validates an authorization request; `address` is the client address (metadata documents are fetched per address). */
export async function validateAuthorization(deps: Deps, params: RequestParams | "repeated", address: string): Promise<Validated> {
  if (params === "repeated") return { kind: "page", status: 400, message: "A parameter of the request was sent more than once." };
  const clientId = params.client_id;
  if (!clientId) return { kind: "page", status: 400, message: "The app did not say who it is (client_id is missing)." };
  let resolved: Awaited<ReturnType<typeof resolveClient>>;
  try {
    resolved = await resolveClient(deps, clientId, address);
  } catch (error) {
    if (!(error instanceof ClientResolutionError)) throw error;
    const wait = error.retryAfterSeconds === null ? {} : { retryAfterSeconds: error.retryAfterSeconds };
    return { kind: "page", status: error.status, message: error.message, ...wait };
  }
  if (!resolved) return { kind: "page", status: 400, message: "This app is not registered with Seedcast (unknown client_id)." };
  const { client, fetched } = resolved;
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined) {
    if (client.redirectUris.length !== 1) return { kind: "page", status: 400, message: "The request did not say where to return (redirect_uri is missing)." };
    redirectUri = client.redirectUris[0] as string;
  } else if (!client.redirectUris.includes(redirectUri)) {
    return { kind: "page", status: 400, message: "The return address (redirect_uri) is not one this app registered, so Seedcast will not send you there." };
  }
  const state = params.state ?? null;
  const fail = (error: string, description: string): Validated => ({
    kind: "page",
    status: 400,
    message: `The app's request cannot be accepted (${error}): ${description}`,
  });
  if (params.response_type !== "code") return fail("unsupported_response_type", "response_type must be code.");
  if (!params.code_challenge) return fail("invalid_request", "code_challenge is required (PKCE with S256).");
  if (params.code_challenge_method !== "S256") return fail("invalid_request", "code_challenge_method must be S256; plain is not accepted.");
  if (!CHALLENGE_RE.test(params.code_challenge)) return fail("invalid_request", "code_challenge must be 43 base64url characters (S256).");
  let requested: Scope[] | null = null;
  if (params.scope !== undefined) {
    const asked = params.scope.split(" ").filter(Boolean);
    const unknown = asked.filter((s) => !isScope(s));
    if (unknown.length > 0) return fail("invalid_scope", `Unknown scope ${unknown.join(", ")}; use ${SCOPES.join(", ")}.`);
    requested = SCOPES.filter((s) => asked.includes(s));
  }
  const resource = params.resource ?? null;
  if (resource !== null && resource !== mcpResource(deps)) return fail("invalid_target", `resource must be ${mcpResource(deps)}.`);
  return {
    kind: "ok",
    request: { client, redirectUri, state, codeChallenge: params.code_challenge, requested, resource, params, fetched },
  };
}
