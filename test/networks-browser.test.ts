/**
 * Discord and Telegram through the dashboard in real Chromium, against the BUILT executable and the stand-ins (reached
 * through PLATFORM_ORIGIN_OVERRIDES): the connect forms, each bad input's sentence beside its field with nothing stored
 * (not a Discord webhook URL, a wrong bot token, a bot that is not an admin), then connected; a post written in the
 * composer and scheduled in the dashboard (test/helpers/dashboard-post.ts: "Add to queue", then the Queue view's "Post
 * now", so it is due at once) with 2 images (alt text) and a 2-part thread delivered once to both; a post scheduled for
 * tomorrow and cancelled on its page never reaches either; a post whose answers were cut off after the networks stored
 * it turns `unconfirmed`: shown on the overview, in the calendar and on its page, answered there with "Send again"
 * (Discord: resumes, nothing twice) and "It was posted" (Telegram, with its address). axe-core clean and no horizontal
 * scroll at 1280 and 390 px; screenshots in test-artifacts/networks/. On the run's database (SQLite, or PostgreSQL with
 * SEEDCAST_TEST_DATABASE=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import type { Deps } from "../src/deps";
import { connections, scheduledPosts } from "../src/db/tables";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, openServerData, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { cancelInDashboard, postFromDashboard } from "./helpers/dashboard-post";
import { testDatabaseEnv } from "./helpers/test-database";
import { type DiscordStandIn, startDiscordStandIn } from "./peers/discord/server";
import { type TelegramStandIn, startTelegramStandIn } from "./peers/telegram/server";
import { solidPng } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let discord: DiscordStandIn;
let telegram: TelegramStandIn;
let env: Record<string, string>;

async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  discord = startDiscordStandIn();
  telegram = startTelegramStandIn();
  env = { ...(await testDatabaseEnv()), PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`, DISPATCH_POLL_MS: "100" };
  e2e = await startDashboardE2E("seedcast-networks-e2e-", env, { timezoneId: "UTC", locale: "en-GB" });
  ({ base, page } = e2e);
}, 180_000);

afterAll(async () => {
  await e2e?.close();
  await discord?.stop();
  await telegram?.stop();
});

/** The server's data, opened beside it. */
function beside(): Promise<Deps> {
  return openServerData(e2e!.server, env);
}

function form(name: string) {
  return page.locator("form", { has: page.getByRole("heading", { name }) });
}

async function connectionCount(): Promise<number> {
  const deps = await beside();
  try {
    return (await deps.store.db.select().from(connections).all()).length;
  } finally {
    await deps.store.close();
  }
}

const TARGETS = ["Garden club", "@gardenclub"];

/**
 * A post with 2 images (alt text each) and a 2-part thread, written in the composer and sent to both connections at
 * once from the dashboard ("Add to queue", then "Post now"). Answers its id as the dashboard shows it.
 */
async function postNowFromDashboard(caption: string, shots?: string): Promise<string> {
  return postFromDashboard(
    page,
    base,
    {
      caption,
      images: [
        { alt: "Wide blue", upload: { name: "wide.png", bytes: await solidPng(320, 200) } },
        { alt: "Tall blue", upload: { name: "tall.png", bytes: await solidPng(200, 320) } },
      ],
      thread: [`${caption} (2/3)`, `${caption} (3/3)`],
    },
    { targets: TARGETS, when: "now" },
    shots ? { onStep: (step) => shoot(`${shots}-${step}`) } : {},
  );
}

async function postStatus(postId: string): Promise<string> {
  const deps = await beside();
  try {
    return (await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get())?.status ?? "gone";
  } finally {
    await deps.store.close();
  }
}

async function waitForStatus(postId: string, status: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await postStatus(postId)) !== status) await Bun.sleep(200);
  expect(await postStatus(postId)).toBe(status);
}

