/**
 * The OAuth authorization server's refusals, against the app on a real socket: redirect URIs matched exactly and
 * never redirected to when unregistered, registration rules, single-use codes whose replay revokes what they issued,
 * PKCE (S256 only), resource binding, refresh-token reuse, consent CSRF, the login's return address, the role cap,
 * account choice, and the token endpoint's RFC 6749 errors.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { removeMember } from "../src/modules/accounts/service";
import { authenticateAccessToken } from "../src/modules/oauth/access-token";
import { s256 } from "../src/modules/oauth/codes";
import {
  FormBrowser,
  type Person,
  type ServedWorld,
  locationOf,
  memberOf,
  ownerWithAccount,
  parseForms,
  reachConsent,
  servedWorld,
  PASSWORD,
} from "./helpers/oauth";

let world: ServedWorld;
let owner: Person;
const REDIRECT = "http://127.0.0.1:5000/cb";
const VERIFIER = "a".repeat(20) + "-._~" + "B".repeat(30);

beforeAll(async () => {
  world = await servedWorld();
  owner = await ownerWithAccount(world, "Security Co");
});
afterAll(() => world.stop());

/** A registration, with the clock moved on so the per-address limit (20 a minute) refills as it would for a person. */
async function register(metadata: Record<string, unknown>): Promise<Response> {
  world.clock.advance(3_000);
  return registerNow(metadata);
}

