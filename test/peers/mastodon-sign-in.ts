/**
 * The sign-in side of the Mastodon-API fake (test/peers/mastodon-server.ts mounts it), written from Mastodon's
 * documentation, never from Seedcast's client:
 * - `POST /api/v1/apps` (https://docs.joinmastodon.org/methods/apps/#create): `client_name` and `redirect_uris`
 *   required, `scopes` (default `read`), `website`; answers the Application with `client_id` and `client_secret`.
 * - `GET /oauth/authorize` (https://docs.joinmastodon.org/methods/oauth/#authorize): `response_type=code`,
 *   `client_id`, `redirect_uri` (one of the app's), `scope` (within the app's), `state`, `code_challenge` with
 *   `code_challenge_method=S256`. The page the person sees: who asks, for what, Authorize and Deny. Authorize
 *   redirects to `redirect_uri?code=…&state=…`; Deny to `redirect_uri?error=access_denied&error_description=…&state=…`
 *   (Doorkeeper's answer, RFC 6749 §4.1.2.1).
 * - `POST /oauth/token` (https://docs.joinmastodon.org/methods/oauth/#token): `grant_type=authorization_code`, `code`,
 *   `client_id`, `client_secret` (in the body or HTTP Basic), `redirect_uri` (the same as at authorize),
 *   `code_verifier` (RFC 7636 §4.6: required when a challenge was given, S256 compared). Codes are single use and
 *   live 10 minutes. Answers the Token (`access_token`, `token_type: "Bearer"`, `scope`, `created_at`; Mastodon's
 *   tokens do not expire). Errors as RFC 6749 §5.2: 400 `invalid_grant`, 401 `invalid_client`, 400 `invalid_request`.
 * - `GET /.well-known/oauth-authorization-server` (Mastodon ≥ 4.3,
 *   https://docs.joinmastodon.org/methods/oauth/#authorization-server-metadata): `code_challenge_methods_supported:
 *   ["S256"]`. Older servers (and GoToSocial 0.19 here) answer 404 and take no PKCE.
 * - NodeInfo (https://nodeinfo.diaspora.software/protocol.html): `GET /.well-known/nodeinfo` → the 2.0 document naming
 *   `software.name` and `version`.
 */
import { createHash, randomBytes } from "node:crypto";

export const MASTODON_SCOPES = ["read", "write", "follow", "push", "profile", "read:accounts", "write:statuses", "write:media", "write:accounts"];
const CODE_TTL_MS = 10 * 60 * 1000;
const INVALID_GRANT =
  "The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.";
const DENIED = "The resource owner or authorization server denied the request.";

export interface RegisteredApp {
  id: string;
  name: string;
  website: string | null;
  redirectUris: string[];
  scopes: string[];
  clientId: string;
  clientSecret: string;
}

interface IssuedCode {
  clientId: string;
  redirectUri: string;
  scope: string;
  challenge: string | null;
  expiresAt: number;
}

/** The sign-in state tests read. */
export interface SignInState {
  apps: RegisteredApp[];
  /** Access tokens issued through /oauth/token (each valid for the fake's one account). */
  issuedTokens: Set<string>;
  /** Every /oauth/token call: its grant and how it ended. */
  tokenRequests: { grantType: string; status: number; error: string | null; codeVerifier: string | null }[];
  /** Every authorization request the page was shown for (its query). */
  authorizeRequests: URLSearchParams[];
}

export interface SignInOptions {
  now: () => number;
  username: () => string;
  /** Software named by NodeInfo. */
  software: { name: string; version: string };
  /** Serves the 4.3 authorization-server metadata (PKCE S256); false: answers 404 there, as older servers do. */
  oauthMetadata: boolean;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function token(): string {
  return randomBytes(32).toString("base64url");
}

function redirectTo(uri: string, params: Record<string, string>): Response {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return new Response(null, { status: 302, headers: { location: url.toString() } });
}

async function formOf(req: Request): Promise<Record<string, string | string[]>> {
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(body)) if (typeof v === "string" || Array.isArray(v)) out[k] = Array.isArray(v) ? v.map(String) : v;
    return out;
  }
  const form = await req.formData().catch(() => new FormData());
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(form.keys())) {
    const all = form.getAll(key).map(String);
    out[key.replace(/\[\]$/, "")] = all.length > 1 || key.endsWith("[]") ? all : all[0]!;
  }
  return out;
}

function one(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? "") : (value ?? "");
}

