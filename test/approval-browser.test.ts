/**
 * Issue 27's approval in real Chromium (Debian `chromium` + playwright-core) against the app on a real socket: with
 * the account's approval on, an editor schedules a post from its page and sees "Waiting for approval"; the owner sees
 * it on the overview and on the Approvals page, approves one (it publishes to a real webhook receiver once the clock
 * reaches its time) and rejects another with a note (its page shows "Rejected: <note>"). Every page: axe-core (no
 * critical or serious finding), one h1 and no horizontal scroll at 1280 and 390 px; screenshots in
 * test-artifacts/approvals/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { updateAccountSettings } from "../src/modules/accounts/settings";
import { addConnection } from "../src/modules/connections/service";
import { getPost } from "../src/modules/schedule/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, memberOf, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { makeCreation, WEBHOOK_SECRET } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/approvals");

let world: ServedWorld;
let owner: Person;
let editor: Person;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;
let hook = "";
const posts = { first: "", second: "" };
const creations = { first: "", second: "" };

const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

async function signIn(p: Page, person: Person): Promise<void> {
  await p.context().clearCookies();
  await p.goto(`${world.base}/login`);
  await p.getByLabel("Email").fill(person.email);
  await p.getByLabel("Password").fill(PASSWORD);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${world.base}/dashboard`);
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  world.clock.set("2026-06-01T06:00:00Z");
  owner = await ownerWithAccount(world, "Corner Bakery");
  editor = await memberOf(world, owner.accountId, "editor");
  await updateAccountSettings(world.deps, { accountId: owner.accountId, role: "owner" }, { approvalRequired: true });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  hook = (await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: `${receiver.url}/shop`, secret: WEBHOOK_SECRET })).accountId;
  creations.first = (await makeCreation(world.deps, owner.accountId, { caption: "Fresh sourdough every Tuesday from 7 am. Come early!" })).id;
  creations.second = (await makeCreation(world.deps, owner.accountId, { caption: "50% off all cakes, today only" })).id;
  ({ browser, page } = await openBrowserPage({ timezoneId: "UTC", locale: "en-GB" }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await world?.stop();
});

async function scheduleFromPage(creationId: string, time: string): Promise<string> {
  await page.goto(`${world.base}/dashboard/creations/${creationId}`);
  await page.getByLabel("Date").first().fill("2026-06-02");
  await page.getByLabel("Time").first().fill(time);
  await page.locator(`input[name="targets"][value="${hook}"]`).first().check();
  await page.getByRole("button", { name: "Schedule", exact: true }).click();
  await page.waitForURL(/#post-/);
  return /#post-([0-9a-f-]+)/.exec(page.url())?.[1] ?? "";
}

describe("approval in the dashboard", () => {
  test("an editor schedules two posts: each waits, its page says Waiting for approval; no Approvals page for editors", async () => {
    await signIn(page, editor);
    expect(await page.locator("nav.main-nav").getByRole("link", { name: "Approvals" }).count()).toBe(0);
    posts.first = await scheduleFromPage(creations.first, "09:00");
    posts.second = await scheduleFromPage(creations.second, "10:00");
    expect((await getPost(world.deps, owner.accountId, posts.first)).post.status).toBe("pending_approval");
    await page.goto(`${world.base}/dashboard/calendar/posts/${posts.first}`);
    expect(await page.locator("main").textContent()).toContain("Waiting for approval");
    await shoot("01-editor-post-waiting");
  }, 60_000);

  test("the owner: the overview lists what waits; the Approvals page approves one and rejects the other with a note", async () => {
    await signIn(page, owner);
    expect(await page.locator("main").textContent()).toContain("Posts waiting for your approval");
    await shoot("02-owner-overview");
    await page.locator("nav.main-nav").getByRole("link", { name: "Approvals" }).click();
    await page.waitForURL(`${world.base}/dashboard/approvals`);
    expect(await page.locator("li.approval").count()).toBe(2);
    await shoot("03-approvals");
    await page.locator(`#post-${posts.first}`).getByRole("button", { name: /^Approve/ }).click();
    await page.waitForURL(/notice=approved/);
    await page.locator(`#post-${posts.second}`).getByLabel("Note for the author (optional)").fill("Price not confirmed yet");
    await page.locator(`#post-${posts.second}`).getByRole("button", { name: /^Reject/ }).click();
    await page.waitForURL(/notice=rejected/);
    expect(await page.locator("main").textContent()).toContain("Nothing is waiting for approval.");
    await shoot("04-approvals-done");
    await page.goto(`${world.base}/dashboard/calendar/posts/${posts.second}`);
    expect(await page.locator("main").textContent()).toContain("Rejected: Price not confirmed yet");
    await shoot("05-rejected-post");
  }, 60_000);

  test("the approved post publishes at its time (the clock moved); the rejected one never does", async () => {
    world.clock.set("2026-06-02T10:30:00Z");
    await runDueOnce(world.deps);
    expect((await getPost(world.deps, owner.accountId, posts.first)).post.status).toBe("published");
    expect((await getPost(world.deps, owner.accountId, posts.second)).post.status).toBe("failed");
    expect(receiver.effects().filter((d) => d.event === "post.publish").length).toBe(1);
  }, 60_000);
});
