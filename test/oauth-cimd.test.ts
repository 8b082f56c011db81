/**
 * Client ID Metadata Documents: an https client_id is fetched through safe-fetch from a real HTTPS server on
 * localhost (certificate from the throwaway test CA, host allowed by ALLOW_PRIVATE_HOSTS), must name itself, is kept
 * at most 24 hours, and the flow then runs with oauth4webapi. A document on a private address (not allowed) is
 * refused, as are documents that do not name themselves or describe a confidential client.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import { authenticateAccessToken } from "../src/modules/oauth/access-token";
import { configureClientMetadataFetch } from "../src/modules/oauth/client-metadata";
import { FormBrowser, type Person, type ServedWorld, locationOf, ownerWithAccount, reachConsent, servedWorld } from "./helpers/oauth";
import { type TestHttpsServer, startHttpsServer } from "./helpers/test-ca";

let world: ServedWorld;
let owner: Person;
let docs: TestHttpsServer;
let as: oauth.AuthorizationServer;
const hits = new Map<string, number>();
const documents = new Map<string, unknown>();
const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = "http://127.0.0.1:33418/callback";

beforeAll(async () => {
  docs = startHttpsServer((request) => {
    const path = new URL(request.url).pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const doc = documents.get(path);
    return doc === undefined ? new Response("missing", { status: 404 }) : Response.json(doc);
  });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "localhost" });
  configureClientMetadataFetch(world.deps, { extraCa: docs.caPem, resolver: async () => ["127.0.0.1"] });
  owner = await ownerWithAccount(world, "Docs Co");
  as = await oauth.processDiscoveryResponse(new URL(world.base), await oauth.discoveryRequest(new URL(world.base), { algorithm: "oauth2", ...insecure }));
});
afterAll(async () => {
  await world.stop();
  await docs.stop();
});

function authorizeUrl(clientId: string, challenge: string, state: string): string {
  const url = new URL(as.authorization_endpoint as string);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state,
    scope: "read create",
    resource: `${world.base}/mcp`,
  }))
    url.searchParams.set(k, v);
  return url.href;
}

describe("a metadata document over HTTPS with the test CA", () => {
  test("is fetched, named on the consent page, and the code flow completes with oauth4webapi", async () => {
    const clientId = `${docs.url}/oauth/client.json`;
    documents.set("/oauth/client.json", {
      client_id: clientId,
      client_name: "Doc Assistant",
      client_uri: "https://assistant.example",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    });
    const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: "none" };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const browser = new FormBrowser(world.base);
    const { page, consent } = await reachConsent(browser, authorizeUrl(clientId, await oauth.calculatePKCECodeChallenge(verifier), state), owner);
    expect(page).toContain("Doc Assistant");
    expect(page).toContain(clientId);
    const answer = await browser.submit(consent, { button: ["decision", "allow"] });
    const params = oauth.validateAuthResponse(as, client, new URL(locationOf(answer, world.base)), state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, insecure),
    );
    expect(await authenticateAccessToken(world.deps, tokens.access_token)).toMatchObject({ clientId, scopes: ["read", "create"] });
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token as string, insecure),
    );
    expect(refreshed.access_token).toStartWith("sco_");
  });

  test("is kept for at most 24 hours, then fetched again (and a changed document applies)", async () => {
    const clientId = `${docs.url}/cached.json`;
    documents.set("/cached.json", { client_id: clientId, client_name: "Cached", redirect_uris: [REDIRECT] });
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    const browser = new FormBrowser(world.base);
    await reachConsent(browser, authorizeUrl(clientId, challenge, "s1"), owner);
    expect((await browser.get(authorizeUrl(clientId, challenge, "s2"))).status).toBe(200);
    expect(hits.get("/cached.json")).toBe(1);
    documents.set("/cached.json", { client_id: clientId, client_name: "Cached v2", redirect_uris: ["http://127.0.0.1:9999/other"] });
    world.clock.advance(24 * 60 * 60 * 1000);
    const after = await browser.get(authorizeUrl(clientId, challenge, "s3"));
    expect(hits.get("/cached.json")).toBe(2);
    // The new document no longer lists REDIRECT: an error page, no redirect.
    expect(after.status).toBe(400);
    expect(after.headers.get("location")).toBeNull();
  });

  test("must name itself as client_id and describe a public client", async () => {
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    const cases: [string, unknown, string][] = [
      ["/impostor.json", { client_id: "https://assistant.example/client.json", client_name: "Impostor", redirect_uris: [REDIRECT] }, "does not name itself"],
      ["/secret.json", { client_id: `${docs.url}/secret.json`, redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" }, "token_endpoint_auth_method"],
      ["/bad-redirect.json", { client_id: `${docs.url}/bad-redirect.json`, redirect_uris: ["http://evil.example/cb"] }, "loopback"],
      ["/missing.json", undefined, "answered 404"],
    ];
    for (const [path, doc, words] of cases) {
      if (doc !== undefined) documents.set(path, doc);
      const response = await new FormBrowser(world.base).get(authorizeUrl(`${docs.url}${path}`, challenge, "s"));
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain(words);
    }
  });
});

describe("a metadata document on a private address", () => {
  test("is refused without ALLOW_PRIVATE_HOSTS naming the host, and plain http is refused", async () => {
    const challenge = await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());
    // The same running document server, reached by its IP (not in ALLOW_PRIVATE_HOSTS), and other private targets.
    documents.set("/private.json", { client_id: `https://127.0.0.1:${docs.port}/private.json`, redirect_uris: [REDIRECT] });
    const before = hits.get("/private.json") ?? 0;
    for (const clientId of [`https://127.0.0.1:${docs.port}/private.json`, "https://10.0.0.7/client.json", "https://[::1]/client.json", "http://localhost/client.json"]) {
      const response = await new FormBrowser(world.base).get(authorizeUrl(clientId, challenge, "s"));
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
    }
    expect(hits.get("/private.json") ?? 0).toBe(before);
  });
});
