/**
 * The whole OAuth flow driven by oauth4webapi (panva's certified OAuth client, written by nobody here) against the
 * app served on a real socket: RFC 9728 and RFC 8414 discovery, RFC 7591 registration, authorization with the
 * dashboard's login and the consent form submitted like a browser, code + PKCE S256 with the RFC 9207 `iss` check,
 * refresh rotation and RFC 7009 revocation, for each client authentication method Seedcast offers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import { authenticateAccessToken } from "../src/modules/oauth/access-token";
import { type Person, FormBrowser, type ServedWorld, locationOf, ownerWithAccount, reachConsent, servedWorld } from "./helpers/oauth";

let world: ServedWorld;
let owner: Person;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = "http://127.0.0.1:53682/callback";

beforeAll(async () => {
  world = await servedWorld();
  owner = await ownerWithAccount(world, "Acme Studio");
});
afterAll(() => world.stop());

describe("discovery", () => {
  test("protected resource metadata names the MCP resource and this server (RFC 9728)", async () => {
    const resource = new URL(`${world.base}/mcp`);
    const rs = await oauth.processResourceDiscoveryResponse(resource, await oauth.resourceDiscoveryRequest(resource, insecure));
    expect(rs.resource).toBe(`${world.base}/mcp`);
    expect(rs.authorization_servers).toEqual([world.base]);
    expect(rs.scopes_supported).toEqual(["read", "create", "schedule", "voice"]);
    expect(rs.bearer_methods_supported).toEqual(["header"]);
    // The root form answers the same document.
    const root = await (await fetch(`${world.base}/.well-known/oauth-protected-resource`)).json();
    expect(root.resource).toBe(`${world.base}/mcp`);
  });

  test("authorization server metadata has every field decisions.md §9 lists (RFC 8414)", async () => {
    as = await oauth.processDiscoveryResponse(new URL(world.base), await oauth.discoveryRequest(new URL(world.base), { algorithm: "oauth2", ...insecure }));
    expect(as).toMatchObject({
      issuer: world.base,
      authorization_endpoint: `${world.base}/oauth/authorize`,
      token_endpoint: `${world.base}/oauth/token`,
      registration_endpoint: `${world.base}/oauth/register`,
      revocation_endpoint: `${world.base}/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      scopes_supported: ["read", "create", "schedule", "voice"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });
});

describe("for browser-based clients and the API document", () => {
  test("discovery, registration, token and revoke answer CORS preflights and carry Access-Control-Allow-Origin", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp", "/oauth/register", "/oauth/token", "/oauth/revoke"]) {
      const pre = await fetch(`${world.base}${path}`, {
        method: "OPTIONS",
        headers: { origin: "http://localhost:6274", "access-control-request-method": "POST", "access-control-request-headers": "content-type, mcp-protocol-version" },
      });
      expect([path, pre.status, pre.headers.get("access-control-allow-origin")]).toEqual([path, 204, "*"]);
      expect(pre.headers.get("access-control-allow-headers")).toContain("mcp-protocol-version");
    }
    const metadata = await fetch(`${world.base}/.well-known/oauth-authorization-server`, { headers: { origin: "http://localhost:6274" } });
    expect(metadata.headers.get("access-control-allow-origin")).toBe("*");
    // The consent page is not for other origins.
    const authorize = await fetch(`${world.base}/oauth/authorize`, { headers: { origin: "http://localhost:6274" } });
    expect(authorize.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("the OpenAPI document lists every OAuth endpoint as public", async () => {
    const spec = await (await fetch(`${world.base}/openapi.json`)).json();
    for (const [path, method] of [
      ["/.well-known/oauth-protected-resource/mcp", "get"],
      ["/.well-known/oauth-protected-resource", "get"],
      ["/.well-known/oauth-authorization-server", "get"],
      ["/oauth/register", "post"],
      ["/oauth/authorize", "get"],
      ["/oauth/token", "post"],
      ["/oauth/revoke", "post"],
    ] as const) {
      expect([path, spec.paths?.[path]?.[method]?.security]).toEqual([path, []]);
      expect([path, Object.keys(spec.paths[path][method].responses ?? {}).length > 0]).toEqual([path, true]);
    }
    expect(Object.keys(spec.paths["/oauth/token"].post.requestBody.content)).toEqual(["application/x-www-form-urlencoded"]);
    expect(Object.keys(spec.paths["/oauth/token"].post.responses).sort()).toEqual(["200", "400", "401", "431"]);
  });
});

/** Registers, authorizes through login and consent, and exchanges the code; answers what a client then holds. */
async function connect(
  method: "none" | "client_secret_basic" | "client_secret_post",
  opts: { scope?: string; checked?: string[] } = {},
): Promise<{ client: oauth.Client; auth: oauth.ClientAuth; tokens: oauth.TokenEndpointResponse }> {
  const registered = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { client_name: `Assistant (${method})`, redirect_uris: [REDIRECT], token_endpoint_auth_method: method, grant_types: ["authorization_code", "refresh_token"] },
      insecure,
    ),
  );
  const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: method };
  const auth =
    method === "none"
      ? oauth.None()
      : method === "client_secret_basic"
        ? oauth.ClientSecretBasic(registered.client_secret as string)
        : oauth.ClientSecretPost(registered.client_secret as string);
  if (method !== "none") expect(String(registered.client_secret)).toStartWith("scs_");

  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint as string);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", client.client_id);
  url.searchParams.set("redirect_uri", REDIRECT);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", `${world.base}/mcp`);
  if (opts.scope) url.searchParams.set("scope", opts.scope);

  const browser = new FormBrowser(world.base);
  const { page, consent } = await reachConsent(browser, url.href, owner);
  expect(page).toContain(`Assistant (${method})`);
  expect(page).toContain("127.0.0.1:53682");
  const answer = await browser.submit(consent, { button: ["decision", "allow"], ...(opts.checked ? { checked: opts.checked } : {}) });
  expect(answer.status).toBe(303);
  const callback = new URL(locationOf(answer, world.base));
  expect(callback.origin + callback.pathname).toBe(REDIRECT);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, { ...insecure, additionalParameters: { resource: `${world.base}/mcp` } }),
  );
  return { client, auth, tokens };
}

