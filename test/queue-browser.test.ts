/**
 * Issue 27's dashboard in real Chromium (Debian `chromium` + playwright-core) against the app on a real socket: an
 * owner in New York sets up the posting schedule of an account that runs on Berlin time (days × times ×
 * connections), adds a post to the queue from its page ("Add to queue"), sees the coming slots filled and empty in
 * the Queue view in her own zone, moves a post to another slot and posts one now (delivered to a real webhook
 * receiver). An editor sees the account's zone but cannot change it. Every page: axe-core (no critical or serious
 * finding), one h1 and no horizontal scroll at 1280 and 390 px; screenshots in test-artifacts/queue/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { addConnection } from "../src/modules/connections/service";
import { updateAccountSettings } from "../src/modules/accounts/settings";
import { queuePost } from "../src/modules/schedule/queue";
import { scheduleRequest } from "../src/modules/schedule/request";
import { getPost } from "../src/modules/schedule/service";
import { getSlots } from "../src/modules/schedule/slots";
import { saveTimeZone } from "../src/web/preferences";
import { checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, memberOf, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { makeCreation, WEBHOOK_SECRET } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/queue");
const ZONE = "America/New_York";

let world: ServedWorld;
let owner: Person;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;
const ids = { shop: "", news: "" };

const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

async function signIn(p: Page, person: Person): Promise<void> {
  await p.goto(`${world.base}/login`);
  await p.getByLabel("Email").fill(person.email);
  await p.getByLabel("Password").fill(PASSWORD);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${world.base}/dashboard`);
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  world.clock.set("2026-06-01T06:00:00Z"); // Monday, 08:00 in Berlin, 02:00 in New York
  owner = await ownerWithAccount(world, "Corner Bakery");
  await saveTimeZone(world.deps, owner.userId, ZONE);
  await updateAccountSettings(world.deps, { accountId: owner.accountId, role: "owner" }, { timeZone: "Europe/Berlin" });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  ids.shop = (await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: `${receiver.url}/shop`, secret: WEBHOOK_SECRET })).accountId;
  ids.news = (await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: `${receiver.url}/news`, secret: WEBHOOK_SECRET })).accountId;
  ({ browser, page } = await openBrowserPage({ timezoneId: ZONE, locale: "en-US" }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await world?.stop();
});

describe("the queue in the dashboard", () => {
  test("the Queue is in the navigation; without slots it says how to start", async () => {
    await signIn(page, owner);
    await page.locator("nav.main-nav").getByRole("link", { name: "Queue" }).click();
    await page.waitForURL(`${world.base}/dashboard/queue`);
    expect(await page.locator("main").textContent()).toContain("No posting slots yet");
    await shoot("01-queue-empty");
  }, 60_000);

  test("the posting-schedule editor: days × a time × connections, in the account's zone; an owner sets the zone", async () => {
    await page.getByRole("link", { name: "Set up the posting schedule" }).click();
    await page.waitForURL(`${world.base}/dashboard/queue/schedule`);
    expect(await page.getByLabel("The account's time zone").inputValue()).toBe("Europe/Berlin");
    const row = page.locator("fieldset.slot-row", { has: page.locator("legend", { hasText: "New slot" }) });
    for (const day of ["Mon", "Tue", "Wed", "Thu", "Fri"]) await row.getByLabel(day, { exact: true }).check();
    await row.getByLabel("Time (HH:MM)").fill("09:00");
    await row.locator(`input[value="${ids.shop}"]`).check();
    await row.locator(`input[value="${ids.news}"]`).check();
    await page.getByRole("button", { name: "Save posting schedule" }).click();
    await page.waitForURL(/notice=slots-saved/);
    const next = page.locator("fieldset.slot-row", { has: page.locator("legend", { hasText: "New slot" }) });
    for (const day of ["Sat", "Sun"]) await next.getByLabel(day, { exact: true }).check();
    await next.getByLabel("Time (HH:MM)").fill("11:30");
    await next.locator(`input[value="${ids.shop}"]`).check();
    await page.getByRole("button", { name: "Save posting schedule" }).click();
    await page.waitForURL(/notice=slots-saved/);
    expect(await getSlots(world.deps, owner.accountId)).toEqual({
      timeZone: "Europe/Berlin",
      slots: [
        { days: ["mon", "tue", "wed", "thu", "fri"], time: "09:00", targets: [ids.shop, ids.news] },
        { days: ["sat", "sun"], time: "11:30", targets: [ids.shop] },
      ],
    });
    await shoot("02-schedule-editor");
  }, 60_000);

  test("a bad row is refused beside a notice, nothing saved", async () => {
    const next = page.locator("fieldset.slot-row", { has: page.locator("legend", { hasText: "New slot" }) });
    await next.getByLabel("Wed", { exact: true }).check();
    await next.locator(`input[value="${ids.shop}"]`).check();
    await page.getByRole("button", { name: "Save posting schedule" }).click();
    await page.waitForSelector(".notice-error");
    expect(await page.locator(".notice-error").textContent()).toContain("HH:MM");
    expect((await getSlots(world.deps, owner.accountId)).slots).toHaveLength(2);
  }, 60_000);

  test("Add to queue on a post's page takes the next free slot; the Queue view shows slots filled and empty in New York time", async () => {
    const first = await makeCreation(world.deps, owner.accountId, { caption: "Rye loaves are back on Monday." });
    await queuePost(world.deps, owner.accountId, { creationId: first.id, targets: [ids.shop, ids.news] });
    const second = await makeCreation(world.deps, owner.accountId, { caption: "Saturday: cinnamon buns from 8." });
    await page.goto(`${world.base}/dashboard/creations/${second.id}`);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Schedule" }) });
    await form.locator(`input[name="targets"][value="${ids.shop}"]`).check();
    await form.getByRole("button", { name: "Add to queue" }).click();
    await page.waitForURL(/\/dashboard\/queue\?notice=queued/);
    // Monday 09:00 Berlin is taken by the first post; the second takes Tuesday 09:00 Berlin = 03:00 in New York.
    const chip = page.locator(".queue-slot.filled", { hasText: "cinnamon" });
    expect(await chip.locator("time").textContent()).toBe("03:00");
    expect(await page.locator(".queue-slot.filled").count()).toBe(2);
    expect(await page.locator(".queue-slot.empty").count()).toBeGreaterThan(5);
    await shoot("03-queue");
  }, 60_000);

  test("move a post to another slot; post one now (the receiver gets it)", async () => {
    const buns = page.locator(".queue-slot.filled", { hasText: "cinnamon" });
    const postId = ((await buns.getAttribute("id")) ?? "").replace("post-", "");
    const options = await buns.locator("select option").allTextContents();
    expect(options.length).toBeGreaterThan(3);
    // Saturday 11:30 in Berlin is 05:30 in New York.
    const saturday = options.find((o) => o.endsWith("05:30"));
    expect(saturday).toBeDefined();
    await buns.locator("select").selectOption({ label: saturday! });
    await buns.getByRole("button", { name: "Move" }).click();
    await page.waitForURL(/notice=moved/);
    const moved = (await getPost(world.deps, owner.accountId, postId)).post;
    expect(moved).toMatchObject({ scheduledTime: "2026-06-06T09:30:00.000Z", queued: true });

    const rye = page.locator(".queue-slot.filled", { hasText: "Rye loaves" });
    const ryeId = ((await rye.getAttribute("id")) ?? "").replace("post-", "");
    const before = receiver.deliveries.length;
    await rye.getByRole("button", { name: "Post now" }).click();
    await page.waitForURL(/notice=posted-now/);
    expect((await getPost(world.deps, owner.accountId, ryeId)).post.status).toBe("published");
    expect(receiver.deliveries.length - before).toBe(2);
    await shoot("04-queue-after-move");
  }, 60_000);

  test("the calendar marks a repeating post and a queued one", async () => {
    const weekly = await makeCreation(world.deps, owner.accountId, { caption: "Every Thursday: pretzel day." });
    const { post } = await scheduleRequest(world.deps, { accountId: owner.accountId, role: "owner" }, {
      creationId: weekly.id,
      scheduledTime: "2026-06-04T12:00:00Z",
      targets: [ids.shop],
      repeat: { every: "week", count: 4 },
    });
    expect(post.seriesId).toBeString();
    await page.goto(`${world.base}/dashboard/calendar?view=week&date=2026-06-04`);
    const chip = page.locator(`#post-${post.id}`);
    expect(await chip.locator(".badge.repeats").textContent()).toContain("repeats");
    // The week of 1–7 June also holds the queued post moved to Saturday; the repeating one is not queued.
    expect(await page.locator(".chip", { hasText: "cinnamon" }).locator(".badge", { hasText: "queued" }).count()).toBe(1);
    expect(await chip.locator(".badge", { hasText: "queued" }).count()).toBe(0);
    await shoot("05-calendar-repeats");
  }, 60_000);

  test("an editor sees the account's zone on the editor but cannot change it", async () => {
    const editor = await memberOf(world, owner.accountId, "editor");
    const context = await browser.newContext({ timezoneId: ZONE });
    const p = await context.newPage();
    await signIn(p, editor);
    await p.goto(`${world.base}/dashboard/queue/schedule`);
    expect(await p.locator("select[name=timeZone]").count()).toBe(0);
    expect(await p.locator("main").textContent()).toContain("Only an owner changes it");
    await context.close();
  }, 60_000);
});
