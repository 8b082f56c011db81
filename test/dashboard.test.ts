/**
 * Dashboard security, in process (app.handle, manual clock): no page without a session, CSRF on every POST,
 * secure cookies, login rate limit, expired sessions, secrets shown once, viewer limits, and no cross-account leaks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { addMember, createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { generateCreation } from "../src/modules/creations/service";
import { schedulePost } from "../src/modules/schedule/service";
import { createSeed } from "../src/modules/seeds/service";
import { DEFAULT_TOKEN, startMastodonServer } from "./peers/mastodon-server";
import { startWebhookReceiver } from "./peers/webhook-receiver";
import { listKeys, mintKey } from "../src/modules/auth/keys-service";
import { LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS } from "../src/modules/dashboard/login-limit";
import { SESSION_IDLE_MS, tidySessions } from "../src/web/session";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";

/** The `n` of a `SELECT count(*) AS n …` through world.sql (PostgreSQL answers it as a string). */
async function countOf(world: World, text: string, ...params: unknown[]): Promise<number> {
  return Number((await world.sql<{ n: unknown }>(text, ...params))[0]?.n);
}

/** The in-process dashboard client, under the name this file always used. */
const Browser = DashboardClient;
type Browser = DashboardClient;

const PAGES = [
  "/dashboard",
  "/dashboard/keys",
  "/dashboard/members",
  "/dashboard/credits",
  "/dashboard/instance",
  "/dashboard/connections",
  "/dashboard/calendar",
  "/dashboard/library",
  "/dashboard/creations",
  "/dashboard/voice",
  "/dashboard/keys/00000000-0000-7000-8000-000000000000/revoke",
  "/dashboard/no-such-page",
];
const ACTIONS = [
  "/dashboard/keys",
  "/dashboard/keys/00000000-0000-7000-8000-000000000000/rotate",
  "/dashboard/keys/00000000-0000-7000-8000-000000000000/revoke",
  "/dashboard/members",
  "/dashboard/credits/grant",
  "/dashboard/instance/accounts",
  "/dashboard/switch-account",
];

describe("first-run setup", () => {
  let world: World;
  beforeAll(async () => {
    world = await createWorld();
  });
  afterAll(() => world.close());

  test("an empty instance sends /login to /setup; setup needs its form token; creates the admin owner once", async () => {
    const b = new Browser(world);
    expect((await b.get("/login")).location).toBe("/setup");
    const form = await b.get("/setup");
    expect(form.status).toBe(200);
    expect(form.text).toContain('<label for="email">');
    expect(form.text).toContain('<label for="ownerName">Your name</label>');

    // Without the form token nothing is created.
    const stale = await b.request("POST", "/setup", { name: "Acme", email: "admin@acme.test", password: PASSWORD, confirm: PASSWORD, _csrf: "x".repeat(43) });
    expect(stale.status).toBe(403);
    expect(await countOf(world, "SELECT count(*) AS n FROM users")).toBe(0);

    // The person's name is asked for separately from the account's.
    const done = await b.request("POST", "/setup", { _csrf: b.csrf(), name: "Acme", ownerName: "Ada Admin", email: "admin@acme.test", password: PASSWORD, confirm: PASSWORD });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/dashboard");
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith("seedcast_session="));
    expect(cookie).toBeDefined();
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure"); // BASE_URL is http here
    const admin = (await world.sql("SELECT is_instance_admin AS a, name FROM users WHERE email = ?", "admin@acme.test"))[0];
    expect({ a: Boolean(admin?.a), name: admin?.name }).toEqual({ a: true, name: "Ada Admin" });
    expect(await world.sql("SELECT name FROM accounts")).toEqual([{ name: "Acme" }]);
    // The stored session is a hash, never the cookie's token.
    const token = cookie?.split(";")[0]?.split("=")[1] ?? "";
    expect(await countOf(world, "SELECT count(*) AS n FROM sessions WHERE token_hash = ?", token)).toBe(0);

    const overview = await b.get("/dashboard");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("Acme");
    expect(overview.text).toContain('href="/dashboard/settings"');
    expect((await b.get("/dashboard/settings")).text).toContain('href="/dashboard/instance"');

    // Setup is closed for good now.
    const other = new Browser(world);
    expect((await other.get("/setup")).location).toBe("/login");
    const again = await other.request("POST", "/setup", { name: "Evil", email: "evil@x.test", password: PASSWORD, confirm: PASSWORD });
    expect(again.location).toBe("/login");
    expect(await countOf(world, "SELECT count(*) AS n FROM users")).toBe(1);
  });
});

