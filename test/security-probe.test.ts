/**
 * The outside security probe's findings (issue 21; decisions.md §10, "What outside client authors and a security review
 * asked for"), each reproduced against the app on a real socket:
 * 1. anonymous /oauth/authorize requests naming metadata-document clients: fetches limited per address, no client row
 *    stored before consent;
 * 2. errors before consent are pages, never redirects (RFC 9700 §4.11);
 * 3. JSON-RPC batches at /mcp cost one rate-limit token per message, and are refused on 2025-06-18 and later;
 * 4. dashboard form POSTs with a foreign Origin are refused (login and setup too); no Origin stays allowed;
 * 5. client names lose Unicode control and format characters (a right-to-left override);
 * 6. lone UTF-16 surrogates in JSON text are refused naming the field (/api/v1, MCP tool arguments, registration).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAccount } from "../src/modules/accounts/service";
import { METADATA_FETCHES_PER_MINUTE, configureClientMetadataFetch } from "../src/modules/oauth/client-metadata";
import { s256 } from "../src/modules/oauth/codes";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { grantFor, rawMcpPost, refusalOf, registerTestClient, toolsCall } from "./helpers/mcp";
import { FormBrowser, type Person, type ServedWorld, locationOf, ownerWithAccount, reachConsent, servedWorld } from "./helpers/oauth";
import { type TestHttpsServer, startHttpsServer } from "./helpers/test-ca";
import { BASE, createWorld } from "./helpers/world";

const REDIRECT = "http://127.0.0.1:33418/callback";
const VERIFIER = "v".repeat(43);
const RLO = "\u202E";

let world: ServedWorld;
let owner: Person;
let docs: TestHttpsServer;
/** Requests the document server answered, by path: the fetches the app made. */
const hits = new Map<string, number>();
const documents = new Map<string, unknown>();

beforeAll(async () => {
  docs = startHttpsServer((request) => {
    const path = new URL(request.url).pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const doc = documents.get(path) ?? (path.startsWith("/probe/") ? { client_id: `${docs.url}${path}`, client_name: "Probe", redirect_uris: [REDIRECT] } : undefined);
    return doc === undefined ? new Response("missing", { status: 404 }) : Response.json(doc);
  });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "localhost" });
  configureClientMetadataFetch(world.deps, { extraCa: docs.caPem, resolver: async () => ["127.0.0.1"] });
  owner = await ownerWithAccount(world, "Probe Co");
});
afterAll(async () => {
  await world.stop();
  await docs.stop();
});

