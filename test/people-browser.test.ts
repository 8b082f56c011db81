/**
 * Invitations and "Forgot password" in real Chromium against the BUILT executable, which mails through a real SMTP
 * server on 127.0.0.1 (test/peers/smtp.ts) with its own background mailer: the owner invites → the email arrives →
 * the invitee opens the link, chooses a password and lands in the dashboard → the link is refused the second time;
 * the invitee forgets the password → the reset email arrives → a new password → the dashboard → the link is refused
 * the second time. Every page at desktop and 390 px: axe-core (no critical or serious finding), one h1, no horizontal
 * scroll, and a screenshot in test-artifacts/people/.
 *
 * The executable: $SEEDCAST_BIN when set (e.g. dist/seedcast from `npm run build`), otherwise built here with
 * scripts/compile.ts (the same compile step `npm run build` uses), which also proves nodemailer bundles.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { DESKTOP, checkBothWidths, launchChromium } from "./helpers/browser";
import { type BuiltServer, startBuiltServer, submitSetup } from "./helpers/dashboard-e2e";
import { type SmtpPeer, startSmtpPeer } from "./peers/smtp";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/people");
const PASSWORD = "correct horse battery";
const OWNER = { account: "Harbour Café", name: "Olive Owner", email: "olive@harbour.test" };
const INVITEE = { name: "Nia Newcomer", email: "nia@harbour.test", password: "nia chose this one", reset: "and then this one" };

let server: BuiltServer | null = null;
let smtp: SmtpPeer;
let base = "";
let browser: Browser;
let ownerContext: BrowserContext;
let inviteeContext: BrowserContext;

/** `page`, checked at both widths and shot (test/helpers/browser.ts). */
const shoot = (page: Page, name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

/** The one link of `kind` in the newest message to `to`, waiting for the server's mailer to send it. */
async function linkIn(to: string, count: number, kind: "invite" | "reset"): Promise<string> {
  const all = await smtp.waitFor(count, 20_000);
  const mail = [...all].reverse().find((m) => m.to.includes(to));
  const link = mail?.links.find((l) => l.includes(`/${kind}/`));
  if (!link) throw new Error(`no ${kind} link mailed to ${to}`);
  return link;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  smtp = await startSmtpPeer();
  server = await startBuiltServer("seedcast-people-e2e-", { SMTP_URL: smtp.url, MAIL_FROM: "Seedcast <noreply@harbour.test>" });
  base = server.base;
  browser = await launchChromium();
  ownerContext = await browser.newContext({ viewport: DESKTOP });
  inviteeContext = await browser.newContext({ viewport: DESKTOP });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (server) {
    await server.stop();
    // The server's log holds no SMTP password.
    expect(readFileSync(server.logFile, "utf8")).not.toContain(smtp.password);
    await server.close();
  }
  await smtp?.stop();
});

describe("teammates in Chromium on the built binary", () => {
  test("the owner invites by email; the invitee chooses a password and lands in the dashboard; the link works once", async () => {
    const page = await ownerContext.newPage();
    await page.goto(`${base}/setup`);
    await submitSetup(page, base, { ...OWNER, password: PASSWORD });

    await page.goto(`${base}/dashboard/members`);
    await page.locator("#i-email").fill(INVITEE.email);
    await page.locator("#i-role").selectOption("editor");
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    await page.waitForURL(/notice=invitation-sent/);
    expect(await page.getByText("Invitations not yet accepted").count()).toBe(1);
    await shoot(page, "01-members-invited");

    const link = await linkIn(INVITEE.email, 1, "invite");
    expect(link.startsWith(`${base}/invite/`)).toBe(true);
    const invitee = await inviteeContext.newPage();
    await invitee.goto(link);
    await shoot(invitee, "02-invite-form");
    await invitee.getByLabel("Your name").fill(INVITEE.name);
    await invitee.getByLabel("Password", { exact: true }).fill(INVITEE.password);
    await invitee.getByLabel("Password again").fill(INVITEE.password);
    await invitee.getByRole("button", { name: `Join ${OWNER.account}` }).click();
    await invitee.waitForURL(`${base}/dashboard?notice=joined`);
    expect(await invitee.getByText("Welcome! You joined the account.").count()).toBe(1);
    expect(await invitee.getByText("editor of this account").count()).toBe(1);
    await shoot(invitee, "03-joined");

    // The same link again, from a browser with no session: used, in plain words.
    const stranger = await (await browser.newContext({ viewport: DESKTOP })).newPage();
    await stranger.goto(link);
    expect(await stranger.getByText("This invitation was already used").count()).toBe(1);
    await shoot(stranger, "04-invite-used");
    await stranger.context().close();

    // The owner sees the new member.
    await page.goto(`${base}/dashboard/members`);
    expect(await page.getByText(INVITEE.email).count()).toBeGreaterThan(0);
  });

  test("Forgot password mails a link; the new password signs in; the link works once", async () => {
    const page = await inviteeContext.newPage();
    await page.goto(`${base}/dashboard/account`);
    await shoot(page, "05-your-settings");
    await page.getByRole("button", { name: /Sign out/ }).click();
    await page.waitForURL(/\/login\?out=1$/);
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.waitForURL(`${base}/forgot-password`);
    await shoot(page, "06-forgot");
    await page.getByLabel("Email").fill(INVITEE.email);
    await page.getByRole("button", { name: "Send me a link" }).click();
    await page.waitForLoadState();
    expect(await page.getByText("If a Seedcast login uses that address").count()).toBe(1);
    await shoot(page, "07-forgot-sent");

    const link = await linkIn(INVITEE.email, 2, "reset");
    await page.goto(link);
    await shoot(page, "08-reset-form");
    await page.getByLabel("New password", { exact: true }).fill(INVITEE.reset);
    await page.getByLabel("New password again").fill(INVITEE.reset);
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.waitForURL(`${base}/dashboard?notice=password-reset`);
    await shoot(page, "09-reset-done");

    await page.goto(link);
    expect(await page.getByText("This reset link was already used").count()).toBe(1);
    await shoot(page, "10-reset-used");

    // The old password no longer works; the new one does.
    await page.goto(`${base}/dashboard`);
    await page.getByRole("button", { name: /Sign out/ }).click();
    await page.waitForURL(/\/login\?out=1$/);
    await page.getByLabel("Email").fill(INVITEE.email);
    await page.getByLabel("Password").fill(INVITEE.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForLoadState();
    expect(await page.getByText("That email and password do not match.").count()).toBe(1);
    await page.getByLabel("Password").fill(INVITEE.reset);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/dashboard`);
    await page.goto(`${base}/dashboard/notices`);
    await shoot(page, "11-notices");
  });
});