describe("first-run setup race", () => {
  test("two simultaneous setups create exactly one instance admin", async () => {
    const world = await createWorld();
    try {
      const one = new Browser(world);
      const two = new Browser(world);
      await one.get("/setup");
      await two.get("/setup");
      const form = (b: Browser, email: string) => ({ _csrf: b.csrf(), name: "Race", email, password: PASSWORD, confirm: PASSWORD });
      const [r1, r2] = await Promise.all([one.request("POST", "/setup", form(one, "one@race.test")), two.request("POST", "/setup", form(two, "two@race.test"))]);
      expect([r1.location, r2.location].sort()).toEqual(["/dashboard", "/login"]);
      expect(await countOf(world, "SELECT count(*) AS n FROM users")).toBe(1);
      expect(await countOf(world, "SELECT count(*) AS n FROM accounts")).toBe(1);
    } finally {
      await world.close();
    }
  });
});

describe("https cookies", () => {
  test("with an https BASE_URL the cookie is Secure and __Host- prefixed", async () => {
    const world = await createWorld({ env: { BASE_URL: "https://seedcast.example" } });
    try {
      await createAccount(world.deps, { name: "S", email: "s@s.test", password: PASSWORD });
      const b = new Browser(world, "https://seedcast.example");
      const res = await b.login("s@s.test");
      expect(res.status).toBe(303);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-seedcast_session="));
      expect(cookie).toContain("Secure");
      expect(cookie).toContain("HttpOnly");
      expect(cookie).toContain("Path=/");
      expect((await b.get("/dashboard")).status).toBe(200);
    } finally {
      await world.close();
    }
  });
});

