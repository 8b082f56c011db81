/**
 * The whole publishing path in real Chromium (Debian `chromium` + playwright-core) against the BUILT executable, as a
 * new person in Berlin would do it: set up the instance → connect a webhook (the test webhook receiver) → write a seed
 * → generate it with an image → edit the caption (the counters follow) → schedule it for tomorrow 09:00 Europe/Berlin
 * → see it at 09:00 on the month view (08:00 UTC in winter) → drag it to the next day → cancel it. Along the way:
 * axe-core on every dashboard page (0 critical or serious violations), no horizontal scroll at 390 px, library tiles
 * no taller than 1.5 × their width, and a reload after minting a key never mints a second one.
 * Screenshots go to test-artifacts/dashboard-publishing/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Page } from "playwright-core";
import sharp from "sharp";
import { DESKTOP, PHONE, checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/dashboard-publishing");
const PASSWORD = "correct horse battery";
const WEBHOOK_SECRET = "whsec-0123456789abcdef";
const ZONE = "Europe/Berlin";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let receiver: WebhookReceiver;
const checked = new Set<string>();

/** The page shown, checked at both widths and shot (test/helpers/browser.ts); its path (ids as :id) noted as checked. */
async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
  checked.add(new URL(page.url()).pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, ":id"));
}

/** The date `days` after today in `zone`, as YYYY-MM-DD. */
function zonedDate(days: number, zone = ZONE): string {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  const [y, m, d] = parts.split("-").map(Number);
  return new Date(Date.UTC(y ?? 1970, (m ?? 1) - 1, (d ?? 1) + days)).toISOString().slice(0, 10);
}

/** 09:00 in Berlin on `date`, in UTC: 08:00 while Berlin keeps CET (winter), 07:00 under CEST (summer). */
function nineInBerlinUtc(date: string): string {
  const noon = new Date(`${date}T12:00:00Z`);
  const name = new Intl.DateTimeFormat("en-GB", { timeZone: ZONE, timeZoneName: "short" }).formatToParts(noon).find((p) => p.type === "timeZoneName")?.value;
  const hour = name === "CET" || name === "GMT+1" ? "08" : "07";
  return `${date}T${hour}:00:00.000Z`;
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  // The person's browser is in Berlin: the dashboard takes its zone from there.
  e2e = await startDashboardE2E("seedcast-publish-e2e-", { ALLOW_PRIVATE_HOSTS: "127.0.0.1", GENERATOR: "builtin" }, { timezoneId: ZONE, locale: "en-GB" });
  ({ base, page } = e2e);
}, 180_000);

afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
});

