/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization 2026-07-28): a
 * client_id that is an https URL names a JSON document describing the client. It is fetched through safe-fetch (the
 * ingest's SSRF rules: public addresses only unless ALLOW_PRIVATE_HOSTS names the host, https on 443, size and time
 * caps, no redirects), must name itself as `client_id`, may only describe a public client, and is kept for at most
 * 24 hours before it is fetched again.
 */
import { eq } from "drizzle-orm";
import { oauthClients } from "../../db/tables";
import type { Deps } from "../../deps";
import { type Resolver, SafeFetchError, safeFetch } from "../../lib/safe-fetch";
import { type OAuthClient, checkClientMetadata, findClientRow, toClient } from "./clients";
import { OAuthError } from "./errors";

/** A fetched document is trusted for at most this long. */
export const METADATA_CACHE_MS = 24 * 60 * 60 * 1000;
const MAX_DOCUMENT_BYTES = 64 * 1024;
const FETCH_TIMEOUT_MS = 5_000;

/** Outbound overrides for one deps: tests pass a throwaway CA and a resolver. Production sets none. */
export interface MetadataFetchOverrides {
  extraCa?: string;
  resolver?: Resolver;
}

const overrides = new WeakMap<object, MetadataFetchOverrides>();

/** Sets the outbound overrides used to fetch metadata documents for this deps (tests only; the server never calls it). */
export function configureClientMetadataFetch(deps: Deps, value: MetadataFetchOverrides): void {
  overrides.set(deps, value);
}

/** Why a client could not be resolved, in words for the error page. */
export class ClientResolutionError extends Error {
  override name = "ClientResolutionError";
}

/** True when `clientId` is a URL-form client id (the metadata-document kind). */
export function isMetadataDocumentId(clientId: string): boolean {
  return clientId.startsWith("https://") || clientId.startsWith("http://");
}

function checkDocumentUrl(clientId: string): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientResolutionError("The client_id is not a valid URL.");
  }
  if (url.protocol !== "https:") throw new ClientResolutionError("A URL client_id must use https.");
  if (url.username || url.password || url.hash || clientId.includes("#")) {
    throw new ClientResolutionError("A URL client_id must not contain a user name, password or fragment.");
  }
  if (url.pathname === "/" || url.pathname === "") throw new ClientResolutionError("A URL client_id must have a path.");
  if (url.pathname.split("/").some((s) => s === "." || s === "..")) {
    throw new ClientResolutionError("A URL client_id must not contain . or .. path segments.");
  }
  if (url.href !== clientId) throw new ClientResolutionError("A URL client_id must be in its normal form.");
  return url;
}

async function fetchDocument(deps: Deps, url: URL): Promise<unknown> {
  const extra = overrides.get(deps) ?? {};
  let answer: Awaited<ReturnType<typeof safeFetch>>;
  try {
    answer = await safeFetch(url, {
      headers: { accept: "application/json" },
      maxBytes: MAX_DOCUMENT_BYTES,
      timeoutMs: FETCH_TIMEOUT_MS,
      maxRedirects: 0,
      allowPrivateHosts: deps.config.allowPrivateHosts,
      ...(extra.extraCa ? { extraCa: extra.extraCa } : {}),
      ...(extra.resolver ? { resolver: extra.resolver } : {}),
    });
  } catch (error) {
    if (error instanceof SafeFetchError) {
      throw new ClientResolutionError(`The app's metadata document could not be fetched: ${error.message}`);
    }
    throw error;
  }
  if (answer.status !== 200) throw new ClientResolutionError(`The app's metadata document answered ${answer.status}.`);
  try {
    return JSON.parse(new TextDecoder().decode(answer.body)) as unknown;
  } catch {
    throw new ClientResolutionError("The app's metadata document is not valid JSON.");
  }
}

/** Fetches, checks and stores (or refreshes) the client a metadata document describes. */
async function refreshDocumentClient(deps: Deps, clientId: string): Promise<OAuthClient> {
  const url = checkDocumentUrl(clientId);
  const doc = await fetchDocument(deps, url);
  if (typeof doc !== "object" || doc === null || (doc as Record<string, unknown>).client_id !== clientId) {
    throw new ClientResolutionError("The app's metadata document does not name itself as its client_id.");
  }
  const record = doc as Record<string, unknown>;
  let meta: ReturnType<typeof checkClientMetadata>;
  try {
    meta = checkClientMetadata({ ...record, token_endpoint_auth_method: record.token_endpoint_auth_method ?? "none" }, ["none"]);
  } catch (error) {
    if (error instanceof OAuthError) throw new ClientResolutionError(`The app's metadata document is not acceptable: ${error.message}`);
    throw error;
  }
  const now = deps.clock.now();
  const values = {
    kind: "metadata_document" as const,
    clientName: meta.clientName,
    redirectUris: JSON.stringify(meta.redirectUris),
    tokenEndpointAuthMethod: meta.authMethod,
    secretHash: null,
    clientUri: meta.clientUri,
    logoUri: meta.logoUri,
    grantTypes: JSON.stringify(meta.grantTypes),
    scope: meta.scope,
    fetchedAt: now,
  };
  await deps.store.write(async (tx) => {
    await tx
      .insert(oauthClients)
      .values({ id: clientId, createdAt: now, ...values })
      .onConflictDoUpdate({ target: oauthClients.id, set: values })
      .run();
  });
  const row = await findClientRow(deps, clientId);
  if (!row) throw new ClientResolutionError("The app could not be stored.");
  return toClient(row);
}

/**
 * The client a client_id names, for the authorization endpoint: a registered client, or a metadata document (from
 * the store while younger than 24 h, else fetched). Null for an unknown registered id; ClientResolutionError when a
 * document cannot be used.
 */
export async function resolveClient(deps: Deps, clientId: string): Promise<OAuthClient | null> {
  if (isMetadataDocumentId(clientId)) {
    const row = await findClientRow(deps, clientId);
    if (row && row.kind === "metadata_document" && row.fetchedAt !== null && deps.clock.now() - row.fetchedAt < METADATA_CACHE_MS) {
      return toClient(row);
    }
    return refreshDocumentClient(deps, clientId);
  }
  const row = await findClientRow(deps, clientId);
  return row && row.kind === "registered" ? toClient(row) : null;
}