describe("sessions, CSRF, rate limit", () => {
  let world: World;
  let accountA: { accountId: string; userId: string };
  let accountB: { accountId: string; userId: string };
  beforeAll(async () => {
    world = await createWorld();
    accountA = await createAccount(world.deps, { name: "Alpha Co", email: "a@alpha.test", password: PASSWORD });
    accountB = await createAccount(world.deps, { name: "Beta Co", email: "b@beta.test", password: PASSWORD });
  });
  afterAll(() => world.close());

  test("no page and no action answers without a session: all redirect to /login", async () => {
    const b = new Browser(world);
    for (const path of PAGES) {
      const res = await b.get(path);
      const expected = path === "/dashboard" ? "/login" : `/login?next=${encodeURIComponent(path)}`;
      expect([path, res.status, res.location]).toEqual([path, 303, expected]);
    }
    for (const path of ACTIONS) {
      const res = await b.request("POST", path, { _csrf: "anything" });
      expect([path, res.status, res.location]).toEqual([path, 303, "/login"]);
    }
    // A forged or unknown cookie is the same as none.
    b.cookies.set("seedcast_session", "forged-token");
    expect((await b.get("/dashboard/keys")).location).toBe("/login?next=%2Fdashboard%2Fkeys");
  });

  test("wrong password is refused; after the limit even the right one waits, per email+address", async () => {
    const b = new Browser(world);
    for (let i = 0; i < LOGIN_MAX_FAILURES; i++) {
      const res = await b.login("b@beta.test", "wrong password!");
      expect(res.status).toBe(401);
      expect(res.text).toContain("do not match");
    }
    const limited = await b.login("b@beta.test");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another email from the same place is not affected.
    expect((await new Browser(world).login("a@alpha.test")).status).toBe(303);
    world.clock.advance(LOGIN_WINDOW_MS);
    expect((await b.login("b@beta.test")).status).toBe(303);
  });

  test("login needs its form token", async () => {
    const b = new Browser(world);
    await b.get("/login");
    const res = await b.request("POST", "/login", { email: "a@alpha.test", password: PASSWORD });
    expect(res.status).toBe(403);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("seedcast_session="))).toBe(false);
  });

  test("an expired session gets a clear page, not data", async () => {
    const b = new Browser(world);
    expect((await b.login("a@alpha.test")).status).toBe(303);
    expect((await b.get("/dashboard/keys")).status).toBe(200);
    world.clock.advance(SESSION_IDLE_MS + 1000);
    const res = await b.get("/dashboard/keys");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/login?expired=1&next=%2Fdashboard%2Fkeys");
    const page = await b.get(res.location ?? "");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Your session has expired");
    // The housekeeping job deletes sessions past their expiry, and only those.
    const live = new Browser(world);
    await live.login("b@beta.test");
    const before = await countOf(world, "SELECT count(*) AS n FROM sessions");
    world.clock.advance(1000);
    const removed = await tidySessions(world.deps);
    const after = await countOf(world, "SELECT count(*) AS n FROM sessions");
    expect(after).toBe(before - removed);
    expect((await live.get("/dashboard")).status).toBe(200);
  });

  test("every POST needs the session's CSRF token; nothing changes without it", async () => {
    const b = new Browser(world);
    await b.login("a@alpha.test");
    const other = new Browser(world);
    await other.login("b@beta.test");
    await other.get("/dashboard/keys");
    const otherToken = other.csrf();
    const before = (await listKeys(world.deps, accountA.accountId)).length;
    const cases: Record<string, string>[] = [{}, { _csrf: "" }, { _csrf: "not-the-token" }, { _csrf: otherToken }];
    for (const extra of cases) {
      const res = await b.request("POST", "/dashboard/keys", { name: "sneaky", groups: "read", expires: "30", ...extra });
      expect(res.status).toBe(403);
      expect(res.text).toContain("nothing was changed");
    }
    expect((await listKeys(world.deps, accountA.accountId)).length).toBe(before);
    // Logout without the token does not sign out.
    await b.request("POST", "/logout", {});
    expect((await b.get("/dashboard")).status).toBe(200);
    // With it, the session is gone server-side.
    await b.get("/dashboard");
    const out = await b.request("POST", "/logout", { _csrf: b.csrf() });
    expect(out.location).toBe("/login?out=1");
    expect((await b.get("/dashboard")).location).toBe("/login");
  });

  test("sign-in returns to the page asked for (manageUrl), and only to a dashboard page", async () => {
    const b = new Browser(world);
    const first = await b.get("/dashboard/connections");
    expect(first.location).toBe("/login?next=%2Fdashboard%2Fconnections");
    const form = await b.get(first.location ?? "");
    expect(form.text).toContain('name="next" value="/dashboard/connections"');
    const signed = await b.request("POST", "/login", { _csrf: b.csrf(), email: "a@alpha.test", password: PASSWORD, next: "/dashboard/connections" });
    expect(signed.location).toBe("/dashboard/connections");
    for (const evil of ["//evil.example/x", "https://evil.example/", "/dashboard//evil.example", "/\\evil.example", "/login", "javascript:alert(1)"]) {
      const other = new Browser(world);
      await other.get(`/login?next=${encodeURIComponent(evil)}`);
      expect(other.lastHtml).not.toContain('name="next"');
      const res = await other.request("POST", "/login", { _csrf: other.csrf(), email: "a@alpha.test", password: PASSWORD, next: evil });
      expect([evil, res.location]).toEqual([evil, "/dashboard"]);
    }
  });

  test("pages are no-store and locked down by CSP", async () => {
    const b = new Browser(world);
    await b.login("a@alpha.test");
    const res = await b.get("/dashboard/keys");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const css = await b.get("/dashboard/static/dashboard.css");
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toContain("text/css");
    const js = await b.get("/dashboard/static/dashboard.js");
    expect(js.headers.get("content-type")).toContain("javascript");
  });

  describe("keys", () => {
    test("a minted secret is shown once, works, and never appears again", async () => {
      const b = new Browser(world);
      await b.login("a@alpha.test");
      const posted = await b.submit("/dashboard/keys", "/dashboard/keys", { name: "CI <script>alert(1)</script>", groups: ["read", "schedule"], expires: "30" });
      // Post/redirect/get: the secret is on the page the redirect leads to, once.
      expect(posted.status).toBe(303);
      expect(posted.location).toMatch(/^\/dashboard\/keys\?shown=[A-Za-z0-9_-]{43}$/);
      expect(posted.location).not.toContain("svc_");
      const res = await b.get(posted.location ?? "");
      expect(res.status).toBe(200);
      const secret = /value="(svc_[0-9A-Za-z]+)"/.exec(res.text)?.[1] ?? "";
      expect(secret).toMatch(/^svc_/);
      expect(res.text).toContain("will not be shown again");
      expect(res.text).not.toContain("<script>alert(1)</script>");
      expect(res.text).toContain("&lt;script&gt;");
      const health = await world.call("GET", "/api/v1/health", { key: secret });
      expect(health.status).toBe(200);
      expect(health.json.scopes).toEqual(["read", "schedule"]);
      // Reloading the page the redirect led to neither shows the secret again nor mints another key.
      const keysBefore = (await listKeys(world.deps, accountA.accountId)).length;
      const reload = await b.get(posted.location ?? "");
      expect(reload.text).not.toContain(secret);
      expect(reload.text).toContain("is not shown again");
      expect((await listKeys(world.deps, accountA.accountId)).length).toBe(keysBefore);
      for (const path of ["/dashboard/keys", "/dashboard", "/dashboard/credits"]) {
        expect((await b.get(path)).text).not.toContain(secret);
      }
      // Not in the database either.
      const dump = JSON.stringify(await world.sql("SELECT * FROM api_keys"));
      expect(dump).not.toContain(secret);
    });

    test("rotate shows the replacement once with the grace end; revoke confirms then answers 401", async () => {
      const b = new Browser(world);
      await b.login("a@alpha.test");
      const mintedAt = await b.submit("/dashboard/keys", "/dashboard/keys", { name: "rotating", groups: "read", expires: "90" });
      const minted = await b.get(mintedAt.location ?? "");
      const oldSecret = /value="(svc_[0-9A-Za-z]+)"/.exec(minted.text)?.[1] ?? "";
      const key = (await listKeys(world.deps, accountA.accountId)).find((k) => k.name === "rotating");
      const ask = await b.get(`/dashboard/keys/${key?.id}/rotate`);
      expect(ask.text).toContain("Rotate the key <strong>rotating</strong>");
      const rotatedAt = await b.request("POST", `/dashboard/keys/${key?.id}/rotate`, { _csrf: b.csrf() });
      expect(rotatedAt.status).toBe(303);
      const rotated = await b.get(rotatedAt.location ?? "");
      expect(rotated.status).toBe(200);
      const newSecret = /value="(svc_[0-9A-Za-z]+)"/.exec(rotated.text)?.[1] ?? "";
      expect(newSecret).not.toBe(oldSecret);
      expect(rotated.text).toContain("keeps working until");
      expect((await world.call("GET", "/api/v1/health", { key: oldSecret })).status).toBe(200);
      expect((await world.call("GET", "/api/v1/health", { key: newSecret })).status).toBe(200);
      expect((await b.get("/dashboard/keys")).text).not.toContain(newSecret);

      const confirm = await b.get(`/dashboard/keys/${key?.id}/revoke`);
      expect(confirm.text).toContain("cannot be undone");
      const revoked = await b.request("POST", `/dashboard/keys/${key?.id}/revoke`, { _csrf: b.csrf() });
      expect(revoked.location).toBe("/dashboard/keys?notice=revoked");
      expect((await world.call("GET", "/api/v1/health", { key: oldSecret })).status).toBe(401);
    });

    test("a viewer is offered only Read, and the server refuses more", async () => {
      await addMember(world.deps, { accountId: accountA.accountId, email: "viewer@alpha.test", password: PASSWORD, role: "viewer" });
      const b = new Browser(world);
      await b.login("viewer@alpha.test");
      const page = await b.get("/dashboard/keys");
      expect(page.text).toContain('value="read"');
      for (const scope of ["create", "schedule", "voice"]) expect(page.text).not.toContain(`name="groups" value="${scope}"`);
      const before = (await listKeys(world.deps, accountA.accountId)).length;
      for (const groups of [["read", "create"], ["schedule"], ["voice"]]) {
        const res = await b.request("POST", "/dashboard/keys", { _csrf: b.csrf(), name: "too much", groups, expires: "30" });
        expect(res.status).toBe(403);
        expect(res.text).toContain("cannot grant");
        expect(res.text).not.toMatch(/value="svc_/);
      }
      expect((await listKeys(world.deps, accountA.accountId)).length).toBe(before);
      const ok = await b.request("POST", "/dashboard/keys", { _csrf: b.csrf(), name: "read only", groups: "read", expires: "never" });
      expect(ok.status).toBe(303);
      // Viewers do not manage members and are not instance admins.
      expect((await b.get("/dashboard/members")).status).toBe(403);
      expect((await b.get("/dashboard/instance")).status).toBe(403);
    });
  });

  describe("cross-account isolation", () => {
    test("a session of one account never shows or touches another account's data", async () => {
      const aKey = await mintKey(world.deps, { accountId: accountA.accountId, userId: accountA.userId, name: "alpha-secret-name", groups: ["read"], expiresDays: 30 });
      const b = new Browser(world);
      await b.login("b@beta.test");
      for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/members", "/dashboard/credits"]) {
        const res = await b.get(path);
        expect(res.status).toBe(200);
        expect(res.text).not.toContain("alpha-secret-name");
        expect(res.text).not.toContain("a@alpha.test");
        expect(res.text).not.toContain("Alpha Co");
        expect(res.text).not.toContain(aKey.id);
      }
      // Acting on A's key from B's session: the same 404 as a random id, and nothing changes.
      await b.get("/dashboard/keys");
      const token = b.csrf();
      const random = "00000000-0000-7000-8000-000000000000";
      for (const id of [aKey.id, random]) {
        expect((await b.request("POST", `/dashboard/keys/${id}/revoke`, { _csrf: token })).status).toBe(404);
        expect((await b.request("POST", `/dashboard/keys/${id}/rotate`, { _csrf: token })).status).toBe(404);
        expect((await b.get(`/dashboard/keys/${id}/revoke`)).status).toBe(404);
      }
      expect((await listKeys(world.deps, accountA.accountId)).find((k) => k.id === aKey.id)?.state).toBe("active");
      // Members of A cannot be changed or removed from B.
      expect((await b.request("POST", `/dashboard/members/${accountA.userId}/remove`, { _csrf: token })).status).toBe(404);
      expect((await b.request("POST", `/dashboard/members/${accountA.userId}/role`, { _csrf: token, role: "viewer" })).status).toBe(404);
      expect((await world.sql("SELECT role FROM members WHERE user_id = ?", accountA.userId))[0]).toEqual({ role: "owner" });
      // Switching to an account one is not a member of does nothing.
      await b.request("POST", "/dashboard/switch-account", { _csrf: token, accountId: accountA.accountId });
      expect((await b.get("/dashboard/keys")).text).not.toContain("alpha-secret-name");
      // Non-admins cannot grant credits or disable accounts.
      expect((await b.request("POST", "/dashboard/credits/grant", { _csrf: token, amount: "500" })).status).toBe(403);
      expect((await b.request("POST", `/dashboard/instance/accounts/${accountA.accountId}/disable`, { _csrf: token })).status).toBe(403);
      const untouched = (await world.sql("SELECT credits_balance AS c, disabled_at AS d FROM accounts WHERE id = ?", accountB.accountId))[0];
      expect({ c: Number(untouched?.c), d: untouched?.d }).toEqual({ c: 100, d: null });
    });
  });

  describe("owner and admin pages", () => {
    test("an owner adds a person, changes the role, removes them; the last owner stays", async () => {
      const b = new Browser(world);
      await b.login("b@beta.test");
      const add = await b.submit("/dashboard/members", "/dashboard/members", { name: "Ed", email: "ed@beta.test", password: PASSWORD, role: "editor" });
      expect(add.location).toBe("/dashboard/members?notice=member-added");
      const ed = (await world.sql("SELECT id FROM users WHERE email = ?", "ed@beta.test"))[0] as { id: string };
      expect((await b.submit("/dashboard/members", `/dashboard/members/${ed.id}/role`, { role: "viewer" })).status).toBe(303);
      expect((await world.sql("SELECT role FROM members WHERE user_id = ?", ed.id))[0]).toEqual({ role: "viewer" });
      const last = await b.submit("/dashboard/members", `/dashboard/members/${accountB.userId}/role`, { role: "editor" });
      expect(last.status).toBe(400);
      expect(last.text).toContain("at least one owner");
      expect((await b.get(`/dashboard/members/${ed.id}/remove`)).text).toContain("ed@beta.test");
      expect((await b.request("POST", `/dashboard/members/${ed.id}/remove`, { _csrf: b.csrf() })).status).toBe(303);
      expect(await countOf(world, "SELECT count(*) AS n FROM members WHERE user_id = ?", ed.id)).toBe(0);
    });

    test("the instance admin creates, credits and disables accounts", async () => {
      // The first user created in this world is the admin.
      const b = new Browser(world);
      await b.login("a@alpha.test");
      expect((await b.get("/dashboard/instance")).status).toBe(200);
      const created = await b.submit("/dashboard/instance", "/dashboard/instance/accounts", { name: "Gamma", email: "g@gamma.test", password: PASSWORD, credits: "7" });
      expect(created.location).toBe("/dashboard/instance?notice=account-created");
      const gamma = (await world.sql("SELECT id, credits_balance AS c FROM accounts WHERE name = 'Gamma'"))[0] as { id: string; c: number };
      expect(Number(gamma.c)).toBe(7);
      expect((await b.submit("/dashboard/instance", `/dashboard/instance/accounts/${gamma.id}/grant`, { amount: "5" })).status).toBe(303);
      expect((await b.submit("/dashboard/instance", `/dashboard/instance/accounts/${gamma.id}/grant`, { amount: "-5" })).status).toBe(400);
      expect(Number((await world.sql("SELECT credits_balance AS c FROM accounts WHERE id = ?", gamma.id))[0]?.c)).toBe(12);
      expect((await b.submit("/dashboard/instance", `/dashboard/instance/accounts/${gamma.id}/disable`, {})).status).toBe(303);
      const g = new Browser(world);
      await g.login("g@gamma.test");
      expect((await g.get("/dashboard/keys")).text).toContain("not a member of any account");
      const before = Number((await world.sql("SELECT credits_balance AS c FROM accounts WHERE id = ?", accountA.accountId))[0]?.c);
      expect((await b.submit("/dashboard/credits", "/dashboard/credits/grant", { amount: "3", note: "launch bonus" })).location).toBe("/dashboard/credits?notice=granted");
      expect(Number((await world.sql("SELECT credits_balance AS c FROM accounts WHERE id = ?", accountA.accountId))[0]?.c)).toBe(before + 3);
      const credits = await b.get("/dashboard/credits");
      expect(credits.text).toContain("Credits granted (launch bonus)");
      expect(credits.text).toContain("launch bonus");
    });
  });
});

