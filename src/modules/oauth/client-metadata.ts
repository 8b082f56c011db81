/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP authorization 2026-07-28): a
 * client_id that is an https URL names a JSON document describing the client. It is fetched through safe-fetch (the
 * ingest's SSRF rules: public addresses only unless ALLOW_PRIVATE_HOSTS names the host, https on 443, size and time
 * caps, no redirects), must name itself as `client_id`, may only describe a public client, and is kept for at most
 * 24 hours before it is fetched again.
 *
 * Anyone can send a browser (or a script) to /oauth/authorize, signed in or not, so a document is fetched only under
 * a per-address rate limit (shared by every replica, http/rate-limit.ts), and its client is stored only once a person
 * consents (decisions.md §10). Until then the checked document is kept in this process's memory for an hour (at most
 * PENDING_MAX of them), so the same person's login and consent page do not fetch it again.
 */
import { oauthClients } from "../../db/tables";
import type { Deps } from "../../deps";
import { type Limiter, createRateLimiter } from "../../http/rate-limit";
import { type Resolver, SafeFetchError, safeFetch } from "../../lib/safe-fetch";
import { type CheckedMetadata, type OAuthClient, checkClientMetadata, findClientRow, toClient } from "./clients";
import { OAuthError } from "./errors";

/** A fetched document is trusted for at most this long. */
export const METADATA_CACHE_MS = 24 * 60 * 60 * 1000;
/** Documents one client address may have fetched per minute (bursts up to the same number). */
export const METADATA_FETCHES_PER_MINUTE = 10;
/** How long a fetched document waits in memory for the person's consent. */
const PENDING_MS = 60 * 60 * 1000;
/** Fetched documents kept in memory at most; the oldest goes first. */
const PENDING_MAX = 1000;
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

/** Why a client could not be resolved, in words for the error page; 429 with the seconds to wait when rate-limited. */
export class ClientResolutionError extends Error {
  override name = "ClientResolutionError";

  constructor(
    message: string,
    readonly status = 400,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** A metadata document fetched and checked but not stored: its client is stored when a person consents. */
export interface FetchedDocument {
  clientId: string;
  meta: CheckedMetadata;
  fetchedAt: number;
}

/** The client a client_id names, and the fetched document to store at consent (null when it is stored already). */
export interface ResolvedClient {
  client: OAuthClient;
  fetched: FetchedDocument | null;
}

const fetchLimiters = new WeakMap<object, Limiter>();
const pending = new WeakMap<object, Map<string, FetchedDocument>>();

function fetchLimiter(deps: Deps): Limiter {
  let limiter = fetchLimiters.get(deps);
  if (!limiter) {
    limiter = createRateLimiter(deps, "client-metadata", METADATA_FETCHES_PER_MINUTE);
    fetchLimiters.set(deps, limiter);
  }
  return limiter;
}

function pendingOf(deps: Deps): Map<string, FetchedDocument> {
  let map = pending.get(deps);
  if (!map) {
    map = new Map();
    pending.set(deps, map);
  }
  return map;
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

/** Fetches and checks the document `clientId` names. */
async function fetchDocumentClient(deps: Deps, clientId: string, url: URL): Promise<FetchedDocument> {
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
  return { clientId, meta, fetchedAt: deps.clock.now() };
}

/** The client a fetched document describes, as the flows use it. */
function documentClient(doc: FetchedDocument): OAuthClient {
  const { meta } = doc;
  return {
    id: doc.clientId,
    kind: "metadata_document",
    name: meta.clientName,
    redirectUris: meta.redirectUris,
    authMethod: meta.authMethod,
    confidential: false,
    clientUri: meta.clientUri,
  };
}

/** A document fetched for this client_id less than PENDING_MS ago, or null. */
function pendingDocument(deps: Deps, clientId: string): FetchedDocument | null {
  const map = pendingOf(deps);
  const doc = map.get(clientId);
  if (!doc) return null;
  if (deps.clock.now() - doc.fetchedAt < PENDING_MS) return doc;
  map.delete(clientId);
  return null;
}

function keepPending(deps: Deps, doc: FetchedDocument): void {
  const map = pendingOf(deps);
  map.delete(doc.clientId);
  if (map.size >= PENDING_MAX) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
  map.set(doc.clientId, doc);
}

/**
 * The client a client_id names, for the authorization endpoint: a registered client, or a metadata document (from
 * the store while younger than 24 h, else from memory while younger than an hour, else fetched, when `address` has a
 * fetch left this minute). Null for an unknown registered id; ClientResolutionError when a document cannot be used
 * (status 429 when the address has fetched too many). Nothing is stored: storeFetchedClient does that at consent.
 */
export async function resolveClient(deps: Deps, clientId: string, address: string): Promise<ResolvedClient | null> {
  const row = await findClientRow(deps, clientId);
  if (!isMetadataDocumentId(clientId)) return row && row.kind === "registered" ? { client: toClient(row), fetched: null } : null;
  if (row && row.kind === "metadata_document" && row.fetchedAt !== null && deps.clock.now() - row.fetchedAt < METADATA_CACHE_MS) {
    return { client: toClient(row), fetched: null };
  }
  const kept = pendingDocument(deps, clientId);
  if (kept) return { client: documentClient(kept), fetched: kept };
  const url = checkDocumentUrl(clientId);
  const wait = await fetchLimiter(deps).take(address);
  if (wait > 0) {
    throw new ClientResolutionError(`Too many apps were looked up from your network just now; try again in ${wait} seconds.`, 429, wait);
  }
  const fetched = await fetchDocumentClient(deps, clientId, url);
  keepPending(deps, fetched);
  return { client: documentClient(fetched), fetched };
}

/** Stores (or refreshes) the client of a fetched metadata document: the person has just consented to it. */
export async function storeFetchedClient(deps: Deps, doc: FetchedDocument): Promise<void> {
  const { meta } = doc;
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
    fetchedAt: doc.fetchedAt,
  };
  await deps.store.write(async (tx) => {
    await tx
      .insert(oauthClients)
      .values({ id: doc.clientId, createdAt: now, ...values })
      .onConflictDoUpdate({ target: oauthClients.id, set: values })
      .run();
  });
  pendingOf(deps).delete(doc.clientId);
}
