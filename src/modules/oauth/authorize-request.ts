/**
 * Validating an authorization request (OAuth 2.1 §4.1.1, RFC 7636, RFC 8707, decisions.md §9). The client and its
 * redirect URI are checked first: while either is in doubt the answer is an error page and nothing is redirected
 * (OAuth 2.1 §4.1.2.1). Once the redirect URI is known good, every other problem goes back to the client as an error
 * redirect carrying `state` and `iss` (RFC 9207).
 */
import type { Deps } from "../../deps";
import { type Scope, SCOPES, isScope } from "../auth/scopes";
import { ClientResolutionError, resolveClient } from "./client-metadata";
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
}

/** The outcome of validation. */
export type Validated =
  | { kind: "ok"; request: AuthorizationRequest }
  | { kind: "page"; status: number; message: string }
  | { kind: "redirect"; location: string };

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

/** Validates an authorization request. */
export async function validateAuthorization(deps: Deps, params: RequestParams | "repeated"): Promise<Validated> {
  if (params === "repeated") return { kind: "page", status: 400, message: "A parameter of the request was sent more than once." };
  const clientId = params.client_id;
  if (!clientId) return { kind: "page", status: 400, message: "The app did not say who it is (client_id is missing)." };
  let client: OAuthClient | null;
  try {
    client = await resolveClient(deps, clientId);
  } catch (error) {
    if (error instanceof ClientResolutionError) return { kind: "page", status: 400, message: error.message };
    throw error;
  }
  if (!client) return { kind: "page", status: 400, message: "This app is not registered with Seedcast (unknown client_id)." };
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined) {
    if (client.redirectUris.length !== 1) return { kind: "page", status: 400, message: "The request did not say where to return (redirect_uri is missing)." };
    redirectUri = client.redirectUris[0] as string;
  } else if (!client.redirectUris.includes(redirectUri)) {
    return { kind: "page", status: 400, message: "The return address (redirect_uri) is not one this app registered, so Seedcast will not send you there." };
  }
  const state = params.state ?? null;
  const fail = (error: string, description: string): Validated => ({
    kind: "redirect",
    location: errorRedirect(deps, redirectUri, state, error, description),
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
    request: { client, redirectUri, state, codeChallenge: params.code_challenge, requested, resource, params },
  };
}
