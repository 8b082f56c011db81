/** Request paths: which belong to the API, how one is read off a request, and how one is logged. */

export const API_PREFIX = "/api/v1";

/** True for `/api/v1` and everything under it. */
export function isApiPath(path: string): boolean {
  return path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
}

/**
 * The path of a Request's URL, as `new URL(request.url).pathname` gives it, without building a URL object: a
 * Request's url is always absolute and already normalised (dot segments resolved) by Bun's parser.
 */
export function requestPath(url: string): string {
  const authority = url.indexOf("//");
  const start = url.indexOf("/", authority === -1 ? 0 : authority + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = query === -1 ? hash : hash === -1 ? query : Math.min(query, hash);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}

/** The query of a Request's URL as `new URL(url).search` gives it: "" when there is none or it is empty. */
export function requestSearch(url: string): string {
  const hash = url.indexOf("#");
  const beforeHash = hash === -1 ? url : url.slice(0, hash);
  const query = beforeHash.indexOf("?");
  return query === -1 || query === beforeHash.length - 1 ? "" : beforeHash.slice(query);
}

/** The paths whose next segment is a credential: upload links, invitations, password-reset links. */
const CREDENTIAL_PATH = /^\/(upload|invite|reset)\/[^/]+/;

/** Paths that carry a credential in the URL itself are logged with it replaced. */
export function loggablePath(path: string): string {
  return path.replace(CREDENTIAL_PATH, "/$1/[redacted]");
}
