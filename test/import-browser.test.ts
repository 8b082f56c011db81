/**
 * Issue 27's bulk import in the dashboard, in real Chromium (Debian `chromium` + playwright-core) against the app on a
 * real socket: an owner goes from the calendar to "Import posts from CSV", chooses a file with one bad row among four
 * and sees every row previewed with that row's problems at its row and nothing saved; then pastes the fixed file,
 * sees all rows ready, confirms, and the posts are scheduled (one queued into the posting schedule). The export link
 * downloads the posts as CSV. Every page: axe-core (no critical or serious finding), one h1 and no horizontal scroll
 * at 1280 and 390 px; screenshots in test-artifacts/import/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { putSlots } from "../src/modules/schedule/slots";
import { saveTimeZone } from "../src/web/preferences";
import { checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, memberOf, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { WEBHOOK_SECRET } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/import");
const ZONE = "Europe/Berlin";
const HEADER = "caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment";

let world: ServedWorld;
let owner: Person;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;
let hook = "";

const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

async function signIn(p: Page, person: Person): Promise<void> {
  await p.goto(`${world.base}/login`);
  await p.getByLabel("Email").fill(person.email);
  await p.getByLabel("Password").fill(PASSWORD);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${world.base}/dashboard`);
}

async function postCount(): Promise<number> {
  return Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM scheduled_posts WHERE account_id = ?", owner.accountId))[0]?.n ?? 0);
}

function rows(bad: boolean): string {
  const at = (days: number) => isoAt(Date.parse("2026-06-01T07:00:00Z") + days * 24 * 60 * 60 * 1000);
  return [
    HEADER,
    `"Rye loaves are back on Monday, fresh from 7.",,,${at(1)},,webhook,"Pre-order at the counter"`,
    `"Saturday: cinnamon buns from 8. Bring a friend; the second one is half price.",,,,true,webhook,`,
    bad ? `"Our sourdough course starts in June",,,next tuesday,,myspace,` : `"Our sourdough course starts in June",,,${at(2)},,webhook,`,
    `"Thank you for a wonderful first year!",,,${at(3)},false,webhook,"Photos from the party are up"`,
  ].join("\r\n");
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  world.clock.set("2026-06-01T06:00:00Z");
  owner = await ownerWithAccount(world, "Corner Bakery");
  await saveTimeZone(world.deps, owner.userId, ZONE);
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  hook = (await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: `${receiver.url}/shop`, secret: WEBHOOK_SECRET })).accountId;
  await putSlots(world.deps, { accountId: owner.accountId, role: "owner" }, { timeZone: "UTC", slots: [{ days: ["sat"], time: "08:00", targets: [hook] }] });
  ({ browser, page } = await openBrowserPage({ timezoneId: ZONE, locale: "en-GB" }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await world?.stop();
});

describe("CSV import in the dashboard", () => {
  test("the calendar links to the import; the import page explains the columns", async () => {
    await signIn(page, owner);
    await page.goto(`${world.base}/dashboard/calendar`);
    await page.getByRole("link", { name: "Import posts from CSV" }).click();
    await page.waitForURL(`${world.base}/dashboard/calendar/import`);
    await page.locator("details#import-columns summary").click();
    await shoot("01-import-form");
  }, 60_000);

  test("a file with one bad row: every row previewed, that row's problems at that row, nothing saved", async () => {
    const file = join(ARTIFACTS, "posts-with-a-bad-row.csv");
    writeFileSync(file, rows(true));
    await page.getByLabel("CSV file").setInputFiles(file);
    await page.getByRole("button", { name: "Preview" }).click();
    await page.waitForURL(`${world.base}/dashboard/calendar/import/preview`);
    expect(await page.locator(".import-row").count()).toBe(4);
    const bad = page.locator("#row-3");
    expect(await bad.locator(".import-problems li").allTextContents()).toEqual([
      "scheduled_time: must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z",
      expect.stringContaining('targets: No connected account matches "myspace"'),
    ]);
    expect(await page.locator(".import-row.attention").count()).toBe(1);
    expect(await page.locator("#row-1 .ok-text").textContent()).toBe("ready");
    expect(await page.getByRole("button", { name: /^Import/ }).count()).toBe(0);
    expect(await page.getByRole("alert").textContent()).toContain("One row has problems");
    expect(await postCount()).toBe(0);
    await shoot("02-preview-bad-row");
  }, 60_000);

  test("the fixed file pasted: all rows ready in the person's zone; confirming schedules them", async () => {
    await page.goto(`${world.base}/dashboard/calendar/import`);
    await page.getByLabel("…or paste the CSV here").fill(rows(false));
    await page.getByRole("button", { name: "Preview" }).click();
    await page.waitForURL(`${world.base}/dashboard/calendar/import/preview`);
    expect(await page.locator(".import-row.attention").count()).toBe(0);
    // 07:00 UTC is 09:00 in Berlin (summer time).
    expect(await page.locator("#row-1 time").textContent()).toContain("09:00");
    expect(await page.locator("#row-2 dd").first().textContent()).toBe("Next free queue slot");
    await shoot("03-preview-ready");
    await page.getByRole("button", { name: "Import 4 posts" }).click();
    await page.waitForURL(/\/dashboard\/calendar\/import\?imported=4/);
    expect(await page.locator(".notice-ok").textContent()).toContain("4 posts were imported and scheduled.");
    expect(await postCount()).toBe(4);
    const queued = await world.sql<{ scheduled_time: number | string }>("SELECT scheduled_time FROM scheduled_posts WHERE account_id = ? AND queued = ?", owner.accountId, world.dialect === "postgres" ? true : 1);
    expect(queued.map((r) => isoAt(Number(r.scheduled_time)))).toEqual(["2026-06-06T08:00:00.000Z"]);
  }, 60_000);

  test("the export link downloads every post as CSV", async () => {
    const answer = await page.request.get(`${world.base}/dashboard/calendar/export.csv`);
    expect(answer.status()).toBe(200);
    expect(answer.headers()["content-type"]).toBe("text/csv; charset=utf-8");
    const text = await answer.text();
    expect(text.split("\r\n")[0]).toBe(`${HEADER},id,status,published_urls`);
    expect(text).toContain("Thank you for a wonderful first year!");
  }, 60_000);

  test("a viewer cannot import (403 page) but can export", async () => {
    const viewer = await memberOf(world, owner.accountId, "viewer");
    const context = await browser.newContext({ timezoneId: ZONE });
    const p = await context.newPage();
    await signIn(p, viewer);
    const refused = await p.goto(`${world.base}/dashboard/calendar/import`);
    expect(refused?.status()).toBe(403);
    expect((await p.request.get(`${world.base}/dashboard/calendar/export.csv`)).status()).toBe(200);
    await context.close();
  }, 60_000);
});
