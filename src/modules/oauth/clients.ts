/**
 * OAuth clients: dynamic registration (RFC 7591) and lookup. Clients named by an https URL (Client ID Metadata
 * Documents) are resolved in client-metadata.ts and stored here too, so grants can refer to them.
 */
import { timingSafeEqual } from "node:crypto";
import { oauthClients } from "../../db/tables";
import type { Deps } from "../../deps";
import { newId } from "../../lib/ids";
import { loneSurrogateField, withoutControlOrFormat } from "../../lib/unicode-text";
import { OAuthError } from "./errors";
import { redirectUriProblem } from "./redirect-uris";
import { statements } from "./statements";
import { CLIENT_SECRET_PREFIX, hashSecret, isSecret, newSecret } from "./token-format";

export const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
const GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
const NAME_MAX = 200;
const MAX_REDIRECT_URIS = 20;

export type ClientRow = typeof oauthClients.$inferSelect;

/** A stored client as the flows use it. */
export interface OAuthClient {
  id: string;
  kind: ClientRow["kind"];
  name: string;
  redirectUris: string[];
  authMethod: AuthMethod;
  /** True when the client must authenticate with its secret at the token endpoint. */
  confidential: boolean;
  clientUri: string | null;
}

export function toClient(row: ClientRow): OAuthClient {
  return {
    id: row.id,
    kind: row.kind,
    // Cleaned at registration too; again here for rows stored before that (a name is shown on the consent page).
    name: withoutControlOrFormat(row.clientName),
    redirectUris: JSON.parse(row.redirectUris) as string[],
    authMethod: row.tokenEndpointAuthMethod as AuthMethod,
    confidential: row.secretHash !== null,
    clientUri: row.clientUri,
  };
}

/** The stored client row, or null. */
export async function findClientRow(deps: Pick<Deps, "store">, clientId: string): Promise<ClientRow | null> {
  if (clientId.length === 0 || clientId.length > 2000) return null;
  return (await statements(deps.store.db).clientById.get({ id: clientId })) ?? null;
}

/** Checked client metadata, common to registration and metadata documents. */
export interface CheckedMetadata {
  clientName: string;
  redirectUris: string[];
  authMethod: AuthMethod;
  grantTypes: string[];
  clientUri: string | null;
  logoUri: string | null;
  scope: string | null;
}

function optionalHttpsUrl(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw new OAuthError("invalid_client_metadata", `${field} must be a string.`);
  try {
    const url = new URL(value);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error("scheme");
  } catch {
    throw new OAuthError("invalid_client_metadata", `${field} must be an http(s) URL.`);
  }
  return value;
}

/**
 * Validates client metadata (RFC 7591 §2). `allowed` limits the token endpoint auth methods (metadata documents may
 * only be public clients). Throws OAuthError invalid_redirect_uri / invalid_client_metadata.
 */
