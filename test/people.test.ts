/**
 * Teammates without email (decisions.md §15): SMTP_URL/MAIL_FROM validation, and what an instance without SMTP does:
 * the login page says to ask an owner, an invitation link is shown to the owner once, an owner makes reset links
 * (within the rules: never for the instance admin nor for someone in an account the owner does not own), notices show
 * in the dashboard only. Typing a teammate's password stays the instance admin's. Credential paths are redacted in
 * request logs. Runs on SQLite and on PostgreSQL (SEEDCAST_TEST_DATABASE=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";
import { loggablePath } from "../src/http/paths";
import { addMember, createAccount } from "../src/modules/accounts/service";
import { runDueMailOnce } from "../src/modules/notices/mailer";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";

describe("SMTP_URL and MAIL_FROM", () => {
  const BASE = { DATA_DIR: "/tmp/seedcast-config-test" };

  test("unset: no email; both set: read, and the URL's password never shows when printed", () => {
    expect(loadConfig(BASE).smtp).toBeNull();
    const config = loadConfig({ ...BASE, SMTP_URL: "smtps://mailer:p%40ss-word-9@mail.example.com:465", MAIL_FROM: "Seedcast <noreply@example.com>" });
    expect(config.smtp?.url).toBe("smtps://mailer:p%40ss-word-9@mail.example.com:465");
    expect(config.smtp?.from).toBe("Seedcast <noreply@example.com>");
    expect(JSON.stringify(config)).not.toContain("p%40ss-word-9");
    expect(Bun.inspect(config)).not.toContain("p%40ss-word-9");
    expect(config.smtp?.redacted).toBe("smtps://mailer:***@mail.example.com:465");
  });

  test.each([
    [{ SMTP_URL: "smtp://mail.example.com:587" }, "SMTP_URL needs MAIL_FROM"],
    [{ MAIL_FROM: "noreply@example.com" }, "MAIL_FROM is set but SMTP_URL is not"],
    [{ SMTP_URL: "https://user:hunter2-secret@mail.example.com", MAIL_FROM: "a@b.co" }, "SMTP_URL must be smtp://"],
    [{ SMTP_URL: "not a url hunter2-secret", MAIL_FROM: "a@b.co" }, "SMTP_URL must be smtp://"],
    [{ SMTP_URL: "smtp://mail.example.com", MAIL_FROM: "nobody" }, "MAIL_FROM must be an email address"],
  ])("refused, naming the variable, never echoing the URL: %p", (env, words) => {
    let error: unknown;
    try {
      loadConfig({ ...BASE, ...env });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(words);
    expect((error as Error).message).not.toContain("hunter2-secret");
  });

  test("invitation and reset tokens are redacted from logged paths, like upload links", () => {
    const token = "A".repeat(43);
    expect(loggablePath(`/invite/${token}`)).toBe("/invite/[redacted]");
    expect(loggablePath(`/reset/${token}`)).toBe("/reset/[redacted]");
    expect(loggablePath(`/upload/${token}`)).toBe("/upload/[redacted]");
    expect(loggablePath("/dashboard/members")).toBe("/dashboard/members");
  });
});

describe("without SMTP", () => {
  let world: World;
  let accountId: string;
  let otherAccountId: string;
  const ADMIN = "admin@quay.test";
  const OWNER = "owen@quay.test";
  const MEMBER = "mae@quay.test";
  const SHARED = "sam@quay.test";

  beforeAll(async () => {
    world = await createWorld();
    await createAccount(world.deps, { name: "Quay Admin", email: ADMIN, password: PASSWORD });
    const quay = await createAccount(world.deps, { name: "Quay Books", email: OWNER, password: PASSWORD });
    accountId = quay.accountId;
    await addMember(world.deps, { accountId, email: MEMBER, password: PASSWORD, role: "editor" });
    // The admin is also a member of this account; Sam belongs here and to an account Owen does not own.
    const admin = (await world.sql("SELECT id FROM users WHERE email = ?", ADMIN))[0] as { id: string };
    await world.sql("INSERT INTO members (account_id, user_id, role, created_at) VALUES (?, ?, 'editor', ?)", accountId, admin.id, world.clock.now());
    const other = await createAccount(world.deps, { name: "Elsewhere", email: "else@else.test", password: PASSWORD });
    otherAccountId = other.accountId;
    const sam = await addMember(world.deps, { accountId, email: SHARED, password: PASSWORD, role: "editor" });
    await world.sql("INSERT INTO members (account_id, user_id, role, created_at) VALUES (?, ?, 'owner', ?)", otherAccountId, sam.userId, world.clock.now());
  });
  afterAll(() => world.close());

  async function signedIn(email: string, password = PASSWORD) {
    const c = new DashboardClient(world);
    expect((await c.login(email, password)).status).toBe(303);
    return c;
  }

  /** A count(*) AS n query's answer as a number (PostgreSQL answers bigint counts as strings). */
  async function countOf(query: string, ...params: unknown[]): Promise<number> {
    return Number((await world.sql(query, ...params))[0]?.n);
  }

  function shownLink(html: string): string {
    const link = /value="http:\/\/localhost(\/(?:invite|reset)\/[A-Za-z0-9_-]{43})"/.exec(html)?.[1];
    if (!link) throw new Error("no link shown");
    return link;
  }

  test("the login page says to ask an owner; Forgot password cannot mail and says so", async () => {
    const anon = new DashboardClient(world);
    const login = await anon.get("/login");
    expect(login.text).toContain("Ask an owner of your account");
    expect(login.text).not.toContain('href="/forgot-password"');
    const forgot = await anon.get("/forgot-password");
    expect(forgot.text).toContain("cannot send email");
    const posted = await anon.request("POST", "/forgot-password", { email: MEMBER });
    expect(posted.text).toContain("Ask an owner");
    expect(await countOf("SELECT count(*) AS n FROM password_resets")).toBe(0);
  });

  test("an invitation's link is shown to the owner once; the invitee joins with it", async () => {
    const owner = await signedIn(OWNER);
    const made = await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "ivy@quay.test", role: "editor" });
    expect(made.location).toMatch(/\?shown=/);
    const link = shownLink((await owner.get(made.location ?? "")).text);
    // Shown once: a reload does not show it again.
    const reload = await owner.get(made.location ?? "");
    expect(reload.text).toContain("shown once");
    expect(reload.text).not.toContain(link);
    const ivy = new DashboardClient(world);
    await ivy.get(link);
    const joined = await ivy.request("POST", link, { _csrf: ivy.csrf(), name: "Ivy", password: "ivy password 1", confirm: "ivy password 1" });
    expect(joined.location).toBe("/dashboard?notice=joined");
    // A notice, not mailed: shown as such.
    expect(await world.sql("SELECT mail_status FROM notices WHERE email = 'ivy@quay.test'")).toEqual([{ mail_status: "none" }]);
    // Inviting someone already in the account is refused in words.
    const dup = await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: MEMBER, role: "viewer" });
    expect(dup.status).toBe(400);
    expect(dup.text).toContain("already in this account");
  });

  test("an owner makes a reset link for a member: it works once and ends the member's sessions", async () => {
    const mae = await signedIn(MEMBER);
    const owner = await signedIn(OWNER);
    const maeId = ((await world.sql("SELECT id FROM users WHERE email = ?", MEMBER))[0] as { id: string }).id;
    const made = await owner.submit("/dashboard/members", `/dashboard/members/${maeId}/reset-link`, {});
    const link = shownLink((await owner.get(made.location ?? "")).text);
    const fresh = new DashboardClient(world);
    expect((await fresh.get(link)).text).toContain(MEMBER);
    const done = await fresh.request("POST", link, { _csrf: fresh.csrf(), password: "mae's new password", confirm: "mae's new password" });
    expect(done.location).toBe("/dashboard?notice=password-reset");
    expect((await mae.get("/dashboard")).location).toStartWith("/login");
    const second = await new DashboardClient(world).get(link);
    expect(second.status).toBe(410);
    expect((await new DashboardClient(world).login(MEMBER, "mae's new password")).status).toBe(303);
  });

  test("an owner cannot make a reset link for the instance admin, nor for someone in an account they do not own", async () => {
    const owner = await signedIn(OWNER);
    const adminId = ((await world.sql("SELECT id FROM users WHERE email = ?", ADMIN))[0] as { id: string }).id;
    const samId = ((await world.sql("SELECT id FROM users WHERE email = ?", SHARED))[0] as { id: string }).id;
    const forAdmin = await owner.submit("/dashboard/members", `/dashboard/members/${adminId}/reset-link`, {});
    expect(forAdmin.status).toBe(403);
    expect(forAdmin.text).toContain("Only the instance administrator");
    const forSam = await owner.submit("/dashboard/members", `/dashboard/members/${samId}/reset-link`, {});
    expect(forSam.status).toBe(403);
    expect(forSam.text).toContain("account you do not own");
    expect(await countOf("SELECT count(*) AS n FROM password_resets WHERE user_id IN (?, ?)", adminId, samId)).toBe(0);
    // The instance admin may (they are an owner nowhere here but run the instance).
    await world.sql("UPDATE members SET role = 'owner' WHERE user_id = ? AND account_id = ?", adminId, accountId);
    const admin = await signedIn(ADMIN);
    await admin.submit("/dashboard", "/dashboard/switch-account", { accountId });
    const bySam = await admin.submit("/dashboard/members", `/dashboard/members/${samId}/reset-link`, {});
    expect(bySam.location).toMatch(/\?shown=/);
  });

  test("typing a password for someone: only the instance admin; a plain owner is refused and nothing is created", async () => {
    const owner = await signedIn(OWNER);
    expect((await owner.get("/dashboard/members")).text).not.toContain("Initial password");
    const refused = await owner.submit("/dashboard/members", "/dashboard/members", { email: "typed@quay.test", password: PASSWORD, role: "editor" });
    expect(refused.status).toBe(403);
    expect(await countOf("SELECT count(*) AS n FROM users WHERE email = 'typed@quay.test'")).toBe(0);
    const admin = await signedIn(ADMIN);
    await admin.submit("/dashboard", "/dashboard/switch-account", { accountId });
    expect((await admin.get("/dashboard/members")).text).toContain("Initial password");
    const added = await admin.submit("/dashboard/members", "/dashboard/members", { email: "typed@quay.test", password: PASSWORD, role: "editor" });
    expect(added.location).toBe("/dashboard/members?notice=member-added");
  });

  test("a failed-post notice without SMTP shows in the dashboard and is marked not emailed", async () => {
    const { recordAccountNotice } = await import("../src/store/notices");
    await world.store.write((tx) => recordAccountNotice(tx, world.clock.now(), { kind: "post_failed", accountId, title: "A post was not published: “Tide tables”", path: null }));
    await runDueMailOnce(world.deps, null);
    const rows = await world.sql("SELECT mail_status FROM notices WHERE title LIKE '%Tide tables%'");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.mail_status === "none")).toBe(true);
    const owner = await signedIn(OWNER);
    const page = await owner.get("/dashboard/notices");
    expect(page.text).toContain("Tide tables");
    expect(page.text).toContain("this Seedcast sends no email");
  });

  test("the tidy jobs delete notices after 90 days and dead links after 30 more days, nothing younger", async () => {
    const { JOB_IDS, systemJobs } = await import("../src/system-jobs");
    const run = async (id: string) => {
      const job = systemJobs.find((j) => j.id === id);
      if (!job) throw new Error(`no job ${id}`);
      await job.run(world.deps);
    };
    const owner = await signedIn(OWNER);
    await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "late@quay.test", role: "viewer" });
    const notices = await countOf("SELECT count(*) AS n FROM notices");
    const invitations = await countOf("SELECT count(*) AS n FROM invitations");
    const resets = await countOf("SELECT count(*) AS n FROM password_resets");
    expect(notices * invitations * resets).toBeGreaterThan(0);
    // 36 days on: the invitation made now died a day ago (7 + 30 days not yet passed), every reset link has.
    world.clock.advance(36 * 24 * 3_600_000);
    for (const id of [JOB_IDS.noticesTidy, JOB_IDS.invitationsTidy, JOB_IDS.passwordResetsTidy]) await run(id);
    expect(await countOf("SELECT count(*) AS n FROM notices")).toBe(notices);
    expect(await countOf("SELECT count(*) AS n FROM invitations WHERE email = 'late@quay.test'")).toBe(1);
    expect(await countOf("SELECT count(*) AS n FROM password_resets")).toBe(0);
    world.clock.advance(60 * 24 * 3_600_000);
    for (const id of [JOB_IDS.noticesTidy, JOB_IDS.invitationsTidy, JOB_IDS.passwordResetsTidy]) await run(id);
    expect(await countOf("SELECT count(*) AS n FROM notices")).toBe(0);
    expect(await countOf("SELECT count(*) AS n FROM invitations")).toBe(0);
  });
});
