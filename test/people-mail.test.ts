/**
 * Teammates and mail (decisions.md §15) against a real SMTP server on 127.0.0.1 (test/peers/smtp.ts: `smtp-server`,
 * messages parsed with `mailparser`): an invitation, a password reset and a failed-post notice each arrive; their links
 * work once and only once; a member's switch turns a notice off; a refusing server is retried, never lost silently,
 * and no log line holds the SMTP password; two replicas send a notice once. Runs on SQLite and on PostgreSQL
 * (SEEDCAST_TEST_DATABASE=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { DB_FILE_NAME } from "../src/db/client";
import { openSqliteStore, type Store } from "../src/db/store";
import type { Deps } from "../src/deps";
import { createLogger } from "../src/lib/log";
import { isoAt } from "../src/lib/clock";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection, checkConnection } from "../src/modules/connections/service";
import { MAIL_BACKOFF_MS, MAIL_MAX_ATTEMPTS, runDueMailOnce, senderFor } from "../src/modules/notices/mailer";
import { markConnectionBlocked } from "../src/store/connections";
import type { SmtpSender } from "../src/lib/smtp";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { type World, createWorld } from "./helpers/world";
import { type SmtpPeer, startSmtpPeer } from "./peers/smtp";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, runDueRefused } from "./publishing-fixtures";

let smtp: SmtpPeer;
let world: World;
let sender: SmtpSender;
let target: WebhookReceiver;
const logLines: string[] = [];

const OWNER = "olive@harbour.test";
const EDITOR = "ed@harbour.test";
/** Joins Harbour Café as an editor by invitation in the second test, and so hears of its failures too. */
const DORA = "dora@dock.test";
/** The editor's password after the reset test. */
const EDITOR_NEW_PASSWORD = "a brand new password";
let accountId: string;
let ownerId: string;
let editorId: string;
let ownerKey: string;

beforeAll(async () => {
  smtp = await startSmtpPeer();
  target = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  world = await createWorld({
    env: { SMTP_URL: smtp.url, MAIL_FROM: "Seedcast <noreply@harbour.test>", ALLOW_PRIVATE_HOSTS: "127.0.0.1" },
    log: createLogger("debug", (line) => logLines.push(line)),
  });
  sender = senderFor(world.deps) as SmtpSender;
  // The admin first (first user), then the account under test with its owner and an editor.
  await createAccount(world.deps, { name: "Instance", email: "admin@harbour.test", password: PASSWORD });
  const created = await createAccount(world.deps, { name: "Harbour Café", email: OWNER, password: PASSWORD });
  accountId = created.accountId;
  ownerId = created.userId;
  const { addMember } = await import("../src/modules/accounts/service");
  editorId = (await addMember(world.deps, { accountId, email: EDITOR, password: PASSWORD, role: "editor" })).userId;
  const { mintKey } = await import("../src/modules/auth/keys-service");
  ownerKey = (await mintKey(world.deps, { accountId, userId: ownerId, name: "t", groups: ["read", "create", "schedule", "voice"], expiresDays: 90 })).key;
});

afterAll(async () => {
  sender?.close();
  await world?.close();
  await target?.stop();
  await smtp?.stop();
});

/** A count(*) AS n query's answer as a number (PostgreSQL answers bigint counts as strings). */
async function countOf(query: string, ...params: unknown[]): Promise<number> {
  return Number((await world.sql(query, ...params))[0]?.n);
}

/** Sends what is due, as the running mailer would; answers the messages that arrived meanwhile. */
async function deliverMail(deps: Deps = world.deps) {
  const before = smtp.received.length;
  await runDueMailOnce(deps, sender);
  return smtp.received.slice(before);
}

async function signedIn(email: string): Promise<DashboardClient> {
  const client = new DashboardClient(world);
  expect((await client.login(email)).status).toBe(303);
  return client;
}

/** The path of a link the server wrote (BASE_URL is http://localhost in the test world). */
function pathOf(link: string): string {
  return new URL(link).pathname;
}