/** The sign-in routes; `route` answers null for a path that is not theirs. */
export function mastodonSignIn(opts: SignInOptions) {
  const state: SignInState = { apps: [], issuedTokens: new Set(), tokenRequests: [], authorizeRequests: [] };
  const codes = new Map<string, IssuedCode>();
  let nextAppId = 1;

  function registerApp(body: Record<string, string | string[]>): Response {
    const name = one(body.client_name).trim();
    const redirect = body.redirect_uris;
    const redirectUris = (Array.isArray(redirect) ? redirect : (redirect ?? "").split(/\s+/)).filter((u) => u !== "");
    if (name === "") return json({ error: "Validation failed: Application name can't be blank" }, 422);
    if (redirectUris.length === 0) return json({ error: "Validation failed: Redirect URI can't be blank" }, 422);
    for (const uri of redirectUris) {
      if (uri === "urn:ietf:wg:oauth:2.0:oob") continue;
      try {
        new URL(uri);
      } catch {
        return json({ error: "Validation failed: Redirect URI must be an absolute URI." }, 422);
      }
    }
    const scopes = (one(body.scopes) || "read").split(/\s+/).filter((s) => s !== "");
    if (scopes.some((s) => !MASTODON_SCOPES.includes(s))) return json({ error: "Validation failed: Scopes doesn't match configured on the server." }, 422);
    const app: RegisteredApp = { id: String(nextAppId++), name, website: one(body.website) || null, redirectUris, scopes, clientId: token(), clientSecret: token() };
    state.apps.push(app);
    return json({
      id: app.id,
      name: app.name,
      website: app.website,
      scopes: app.scopes,
      redirect_uri: app.redirectUris.join("\n"),
      redirect_uris: app.redirectUris,
      client_id: app.clientId,
      client_secret: app.clientSecret,
      client_secret_expires_at: 0,
      vapid_key: "BCk-QqERU0q-CfYZjcuB6lnyyOYfJ2AifKqfeGIm7Z-HiTU5T9eTG5GxVA0_OH5mMlI4UkkDTpaZwozy0TzdZ2M=",
    });
  }

  /** Checks an authorization request; answers the app or the error page (never a redirect to an unchecked URI). */
  function checkAuthorize(q: URLSearchParams): RegisteredApp | Response {
    const app = state.apps.find((a) => a.clientId === q.get("client_id"));
    if (!app) return new Response("<h1>Client authentication failed due to unknown client</h1>", { status: 401, headers: { "content-type": "text/html" } });
    if (!app.redirectUris.includes(q.get("redirect_uri") ?? "")) {
      return new Response("<h1>The redirect uri included is not valid.</h1>", { status: 400, headers: { "content-type": "text/html" } });
    }
    return app;
  }

  function authorizePage(q: URLSearchParams): Response {
    state.authorizeRequests.push(q);
    const app = checkAuthorize(q);
    if (app instanceof Response) return app;
    const redirectUri = q.get("redirect_uri")!;
    const scopes = (q.get("scope") ?? "read").split(/\s+/).filter((s) => s !== "");
    if (q.get("response_type") !== "code") return redirectTo(redirectUri, { error: "unsupported_response_type", state: q.get("state") ?? "" });
    if (scopes.some((s) => !app.scopes.includes(s))) return redirectTo(redirectUri, { error: "invalid_scope", state: q.get("state") ?? "" });
    if (q.has("code_challenge") && q.get("code_challenge_method") !== "S256") {
      return redirectTo(redirectUri, { error: "invalid_request", error_description: "Code challenge method must be S256", state: q.get("state") ?? "" });
    }
    const hidden = [...q.entries()].map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join("");
    const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Authorization required</title></head>
<body><main><h1>Authorization required</h1>
<p><strong>${escapeHtml(app.name)}</strong> would like permission to access your account <strong>@${escapeHtml(opts.username())}</strong>.</p>
<p>Permissions: ${scopes.map((s) => `<code>${escapeHtml(s)}</code>`).join(", ")}</p>
<form method="post" action="/oauth/authorize">${hidden}<button type="submit">Authorize</button></form>
<form method="post" action="/oauth/authorize">${hidden}<input type="hidden" name="_method" value="delete"><button type="submit">Deny</button></form>
</main></body></html>`;
    return new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
  }

  async function decide(req: Request): Promise<Response> {
    const body = await formOf(req);
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(body)) if (k !== "_method") q.set(k, one(v));
    const app = checkAuthorize(q);
    if (app instanceof Response) return app;
    const redirectUri = q.get("redirect_uri")!;
    const st = q.get("state");
    const withState = (p: Record<string, string>) => (st === null ? p : { ...p, state: st });
    if (one(body._method) === "delete") return redirectTo(redirectUri, withState({ error: "access_denied", error_description: DENIED }));
    const code = token();
    codes.set(code, {
      clientId: app.clientId,
      redirectUri,
      scope: q.get("scope") ?? "read",
      challenge: q.get("code_challenge"),
      expiresAt: opts.now() + CODE_TTL_MS,
    });
    return redirectTo(redirectUri, withState({ code }));
  }

  async function tokenEndpoint(req: Request): Promise<Response> {
    const body = await formOf(req);
    const grantType = one(body.grant_type);
    const verifier = one(body.code_verifier) || null;
    const answer = (res: Response, error: string | null) => {
      state.tokenRequests.push({ grantType, status: res.status, error, codeVerifier: verifier });
      return res;
    };
    const fail = (error: string, description: string, status = 400) => answer(json({ error, error_description: description }, status), error);
    let clientId = one(body.client_id);
    let clientSecret = one(body.client_secret);
    const basic = req.headers.get("authorization");
    if (basic?.startsWith("Basic ")) {
      const [id, secret] = Buffer.from(basic.slice(6), "base64").toString("utf8").split(":");
      clientId = decodeURIComponent(id ?? "");
      clientSecret = decodeURIComponent(secret ?? "");
    }
    const app = state.apps.find((a) => a.clientId === clientId && a.clientSecret === clientSecret);
    if (!app) return fail("invalid_client", "Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.", 401);
    if (grantType !== "authorization_code") return fail("unsupported_grant_type", "The authorization grant type is not supported by the authorization server.");
    const code = one(body.code);
    const issued = codes.get(code);
    // Single use: the code is gone whatever happens next.
    codes.delete(code);
    if (!issued || issued.clientId !== app.clientId || issued.expiresAt <= opts.now()) return fail("invalid_grant", INVALID_GRANT);
    if (one(body.redirect_uri) !== issued.redirectUri) return fail("invalid_grant", INVALID_GRANT);
    if (issued.challenge !== null) {
      if (verifier === null) return fail("invalid_request", "The request is missing a required parameter: code_verifier.");
      const computed = createHash("sha256").update(verifier).digest("base64url");
      if (computed !== issued.challenge) return fail("invalid_grant", INVALID_GRANT);
    }
    const access = token();
    state.issuedTokens.add(access);
    return answer(json({ access_token: access, token_type: "Bearer", scope: issued.scope, created_at: Math.floor(opts.now() / 1000) }), null);
  }

  function metadata(origin: string): Response {
    return json({
      issuer: `${origin}/`,
      service_documentation: "https://docs.joinmastodon.org/",
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      app_registration_endpoint: `${origin}/api/v1/apps`,
      revocation_endpoint: `${origin}/oauth/revoke`,
      scopes_supported: MASTODON_SCOPES,
      response_types_supported: ["code"],
      response_modes_supported: ["query", "fragment", "form_post"],
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "client_credentials"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
    });
  }

  function nodeInfo(origin: string, path: string): Response | null {
    if (path === "/.well-known/nodeinfo") {
      return json({ links: [{ rel: "http://nodeinfo.diaspora.software/ns/schema/2.0", href: `${origin}/nodeinfo/2.0` }] });
    }
    if (path === "/nodeinfo/2.0") {
      return json({
        version: "2.0",
        software: { name: opts.software.name, version: opts.software.version },
        protocols: ["activitypub"],
        services: { outbound: [], inbound: [] },
        usage: { users: { total: 1, activeMonth: 1, activeHalfyear: 1 }, localPosts: 0 },
        openRegistrations: false,
        metadata: {},
      });
    }
    return null;
  }

  return {
    state,
    /** Answers the request when it is one of the sign-in routes, else null. */
    async route(req: Request, url: URL): Promise<Response | null> {
      const path = url.pathname;
      const info = req.method === "GET" ? nodeInfo(url.origin, path) : null;
      if (info) return info;
      if (req.method === "GET" && path === "/.well-known/oauth-authorization-server") return opts.oauthMetadata ? metadata(url.origin) : json({ error: "Not Found" }, 404);
      if (req.method === "POST" && path === "/api/v1/apps") return registerApp(await formOf(req));
      if (req.method === "GET" && path === "/oauth/authorize") return authorizePage(url.searchParams);
      if (req.method === "POST" && path === "/oauth/authorize") return decide(req);
      if (req.method === "POST" && path === "/oauth/token") return tokenEndpoint(req);
      return null;
    },
  };
}
