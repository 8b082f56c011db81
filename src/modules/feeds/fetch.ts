/**
 * Reading a feed's URL under the ingest's outbound rules (safe-fetch: resolve once, public addresses only, https on
 * 443 unless ALLOW_PRIVATE_HOSTS exempts the host, every redirect re-checked) with a conditional request: the ETag
 * and Last-Modified of the last good read go out as If-None-Match and If-Modified-Since, and a 304 is "nothing new".
 */
import type { Deps } from "../../deps";
import { AppError } from "../../lib/errors";
import { type Resolver, type SafeFetchOptions, safeFetch, SafeFetchError, toAppError } from "../../lib/safe-fetch";
import { type ParsedFeed, parseFeedDocument } from "./parse";

/** A feed document larger than this is refused (payload_too_large): feeds are kilobytes, a few hundred at most. */
export const MAX_FEED_BYTES = 5 * 1024 * 1024;
const ACCEPT_FEEDS =
  "application/rss+xml, application/atom+xml, application/feed+json, application/json;q=0.9, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1";
const NOT_MODIFIED = 304;

/** What a read found. */
export type FeedRead =
  | { outcome: "not_modified" }
  | { outcome: "read"; feed: ParsedFeed; etag: string | null; lastModified: string | null };

/** Outbound overrides for one deps: tests pass a throwaway CA and a scripted resolver. Production sets none. */
export interface FeedFetchOverrides {
  resolver?: Resolver;
  /** NB: replaces the root store for the call (see safe-fetch.ts); production trusts NODE_EXTRA_CA_CERTS instead. */
  extraCa?: string;
  timeoutMs?: number;
}

const overridesByDeps = new WeakMap<Deps, FeedFetchOverrides>();

/** Sets the outbound overrides feed reads use for this deps. For tests against local HTTPS servers. */
export function configureFeedFetch(deps: Deps, overrides: FeedFetchOverrides): void {
  overridesByDeps.set(deps, overrides);
}

/**
 * Reads `url` once. Throws AppError with the ingest's reason (invalid_url, https_required, port_not_allowed,
 * host_not_public, host_unresolvable, fetch_failed, too_many_redirects, unsupported_encoding, upstream_status with
 * upstreamStatus, payload_too_large) or not_a_feed when the answer is no RSS, Atom or JSON Feed.
 */
export async function readFeed(
  deps: Deps,
  url: string,
  validators: { etag: string | null; lastModified: string | null } = { etag: null, lastModified: null },
): Promise<FeedRead> {
  const headers: Record<string, string> = { accept: ACCEPT_FEEDS, "user-agent": "Seedcast feed reader" };
  if (validators.etag) headers["if-none-match"] = validators.etag;
  if (validators.lastModified) headers["if-modified-since"] = validators.lastModified;
  const options: SafeFetchOptions = {
    headers,
    maxBytes: MAX_FEED_BYTES,
    allowPrivateHosts: deps.config.allowPrivateHosts,
    ...overridesByDeps.get(deps),
  };
  let response: Awaited<ReturnType<typeof safeFetch>>;
  try {
    response = await safeFetch(url, options);
  } catch (error) {
    throw toAppError(error, "payload_too_large");
  }
  if (response.status === NOT_MODIFIED && (validators.etag || validators.lastModified)) return { outcome: "not_modified" };
  if (response.status < 200 || response.status > 299) {
    throw toAppError(new SafeFetchError("upstream_status", `The feed's server answered ${response.status}.`, { upstreamStatus: response.status }));
  }
  const feed = parseFeedDocument(response.body, response.url);
  if (!feed) throw new AppError("not_a_feed", "The address answered, but not with an RSS, Atom or JSON Feed document.");
  return { outcome: "read", feed, etag: response.headers.get("etag"), lastModified: response.headers.get("last-modified") };
}