describe("invitation by email", () => {
  test("the owner invites; the email arrives with a link; the invitee sets a password and lands in the account; the link works once", async () => {
    const owner = await signedIn(OWNER);
    const invited = await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "Nia@Harbour.test", role: "viewer" });
    expect(invited.location).toBe("/dashboard/members?notice=invitation-sent");
    // The page lists it as pending, without any link.
    const members = await owner.get("/dashboard/members");
    expect(members.text).toContain("Nia@Harbour.test");
    expect(members.text).not.toContain("/invite/");

    const [mail, ...more] = await deliverMail();
    expect(more).toEqual([]);
    // (Nodemailer writes the domain in lower case; the mailbox part is kept as typed.)
    expect(mail?.to.map((a) => a.toLowerCase())).toEqual(["nia@harbour.test"]);
    expect(mail?.from).toBe("noreply@harbour.test");
    expect(mail?.subject).toBe("You are invited to join Harbour Café on Seedcast");
    expect(mail?.text).toContain("as a viewer");
    const link = mail?.links.find((l) => l.includes("/invite/")) ?? "";
    expect(link).toMatch(/^http:\/\/localhost\/invite\/[A-Za-z0-9_-]{43}$/);
    // Only a hash is stored: the token is nowhere in the database.
    const token = link.split("/").pop() ?? "";
    const rows = await world.sql("SELECT token_hash FROM invitations");
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(await world.sql("SELECT mail_sealed, title FROM notices"))).not.toContain(token);

    const invitee = new DashboardClient(world);
    const form = await invitee.get(pathOf(link));
    expect(form.status).toBe(200);
    expect(form.text).toContain("Join Harbour Café");
    expect(form.text).toContain('value="Nia@Harbour.test" readonly');
    // Too short a password: refused beside the field, nothing created, the link still good.
    const short = await invitee.request("POST", pathOf(link), { _csrf: invitee.csrf(), name: "Nia", password: "short", confirm: "short" });
    expect(short.status).toBe(400);
    expect(short.text).toContain("at least 8 characters");
    const joined = await invitee.request("POST", pathOf(link), { _csrf: invitee.csrf(), name: "Nia", password: "nia's own password", confirm: "nia's own password" });
    expect(joined.status).toBe(303);
    expect(joined.location).toBe("/dashboard?notice=joined");
    const overview = await invitee.get("/dashboard");
    expect(overview.text).toContain("Harbour Café");
    expect(overview.text).toContain("viewer of this account");
    const nia = await world.sql("SELECT u.name AS name, m.role AS role FROM users u JOIN members m ON m.user_id = u.id WHERE lower(u.email) = 'nia@harbour.test'");
    expect(nia).toEqual([{ name: "Nia", role: "viewer" }]);

    // Second use: refused in plain words, nothing changes.
    const again = new DashboardClient(world);
    const reopened = await again.get(pathOf(link));
    expect(reopened.status).toBe(410);
    expect(reopened.text).toContain("already used");
    const replay = await again.request("POST", pathOf(link), { _csrf: "x".repeat(43), name: "Mallory", password: "another password", confirm: "another password" });
    expect(replay.status).toBe(410);
    expect(await countOf("SELECT count(*) AS n FROM users WHERE lower(email) = 'nia@harbour.test'")).toBe(1);
    // And the invitee signs in with the password they chose.
    expect((await new DashboardClient(world).login("nia@harbour.test", "nia's own password")).status).toBe(303);
  });

  test("an existing login joins after signing in, as the same user; a withdrawn or expired link says so", async () => {
    const other = await createAccount(world.deps, { name: "Dockside", email: DORA, password: PASSWORD });
    const owner = await signedIn(OWNER);
    await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: DORA, role: "editor" });
    const [mail] = await deliverMail();
    const link = pathOf(mail?.links.find((l) => l.includes("/invite/")) ?? "");
    expect(mail?.text).toContain("sign in with your Seedcast login");
    // Not signed in: to the sign-in page, which comes back to the link.
    const dora = new DashboardClient(world);
    const opened = await dora.get(link);
    expect(opened.status).toBe(303);
    expect(opened.location).toBe(`/login?next=${encodeURIComponent(link)}`);
    await dora.get(opened.location ?? "");
    const login = await dora.request("POST", "/login", { _csrf: dora.csrf(), email: DORA, password: PASSWORD, next: link });
    expect(login.location).toBe(link);
    // While still looking at her own account, her Notices page lists the invitation.
    expect((await dora.get("/dashboard/notices")).text).toContain("invited you to join Harbour Café");
    expect((await dora.get(link)).text).toContain(`You are signed in as ${DORA}`);
    const accepted = await dora.request("POST", link, { _csrf: dora.csrf() });
    expect(accepted.location).toBe("/dashboard?notice=joined");
    expect((await dora.get("/dashboard")).text).toContain("Harbour Café");
    expect(await countOf("SELECT count(*) AS n FROM users WHERE email = ?", DORA)).toBe(1);
    expect(await world.sql("SELECT role FROM members WHERE user_id = ? AND account_id = ?", other.userId, accountId)).toEqual([{ role: "editor" }]);

    // Withdrawn: the owner withdraws a pending invitation; its link says so.
    await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "wes@harbour.test", role: "editor" });
    const [withdrawnMail] = await deliverMail();
    const withdrawn = pathOf(withdrawnMail?.links.find((l) => l.includes("/invite/")) ?? "");
    const pending = (await world.sql("SELECT id FROM invitations WHERE email = 'wes@harbour.test'"))[0] as { id: string };
    const revoked = await owner.submit("/dashboard/members", `/dashboard/members/invitations/${pending.id}/revoke`, {});
    expect(revoked.location).toBe("/dashboard/members?notice=invitation-revoked");
    const page = await new DashboardClient(world).get(withdrawn);
    expect(page.status).toBe(410);
    expect(page.text).toContain("withdrawn");

    // Expired: 7 days later.
    await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "xia@harbour.test", role: "editor" });
    const [lateMail] = await deliverMail();
    const late = pathOf(lateMail?.links.find((l) => l.includes("/invite/")) ?? "");
    world.clock.advance(7 * 24 * 3_600_000 + 1000);
    const expired = await new DashboardClient(world).get(late);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("expired");
    // Not a link at all.
    expect((await new DashboardClient(world).get(`/invite/${"A".repeat(43)}`)).status).toBe(404);
  });
});