describe("code + PKCE, refresh rotation, revocation", () => {
  for (const method of ["none", "client_secret_basic", "client_secret_post"] as const) {
    test(`with token_endpoint_auth_method ${method}`, async () => {
      const { client, auth, tokens } = await connect(method, { scope: "read create" });
      expect(tokens.token_type).toBe("bearer");
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe("read create");
      expect(tokens.access_token).toStartWith("sco_");
      expect(tokens.refresh_token).toStartWith("scr_");
      const principal = await authenticateAccessToken(world.deps, tokens.access_token);
      expect(principal).toMatchObject({ accountId: owner.accountId, userId: owner.userId, scopes: ["read", "create"], clientId: client.client_id });

      // Refresh rotates the refresh token and issues a new access token.
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token as string, insecure),
      );
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.access_token).not.toBe(tokens.access_token);
      expect((await authenticateAccessToken(world.deps, refreshed.access_token))?.grantId).toBe(principal?.grantId as string);

      // The spent refresh token is refused (and that revokes the grant, tested in oauth-security).
      // Here: revocation of the live refresh token ends the grant.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token as string, insecure));
      expect(await authenticateAccessToken(world.deps, refreshed.access_token)).toBeNull();
      const after = oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token as string, insecure).then((r) =>
        oauth.processRefreshTokenResponse(as, client, r),
      );
      await expect(after).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
      // Revoking again, or a token nobody issued, is still 200.
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, refreshed.refresh_token as string, insecure));
      await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, "sco_not-a-token", insecure));
    });
  }

  test("scope absent asks for every group the role allows; unticking narrows the grant", async () => {
    const { tokens } = await connect("none", { checked: ["read", "voice"] });
    expect(tokens.scope).toBe("read voice");
    expect((await authenticateAccessToken(world.deps, tokens.access_token))?.scopes).toEqual(["read", "voice"]);
  });

  test("a confidential client with a wrong secret is invalid_client (401)", async () => {
    const { client } = await connect("client_secret_basic");
    const response = await oauth.refreshTokenGrantRequest(as, client, oauth.ClientSecretBasic("scs_wrong"), "scr_whatever", insecure);
    expect(response.status).toBe(401);
    expect((await response.json()).error).toBe("invalid_client");
  });

  test("Deny sends the person back with error=access_denied, state and iss", async () => {
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { client_name: "Denied app", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }, insecure),
    );
    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: "none" };
    const url = new URL(as.authorization_endpoint as string);
    const state = oauth.generateRandomState();
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: "S256",
      state,
    }))
      url.searchParams.set(k, v);
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, url.href, owner);
    const answer = await browser.submit(consent, { button: ["decision", "deny"] });
    const callback = new URL(locationOf(answer, world.base));
    expect(callback.searchParams.get("iss")).toBe(world.base);
    expect(() => oauth.validateAuthResponse(as, client, callback, state)).toThrow(expect.objectContaining({ error: "access_denied" }));
  });
});