describe("content pages: isolation between accounts", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const ids = { asset: "", creation: "", post: "", connection: "", seed: "" };
  beforeAll(async () => {
    receiver = await startWebhookReceiver({ secret: "whsec-0123456789abcdef" });
    world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
    const a = await createAccount(world.deps, { name: "Alpha Media", email: "a@media.test", password: PASSWORD });
    await createAccount(world.deps, { name: "Beta Media", email: "b@media.test", password: PASSWORD });
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#123456" } }).png().toBuffer();
    ids.asset = (await ingestImageBytes(world.deps, a.accountId, { bytes: new Uint8Array(png), fileName: "alpha-secret.png", source: "upload" })).id;
    ids.seed = (await createSeed(world.deps, a.accountId, { title: "Alpha launch plans", content: "Private roadmap text.", category: "internal" })).id;
    ids.creation = (await generateCreation(world.deps, a.accountId, { type: "social_post", seed_id: ids.seed, image_asset_id: ids.asset })).creation.id;
    ids.connection = (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/alpha-hook`, secret: "whsec-0123456789abcdef" })).accountId;
    const when = new Date(world.clock.now() + 60 * 60 * 1000).toISOString();
    ids.post = (await schedulePost(world.deps, a.accountId, { creationId: ids.creation, scheduledTime: when, targets: [ids.connection] })).post.id;
  });
  afterAll(async () => {
    await world.close();
    await receiver.stop();
  });

  test("the owner sees their content on every page", async () => {
    const b = new Browser(world);
    await b.login("a@media.test");
    expect((await b.get("/dashboard/library")).text).toContain("alpha-secret.png");
    expect((await b.get("/dashboard/creations")).text).toContain("Alpha launch plans");
    expect((await b.get(`/dashboard/creations/${ids.creation}`)).status).toBe(200);
    expect((await b.get("/dashboard/connections")).text).toContain("/alpha-hook");
    const week = await b.get("/dashboard/calendar");
    expect(week.text).toContain(`post-${ids.post}`);
    expect((await b.get(`/dashboard/calendar?view=day&date=${new Date(world.clock.now()).toISOString().slice(0, 10)}`)).text).toContain(`post-${ids.post}`);
    // Credentials are never rendered back.
    expect((await b.get("/dashboard/connections")).text).not.toContain("whsec-0123456789abcdef");
  });

  test("another account's session sees none of it and cannot act on its ids (same 404 as a random id)", async () => {
    const b = new Browser(world);
    await b.login("b@media.test");
    const leaks = ["alpha-secret.png", "Alpha launch plans", "/alpha-hook", ids.asset, ids.creation, ids.post, ids.connection, "Alpha Media"];
    for (const path of ["/dashboard", "/dashboard/library", "/dashboard/creations", "/dashboard/connections", "/dashboard/calendar", "/dashboard/credits", "/dashboard/voice"]) {
      const res = await b.get(path);
      expect(res.status).toBe(200);
      for (const leak of leaks) expect([path, res.text.includes(leak)]).toEqual([path, false]);
    }
    await b.get("/dashboard/library");
    const token = b.csrf();
    const random = "01a20000-0000-7000-8000-000000000000";
    for (const id of [random, ids.creation]) expect((await b.get(`/dashboard/creations/${id}`)).status).toBe(404);
    expect((await b.get(`/dashboard/creations?seed=${ids.seed}`)).status).toBe(404);
    for (const id of [random, ids.asset]) {
      expect((await b.get(`/dashboard/library/${id}/delete`)).status).toBe(404);
      expect((await b.request("POST", `/dashboard/library/${id}/delete`, { _csrf: token })).status).toBe(404);
    }
    for (const id of [random, ids.post]) {
      expect((await b.get(`/dashboard/calendar/${id}/cancel`)).status).toBe(404);
      expect((await b.request("POST", `/dashboard/calendar/${id}/cancel`, { _csrf: token })).status).toBe(404);
    }
    for (const id of [random, ids.connection]) {
      expect((await b.request("POST", `/dashboard/connections/${id}/check`, { _csrf: token })).status).toBe(404);
      expect((await b.get(`/dashboard/connections/${id}/reconnect`)).status).toBe(404);
      expect((await b.request("POST", `/dashboard/connections/${id}/remove`, { _csrf: token })).status).toBe(404);
    }
    // Nothing of A's changed.
    expect(await countOf(world, "SELECT count(*) AS n FROM assets WHERE id = ?", ids.asset)).toBe(1);
    expect(await countOf(world, "SELECT count(*) AS n FROM scheduled_posts WHERE id = ?", ids.post)).toBe(1);
    expect(await countOf(world, "SELECT count(*) AS n FROM connections WHERE id = ?", ids.connection)).toBe(1);
  });

  test("content actions need the CSRF token too", async () => {
    const b = new Browser(world);
    await b.login("a@media.test");
    for (const path of [`/dashboard/library/${ids.asset}/delete`, `/dashboard/calendar/${ids.post}/cancel`, `/dashboard/connections/${ids.connection}/remove`, "/dashboard/voice"]) {
      expect([path, (await b.request("POST", path, { _csrf: "wrong" })).status]).toEqual([path, 403]);
    }
    expect(await countOf(world, "SELECT count(*) AS n FROM scheduled_posts WHERE id = ?", ids.post)).toBe(1);
  });

  test("an image in use by a scheduled post is not deleted; the page says why", async () => {
    const b = new Browser(world);
    await b.login("a@media.test");
    const res = await b.submit("/dashboard/library", `/dashboard/library/${ids.asset}/delete`, {});
    expect(res.status).toBe(409);
    expect(res.text).toContain("still uses this asset");
  });

  test("the owner cancels the post from the calendar", async () => {
    const b = new Browser(world);
    await b.login("a@media.test");
    expect((await b.get(`/dashboard/calendar/${ids.post}/cancel`)).text).toContain("Cancel the post");
    const res = await b.request("POST", `/dashboard/calendar/${ids.post}/cancel`, { _csrf: b.csrf() });
    expect(res.status).toBe(303);
    expect(res.location).toContain("notice=cancelled");
    expect(await countOf(world, "SELECT count(*) AS n FROM scheduled_posts WHERE id = ?", ids.post)).toBe(0);
  });

  test("brand voice is validated like the API and saved through the voice service", async () => {
    const b = new Browser(world);
    await b.login("a@media.test");
    const bad = await b.submit("/dashboard/voice", "/dashboard/voice", { tone: "x".repeat(201), audience: "", language: "en", emoji: "some", hashtags: "", bannedWords: "", signature: "" });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('id="tone-error">Describe the tone in at most 200 characters.</p>');
    const badTag = await b.submit("/dashboard/voice", "/dashboard/voice", { tone: "calm", audience: "", language: "en", emoji: "some", hashtags: "sea, grow your own", bannedWords: "", signature: "" });
    expect(badTag.status).toBe(400);
    // Beside its field, in words a person uses, naming the value; what was typed stays.
    expect(badTag.text).toContain('id="hashtags-error">Hashtags are single words: “grow your own” has spaces.</p>');
    expect(badTag.text).toMatch(/<textarea id="hashtags"[^>]*aria-invalid="true"[^>]*autofocus>sea, grow your own<\/textarea>/);
    const ok = await b.submit("/dashboard/voice", "/dashboard/voice", { tone: "calm", audience: "sailors", language: "en-GB", emoji: "none", hashtags: "sea, #boats", bannedWords: "cheap", signature: "— Alpha" });
    expect(ok.location).toBe("/dashboard/voice?notice=voice-saved");
    const page = await b.get("/dashboard/voice");
    expect(page.text).toContain('value="en-GB"');
    expect(page.text).toContain("#sea, #boats");
  });
});

describe("connections, library and failed posts through the dashboard", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let mastodon: Awaited<ReturnType<typeof startMastodonServer>>;
  let owner: { accountId: string; userId: string };
  const SECRET = "whsec-right-secret-0001";
  beforeAll(async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
    mastodon = await startMastodonServer();
    world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
    owner = await createAccount(world.deps, { name: "Gamma", email: "o@gamma.test", password: PASSWORD });
    await addMember(world.deps, { accountId: owner.accountId, email: "v@gamma.test", password: PASSWORD, role: "viewer" });
  });
  afterAll(async () => {
    await world.close();
    await receiver.stop();
    await mastodon.stop();
  });

  const connectionIds = async () => (await world.sql<{ id: string }>("SELECT id FROM connections ORDER BY created_at")).map((r) => r.id);

  test("a webhook with the wrong secret is not added: the form says what to fix; reconnecting keeps its id and fixes it", async () => {
    const b = new Browser(world);
    await b.login("o@gamma.test");
    const res = await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "webhook", url: `${receiver.url}/hook`, secret: "whsec-wrong-secret-0002" });
    // Nothing is stored: the form comes back with the address typed and what to fix beside the secret.
    expect(res.status).toBe(400);
    expect(res.text).toContain("Not connected: the check failed.");
    expect(res.text).toMatch(/id="webhook-secret-error">[^<]*same signing secret/);
    expect(res.text).toContain(`value="${receiver.url}/hook"`);
    expect(res.text).not.toContain("whsec-wrong-secret-0002");
    expect(await connectionIds()).toEqual([]);
    expect((await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "webhook", url: `${receiver.url}/hook`, secret: SECRET })).location).toBe(
      "/dashboard/connections?notice=connected",
    );
    const [oldId] = await connectionIds();
    // A wrong secret at reconnect: still one connection, same id, not ready, saying why.
    const refused = await b.submit(`/dashboard/connections/${oldId}/reconnect`, `/dashboard/connections/${oldId}/reconnect`, { url: `${receiver.url}/hook`, secret: "whsec-wrong-secret-0003" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("do not work yet");
    expect(refused.text).toContain("needs attention");
    expect(await connectionIds()).toEqual([oldId ?? ""]);
    const fixed = await b.submit(`/dashboard/connections/${oldId}/reconnect`, `/dashboard/connections/${oldId}/reconnect`, { url: `${receiver.url}/hook`, secret: SECRET });
    expect(fixed.location).toBe("/dashboard/connections?notice=connected");
    // The id survives the reconnect, so posts already scheduled to this target keep it.
    const ids = await connectionIds();
    expect(ids).toEqual([oldId ?? ""]);
    const after = await b.get("/dashboard/connections");
    expect(after.text).toContain("Ready to post.");
    expect(after.text).toContain(`id="connection-${oldId}"`);
    expect(after.text).not.toContain("target id");
    expect(after.text).not.toContain(SECRET);
    // Check again keeps it ready.
    expect((await b.submit("/dashboard/connections", `/dashboard/connections/${ids[0]}/check`, {})).location).toContain("notice=checked");
    // Remove, with its confirmation step.
    expect((await b.get(`/dashboard/connections/${ids[0]}/remove`)).text).toContain("Remove connection");
    expect((await b.request("POST", `/dashboard/connections/${ids[0]}/remove`, { _csrf: b.csrf() })).location).toContain("notice=connection-removed");
    expect(await connectionIds()).toEqual([]);
  });

  test("Mastodon: a bad token is refused beside the token field; a good one is ready; a refused post shows failed with its error", async () => {
    const b = new Browser(world);
    await b.login("o@gamma.test");
    const bad = await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: mastodon.url, token: "not-the-token" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/id="mastodon-token-error">The Mastodon server refused the access token/);
    expect(await connectionIds()).toEqual([]);
    await b.submit("/dashboard/connections", "/dashboard/connections", { platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    expect((await b.get("/dashboard/connections")).text).toContain("Ready to post.");

    const seed = await createSeed(world.deps, owner.accountId, { title: "Refused", content: "This one the instance refuses.", category: "test" });
    const creation = (await generateCreation(world.deps, owner.accountId, { type: "social_post", seed_id: seed.id })).creation;
    await mastodon.setMode("reject422");
    const when = new Date(world.clock.now() + 2 * 60 * 60 * 1000).toISOString();
    const { post } = await schedulePost(world.deps, owner.accountId, { creationId: creation.id, scheduledTime: when, targets: ["mastodon"] });
    await mastodon.setMode("ok");
    expect(post.status).toBe("failed");
    const calendar = await b.get(`/dashboard/calendar?status=failed&date=${when.slice(0, 10)}`);
    expect(calendar.text).toContain(`post-${post.id}`);
    expect(calendar.text).toContain("status-failed");
    expect(calendar.text).toContain(post.targets[0]?.errorMessage ?? "(no error message)");
    const upcoming = await b.get(`/dashboard/calendar?status=scheduled&date=${when.slice(0, 10)}`);
    expect(upcoming.text).not.toContain(`post-${post.id}`);
  });

  test("a viewer sees connections but gets no forms and cannot add one", async () => {
    const b = new Browser(world);
    await b.login("v@gamma.test");
    const page = await b.get("/dashboard/connections");
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('action="/dashboard/connections"');
    const before = (await connectionIds()).length;
    const res = await b.request("POST", "/dashboard/connections", { _csrf: b.csrf(), platform: "webhook", url: `${receiver.url}/x`, secret: SECRET });
    expect(res.status).toBe(403);
    expect((await connectionIds()).length).toBe(before);
  });

  test("library upload: an image is added (scripted and plain), anything else is refused with the reason; viewers cannot upload", async () => {
    const b = new Browser(world);
    await b.login("o@gamma.test");
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#ff0000" } }).png().toBuffer();
    await b.get("/dashboard/library");
    const scripted = await b.upload("/dashboard/library/upload", new File([png], "red.png", { type: "image/png" }), { "x-requested-with": "fetch" });
    expect(scripted.status).toBe(200);
    await b.get("/dashboard/library");
    const plain = await b.upload("/dashboard/library/upload", new File([png], "red-again.png", { type: "image/png" }));
    expect(plain.location).toBe("/dashboard/library?notice=uploaded");
    const library = await b.get("/dashboard/library");
    expect(library.text).toContain("red.png");
    expect(library.text).toContain("red-again.png");
    const bad = await b.upload("/dashboard/library/upload", new File(["just text"], "notes.txt", { type: "text/plain" }), { "x-requested-with": "fetch" });
    expect(bad.status).toBe(400);
    expect(bad.text.length).toBeGreaterThan(5);
    expect(await countOf(world, "SELECT count(*) AS n FROM assets WHERE account_id = ?", owner.accountId)).toBe(2);

    const v = new Browser(world);
    await v.login("v@gamma.test");
    const page = await v.get("/dashboard/library");
    expect(page.text).toContain("red.png");
    expect(page.text).not.toContain('type="file"');
    const refused = await v.upload("/dashboard/library/upload", new File([png], "viewer.png", { type: "image/png" }));
    expect(refused.status).toBe(403);
    expect(await countOf(world, "SELECT count(*) AS n FROM assets WHERE account_id = ?", owner.accountId)).toBe(2);
  });
});