describe("password reset by email", () => {
  test("Forgot password mails a link; the answer is the same for an unknown address; the link works once and ends other sessions", async () => {
    const elsewhere = await signedIn(EDITOR);
    const anon = new DashboardClient(world);
    const login = await anon.get("/login");
    expect(login.text).toContain('href="/forgot-password"');
    await anon.get("/forgot-password");
    const known = await anon.request("POST", "/forgot-password", { _csrf: anon.csrf(), email: "ED@harbour.test" });
    await anon.get("/forgot-password");
    const unknown = await anon.request("POST", "/forgot-password", { _csrf: anon.csrf(), email: "nobody@harbour.test" });
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    // The same words either way (the CSRF cookie aside, the pages are identical).
    expect(known.text).toBe(unknown.text);
    expect(known.text).toContain("If a Seedcast login uses that address");

    const arrived = await deliverMail();
    expect(arrived.map((m) => m.to)).toEqual([[EDITOR]]);
    const mail = arrived[0];
    expect(mail?.subject).toBe("Reset your Seedcast password");
    const link = pathOf(mail?.links.find((l) => l.includes("/reset/")) ?? "");
    expect(link).toMatch(/^\/reset\/[A-Za-z0-9_-]{43}$/);

    // A second request within two minutes makes no second link (no flood).
    await anon.get("/forgot-password");
    await anon.request("POST", "/forgot-password", { _csrf: anon.csrf(), email: EDITOR });
    expect(await deliverMail()).toEqual([]);

    const person = new DashboardClient(world);
    const form = await person.get(link);
    expect(form.status).toBe(200);
    expect(form.text).toContain(EDITOR);
    const done = await person.request("POST", link, { _csrf: person.csrf(), password: "a brand new password", confirm: "a brand new password" });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/dashboard?notice=password-reset");
    expect((await person.get("/dashboard")).status).toBe(200);
    // The session elsewhere is over; the old password is dead, the new one works.
    expect((await elsewhere.get("/dashboard")).location).toStartWith("/login");
    expect((await new DashboardClient(world).login(EDITOR, PASSWORD)).status).toBe(401);
    expect((await new DashboardClient(world).login(EDITOR, "a brand new password")).status).toBe(303);

    // Second use: refused, the password stays.
    const again = new DashboardClient(world);
    expect((await again.get(link)).status).toBe(410);
    const replay = await again.request("POST", link, { _csrf: "x".repeat(43), password: "mallory's password", confirm: "mallory's password" });
    expect(replay.status).toBe(410);
    expect(replay.text).toContain("already used");
    expect((await new DashboardClient(world).login(EDITOR, "a brand new password")).status).toBe(303);
  });

  test("a reset link dies after one hour", async () => {
    world.clock.advance(3 * 60_000);
    const anon = new DashboardClient(world);
    await anon.get("/forgot-password");
    await anon.request("POST", "/forgot-password", { _csrf: anon.csrf(), email: EDITOR });
    const [mail] = await deliverMail();
    const link = pathOf(mail?.links.find((l) => l.includes("/reset/")) ?? "");
    world.clock.advance(3_600_000 + 1000);
    const page = await anon.get(link);
    expect(page.status).toBe(410);
    expect(page.text).toContain("expired");
  });
});