describe("Discord and Telegram in the dashboard", () => {
  let unconfirmedId = "";

  test("set up; the connections page shows the two new forms", async () => {
    await page.goto(`${base}/dashboard`);
    await submitSetup(page, base, { account: "Garden club", email: "gita@garden.test", password: PASSWORD });
    await page.goto(`${base}/dashboard/connections`);
    await page.getByRole("heading", { name: "Connect Discord" }).waitFor();
    await page.getByRole("heading", { name: "Connect Telegram" }).waitFor();
    await shoot("01-connect-forms");
  }, 90_000);

  test("Discord: not a webhook URL gets its sentence beside the field, nothing stored; the right one connects", async () => {
    await form("Connect Discord").getByLabel("Channel webhook URL").fill("https://discord.com/channels/1234/5678");
    await form("Connect Discord").getByRole("button", { name: "Connect" }).click();
    await page.getByText("This is not a Discord webhook URL.").first().waitFor();
    expect(await connectionCount()).toBe(0);
    await shoot("02-discord-not-a-webhook");
    const hook = discord.addWebhook("Garden club");
    await form("Connect Discord").getByLabel("Channel webhook URL").fill(hook.url);
    await form("Connect Discord").getByRole("button", { name: "Connect" }).click();
    await page.waitForURL(/notice=connected/);
    expect(await page.getByRole("heading", { name: "Discord · Garden club" }).count()).toBe(1);
  }, 60_000);

  test("Telegram: a wrong token, then a bot that is not an admin: a sentence each, nothing stored; then connected", async () => {
    const bot = telegram.addBot("garden_club_bot");
    const channel = telegram.addChannel("gardenclub", bot, { status: "member" });
    const tg = () => form("Connect Telegram");
    await tg().getByLabel("Bot token").fill(`${bot.id}:AAE${"q".repeat(32)}`);
    await tg().getByLabel("Channel").fill("@gardenclub");
    await tg().getByRole("button", { name: "Connect" }).click();
    await page.getByText("Telegram does not accept this bot token.").first().waitFor();
    expect(await tg().getByLabel("Channel").inputValue()).toBe("@gardenclub");
    expect(await tg().getByLabel("Bot token").inputValue()).toBe("");
    await shoot("03-telegram-wrong-token");
    await tg().getByLabel("Bot token").fill(bot.token);
    await tg().getByRole("button", { name: "Connect" }).click();
    await page.getByText('Add @garden_club_bot to the channel @gardenclub as an administrator with "Post messages"').first().waitFor();
    expect(await connectionCount()).toBe(1);
    await shoot("04-telegram-not-admin");
    channel.members.set(bot.id, { status: "administrator", canPost: true });
    await tg().getByLabel("Bot token").fill(bot.token);
    await tg().getByRole("button", { name: "Connect" }).click();
    await page.waitForURL(/notice=connected/);
    expect(await page.getByRole("heading", { name: "Telegram · @gardenclub" }).count()).toBe(1);
    await shoot("05-connected");
  }, 60_000);

  test("a post scheduled for tomorrow in the dashboard and cancelled on its page before it is due: gone, nothing sent", async () => {
    const id = await postFromDashboard(page, base, { caption: "Frost tonight, cover the dahlias", thread: ["Fleece is in the shed"] }, { targets: TARGETS, when: "later" });
    expect(await postStatus(id)).toBe("scheduled");
    await cancelInDashboard(page, id);
    expect(await page.locator(".notice").first().textContent()).toContain("cancelled");
    expect(await postStatus(id)).toBe("gone");
    await page.goto(`${base}/dashboard/calendar/posts/${id}`);
    expect(await page.locator("h1").textContent()).not.toContain("Frost");
    // Nothing went out, and (next test) the post sent after it is the only thing either network ever received.
    expect(discord.messages).toEqual([]);
    expect(telegram.messages).toEqual([]);
  }, 90_000);

  test("a post with 2 images and a 2-part thread, written in the composer and sent from the dashboard, goes out once to each", async () => {
    const id = await postNowFromDashboard("Bulb planting day", "11");
    await waitForStatus(id, "published");
    expect(discord.messages.map((m) => [m.content, m.attachments.map((a) => a.description)])).toEqual([
      ["Bulb planting day", ["Wide blue", "Tall blue"]],
      ["Bulb planting day (2/3)", []],
      ["Bulb planting day (3/3)", []],
    ]);
    expect(telegram.messages.map((m) => [m.caption ?? m.text, m.photos.length])).toEqual([
      ["Bulb planting day", 1],
      [null, 1],
      ["Bulb planting day (2/3)", 0],
      ["Bulb planting day (3/3)", 0],
    ]);
  }, 60_000);

  test("answers cut off after storing: the post is unconfirmed on the overview, in the calendar and on its page", async () => {
    discord.mode.cutAfter = 1;
    discord.mode.storeThenCut = 1;
    telegram.mode.storeThenCut = 1;
    unconfirmedId = await postNowFromDashboard("Seed library opening");
    await waitForStatus(unconfirmedId, "unconfirmed");
    await page.goto(`${base}/dashboard`);
    await page.getByRole("heading", { name: "Posts to check: did they go out?" }).waitFor();
    await shoot("06-overview-unconfirmed");
    await page.goto(`${base}/dashboard/calendar`);
    await page.locator(".status-unconfirmed").first().waitFor();
    await shoot("07-calendar-unconfirmed");
    await page.goto(`${base}/dashboard/calendar/posts/${unconfirmedId}`);
    await page.getByRole("heading", { name: "Did it go out on Garden club?" }).waitFor();
    await page.getByRole("heading", { name: "Did it go out on @gardenclub?" }).waitFor();
    await shoot("08-post-unconfirmed");
  }, 60_000);

  test("Send again (Discord) resumes after the confirmed message; It was posted (Telegram) takes the pasted address", async () => {
    const before = discord.messages.length;
    const discordCard = page.locator("section", { has: page.getByRole("heading", { name: "Did it go out on Garden club?" }) });
    await discordCard.getByRole("button", { name: "Send again" }).click();
    await page.waitForURL(/notice=sending-again/);
    const telegramCard = page.locator("section", { has: page.getByRole("heading", { name: "Did it go out on @gardenclub?" }) });
    await telegramCard.getByLabel("Its address (optional)").fill("not an address");
    await telegramCard.getByRole("button", { name: "It was posted" }).click();
    await page.getByText("Paste the post's address as it shows in your browser").first().waitFor();
    await shoot("09-posted-bad-address");
    const url = `https://t.me/gardenclub/${telegram.messages.at(-1)!.messageId}`;
    const again = page.locator("section", { has: page.getByRole("heading", { name: "Did it go out on @gardenclub?" }) });
    await again.getByLabel("Its address (optional)").fill(url);
    await again.getByRole("button", { name: "It was posted" }).click();
    await page.waitForURL(/notice=marked-posted/);
    await waitForStatus(unconfirmedId, "published");
    // Discord: part 2 was stored once before (its answer cut off) and once by Send again; part 1 never again; part 3 once.
    const texts = discord.messages.slice(before - 2).map((m) => m.content);
    expect(texts).toEqual(["Seed library opening", "Seed library opening (2/3)", "Seed library opening (2/3)", "Seed library opening (3/3)"]);
    await page.goto(`${base}/dashboard/calendar/posts/${unconfirmedId}`);
    expect(await page.getByRole("link", { name: "see the post" }).last().getAttribute("href")).toBe(url);
    await shoot("10-post-resolved");
    expect(discord.violations).toEqual([]);
    expect(telegram.violations).toEqual([]);
  }, 60_000);
});