async function registerNow(metadata: Record<string, unknown>): Promise<Response> {
  return fetch(`${world.base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
}

async function publicClient(redirectUris: string[] = [REDIRECT]): Promise<string> {
  const response = await register({ client_name: "Probe", redirect_uris: redirectUris, token_endpoint_auth_method: "none" });
  expect(response.status).toBe(201);
  return (await response.json()).client_id;
}

function authorizeUrl(clientId: string, extra: Record<string, string | null> = {}): string {
  const url = new URL(`${world.base}/oauth/authorize`);
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256(VERIFIER),
    code_challenge_method: "S256",
    state: "st-123",
    ...extra,
  };
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return url.href;
}

/** Signs in as `person`, allows the consent (optionally with forged groups), and answers the code. */
async function obtainCode(clientId: string, person: Person = owner, opts: { groups?: string[]; extra?: Record<string, string | null> } = {}): Promise<string> {
  const browser = new FormBrowser(world.base);
  const { consent } = await reachConsent(browser, authorizeUrl(clientId, opts.extra), person);
  const fields: [string, string][] = [...consent.hidden, ["decision", "allow"]];
  const groups = opts.groups ?? consent.checkboxes.filter((c) => c.checked).map((c) => c.value);
  for (const g of groups) fields.push(["groups", g]);
  const answer = await browser.post("/oauth/authorize", fields);
  expect(answer.status).toBe(303);
  const code = new URL(locationOf(answer, world.base)).searchParams.get("code");
  if (!code) throw new Error(`no code in ${answer.headers.get("location")}`);
  return code;
}

async function token(fields: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; json: Record<string, string> }> {
  const response = await fetch(`${world.base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  expect(response.headers.get("cache-control")).toBe("no-store");
  return { status: response.status, json: await response.json() };
}

function exchange(clientId: string, code: string, extra: Record<string, string> = {}) {
  return token({ grant_type: "authorization_code", client_id: clientId, code, redirect_uri: REDIRECT, code_verifier: VERIFIER, ...extra });
}

describe("redirect URIs", () => {
  test("only an exact match is accepted; anything else is an error page that never redirects", async () => {
    const clientId = await publicClient();
    const near = [
      `${REDIRECT}/extra`,
      `${REDIRECT}?x=1`,
      "http://127.0.0.1:5000/c",
      "http://127.0.0.1:5001/cb",
      "http://127.0.0.1:5000/CB",
      "http://localhost:5000/cb",
      `https://evil.example/?${REDIRECT}`,
      `https://evil.example/cb`,
    ];
    for (const uri of near) {
      const response = await fetch(authorizeUrl(clientId, { redirect_uri: uri }), { redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain("redirect_uri");
    }
  });

  test("an unknown client is an error page, even with a plausible redirect_uri, and is never redirected", async () => {
    const response = await fetch(authorizeUrl("00000000-0000-7000-8000-000000000000"), { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toContain("not registered");
  });

  test("a tampered redirect_uri in the consent POST is refused without a redirect", async () => {
    const clientId = await publicClient();
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, authorizeUrl(clientId), owner);
    const fields = consent.hidden.map(([n, v]): [string, string] => [n, n === "redirect_uri" ? "https://evil.example/cb" : v]);
    const answer = await browser.post("/oauth/authorize", [...fields, ["decision", "allow"], ["groups", "read"]]);
    expect(answer.status).toBe(400);
    expect(answer.headers.get("location")).toBeNull();
  });

  test("registration accepts https, loopback http and dotted private-use schemes, and refuses the rest", async () => {
    for (const ok of ["https://app.example/cb", "http://127.0.0.1/cb", "http://[::1]:8080/cb", "http://localhost:6274/oauth/callback", "com.example.app:/oauth"]) {
      expect((await register({ redirect_uris: [ok], token_endpoint_auth_method: "none" })).status).toBe(201);
    }
    for (const bad of ["http://app.example/cb", "javascript:alert(1)", "myapp:/cb", "https://app.example/cb#x", "https://user:pw@app.example/cb", "/relative", ""]) {
      const response = await register({ redirect_uris: [bad], token_endpoint_auth_method: "none" });
      expect(response.status).toBe(400);
      expect((await response.json()).error).toBe("invalid_redirect_uri");
    }
    // Grant types Seedcast does not offer are left out of the registration (RFC 7591 §3.2.1), not refused.
    const vscodeLike = await register({
      redirect_uris: ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
      grant_types: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
      token_endpoint_auth_method: "none",
      scope: "openid profile",
    });
    expect(vscodeLike.status).toBe(201);
    expect((await vscodeLike.json()).grant_types).toEqual(["authorization_code", "refresh_token"]);
    const noCode = await register({ redirect_uris: [REDIRECT], grant_types: ["client_credentials"], token_endpoint_auth_method: "none" });
    expect((await noCode.json()).error).toBe("invalid_client_metadata");
    const noUris = await register({ client_name: "x" });
    expect((await noUris.json()).error).toBe("invalid_redirect_uri");
    const badMethod = await register({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt" });
    expect(badMethod.status).toBe(400);
    expect((await badMethod.json()).error).toBe("invalid_client_metadata");
    const notJson = await fetch(`${world.base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect((await notJson.json()).error).toBe("invalid_client_metadata");
  });
});

describe("authorization request checks (an error page before consent, never a redirect: RFC 9700 §4.11)", () => {
  test("PKCE is required and plain is refused", async () => {
    const clientId = await publicClient();
    for (const [extra, error] of [
      [{ code_challenge_method: "plain", code_challenge: VERIFIER }, "invalid_request"],
      [{ code_challenge: null, code_challenge_method: null }, "invalid_request"],
      [{ code_challenge_method: null }, "invalid_request"],
      [{ response_type: "token" }, "unsupported_response_type"],
      [{ scope: "read admin" }, "invalid_scope"],
      [{ resource: `${world.base}/api/v1` }, "invalid_target"],
      [{ resource: "https://other.example/mcp" }, "invalid_target"],
    ] as const) {
      const response = await fetch(authorizeUrl(clientId, extra), { redirect: "manual" });
      expect(response.status).toBe(400);
      expect(response.headers.get("location")).toBeNull();
      expect(await response.text()).toContain(`(${error})`);
    }
  });
});

describe("codes", () => {
  test("a code is single use: the second exchange is refused and revokes the tokens the first one issued", async () => {
    const clientId = await publicClient();
    const code = await obtainCode(clientId);
    const first = await exchange(clientId, code);
    expect(first.status).toBe(200);
    expect(await authenticateAccessToken(world.deps, first.json.access_token as string)).not.toBeNull();
    const second = await exchange(clientId, code);
    expect(second).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
    expect(await authenticateAccessToken(world.deps, first.json.access_token as string)).toBeNull();
    const refresh = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.json.refresh_token as string });
    expect(refresh).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
  });

  test("a wrong code_verifier is refused and spends the code", async () => {
    const clientId = await publicClient();
    const code = await obtainCode(clientId);
    expect(await exchange(clientId, code, { code_verifier: `${VERIFIER}x` })).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
    expect(await exchange(clientId, code)).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
  });

  test("a missing verifier, another redirect_uri, another client or a late exchange are refused", async () => {
    const clientId = await publicClient();
    const other = await publicClient();
    expect(await exchange(clientId, await obtainCode(clientId), { code_verifier: "" })).toMatchObject({ json: { error: "invalid_grant" } });
    expect(await exchange(clientId, await obtainCode(clientId), { redirect_uri: `${REDIRECT}/x` })).toMatchObject({ json: { error: "invalid_grant" } });
    expect(await exchange(other, await obtainCode(clientId))).toMatchObject({ json: { error: "invalid_grant" } });
    const late = await obtainCode(clientId);
    world.clock.advance(60_000);
    expect(await exchange(clientId, late)).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
  });

  test("the resource must match at the token endpoint", async () => {
    const clientId = await publicClient();
    const code = await obtainCode(clientId, owner, { extra: { resource: `${world.base}/mcp` } });
    expect(await exchange(clientId, code, { resource: "https://other.example/mcp" })).toMatchObject({ status: 400, json: { error: "invalid_target" } });
    const ok = await exchange(clientId, await obtainCode(clientId, owner, { extra: { resource: `${world.base}/mcp` } }), { resource: `${world.base}/mcp` });
    expect(ok.status).toBe(200);
  });
});

describe("refresh tokens", () => {
  test("presenting a rotated refresh token revokes the whole grant", async () => {
    const clientId = await publicClient();
    const first = (await exchange(clientId, await obtainCode(clientId))).json;
    const second = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.refresh_token as string });
    expect(second.status).toBe(200);
    expect(await authenticateAccessToken(world.deps, second.json.access_token as string)).not.toBeNull();
    const replay = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: first.refresh_token as string });
    expect(replay).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
    expect(await authenticateAccessToken(world.deps, second.json.access_token as string)).toBeNull();
    const latest = await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: second.json.refresh_token as string });
    expect(latest).toMatchObject({ status: 400, json: { error: "invalid_grant" } });
  });

  test("a removed member's refresh token is refused", async () => {
    const clientId = await publicClient();
    const editor = await memberOf(world, owner.accountId, "editor");
    const pair = (await exchange(clientId, await obtainCode(clientId, editor))).json;
    await removeMember(world.deps, owner.accountId, editor.userId);
    expect(await authenticateAccessToken(world.deps, pair.access_token as string)).toBeNull();
    expect(await token({ grant_type: "refresh_token", client_id: clientId, refresh_token: pair.refresh_token as string })).toMatchObject({
      status: 400,
      json: { error: "invalid_grant" },
    });
  });
});

describe("consent", () => {
  test("the consent POST without the session's CSRF token changes nothing and issues no code", async () => {
    const clientId = await publicClient();
    const browser = new FormBrowser(world.base);
    const { consent } = await reachConsent(browser, authorizeUrl(clientId), owner);
    const withoutToken = consent.hidden.filter(([n]) => n !== "_csrf");
    for (const csrf of [null, "forged-token", "x".repeat(43)]) {
      const fields: [string, string][] = [...withoutToken, ["decision", "allow"], ["groups", "read"]];
      if (csrf) fields.push(["_csrf", csrf]);
      const answer = await browser.post("/oauth/authorize", fields);
      expect(answer.status).toBe(403);
      expect(answer.headers.get("location")).toBeNull();
    }
    // Without any session, the POST goes to the login page, not to the client.
    const anonymous = await new FormBrowser(world.base).post("/oauth/authorize", [...consent.hidden, ["decision", "allow"], ["groups", "read"]]);
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toStartWith("/login");
  });

  test("the consent page is in plain words, pre-checks what was asked, and a viewer can never get more than read", async () => {
    const clientId = await publicClient();
    const browser = new FormBrowser(world.base);
    const asked = await reachConsent(browser, authorizeUrl(clientId, { scope: "read schedule" }), owner);
    expect(asked.page).toContain("Schedule posts to your connected social accounts");
    expect(asked.consent.checkboxes.map((c) => [c.value, c.checked])).toEqual([
      ["read", true],
      ["create", false],
      ["schedule", true],
      ["voice", false],
    ]);

    const viewer = await memberOf(world, owner.accountId, "viewer");
    const viewerView = await reachConsent(new FormBrowser(world.base), authorizeUrl(clientId, { scope: "read create schedule voice" }), viewer);
    expect(viewerView.consent.checkboxes.map((c) => c.value)).toEqual(["read"]);
    expect(viewerView.page).toContain("Your role (viewer) allows only Read access");
    const code = await obtainCode(clientId, viewer, { groups: ["read", "create", "schedule", "voice"] });
    const pair = await exchange(clientId, code);
    expect(pair.json.scope).toBe("read");
    expect((await authenticateAccessToken(world.deps, pair.json.access_token as string))?.scopes).toEqual(["read"]);
    // Nothing ticked a viewer may hold: the page asks again instead of issuing a code.
    const browser2 = new FormBrowser(world.base);
    const again = await reachConsent(browser2, authorizeUrl(clientId), viewer);
    const answer = await browser2.post("/oauth/authorize", [...again.consent.hidden, ["decision", "allow"], ["groups", "create"]]);
    expect(answer.status).toBe(400);
    expect(answer.headers.get("location")).toBeNull();
  });

  test("a person in several accounts picks one; an account they are not in is refused", async () => {
    const clientId = await publicClient();
    const second = await ownerWithAccount(world, "Second Co");
    const editor = await memberOf(world, second.accountId, "editor");
    // Add the same person to the first account too, as a viewer.
    const { members } = await import("../src/db/tables");
    await world.store.write(async (tx) => {
      await tx.insert(members).values({ accountId: owner.accountId, userId: editor.userId, role: "viewer", createdAt: world.clock.now() }).run();
    });

    const browser = new FormBrowser(world.base);
    const first = await reachConsent(browser, authorizeUrl(clientId), editor);
    const picker = first.forms.find((f) => f.method === "GET" && f.selects.some((s) => s.name === "account"));
    expect(picker?.selects[0]?.options.map((o) => o.value).sort()).toEqual([owner.accountId, second.accountId].sort());
    // Choose the first account (where the person is a viewer) through the picker, as a browser would.
    const chosen = { ...picker!, selects: [{ name: "account", options: [{ value: owner.accountId, selected: true }] }] };
    const page = await (await browser.submit(chosen)).text();
    const consent = parseForms(page).find((f) => f.method === "POST" && f.action === "/oauth/authorize")!;
    expect(consent.hidden.find(([n]) => n === "account")?.[1]).toBe(owner.accountId);
    expect(consent.checkboxes.map((c) => c.value)).toEqual(["read"]);
    const answer = await browser.submit(consent, { button: ["decision", "allow"] });
    const code = new URL(locationOf(answer, world.base)).searchParams.get("code") as string;
    const pair = await exchange(clientId, code);
    expect(await authenticateAccessToken(world.deps, pair.json.access_token as string)).toMatchObject({ accountId: owner.accountId, scopes: ["read"] });

    const outsider = await ownerWithAccount(world, "Outsider");
    const forged = consent.hidden.map(([n, v]): [string, string] => [n, n === "account" ? outsider.accountId : v]);
    const refused = await browser.post("/oauth/authorize", [...forged, ["decision", "allow"], ["groups", "read"]]);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("location")).toBeNull();
  });
});

describe("the login's return address", () => {
  test("sign-in from /oauth/authorize comes back to the same request", async () => {
    const clientId = await publicClient();
    const url = authorizeUrl(clientId, { scope: "read create", resource: `${world.base}/mcp` });
    const browser = new FormBrowser(world.base);
    const toLogin = await browser.get(url);
    expect(toLogin.status).toBe(303);
    const loginUrl = new URL(locationOf(toLogin, world.base));
    expect(loginUrl.pathname).toBe("/login");
    const next = loginUrl.searchParams.get("next") as string;
    const back = new URL(next, world.base);
    expect(back.pathname).toBe("/oauth/authorize");
    expect(Object.fromEntries(back.searchParams)).toEqual(Object.fromEntries(new URL(url).searchParams));
  });

  test("no open redirect: another origin or a path outside the dashboard is ignored", async () => {
    for (const next of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "/oauth/authorizeX?x=1", "/oauth/authorize/../../x", "https:evil.example", "/oauth/authorize?x=http://evil"]) {
      const browser = new FormBrowser(world.base);
      const page = await (await browser.get(`/login?next=${encodeURIComponent(next)}`)).text();
      const login = parseForms(page).find((f) => f.action === "/login")!;
      expect(login.hidden.some(([n]) => n === "next")).toBe(false);
      const answer = await browser.post("/login", [...login.hidden, ["next", next], ["email", owner.email], ["password", PASSWORD]]);
      expect(answer.status).toBe(303);
      expect(answer.headers.get("location")).toBe("/dashboard");
    }
  });
});

describe("token endpoint errors (RFC 6749 §5.2)", () => {
  test("grant types, content type, repeated parameters and unknown clients", async () => {
    const clientId = await publicClient();
    expect(await token({ client_id: clientId })).toMatchObject({ status: 400, json: { error: "invalid_request" } });
    expect(await token({ grant_type: "password", client_id: clientId })).toMatchObject({ status: 400, json: { error: "unsupported_grant_type" } });
    expect(await token({ grant_type: "client_credentials", client_id: clientId })).toMatchObject({ json: { error: "unsupported_grant_type" } });
    expect(await token({ grant_type: "refresh_token", client_id: "nobody", refresh_token: "scr_x" })).toMatchObject({ status: 401, json: { error: "invalid_client" } });
    expect(await token({ grant_type: "authorization_code", client_id: clientId })).toMatchObject({ status: 400, json: { error: "invalid_request" } });
    const json = await fetch(`${world.base}/oauth/token`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(json.status).toBe(400);
    expect((await json.json()).error).toBe("invalid_request");
    const twice = await fetch(`${world.base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `grant_type=refresh_token&grant_type=authorization_code&client_id=${clientId}`,
    });
    expect((await twice.json()).error).toBe("invalid_request");
    const revokeMissing = await fetch(`${world.base}/oauth/revoke`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "" });
    expect(revokeMissing.status).toBe(400);
  });

  test("open registration is limited per address", async () => {
    let limited: Response | null = null;
    for (let i = 0; i < 40 && !limited; i++) {
      const response = await registerNow({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
      if (response.status === 429) limited = response;
    }
    expect(limited).not.toBeNull();
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    world.clock.advance(60_000);
    expect((await registerNow({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })).status).toBe(201);
  });
});

describe("malformed input never answers 500", () => {
  test("garbage at every OAuth endpoint gets a 4xx", async () => {
    const clientId = await publicClient();
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const cases: [string, string, RequestInit][] = [
      ["token, binary body", "/oauth/token", { method: "POST", headers: form, body: new Uint8Array([0xff, 0xfe, 0x00, 0x80]) }],
      ["token, broken percent-encoding", "/oauth/token", { method: "POST", headers: form, body: "grant_type=%E0%A4%A&client_id=%" }],
      ["token, Basic without colon", "/oauth/token", { method: "POST", headers: { ...form, authorization: "Basic bm9jb2xvbg==" }, body: "grant_type=refresh_token&refresh_token=x" }],
      ["token, Basic with bad escapes", "/oauth/token", { method: "POST", headers: { ...form, authorization: `Basic ${btoa("%zz:%zz")}` }, body: "grant_type=refresh_token&refresh_token=x" }],
      ["token, huge body", "/oauth/token", { method: "POST", headers: form, body: `grant_type=refresh_token&refresh_token=${"a".repeat(200_000)}` }],
      ["token, no body", "/oauth/token", { method: "POST" }],
      ["token, long code", "/oauth/token", { method: "POST", headers: form, body: `grant_type=authorization_code&client_id=${clientId}&code=scc_${"A".repeat(5000)}` }],
      ["register, array body", "/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: "[1,2]" }],
      ["register, null", "/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: "null" }],
      ["register, wrong types", "/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: [1, {}], client_name: 5 }) }],
      ["register, form body", "/oauth/register", { method: "POST", headers: form, body: "redirect_uris=x" }],
      ["revoke, form without token", "/oauth/revoke", { method: "POST", headers: form, body: "token_type_hint=access_token" }],
      ["authorize, repeated params", `/oauth/authorize?client_id=${clientId}&client_id=${clientId}`, {}],
      ["authorize, huge client_id", `/oauth/authorize?client_id=${"x".repeat(5000)}`, {}],
      ["authorize, URL client_id with spaces", `/oauth/authorize?client_id=${encodeURIComponent("https://exa mple.com/x")}`, {}],
      ["authorize, URL client_id not normal", `/oauth/authorize?client_id=${encodeURIComponent("https://EXAMPLE.com/./x")}`, {}],
      ["authorize POST without session", "/oauth/authorize", { method: "POST", headers: form, body: "%%%" }],
      ["unknown OAuth path", "/oauth/nothing", {}],
    ];
    for (const [name, path, init] of cases) {
      const response = await fetch(`${world.base}${path}`, { redirect: "manual", ...init });
      expect([name, response.status >= 400 && response.status < 500 || response.status === 303]).toEqual([name, true]);
    }
  });
});

describe("request bodies are capped as they stream (hardening finding 1, for the OAuth routes)", () => {
  /** A chunked body of `total` bytes that records how much of it the server pulled. */
  function countedBody(total: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return { body, pulled: () => sent };
  }

  test("a chunked 8 MiB token request is refused without the server reading it all", async () => {
    const { body, pulled } = countedBody(8 * 1024 * 1024);
    const response = await fetch(`${world.base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("invalid_request");
    expect(pulled()).toBeLessThan(4 * 1024 * 1024);
  });

  test("a declared 5 MiB consent form is refused before a byte is read", async () => {
    const response = await fetch(`${world.base}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "content-length": String(5 * 1024 * 1024) },
      body: "a".repeat(5 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
  });
});