describe("notices of failed posts and connections", () => {
  async function failAPost(caption: string): Promise<string> {
    const creation = await makeCreation(world.deps, accountId, { caption });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: ownerKey,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
    });
    expect(res.status).toBe(200);
    await runDueRefused(world, target, FIVE_MIN + 60_000);
    return res.json.post.id;
  }

  test("a failed post is mailed to the owner and the editor, and listed on their Notices page", async () => {
    await addConnection(world.deps, { accountId, platform: "webhook", url: `${target.url}/posts`, secret: WEBHOOK_SECRET });
    const postId = await failAPost("Jazz night on Friday at eight");
    const arrived = await deliverMail();
    expect(arrived.map((m) => m.to[0]).sort()).toEqual([DORA, EDITOR, OWNER].sort());
    for (const mail of arrived) {
      expect(mail.subject).toStartWith("A post was not published: “Jazz night on Friday at eight”");
      expect(mail.text).toContain(`http://localhost/dashboard/calendar/posts/${postId}`);
      expect(mail.text).toContain("http://localhost/dashboard/account");
    }
    const owner = await signedIn(OWNER);
    const notices = await owner.get("/dashboard/notices");
    expect(notices.text).toContain("Jazz night on Friday at eight");
    expect(notices.text).toContain("Emailed to you.");
  });

  test("a member's switch turns the email off: nothing arrives for them; the notice still shows", async () => {
    const editor = new DashboardClient(world);
    expect((await editor.login(EDITOR, EDITOR_NEW_PASSWORD)).status).toBe(303);
    const page = await editor.get("/dashboard/account");
    expect(page.text).toContain('name="mail" value="post_failed" checked');
    const kept = ["post_unconfirmed", "connection_needs_attention", "post_awaiting_approval", "invitation", "password_reset"];
    const saved = await editor.request("POST", "/dashboard/account/notices", { _csrf: editor.csrf(), mail: kept });
    expect(saved.location).toBe("/dashboard/account?notice=notices-saved");
    expect((await editor.get("/dashboard/account")).text).toContain('name="mail" value="post_failed">');

    await failAPost("Oyster tasting Saturday noon");
    const arrived = await deliverMail();
    expect(arrived.map((m) => m.to[0]).sort()).toEqual([DORA, OWNER].sort());
    const list = await editor.get("/dashboard/notices");
    expect(list.text).toContain("Oyster tasting Saturday noon");
    expect(list.text).toContain("you turned these emails off");
  });

  test("a connection turning from ready to blocked is one notice, however often the check fails after", async () => {
    const connection = (await world.sql("SELECT id FROM connections WHERE account_id = ?", accountId))[0] as { id: string };
    expect((await checkConnection(world.deps, connection.id)).readyToPost).toBe(true);
    target.setMode("reject400");
    try {
      expect((await checkConnection(world.deps, connection.id)).readyToPost).toBe(false);
      expect((await checkConnection(world.deps, connection.id)).readyToPost).toBe(false);
    } finally {
      target.setMode("ok");
    }
    const arrived = await deliverMail();
    // The editor turned only failed-post emails off: this kind still reaches them.
    expect(arrived.map((m) => m.to[0]).sort()).toEqual([DORA, EDITOR, OWNER].sort());
    expect(arrived[0]?.subject).toContain("needs attention");
    expect(arrived[0]?.text).toContain("http://localhost/dashboard/connections");

    // The dispatcher's path (a provider refusing the credentials while publishing): ready again, then two deliveries
    // report the refusal at once; the turn, and its notice, happen once.
    expect((await checkConnection(world.deps, connection.id)).readyToPost).toBe(true);
    await Promise.all([
      markConnectionBlocked(world.deps, connection.id, "The receiver refused the credentials."),
      markConnectionBlocked(world.deps, connection.id, "The receiver refused the credentials."),
    ]);
    const again = await deliverMail();
    expect(again.map((m) => m.to[0]).sort()).toEqual([DORA, EDITOR, OWNER].sort());
    expect(again[0]?.subject).toEndWith("(webhook) needs attention: The receiver refused the credentials.");
  });
});