function authorizeUrl(clientId: string, extra: Record<string, string> = {}): string {
  const url = new URL(`${world.base}/oauth/authorize`);
  const params = { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: s256(VERIFIER), code_challenge_method: "S256", state: "st", ...extra };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

async function documentClientRows(): Promise<number> {
  return Number((await world.sql<{ n: unknown }>("SELECT count(*) AS n FROM oauth_clients WHERE kind = 'metadata_document'"))[0]?.n);
}

async function register(metadata: Record<string, unknown>): Promise<Response> {
  world.clock.advance(3_000);
  return fetch(`${world.base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
}

const probeFetches = () => [...hits].filter(([path]) => path.startsWith("/probe/")).reduce((sum, [, n]) => sum + n, 0);

describe("finding 1: metadata documents at /oauth/authorize", () => {
  test("anonymous requests fetch under a per-address limit and store no client; consent stores it", async () => {
    world.clock.advance(60_000);
    const before = await documentClientRows();
    const answers: number[] = [];
    for (let i = 0; i < 40; i++) {
      const response = await fetch(authorizeUrl(`${docs.url}/probe/${i}.json`), { redirect: "manual" });
      answers.push(response.status);
      if (response.status === 429) {
        expect(response.headers.get("location")).toBeNull();
        expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
      }
      await response.arrayBuffer();
    }
    // Each fetched document was valid: the person was sent to sign in; the rest were refused before any fetch.
    expect(probeFetches()).toBe(METADATA_FETCHES_PER_MINUTE);
    expect(answers.filter((s) => s === 303)).toHaveLength(METADATA_FETCHES_PER_MINUTE);
    expect(answers.filter((s) => s === 429)).toHaveLength(40 - METADATA_FETCHES_PER_MINUTE);
    expect(await documentClientRows()).toBe(before);

    // A person connecting one of them: signed in and shown the consent page, still nothing stored; Allow stores it.
    world.clock.advance(60_000);
    const clientId = `${docs.url}/probe/0.json`;
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, authorizeUrl(clientId), owner);
    expect(await documentClientRows()).toBe(before);
    const answer = await browser.submit(consent, { button: ["decision", "allow"] });
    expect(answer.status).toBe(303);
    expect(new URL(locationOf(answer, world.base)).searchParams.get("code")).toBeTruthy();
    expect(await documentClientRows()).toBe(before + 1);
  });

  test("Deny stores nothing either", async () => {
    world.clock.advance(60_000);
    const before = await documentClientRows();
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, authorizeUrl(`${docs.url}/probe/denied.json`), owner);
    const answer = await browser.submit(consent, { button: ["decision", "deny"] });
    expect(new URL(locationOf(answer, world.base)).searchParams.get("error")).toBe("access_denied");
    expect(await documentClientRows()).toBe(before);
  });
});

describe("finding 2: no redirect before consent", () => {
  test("a registered client's bad request is a page, not a redirect to its redirect_uri", async () => {
    const registered = await register({ client_name: "Redirector", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const clientId = (await registered.json()).client_id as string;
    const bad: Record<string, string>[] = [{ response_type: "token" }, { scope: "admin" }, { code_challenge_method: "plain" }, { resource: "https://evil.example/mcp" }];
    for (const extra of bad) {
      const response = await fetch(authorizeUrl(clientId, extra), { redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(response.headers.get("content-type")).toContain("text/html");
    }
  });

  test("a metadata-document client's bad request is a page too", async () => {
    world.clock.advance(60_000);
    const response = await fetch(authorizeUrl(`${docs.url}/probe/redirect.json`, { response_type: "token" }), { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });
});

describe("finding 3: JSON-RPC batches at /mcp", () => {
  test("a batch costs one token per message, and a refused batch costs nothing", async () => {
    const limited = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: "10" } });
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, routes: limited.app.servedRoutes(), fetch: (r, s) => limited.app.handle(r, s) });
    try {
      const url = `http://127.0.0.1:${server.port}/mcp`;
      const id = await registerTestClient(limited);
      const account = await limited.createAccount();
      const grant = await grantFor(limited, id, account.accountId, account.userId, ["read"]);
      const auth = { authorization: `Bearer ${grant.accessToken}` };
      const batch = (n: number) => Array.from({ length: n }, (_, i) => toolsCall("get_credits", {}, i + 1));

      const first = await rawMcpPost(url, batch(6), auth);
      expect(first.status).toBe(200);
      expect(first.text).toContain('"id":6');
      // 4 tokens left: a batch of 5 is refused whole, and takes none of them.
      const second = await rawMcpPost(url, batch(5), auth);
      expect(second.status).toBe(429);
      expect(JSON.parse(second.text).error).toBe("rate_limited");
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
      for (let i = 0; i < 4; i++) expect((await rawMcpPost(url, toolsCall("get_credits"), auth)).status).toBe(200);
      expect((await rawMcpPost(url, toolsCall("get_credits"), auth)).status).toBe(429);

      // A batch larger than a whole minute's budget can never pass: a clear JSON-RPC refusal, not a wait.
      limited.clock.advance(60_000);
      const huge = await rawMcpPost(url, batch(11), auth);
      expect(huge.status).toBe(400);
      expect(JSON.parse(huge.text).error.code).toBe(-32600);
      expect((await rawMcpPost(url, batch(10), auth)).status).toBe(200);
    } finally {
      await server.stop(true);
      await limited.close();
    }
  });

  test("batches are refused for protocol revisions that dropped them, before anything is charged", async () => {
    const account = await world.createAccount();
    const id = await registerTestClient(world);
    const grant = await grantFor(world, id, account.accountId, account.userId, ["read"]);
    const url = `${world.base}/mcp`;
    const batch = [toolsCall("get_credits", {}, 1), toolsCall("get_credits", {}, 2)];
    for (const version of ["2025-06-18", "2025-11-25", "2026-07-28"]) {
      const refused = await rawMcpPost(url, batch, { authorization: `Bearer ${grant.accessToken}`, "mcp-protocol-version": version });
      expect(refused.status).toBe(400);
      const body = JSON.parse(refused.text);
      expect(body.jsonrpc).toBe("2.0");
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toContain(version);
    }
    // 2025-03-26 (or no header, which means it) still batches.
    const earlier: Record<string, string>[] = [{ "mcp-protocol-version": "2025-03-26" }, {}];
    for (const headers of earlier) {
      const ok = await rawMcpPost(url, batch, { authorization: `Bearer ${grant.accessToken}`, ...headers });
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('"id":2');
    }
  });
});

