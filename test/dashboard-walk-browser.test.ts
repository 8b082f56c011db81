/**
 * The dashboard walked as a bakery owner in New York would, in real Chromium (Debian `chromium` + playwright-core)
 * against the app on a real socket (issue 23, decisions.md §15): the navigation (publishing pages first, the rest under
 * Settings, a one-line Menu button under 700 px that works without script); connecting (a server that is not Mastodon
 * refused beside its field, a wrong token refused, an account already connected pointed at its card with Reconnect);
 * trouble where people look (the overview lists the failed post and the connection that needs attention, and ticks off
 * getting started); a retrying post saying "Trying again at HH:MM (attempt 2 of 5)" in New York time on its page and
 * the calendar; a published post's page ("Published post", its line breaks kept); the post page at 390 px with a
 * connection needing attention (no sideways scroll, nothing cut off); "Cancel this post" / "Keep it"; November's
 * calendar in New York says EST; three uploads say "3 images"; the caption counter trims as the server does; a favicon
 * and no request leaves the server; no page shows ids, API paths or UTC. Every page: axe-core (no critical or serious
 * finding), one h1 and no horizontal scroll at 1280 and 390 px. Screenshots go to test-artifacts/dashboard-walk/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Server } from "bun";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { isoAt } from "../src/lib/clock";
import { addConnection, checkConnection } from "../src/modules/connections/service";
import { createSeed } from "../src/modules/seeds/service";
import { schedulePost } from "../src/modules/schedule/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { DESKTOP, PHONE, axeProblems, checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { makeCreation } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/dashboard-walk");
const ZONE = "America/New_York";
const SECRET = "whsec-walk-0123456789abcdef";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const PUBLISHED_CAPTION = "Fresh sourdough this morning.\n\nOpen 7 to 12, while it lasts.";

let world: ServedWorld;
let owner: Person;
let mastodon: MastodonServer;
let receiver: WebhookReceiver;
/** Answers 200 `{}` to every request: not a Mastodon server. */
let notMastodon: Server<undefined>;
/** A webhook receiver that answers the signed ping but is down (503) for every post. */
let flaky: Server<undefined>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const outside: string[] = [];
const ids = { mastodon: "", good: "", flaky: "", failed: "", retrying: "", published: "", attention: "", creation: "" };

/** What a person reads on the page that could be a raw id, an API path, "target id" or a UTC time. */
async function developerWords(shown: Page): Promise<string[]> {
  const text = await shown.evaluate(() => {
    const copy = document.body.cloneNode(true) as HTMLElement;
    // The zone picker lists every zone, UTC among them: that is a choice, not a time shown in UTC.
    for (const el of copy.querySelectorAll("select, script")) el.remove();
    return copy.innerText;
  });
  const found: string[] = [];
  const id = UUID.exec(text);
  if (id) found.push(`an id: ${id[0]}`);
  for (const word of ["target id", "/api/v1", "UTC"]) if (text.includes(word)) found.push(word);
  return found;
}

/** The page shown, checked at both widths (test/helpers/browser.ts) and for developer words, and shot. */
const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS, more: [developerWords] });

/** "HH:MM" of `ms` in New York. */
function newYorkTime(ms: number): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: ZONE, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(ms));
}

