/**
 * A stand-in OAuth 2.0 token endpoint for the sign-in machinery's tests, written from the RFCs, not from Seedcast:
 * - RFC 6749 §4.1.3 (authorization code grant) with RFC 7636 §4.6 (the `code_verifier` checked against the S256
 *   challenge the code was issued with), §6 (refresh token grant), §5.1 (the answer: `access_token`, `token_type`,
 *   `expires_in`, `refresh_token`), §5.2 (refusals: 400 `{"error": "invalid_grant", "error_description": …}`, 401
 *   `invalid_client`), client authentication by HTTP Basic or in the body (§2.3.1);
 * - refresh tokens rotate (RFC 6749 §10.4; OAuth 2.0 Security BCP §4.14.2): every refresh answers a new refresh token
 *   and the one used dies; a reused one is refused with `invalid_grant`.
 * Modes: `ok`; `unavailable` (503, the token service down); `revoked` (every refresh refused `invalid_grant`, the
 * person revoked the app); `no_refresh_token` (a success that carries no refresh token, as networks that do not
 * rotate answer). `delayMs` slows every answer, so concurrent callers really overlap. Besides the first grant
 * (`current`), `newGrant()` starts further independent ones (each its own rotating refresh token), and
 * `maxRefreshesInFlight` counts how many refresh requests it ever held at once.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Server } from "bun";

export type TokenServerMode = "ok" | "unavailable" | "revoked" | "no_refresh_token";

export interface TokenServerOptions {
  clientId: string;
  clientSecret: string;
  /** Lifetime of each access token, seconds (default 3600). */
  expiresIn?: number;
  delayMs?: number;
}

export interface TokenServer {
  url: string;
  tokenEndpoint: string;
  /** Every refresh token presented, in order (a rotated token appears once when nobody reuses it). */
  presentedRefreshTokens: string[];
  /** Successful refreshes. */
  refreshes: number;
  /** The refresh token that works now, and the access token last issued. */
  current: { refreshToken: string; accessToken: string };
  /** The most refresh requests held at once (each held `delayMs`). */
  maxRefreshesInFlight: number;
  /** Starts another grant, independent of `current`: its first refresh token (rotated like the first grant's). */
  newGrant(): string;
  /** Issues a code as the authorization endpoint would, bound to an S256 challenge. */
  issueCode(challenge: string | null, redirectUri: string): string;
  setMode(mode: TokenServerMode): void;
  stop(): Promise<void>;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json;charset=UTF-8", "cache-control": "no-store", pragma: "no-cache" } });
}

const token = () => randomBytes(24).toString("base64url");

/** Starts the stand-in on 127.0.0.1; its first refresh token is `current.refreshToken`. */
export async function startTokenServer(opts: TokenServerOptions): Promise<TokenServer> {
  let mode: TokenServerMode = "ok";
  const expiresIn = opts.expiresIn ?? 3600;
  const used = new Set<string>();
  /** The live refresh tokens of the grants started by newGrant(). */
  const others = new Set<string>();
  let inFlight = 0;
  const codes = new Map<string, { challenge: string | null; redirectUri: string }>();
  const state: Omit<TokenServer, "url" | "tokenEndpoint" | "stop" | "setMode" | "issueCode" | "newGrant"> = {
    presentedRefreshTokens: [],
    refreshes: 0,
    maxRefreshesInFlight: 0,
    current: { refreshToken: token(), accessToken: token() },
  };
  const refusal = (error: string, description: string, status = 400) => json({ error, error_description: description }, status);

  const server: Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/oauth2/token") return json({ error: "not_found" }, 404);
      const isRefresh = (req.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded") && (await req.clone().text()).includes("grant_type=refresh_token");
      if (isRefresh) state.maxRefreshesInFlight = Math.max(state.maxRefreshesInFlight, ++inFlight);
      try {
        if (opts.delayMs) await Bun.sleep(opts.delayMs);
      } finally {
        if (isRefresh) inFlight--;
      }
      if (mode === "unavailable") return new Response("Service Unavailable", { status: 503 });
      if (!(req.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded")) return refusal("invalid_request", "form body required");
      const form = new URLSearchParams(await req.text());
      let clientId = form.get("client_id") ?? "";
      let clientSecret = form.get("client_secret") ?? "";
      const basic = req.headers.get("authorization");
      if (basic?.startsWith("Basic ")) {
        const [id, secret] = Buffer.from(basic.slice(6), "base64").toString("utf8").split(":");
        clientId = decodeURIComponent((id ?? "").replace(/\+/g, " "));
        clientSecret = decodeURIComponent((secret ?? "").replace(/\+/g, " "));
      }
      if (clientId !== opts.clientId || clientSecret !== opts.clientSecret) return refusal("invalid_client", "Client authentication failed.", 401);
      const issue = (withRefresh: boolean) => {
        state.current.accessToken = token();
        const body: Record<string, unknown> = { access_token: state.current.accessToken, token_type: "Bearer", expires_in: expiresIn };
        if (withRefresh) {
          state.current.refreshToken = token();
          body.refresh_token = state.current.refreshToken;
        }
        return json(body);
      };
      const grant = form.get("grant_type");
      if (grant === "authorization_code") {
        const code = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        if (!code || code.redirectUri !== form.get("redirect_uri")) return refusal("invalid_grant", "The authorization code is invalid or expired.");
        if (code.challenge !== null) {
          const verifier = form.get("code_verifier") ?? "";
          if (createHash("sha256").update(verifier).digest("base64url") !== code.challenge) return refusal("invalid_grant", "PKCE verification failed.");
        }
        return issue(true);
      }
      if (grant !== "refresh_token") return refusal("unsupported_grant_type", `grant_type ${grant ?? "(none)"} is not supported`);
      const presented = form.get("refresh_token") ?? "";
      state.presentedRefreshTokens.push(presented);
      if (mode === "revoked") return refusal("invalid_grant", "The refresh token was revoked.");
      if (others.has(presented) && mode === "ok") {
        // Another grant: its token rotates as the first grant's does.
        others.delete(presented);
        used.add(presented);
        state.refreshes++;
        const next = token();
        others.add(next);
        return json({ access_token: token(), token_type: "Bearer", expires_in: expiresIn, refresh_token: next });
      }
      if (presented !== state.current.refreshToken || used.has(presented)) return refusal("invalid_grant", "The refresh token is invalid, expired or was already used.");
      if (mode === "no_refresh_token") {
        state.refreshes++;
        return issue(false);
      }
      used.add(presented);
      state.refreshes++;
      return issue(true);
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return Object.assign(state, {
    url,
    tokenEndpoint: `${url}/oauth2/token`,
    issueCode(challenge: string | null, redirectUri: string) {
      const code = token();
      codes.set(code, { challenge, redirectUri });
      return code;
    },
    newGrant() {
      const first = token();
      others.add(first);
      return first;
    },
    setMode(next: TokenServerMode) {
      mode = next;
    },
    async stop() {
      await server.stop(true);
    },
  });
}