describe("delivery", () => {
  test("a refusing server is retried with backoff and then given up, logged each time, never with the password", async () => {
    const owner = await signedIn(OWNER);
    smtp.setMode("refuse");
    try {
      await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "rey@harbour.test", role: "viewer" });
      for (let attempt = 1; attempt <= MAIL_MAX_ATTEMPTS; attempt++) {
        expect(await deliverMail()).toEqual([]);
        const row = (await world.sql("SELECT mail_status, attempts, last_error FROM notices WHERE email = 'rey@harbour.test'"))[0];
        expect(Number(row.attempts)).toBe(attempt);
        expect(row.mail_status).toBe(attempt < MAIL_MAX_ATTEMPTS ? "pending" : "failed");
        expect(String(row.last_error)).toContain("Mailbox busy");
        // Nothing is tried again before its time.
        expect(await deliverMail()).toEqual([]);
        expect(Number((await world.sql("SELECT attempts FROM notices WHERE email = 'rey@harbour.test'"))[0].attempts)).toBe(attempt);
        world.clock.advance(MAIL_BACKOFF_MS[attempt - 1] ?? 0);
      }
      expect(smtp.refused).toBe(MAIL_MAX_ATTEMPTS);
      expect(await deliverMail()).toEqual([]);
      expect(smtp.refused).toBe(MAIL_MAX_ATTEMPTS);
    } finally {
      smtp.setMode("accept");
    }
    const sealed = await world.sql("SELECT mail_sealed FROM notices WHERE email = 'rey@harbour.test'");
    expect(sealed).toEqual([{ mail_sealed: null }]);
    // The owner sees it on Members, with what to do; asked to, Seedcast shows the link instead of mailing it.
    const members = await owner.get("/dashboard/members");
    expect(members.text).toContain("The email could not be delivered");
    await owner.submit("/dashboard/members", `/dashboard/members/invitations/${(await world.sql("SELECT id FROM invitations WHERE email = 'rey@harbour.test'"))[0].id}/revoke`, {});
    const again = await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: "rey@harbour.test", role: "viewer", showLink: "1" });
    expect(again.location).toMatch(/\?shown=/);
    expect((await owner.get(again.location ?? "")).text).toMatch(/value="http:\/\/localhost\/invite\/[A-Za-z0-9_-]{43}"/);
    expect(await deliverMail()).toEqual([]);
    const lines = logLines.filter((l) => l.includes("notice email"));
    expect(lines.filter((l) => l.includes("will retry"))).toHaveLength(MAIL_MAX_ATTEMPTS - 1);
    expect(lines.filter((l) => l.includes("given up"))).toHaveLength(1);
    expect(logLines.join("\n")).not.toContain(smtp.password);
  });

  test("two replicas on one database send each notice once", async () => {
    let second: Store;
    if (world.dialect === "postgres") {
      const { openPgStore } = await import("../src/db/pg/store");
      second = openPgStore(world.env().DATABASE_URL ?? "", { max: 4 });
    } else {
      second = openSqliteStore(join(world.dataDir, DB_FILE_NAME));
    }
    const replica: Deps = { ...world.deps, store: second };
    const replicaSender = senderFor(replica) as SmtpSender;
    try {
      const owner = await signedIn(OWNER);
      for (const name of ["p1", "p2", "p3", "p4", "p5", "p6"]) {
        await owner.submit("/dashboard/members", "/dashboard/members/invite", { email: `${name}@harbour.test`, role: "viewer" });
      }
      const before = smtp.received.length;
      await Promise.all([runDueMailOnce(world.deps, sender), runDueMailOnce(replica, replicaSender), runDueMailOnce(world.deps, sender)]);
      const got = smtp.received.slice(before).map((m) => m.to[0]).sort();
      expect(got).toEqual(["p1", "p2", "p3", "p4", "p5", "p6"].map((n) => `${n}@harbour.test`));
      expect(await countOf("SELECT count(*) AS n FROM notices WHERE mail_status = 'pending'")).toBe(0);
    } finally {
      replicaSender.close();
      await second.close();
    }
  });
});