export function checkClientMetadata(body: unknown, allowed: readonly AuthMethod[] = AUTH_METHODS): CheckedMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OAuthError("invalid_client_metadata", "The body must be a JSON object of client metadata.");
  }
  const unpaired = loneSurrogateField(body);
  if (unpaired) throw new OAuthError("invalid_client_metadata", `${unpaired.field}: ${unpaired.problem}.`);
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw new OAuthError("invalid_redirect_uri", "redirect_uris must list at least one URI.");
  if (uris.length > MAX_REDIRECT_URIS) throw new OAuthError("invalid_redirect_uri", `redirect_uris may list at most ${MAX_REDIRECT_URIS} URIs.`);
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError("invalid_redirect_uri", `redirect_uris: ${problem}.`);
  }
  // RFC 7591 §2: the default is client_secret_basic.
  const method = m.token_endpoint_auth_method ?? "client_secret_basic";
  if (typeof method !== "string" || !(allowed as readonly string[]).includes(method)) {
    throw new OAuthError("invalid_client_metadata", `token_endpoint_auth_method must be one of ${allowed.join(", ")}.`);
  }
  // RFC 7591 §3.2.1: the server may register less than asked. Grant and response types Seedcast does not offer (e.g.
  // a device-code grant some clients list as a fallback) are left out of the registration rather than refusing it.
  const requestedGrants = m.grant_types ?? ["authorization_code"];
  if (!Array.isArray(requestedGrants) || requestedGrants.some((g) => typeof g !== "string")) {
    throw new OAuthError("invalid_client_metadata", "grant_types must be an array of strings.");
  }
  if (!requestedGrants.includes("authorization_code")) {
    throw new OAuthError("invalid_client_metadata", "grant_types must include authorization_code.");
  }
  const grantTypes = GRANT_TYPES.filter((g) => requestedGrants.includes(g));
  const responseTypes = m.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || !responseTypes.includes("code")) {
    throw new OAuthError("invalid_client_metadata", "response_types must include code.");
  }
  if (m.client_name !== undefined && m.client_name !== null && typeof m.client_name !== "string") {
    throw new OAuthError("invalid_client_metadata", `client_name must be a string of at most ${NAME_MAX} characters.`);
  }
  // Invisible control and format characters (Cc, Cf: a right-to-left override) could make the name on the consent
  // page read as something else: they are dropped.
  const name = withoutControlOrFormat(m.client_name ?? "").trim();
  if ([...name].length > NAME_MAX) {
    throw new OAuthError("invalid_client_metadata", `client_name must be a string of at most ${NAME_MAX} characters.`);
  }
  // NB: a registered `scope` is kept for the record but grants nothing: the person's consent and role decide. Other
  // servers' scope words in a client's metadata (e.g. a metadata document written for several servers) are no reason
  // to refuse the client.
  const scope = m.scope;
  if (scope !== undefined && scope !== null && (typeof scope !== "string" || scope.length > 1000)) {
    throw new OAuthError("invalid_client_metadata", "scope must be a space-separated string.");
  }
  return {
    clientName: name,
    redirectUris: uris as string[],
    authMethod: method as AuthMethod,
    grantTypes: grantTypes as string[],
    clientUri: optionalHttpsUrl(m.client_uri, "client_uri"),
    logoUri: optionalHttpsUrl(m.logo_uri, "logo_uri"),
    scope: typeof scope === "string" ? scope : null,
  };
}

/** The answer to a registration (RFC 7591 §3.2.1). `client_secret` only for confidential clients, shown once. */
export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: AuthMethod;
  grant_types: string[];
  response_types: string[];
  client_uri?: string;
  logo_uri?: string;
  scope?: string;
}

/** Registers a client (RFC 7591). Open: anyone may register; the HTTP layer rate-limits it. */
export async function registerClient(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, body: unknown): Promise<RegisteredClient> {
  const meta = checkClientMetadata(body);
  const now = deps.clock.now();
  const id = newId();
  const secret = meta.authMethod === "none" ? null : newSecret(CLIENT_SECRET_PREFIX);
  await deps.store.write(async (tx) => {
    await tx
      .insert(oauthClients)
      .values({
        id,
        kind: "registered",
        clientName: meta.clientName,
        redirectUris: JSON.stringify(meta.redirectUris),
        tokenEndpointAuthMethod: meta.authMethod,
        secretHash: secret === null ? null : hashSecret(deps, secret),
        clientUri: meta.clientUri,
        logoUri: meta.logoUri,
        grantTypes: JSON.stringify(meta.grantTypes),
        scope: meta.scope,
        createdAt: now,
      })
      .run();
  });
  return {
    client_id: id,
    client_id_issued_at: Math.floor(now / 1000),
    ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
    client_name: meta.clientName,
    redirect_uris: meta.redirectUris,
    token_endpoint_auth_method: meta.authMethod,
    grant_types: meta.grantTypes,
    response_types: ["code"],
    ...(meta.clientUri ? { client_uri: meta.clientUri } : {}),
    ...(meta.logoUri ? { logo_uri: meta.logoUri } : {}),
    ...(meta.scope ? { scope: meta.scope } : {}),
  };
}

/** True when `secret` is the client's (constant-time compare of the HMACs). */
export function clientSecretMatches(deps: Pick<Deps, "instanceSecret">, row: ClientRow, secret: string): boolean {
  if (row.secretHash === null || !isSecret(CLIENT_SECRET_PREFIX, secret)) return false;
  const presented = Buffer.from(hashSecret(deps, secret));
  const stored = Buffer.from(row.secretHash);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** A person-facing name: the registered name, else the host the client redirects to. */
export function displayName(client: OAuthClient): string {
  if (client.name) return client.name;
  if (client.kind === "metadata_document") return new URL(client.id).host;
  try {
    return new URL(client.redirectUris[0] ?? "").host || "An unnamed app";
  } catch {
    return "An unnamed app";
  }
}