async function signIn(p: Page): Promise<void> {
  await p.goto(`${world.base}/login`);
  await p.getByLabel("Email").fill(owner.email);
  await p.getByLabel("Password").fill(PASSWORD);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${world.base}/dashboard`);
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  owner = await ownerWithAccount(world, "Corner Bakery");
  mastodon = await startMastodonServer({ now: () => world.clock.now() });
  receiver = await startWebhookReceiver({ secret: SECRET });
  notMastodon = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({}) });
  flaky = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const body = (await request.json().catch(() => ({}))) as { event?: string };
      return body.event === "ping" ? new Response("ok") : new Response("down for maintenance", { status: 503 });
    },
  });
  ({ browser, context, page } = await openBrowserPage({ timezoneId: ZONE, locale: "en-US" }));
  context.on("request", (request) => {
    if (!request.url().startsWith(world.base) && !request.url().startsWith("data:")) outside.push(request.url());
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await notMastodon?.stop(true);
  await flaky?.stop(true);
  await receiver?.stop();
  await mastodon?.stop();
  await world?.stop();
});

describe("the dashboard walked as a bakery owner", () => {
  test("navigation: publishing pages first, the rest under Settings; on a phone one Menu button that works without script", async () => {
    await signIn(page);
    const nav = page.locator("nav.main-nav a");
    expect(await nav.allTextContents()).toEqual(["Overview", "New post", "Calendar", "Queue", "Approvals", "Posts", "Library", "Ideas", "Connections", "Settings"]);
    expect(await page.locator(".checklist li.done").count()).toBe(0);
    expect(await page.locator("#next-title + .hint").textContent()).toBe("0 of 4 done.");
    await shoot("01-overview-new");

    await page.setViewportSize(PHONE);
    expect(await page.locator("nav.main-nav").isVisible()).toBe(false);
    const menu = page.locator("details.nav-menu > summary");
    expect(await menu.isVisible()).toBe(true);
    // One line: the header is as tall as its tallest item, and the Menu button is one line of text.
    const header = await page.locator("header.top").boundingBox();
    const button = await menu.boundingBox();
    expect(header?.height ?? 999).toBeLessThan(64);
    expect(button?.height ?? 999).toBeLessThan(44);
    await menu.click();
    const panel = page.locator(".nav-menu-panel nav a");
    expect(await panel.allTextContents()).toEqual(["Overview", "New post", "Calendar", "Queue", "Approvals", "Posts", "Library", "Ideas", "Connections", "Settings"]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, "02-menu-open-phone.png"), fullPage: true });
    expect(await axeProblems(page)).toEqual([]);
    await page.locator(".nav-menu-panel").getByRole("link", { name: "Settings" }).click();
    await page.waitForURL(`${world.base}/dashboard/settings`);
    await page.setViewportSize(DESKTOP);
    expect(await page.locator(".settings-list a").allTextContents()).toEqual(["Feeds", "Brand voice", "Members", "API keys", "Connected apps", "Credits", "Instance", "Your settings", "Notices"]);
    await shoot("03-settings");
    // A settings page keeps Settings marked in the navigation and leads back to it.
    await page.getByRole("link", { name: "API keys" }).click();
    expect(await page.locator('nav.main-nav a[aria-current="true"]').textContent()).toBe("Settings");
    expect(await page.locator(".crumb a").getAttribute("href")).toBe("/dashboard/settings");

    // Without script, at phone width: the menu opens and leads on.
    const plain = await browser.newContext({ viewport: PHONE, timezoneId: ZONE, javaScriptEnabled: false });
    const p = await plain.newPage();
    await signIn(p);
    await p.locator("details.nav-menu > summary").click();
    await p.locator(".nav-menu-panel").getByRole("link", { name: "Calendar" }).click();
    await p.waitForURL(/\/dashboard\/calendar$/);
    await plain.close();
  }, 90_000);

  test("connections: not Mastodon is refused beside its field; a wrong token adds nothing; an account already connected points at its card", async () => {
    await page.goto(`${world.base}/dashboard/connections`);
    // The access-token form is folded under Mastodon's sign-in (pages/sign-in-form.ts); open it, as a person would.
    const tokenForm = async () => {
      const details = page.locator("details.paste-token");
      if ((await details.getAttribute("open")) === null) await details.locator("summary").click();
      return page.locator("#mastodon-token-form");
    };
    const form = await tokenForm();
    const fakeUrl = `http://127.0.0.1:${notMastodon.port}`;
    await form.getByLabel("Server").fill(fakeUrl);
    await form.getByLabel("Access token").fill("some-token");
    await form.getByRole("button", { name: "Connect with this token" }).click();
    await page.waitForSelector("#mastodon-instance-error");
    expect(await page.locator("#mastodon-instance-error").textContent()).toContain("does not answer like a Mastodon server");
    expect(await page.locator("#mastodon-instance").inputValue()).toBe(fakeUrl);
    expect(await page.locator("#mastodon-token").inputValue()).toBe("");
    expect(await page.locator(".post.connection").count()).toBe(0);
    await shoot("04-connect-not-mastodon");

    const again = await tokenForm();
    await again.getByLabel("Server").fill(mastodon.url);
    await again.getByLabel("Access token").fill("typo-token");
    await again.getByRole("button", { name: "Connect with this token" }).click();
    await page.waitForSelector("#mastodon-token-error");
    expect(await page.locator("#mastodon-token-error").textContent()).toContain("refused the access token");
    expect(await page.locator(".post.connection").count()).toBe(0);

    await page.locator("#mastodon-token").fill(DEFAULT_TOKEN);
    await (await tokenForm()).getByRole("button", { name: "Connect with this token" }).click();
    await page.waitForURL(/notice=connected$/);
    expect(await page.locator(".post.connection").count()).toBe(1);
    ids.mastodon = ((await page.locator(".post.connection").getAttribute("id")) ?? "").replace("connection-", "");

    const twice = await tokenForm();
    await twice.getByLabel("Server").fill(mastodon.url);
    await twice.getByLabel("Access token").fill(DEFAULT_TOKEN);
    await twice.getByRole("button", { name: "Connect with this token" }).click();
    await page.waitForSelector(".post.connection.highlight");
    expect(await page.locator(".notice-error").textContent()).toContain("is already connected; use Reconnect on it");
    expect(await page.getByRole("link", { name: "reconnect it" }).getAttribute("href")).toBe(`/dashboard/connections/${ids.mastodon}/reconnect`);
    expect(await page.locator(".post.connection").count()).toBe(1);
    await shoot("05-connect-already-connected");

    for (const [url, key] of [[`${receiver.url}/bakery`, "good"], [`http://127.0.0.1:${flaky.port}/hook`, "flaky"]] as const) {
      ids[key] = (await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url, secret: SECRET }, { keepWhenNotReady: false })).accountId;
    }
  }, 90_000);

  test("trouble shows on the overview: the failed post and the connection needing attention; getting started is ticked off", async () => {
    const seed = await createSeed(world.deps, owner.accountId, { title: "Sourdough", content: "Fresh sourdough every morning from 7." });
    const creation = async (caption: string) => (await makeCreation(world.deps, owner.accountId, { caption })).id;
    const at = (ms: number) => isoAt(world.clock.now() + ms);
    ids.creation = await creation("Rye loaves are back on Saturday.");
    // Refused by Mastodon at scheduling: failed.
    await mastodon.setMode("reject422");
    ids.failed = (await schedulePost(world.deps, owner.accountId, { creationId: await creation("Cinnamon buns, half price after 3."), scheduledTime: at(2 * 3_600_000), targets: [ids.mastodon] })).post.id;
    await mastodon.setMode("ok");
    // Due in six minutes: one to the receiver that is down (retried), one to the receiver that works (published).
    ids.retrying = (await schedulePost(world.deps, owner.accountId, { creationId: await creation("Closed Monday for a family wedding."), scheduledTime: at(6 * 60_000), targets: [ids.flaky] })).post.id;
    ids.published = (await schedulePost(world.deps, owner.accountId, { creationId: await creation(PUBLISHED_CAPTION), scheduledTime: at(6 * 60_000), targets: [ids.good] })).post.id;
    // Held by Mastodon; then the token stops working, so the connection needs attention.
    ids.attention = (await schedulePost(world.deps, owner.accountId, { creationId: ids.creation, scheduledTime: at(3 * 3_600_000), targets: [ids.mastodon] })).post.id;
    mastodon.state.token = "rotated-elsewhere";
    expect((await checkConnection(world.deps, ids.mastodon)).readyToPost).toBe(false);
    world.clock.advance(7 * 60_000);
    await runDueOnce(world.deps);
    expect(seed.title).toBe("Sourdough");

    await page.goto(`${world.base}/dashboard`);
    const trouble = page.locator("section.attention");
    expect(await trouble.locator("h2").textContent()).toBe("Needs your attention");
    expect(await trouble.locator("h3").allTextContents()).toEqual(["Posts that failed", "Connections that need attention"]);
    const failed = trouble.locator("#trouble-failed-posts + ul li");
    expect(await failed.count()).toBe(1);
    expect(await failed.locator("a").getAttribute("href")).toBe(`/dashboard/calendar/posts/${ids.failed}`);
    expect(await failed.locator("a").textContent()).toContain("Cinnamon buns");
    expect(await failed.locator(".why").textContent()).toContain("Rejected by test mode");
    const attention = trouble.locator("#trouble-connections + ul li");
    expect(await attention.locator("a").getAttribute("href")).toBe(`/dashboard/connections#connection-${ids.mastodon}`);
    expect(await attention.locator(".why").textContent()).toContain("refused the access token");
    expect(await page.locator("#next-title + .hint").textContent()).toBe("All done: you are up and running.");
    expect(await page.locator(".checklist li.done").count()).toBe(4);
    await shoot("06-overview-trouble");
  }, 90_000);

  test("a retrying post says when it tries again and which attempt, in New York time, on its page and the calendar", async () => {
    const [row] = await world.sql<{ next: number; attempts: number }>("SELECT next_attempt_at AS next, attempts FROM scheduled_post_targets WHERE post_id = ?", ids.retrying);
    expect(Number(row?.attempts)).toBe(1);
    const line = `Trying again at ${newYorkTime(Number(row?.next))} (attempt 2 of 5)`;
    await page.goto(`${world.base}/dashboard/calendar/posts/${ids.retrying}`);
    expect(await page.locator(".targets li strong").textContent()).toBe(`${line}.`);
    expect(await page.locator(".targets li").textContent()).toContain("Last try: The webhook receiver answered HTTP 503");
    await shoot("07-post-retrying");
    await page.goto(`${world.base}/dashboard/calendar?view=month`);
    expect(await page.locator(`#post-${ids.retrying} .chip-retry`).textContent()).toBe(line);
    await shoot("08-calendar-retrying");
  }, 60_000);

  test("a published post's page says so and keeps its line breaks", async () => {
    await page.goto(`${world.base}/dashboard/calendar/posts/${ids.published}`);
    expect(await page.locator("h1").textContent()).toBe("Published post");
    expect(await page.locator(".post-caption").innerText()).toBe(PUBLISHED_CAPTION);
    await shoot("09-post-published");
  }, 60_000);

  test("the post pages on a phone with a connection needing attention: no sideways scroll, nothing cut off", async () => {
    // The scheduled post's page, and the post's own page (caption and the Schedule form listing the connection).
    for (const [name, path, warning] of [
      ["10-post-attention", `/dashboard/calendar/posts/${ids.attention}`, ".notice-warn"],
      ["10b-creation-attention", `/dashboard/creations/${ids.creation}`, ".target-why"],
    ] as const) {
      await page.goto(`${world.base}${path}`);
      await page.setViewportSize(PHONE);
      expect(await page.locator(warning).textContent()).toContain("The Mastodon server refused the access token");
      const fit = await page.evaluate(() => {
        const width = window.innerWidth;
        const cut: string[] = [];
        for (const el of document.querySelectorAll("main *")) {
          const box = el.getBoundingClientRect();
          if (box.width === 0 || box.height === 0) continue;
          if (box.right > width + 0.5 || box.left < -0.5) cut.push(`${el.tagName.toLowerCase()}.${(el as HTMLElement).className}: ${Math.round(box.left)}…${Math.round(box.right)}`);
        }
        return { scrollWidth: document.documentElement.scrollWidth, cut };
      });
      expect([name, fit.scrollWidth <= 390, fit.cut]).toEqual([name, true, []]);
      await page.setViewportSize(DESKTOP);
      await shoot(name);
    }
  }, 60_000);

  test('cancelling asks "Cancel this post" or "Keep it"; keeping it keeps it', async () => {
    await page.goto(`${world.base}/dashboard/calendar/posts/${ids.attention}`);
    await page.getByRole("link", { name: "Cancel this post…" }).click();
    await page.waitForURL(/\/cancel$/);
    expect(await page.locator("main form button").textContent()).toBe("Cancel this post");
    expect(await page.locator("main form a.button").textContent()).toBe("Keep it");
    await shoot("11-cancel-confirm");
    await page.getByRole("link", { name: "Keep it" }).click();
    await page.waitForURL(`${world.base}/dashboard/calendar/posts/${ids.attention}`);
    expect(await page.locator("h1").textContent()).toBe("Scheduled post");
  }, 60_000);

  test("the calendar names New York's zone as it is in the month shown (November: EST, not the GMT-4 of late October)", async () => {
    await page.goto(`${world.base}/dashboard/calendar?view=month&date=2026-11-15`);
    const note = (await page.locator(".zone-note").textContent()) ?? "";
    expect(note).toContain("times in America/New York (EST)");
    expect(note).not.toContain("GMT-4");
    expect(note).not.toContain("EDT");
    await shoot("12-calendar-november");
    await page.goto(`${world.base}/dashboard/calendar?view=month&date=2027-03-10`);
    expect(await page.locator(".zone-note").textContent()).toContain("(EST, then EDT from Sun 14 Mar)");
  }, 60_000);

  test('three images uploaded at once say "3 images were added"', async () => {
    const png = async (color: string) => sharp({ create: { width: 320, height: 240, channels: 3, background: color } }).png().toBuffer();
    await page.goto(`${world.base}/dashboard/library`);
    await page.getByLabel("Drop images here, or choose files").setInputFiles([
      { name: "rye.png", mimeType: "image/png", buffer: await png("#7a5230") },
      { name: "buns.png", mimeType: "image/png", buffer: await png("#d9a441") },
      { name: "shopfront.png", mimeType: "image/png", buffer: await png("#3a7d44") },
    ]);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.waitForURL(/notice=uploaded&count=3/);
    expect(await page.locator(".notice-ok").textContent()).toBe("3 images were added to the library.");
    await shoot("13-library-three-added");
  }, 60_000);

  test("the caption counter counts what the server keeps: trailing spaces and line breaks are not counted", async () => {
    await page.goto(`${world.base}/dashboard/creations/${ids.creation}`);
    const seedcast = page.locator(".counter", { hasText: "Seedcast limit" });
    await page.getByLabel("Caption", { exact: true }).fill("Rye on Saturday   \n\n");
    expect(await seedcast.locator(".count").textContent()).toBe("15");
    await page.getByRole("button", { name: /Save caption/ }).click();
    await page.waitForURL(/notice=creation-saved/);
    expect(await seedcast.locator(".count").textContent()).toBe("15");
    expect(await page.getByLabel("Caption", { exact: true }).inputValue()).toBe("Rye on Saturday");
    await shoot("14-caption-counted");
  }, 60_000);

  test("every page: a favicon, no request leaves the server, no ids, API paths or UTC, axe clean at both widths", async () => {
    const pages: [string, string][] = [
      ["20-overview", "/dashboard"],
      ["21-calendar", "/dashboard/calendar"],
      ["22-posts", "/dashboard/creations"],
      ["23-library", "/dashboard/library"],
      ["24-ideas", "/dashboard/seeds"],
      ["25-new-post", "/dashboard/compose"],
      ["26-connections", "/dashboard/connections"],
      ["27-reconnect", `/dashboard/connections/${ids.mastodon}/reconnect`],
      ["28-voice", "/dashboard/voice"],
      ["29-members", "/dashboard/members"],
      ["30-keys", "/dashboard/keys"],
      ["31-apps", "/dashboard/apps"],
      ["32-credits", "/dashboard/credits"],
      ["33-your-settings", "/dashboard/account"],
      ["35-instance", "/dashboard/instance"],
      ["34-failed-post", `/dashboard/calendar/posts/${ids.failed}`],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${world.base}${path}`);
      expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe("/dashboard/static/favicon.svg");
      await shoot(name);
    }
    await page.goto(`${world.base}/dashboard/seeds`);
    expect(await page.locator("#new-seed").getAttribute("open")).toBeNull();
    await page.goto(`${world.base}/dashboard/seeds?new=1#new-seed`);
    expect(await page.locator("#new-seed").getAttribute("open")).toBe("");
    const icon = await fetch(`${world.base}/dashboard/static/favicon.svg`);
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
    expect(await icon.text()).toStartWith("<svg");
    expect(outside).toEqual([]);
  }, 180_000);
});
