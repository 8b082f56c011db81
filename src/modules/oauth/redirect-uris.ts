/**
 * Which redirect URIs a client may register (decisions.md §9, RFC 8252, OAuth 2.1 §2.3): https; http only on a
 * loopback host (127.0.0.0/8, [::1], or `localhost`), any port; or a private-use scheme containing a dot
 * (reverse domain name, RFC 8252 §7.1). Never a fragment, never user:password. Matching at /authorize is exact.
 */
const LOOPBACK_V4 = /^127(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || LOOPBACK_V4.test(hostname);
}

/** Null when `uri` may be registered, else the reason in words. */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== "string" || uri.length === 0) return "must be a non-empty string";
  if (uri.length > 2000) return "must be at most 2000 characters";
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri} is not an absolute URI`;
  }
  if (url.hash !== "" || uri.includes("#")) return `${uri} must not contain a fragment`;
  if (url.username !== "" || url.password !== "") return `${uri} must not contain a user name or password`;
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === "https") return url.hostname ? null : `${uri} has no host`;
  if (scheme === "http") {
    return isLoopbackHost(url.hostname) ? null : `${uri}: plain http is allowed only on a loopback address (127.0.0.1, [::1], localhost)`;
  }
  if (scheme.includes(".")) return null;
  return `${uri}: use https, http on a loopback address, or a private-use scheme containing a dot (com.example.app:/callback)`;
}