describe("the publishing path in Chromium", () => {
  let postId = "";
  let creationPath = "";
  const tomorrow = zonedDate(1);
  const dayAfter = zonedDate(2);

  test("a new person sets up the instance; their time zone is taken from the browser", async () => {
    await page.goto(`${base}/dashboard`);
    expect(page.url()).toBe(`${base}/setup`);
    await submitSetup(page, base, { account: "Allotment Berlin", email: "anna@allotment.test", password: PASSWORD });
    // The first page load sends the browser's zone once, then reloads without asking again.
    await page.waitForFunction(() => !document.body.hasAttribute("data-set-zone"));
    await shoot("01-overview");
    await page.goto(`${base}/dashboard/account`);
    expect(await page.getByLabel("Show and enter times in").inputValue()).toBe(ZONE);
    await shoot("02-settings");
  }, 60_000);

  test("connects a webhook", async () => {
    await page.goto(`${base}/dashboard/connections`);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Connect Webhook" }) });
    await form.getByLabel("Webhook URL").fill(`${receiver.url}/garden`);
    await form.getByLabel("Signing secret").fill(WEBHOOK_SECRET);
    await form.getByRole("button", { name: "Connect" }).click();
    await page.waitForURL(/notice=connected/);
    expect(receiver.deliveries.some((d) => d.event === "ping" && d.verified)).toBe(true);
    await shoot("03-connections");
  }, 60_000);

  test("writes a seed (a blank one is refused beside its field) and generates it with an image", async () => {
    await page.goto(`${base}/dashboard/seeds`);
    await shoot("04-seeds-empty");
    await page.getByLabel("What is the post about?").fill("Sow broad beans now for an early crop next spring.");
    await page.getByRole("button", { name: "Save seed" }).click();
    // No title: the error sits under the title field, which has the focus; the text typed is still there.
    await page.waitForSelector("#title-error");
    expect(await page.locator("#title-error").textContent()).toBe("Give the seed a title.");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("title");
    expect(await page.getByLabel("Title").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("What is the post about?").inputValue()).toBe("Sow broad beans now for an early crop next spring.");
    await shoot("05-seed-error");
    await page.getByLabel("Title").fill("Broad beans in November");
    await page.getByRole("button", { name: "Save seed" }).click();
    await page.waitForURL(/\/dashboard\/seeds\/[0-9a-f-]{36}\?notice=seed-saved$/);
    expect(await page.locator(".seed-text").first().textContent()).toBe("Sow broad beans now for an early crop next spring.");
    await shoot("06-seed");

    await page.getByLabel("Shape").selectOption("landscape");
    await page.getByLabel("Generate a visual").check();
    await page.getByRole("button", { name: "Generate" }).click();
    await page.waitForURL(/\/dashboard\/creations\/[0-9a-f-]{36}\?notice=generated$/);
    creationPath = new URL(page.url()).pathname;
    const img = page.locator(".post-preview img");
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(1200);
    await shoot("07-generated");
  }, 90_000);

  test("edits the caption by hand; the counters follow and turn red when over", async () => {
    const caption = page.getByLabel("Caption", { exact: true });
    const bluesky = page.locator(".counter", { hasText: "Seedcast" });
    expect(await page.locator(".counter").count()).toBe(1); // a webhook has no limit of its own
    // Written by hand, a caption may be as long as the longest network takes (decisions §13).
    await caption.fill("x".repeat(63_207));
    expect(await bluesky.getAttribute("class")).toContain("over");
    expect(await bluesky.locator(".count").textContent()).toBe("63207");
    // Red: the stylesheet's error colour, the same as a field error's.
    const red = await page.evaluate(() => {
      const probe = document.createElement("p");
      probe.className = "field-error";
      document.body.append(probe);
      const color = getComputedStyle(probe).color;
      probe.remove();
      return color;
    });
    expect(await bluesky.evaluate((el) => getComputedStyle(el).color)).toBe(red);
    expect(await page.locator("#caption").evaluate((el) => getComputedStyle(el).color)).not.toBe(red);
    await shoot("08-caption-too-long");
    const text = "Broad beans sown in November crop weeks earlier. Ours went in today 🌱";
    await caption.fill(text);
    expect(await bluesky.getAttribute("class")).not.toContain("over");
    expect(await bluesky.locator(".count").textContent()).toBe(String([...new Intl.Segmenter().segment(text)].length));
    await page.getByRole("button", { name: /Save caption/ }).click();
    await page.waitForURL(/notice=creation-saved/);
    expect(await page.locator(".post-preview .caption").textContent()).toBe(text);
    await shoot("09-caption-saved");
  }, 60_000);

  test("schedules it for tomorrow 09:00 Europe/Berlin and sees it at 09:00 on the month view", async () => {
    await page.goto(`${base}${creationPath}`);
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.waitForSelector("#targets-error");
    expect(await page.locator("#targets-error").textContent()).toBe("Choose at least one connection to post to.");
    await page.locator('input[name="targets"]').check();
    await page.getByLabel("Date").fill(tomorrow);
    await page.getByLabel("Time").fill("09:00");
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.waitForURL(/\/dashboard\/calendar\?view=month/);
    const chip = page.locator("article.chip").first();
    postId = ((await chip.getAttribute("id")) ?? "").replace(/^post-/, "");
    expect(postId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await page.locator(`li.cal-day[data-date="${tomorrow}"] #post-${postId} time`).textContent()).toBe("09:00");
    expect(await page.locator(`#post-${postId} time`).getAttribute("datetime")).toBe(nineInBerlinUtc(tomorrow));
    expect(await page.locator(`#post-${postId} .badge.status`).textContent()).toContain("Scheduled");
    expect(await page.locator(`#post-${postId} img`).evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(1200);
    await shoot("10-month");
  }, 60_000);

  test("drags it to the next day in the month view; week and day views agree", async () => {
    await page.dragAndDrop(`#post-${postId}`, `li.cal-day[data-date="${dayAfter}"]`);
    await page.waitForURL(/notice=rescheduled/);
    expect(await page.locator(`li.cal-day[data-date="${dayAfter}"] #post-${postId} time`).textContent()).toBe("09:00");
    expect(await page.locator(`#post-${postId} time`).getAttribute("datetime")).toBe(nineInBerlinUtc(dayAfter));
    await shoot("11-month-after-drag");
    await page.goto(`${base}/dashboard/calendar?view=week&date=${dayAfter}`);
    expect(await page.locator(`li.cal-day[data-date="${dayAfter}"] #post-${postId} time`).textContent()).toBe("09:00");
    await shoot("12-week");
    await page.goto(`${base}/dashboard/calendar?view=day&date=${dayAfter}`);
    expect(await page.locator(`#post-${postId} time`).first().textContent()).toBe("09:00");
    await shoot("13-day");
  }, 60_000);

  test("the library: tiles keep the image's shape, and show what uses an image", async () => {
    const tall = await sharp({ create: { width: 400, height: 1600, channels: 3, background: "#3a7d44" } }).png().toBuffer();
    const wide = await sharp({ create: { width: 1600, height: 1067, channels: 3, background: "#d9a441" } }).jpeg().toBuffer();
    await page.goto(`${base}/dashboard/library`);
    await page.getByLabel("Drop images here, or choose files").setInputFiles([
      { name: "bean-row.png", mimeType: "image/png", buffer: tall },
      { name: "plot.jpg", mimeType: "image/jpeg", buffer: wide },
    ]);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.waitForURL(/notice=uploaded/);
    await page.waitForLoadState();
    expect(await page.locator(".gallery.library .file-name").allTextContents()).toEqual(["plot.jpg", "bean-row.png", expect.stringMatching(/\.png$/)]);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      const tiles = await page.locator(".gallery.library > li").evaluateAll((els) =>
        els.map((el) => {
          const r = el.getBoundingClientRect();
          const img = el.querySelector("img") as HTMLImageElement;
          const box = img.getBoundingClientRect();
          return { w: r.width, h: r.height, imgW: box.width, imgH: box.height, fit: getComputedStyle(img).objectFit };
        }),
      );
      for (const t of tiles) {
        expect(t.h).toBeLessThanOrEqual(1.5 * t.w);
        expect(t.fit).toBe("contain"); // the whole image shows, never a cropped slice
        expect(t.imgH).toBeLessThan(t.imgW); // the 4:3 box, whatever the img's height attribute says
      }
    }
    await page.setViewportSize(DESKTOP);
    // The generated image is used by the creation and by the post waiting to go out: the badge lists both, linked,
    // and the tile offers no delete.
    const used = page.locator(".gallery.library > li", { has: page.locator("details.in-use") });
    expect(await used.count()).toBe(1);
    expect(await used.locator("summary").textContent()).toBe("In use ×2");
    await used.locator("summary").click();
    expect(await used.locator("details a").evaluateAll((els) => els.map((a) => a.getAttribute("href")))).toEqual([creationPath, `/dashboard/calendar/posts/${postId}`]);
    expect(await used.getByRole("button", { name: /Delete/ }).count()).toBe(0);
    expect(await page.locator(".gallery.library > li").getByRole("button", { name: /Delete/ }).count()).toBe(2);
    await shoot("14-library");
    // An upload link to hand to someone: shown once, with a copy button.
    await page.getByRole("button", { name: "Make an upload link" }).click();
    await page.waitForURL(/\/dashboard\/library\?link=/);
    expect(await page.locator("#new-link").inputValue()).toMatch(new RegExp(`^${base}/upload/[A-Za-z0-9_-]+$`));
    await shoot("14b-library-upload-link");
  }, 60_000);

  test("minting a key answers with a redirect and shows the secret once; a reload never mints another", async () => {
    await page.goto(`${base}/dashboard/keys`);
    await page.getByLabel("Name", { exact: true }).fill("Garden bot");
    await page.getByRole("button", { name: "Mint key" }).click();
    await page.waitForURL(/\/dashboard\/keys\?shown=/);
    const secret = await page.locator("#new-secret").inputValue();
    expect(secret).toMatch(/^svc_/);
    expect(page.url()).not.toContain(secret);
    await shoot("15-key-minted");
    await page.reload();
    expect(await page.locator("#new-secret").count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator("tbody tr").count()).toBe(1);
    await shoot("16-key-reloaded");
    const health = await fetch(`${base}/api/v1/health`, { headers: { authorization: `Bearer ${secret}` } });
    expect(health.status).toBe(200);
    // Rotate asks first.
    await page.getByRole("link", { name: "Rotate Garden bot" }).click();
    await page.waitForURL(/\/rotate$/);
    await shoot("17-rotate-confirm");
  }, 60_000);

  test("the post's page and the rest of the dashboard pass axe at both widths", async () => {
    await page.goto(`${base}/dashboard/calendar/posts/${postId}`);
    expect(await page.getByLabel("Time").inputValue()).toBe("09:00");
    await shoot("18-post");
    for (const [name, path] of [
      ["19-posts", "/dashboard/creations"],
      ["20-seeds", "/dashboard/seeds"],
      ["21-credits", "/dashboard/credits"],
      ["22-voice", "/dashboard/voice"],
      ["23-members", "/dashboard/members"],
      ["24-instance", "/dashboard/instance"],
      ["25-overview", "/dashboard"],
      ["26-keys", "/dashboard/keys"],
      ["27-calendar-failed-filter", "/dashboard/calendar?status=failed"],
    ] as const) {
      await page.goto(`${base}${path}`);
      await shoot(name);
    }
    // The confirmation and edit pages reached from links, and the not-found page.
    const linkOn = async (path: string, selector: string) => {
      await page.goto(`${base}${path}`);
      return (await page.locator(selector).first().getAttribute("href")) ?? "";
    };
    const more: [string, string][] = [
      ["30-key-revoke", await linkOn("/dashboard/keys", 'a[href$="/revoke"]')],
      ["31-image-delete", await linkOn("/dashboard/library", 'form[action$="/delete"]').then(async () => `${(await page.locator('form[action$="/delete"]').first().getAttribute("action")) ?? ""}`)],
      ["32-seed", await linkOn("/dashboard/seeds", ".seed-cards h3 a")],
      ["33-post-delete", `${creationPath}/delete`],
      ["34-reconnect", await linkOn("/dashboard/connections", 'a[href$="/reconnect"]')],
      ["35-not-found", "/dashboard/no-such-page"],
    ];
    for (const [name, path] of more) {
      expect(path).toMatch(/^\/dashboard\//);
      await page.goto(`${base}${path}`);
      await shoot(name);
    }
    await page.goto(`${base}${more[2]?.[1] ?? ""}/delete`);
    await shoot("36-seed-delete");
  }, 120_000);

  test("cancels it", async () => {
    await page.goto(`${base}/dashboard/calendar/posts/${postId}`);
    await page.getByRole("link", { name: /Cancel this post/ }).click();
    await page.waitForURL(/\/cancel$/);
    await shoot("28-cancel-confirm");
    await page.getByRole("button", { name: "Cancel this post" }).click();
    await page.waitForURL(/notice=cancelled/);
    expect(await page.locator(`#post-${postId}`).count()).toBe(0);
    await shoot("29-month-after-cancel");
    // Nothing reached the receiver but the connection's ping.
    expect(receiver.deliveries.filter((d) => d.event !== "ping").length).toBe(0);
    expect([...checked].sort()).toContain("/dashboard/calendar/posts/:id");
    // Signed out: the sign-in page passes too.
    await page.getByRole("button", { name: /Sign out/ }).click();
    await page.waitForURL(/\/login\?out=1$/);
    await shoot("37-login");
  }, 60_000);
});