describe("finding 4: Origin on dashboard forms", () => {
  test("a foreign Origin is refused on login, signed-in forms, consent and logout; base_url's origin and none pass", async () => {
    const w = await createWorld();
    try {
      await createAccount(w.deps, { name: "Origin Co", email: "origin@probe.test", password: PASSWORD, credits: 0 });
      const evil = { origin: "https://evil.example" };
      const b = new DashboardClient(w);

      await b.get("/login");
      const login = await b.request("POST", "/login", { _csrf: b.csrf(), email: "origin@probe.test", password: PASSWORD }, evil);
      expect(login.status).toBe(403);
      expect(login.headers.getSetCookie().some((c) => c.startsWith("seedcast_session="))).toBe(false);
      const opaque = await b.request("POST", "/login", { _csrf: b.csrf(), email: "origin@probe.test", password: PASSWORD }, { origin: "null" });
      expect(opaque.status).toBe(403);
      const ok = await b.request("POST", "/login", { _csrf: b.csrf(), email: "origin@probe.test", password: PASSWORD }, { origin: BASE });
      expect(ok.status).toBe(303);

      const keys = async () => Number((await w.sql<{ n: unknown }>("SELECT count(*) AS n FROM api_keys"))[0]?.n);
      const before = await keys();
      await b.get("/dashboard/keys");
      const form = { _csrf: b.csrf(), name: "probe", groups: "read", expires: "30" };
      expect((await b.request("POST", "/dashboard/keys", form, evil)).status).toBe(403);
      expect((await b.request("POST", "/dashboard/keys", form, { origin: "http://localhost:8080" })).status).toBe(403);
      expect(await keys()).toBe(before);
      expect((await b.request("POST", "/dashboard/keys", form, { origin: BASE })).status).toBeLessThan(400);
      await b.get("/dashboard/keys");
      expect((await b.request("POST", "/dashboard/keys", { ...form, _csrf: b.csrf() })).status).toBeLessThan(400);
      expect(await keys()).toBe(before + 2);

      await b.get("/dashboard");
      expect((await b.request("POST", "/logout", { _csrf: b.csrf() }, evil)).status).toBe(403);
      expect((await b.get("/dashboard")).status).toBe(200);
    } finally {
      await w.close();
    }
  });

  test("first-run setup refuses a foreign Origin", async () => {
    const fresh = await createWorld();
    try {
      const b = new DashboardClient(fresh);
      await b.get("/setup");
      const form = { _csrf: b.csrf(), name: "Evil", ownerName: "E", email: "evil@probe.test", password: PASSWORD, confirm: PASSWORD };
      expect((await b.request("POST", "/setup", form, { origin: "https://evil.example" })).status).toBe(403);
      expect(Number((await fresh.sql<{ n: unknown }>("SELECT count(*) AS n FROM users"))[0]?.n)).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  test("the OAuth consent form refuses a foreign Origin", async () => {
    const registered = await register({ client_name: "Consent", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const clientId = (await registered.json()).client_id as string;
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, authorizeUrl(clientId), owner);
    const fields: [string, string][] = [...consent.hidden, ["decision", "allow"], ["groups", "read"]];
    const refused = await fetch(`${world.base}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: {
        cookie: [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; "),
        "content-type": "application/x-www-form-urlencoded",
        origin: "https://evil.example",
      },
      body: new URLSearchParams(fields).toString(),
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();
    expect((await browser.post("/oauth/authorize", fields)).status).toBe(303);
  });
});

describe("finding 5: client names lose control and format characters", () => {
  test("registration: a right-to-left override and control characters are removed", async () => {
    const response = await register({ client_name: `Safe${RLO}exe.pdf\u0007\u200B`, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    expect(response.status).toBe(201);
    const registered = await response.json();
    expect(registered.client_name).toBe("Safeexe.pdf");
    const { page } = await reachConsent(new FormBrowser(world.base), authorizeUrl(registered.client_id), owner);
    expect(page).toContain("Safeexe.pdf");
    expect(page).not.toContain(RLO);
  });

  test("a metadata document's name too", async () => {
    world.clock.advance(60_000);
    documents.set("/named.json", { client_id: `${docs.url}/named.json`, client_name: `Doc${RLO}gpj.exe`, redirect_uris: [REDIRECT] });
    const { page } = await reachConsent(new FormBrowser(world.base), authorizeUrl(`${docs.url}/named.json`), owner);
    expect(page).toContain("Docgpj.exe");
    expect(page).not.toContain(RLO);
  });
});

describe("finding 6: lone UTF-16 surrogates", () => {
  test("/api/v1 bodies: 400 invalid_request naming the field, nothing stored", async () => {
    const account = await world.createAccount();
    const seed = await world.call("POST", "/api/v1/seeds", { key: account.key, body: { title: "ok\uD800", content: "fine" } });
    expect(seed.status).toBe(400);
    expect(seed.json.error).toBe("invalid_request");
    expect(seed.json.details).toEqual([{ field: "title", problem: expect.stringContaining("surrogate") }]);
    expect((await world.call("GET", "/api/v1/seeds", { key: account.key })).json.seeds).toEqual([]);
    const voice = await world.call("PUT", "/api/v1/voice", { key: account.key, body: { bannedWords: ["fine", "\uDC00x"] } });
    expect(voice.status).toBe(400);
    expect(voice.json.details[0].field).toBe("bannedWords.1");
    // A proper pair (an emoji written as escapes) is text like any other.
    const emoji = await world.call("POST", "/api/v1/seeds", { key: account.key, rawBody: '{"title":"party \\uD83C\\uDF89","content":"fine"}', headers: { "content-type": "application/json" } });
    expect(emoji.status).toBe(201);
    expect(emoji.json.title).toBe("party 🎉");
  });

  test("MCP tool arguments: the REST envelope naming the field", async () => {
    const account = await world.createAccount();
    const id = await registerTestClient(world);
    const grant = await grantFor(world, id, account.accountId, account.userId, ["read", "create"]);
    const res = await rawMcpPost(`${world.base}/mcp`, toolsCall("create_seed", { title: "a\uDBFF", content: "b" }), { authorization: `Bearer ${grant.accessToken}`, accept: "application/json, text/event-stream" });
    expect(res.status).toBe(200);
    const result = JSON.parse(/data: (.*)/.exec(res.text)?.[1] ?? res.text).result;
    const refusal = refusalOf({ era: "legacy" }, result);
    expect(refusal.error).toBe("invalid_request");
    expect(refusal.details[0].field).toBe("title");
    expect((await world.call("GET", "/api/v1/seeds", { key: account.key })).json.seeds).toEqual([]);
  });

  test("OAuth registration: invalid_client_metadata naming client_name", async () => {
    const response = await register({ client_name: "bad\uD800", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe("invalid_client_metadata");
    expect(body.error_description).toContain("client_name");
  });
});
