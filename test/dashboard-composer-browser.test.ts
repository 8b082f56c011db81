/**
 * The composer in real Chromium (Debian `chromium` + playwright-core) against the app on a real socket, as an allotment
 * club in Berlin would write a post by hand: "New post" → a caption with a link → 4 images from the library, each with
 * its alt text (one left empty shows its hint) → a thread of two parts (one with an image) → a first comment →
 * Mastodon's own shorter version → the previews follow the typing (link made a link, the 4-image grid, the thread,
 * the first comment) and Mastodon's counter counts the link as 23 → images reordered with the keyboard (the cursor
 * stays on the moved image's button, the move is announced) and, without script, by the same buttons as round trips →
 * Save, read back through the creations service → the post's page, and scheduled, the calendar's post page, show all
 * of it. Every page: axe-core (no critical or serious finding), one h1 and no horizontal scroll at 1280 and 390 px.
 * Screenshots go to test-artifacts/composer/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ingestImageBytes } from "../src/modules/assets/service";
import { addConnection } from "../src/modules/connections/service";
import { getCreation } from "../src/modules/creations/service";
import { loadSharp } from "../src/lib/sharp";
import { checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/composer");
const ZONE = "Europe/Berlin";
const SECRET = "whsec-composer-0123456789abcdef";
const CAPTION = "Broad beans go in now for a crop in May. How we sow them: https://allotment.test/beans";

let world: ServedWorld;
let owner: Person;
let mastodon: MastodonServer;
let receiver: WebhookReceiver;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** The library's images, by name. */
const image = { Seeds: "", Packets: "", Bed: "", Sowing: "", Water: "" };

/** A 600×400 picture of one colour with its name on it, so the screenshots show which image went where. */
async function picture(name: string, colour: string): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="400"><rect width="600" height="400" fill="${colour}"/><text x="300" y="220" font-size="64" font-family="sans-serif" text-anchor="middle" fill="#ffffff">${name}</text></svg>`;
  return new Uint8Array(await loadSharp()(Buffer.from(svg)).png().toBuffer());
}

const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

async function signIn(p: Page): Promise<void> {
  await p.goto(`${world.base}/login`);
  await p.getByLabel("Email").fill(owner.email);
  await p.getByLabel("Password").fill(PASSWORD);
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.waitForURL(`${world.base}/dashboard`);
}

/** The asset ids of the post's images as the page orders them. */
function postOrder(p: Page): Promise<string[]> {
  return p.locator("ol.image-list[data-scope=post] > li").evaluateAll((items) => items.map((li) => li.getAttribute("data-asset") ?? ""));
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  owner = await ownerWithAccount(world, "Allotment Berlin");
  mastodon = await startMastodonServer({ now: () => world.clock.now() });
  receiver = await startWebhookReceiver({ secret: SECRET });
  await addConnection(world.deps, { accountId: owner.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
  await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: `${receiver.url}/club`, secret: SECRET });
  const pictures: [keyof typeof image, string][] = [["Seeds", "#6b4f2a"], ["Packets", "#1f5fbf"], ["Bed", "#2f7d32"], ["Sowing", "#8e3b8e"], ["Water", "#0f7c86"]];
  // The library lists the newest first: ingested in reverse, it shows them in this order.
  for (const [name, colour] of pictures.reverse()) {
    image[name] = (await ingestImageBytes(world.deps, owner.accountId, { bytes: await picture(name, colour), fileName: `${name.toLowerCase()}.png` })).id;
  }
  ({ browser, context, page } = await openBrowserPage({ timezoneId: ZONE, locale: "en-GB" }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await mastodon?.stop();
  await world?.stop();
});

describe("the composer in Chromium", () => {
  let creationId = "";

  test("writes a post with 4 images, a thread and a first comment; the previews and counters follow the typing", async () => {
    await signIn(page);
    await page.locator("nav.main-nav").getByRole("link", { name: "New post" }).click();
    await page.waitForURL(`${world.base}/dashboard/compose`);
    await shoot("01-blank");

    await page.getByLabel("Caption", { exact: true }).fill(CAPTION);
    for (const name of ["Seeds", "Packets", "Bed", "Sowing"]) await page.getByRole("checkbox", { name: `${name.toLowerCase()}.png` }).check();
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector("ol.image-list[data-scope=post] > li:nth-child(4)");
    expect(await postOrder(page)).toEqual([image.Seeds, image.Packets, image.Bed, image.Sowing]);
    // What was typed came back from the round trip.
    expect(await page.getByLabel("Caption", { exact: true }).inputValue()).toBe(CAPTION);

    await page.getByLabel("Alt text of image 1").fill("Broad bean seeds in an open hand");
    await page.getByLabel("Alt text of image 2").fill("Three seed packets on a potting bench");
    await page.getByLabel("Alt text of image 4").fill("Sowing beans in a drill, 5 cm deep");
    // Image 3 has no alt text yet: its hint says so, visibly.
    const missing = page.locator("ol.image-list[data-scope=post] > li:nth-child(3) .alt-hint");
    expect(await missing.textContent()).toBe("No alt text yet: describe the image for people who cannot see it.");
    expect(await missing.isVisible()).toBe(true);
    expect(await page.locator("ol.image-list[data-scope=post] > li:nth-child(1) .alt-hint.alt-missing").count()).toBe(0);

    await page.getByRole("button", { name: "Add a part" }).click();
    await page.waitForSelector("li.part");
    await page.getByRole("button", { name: "Add a part" }).click();
    await page.waitForSelector("li.part:nth-child(2)");
    const parts = page.locator("li.part textarea[data-part-caption]");
    await parts.nth(0).fill("Soak them overnight, then sow 20 cm apart.");
    await parts.nth(1).fill("Pinch out the tips once the first pods set.");
    await page.getByRole("checkbox", { name: "water.png" }).check();
    await page.getByLabel("Add them to").selectOption({ label: "Part 2" });
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector("li.part:nth-child(1) ol.image-list > li");
    const partAlt = page.locator("li.part").first().locator("textarea[data-alt]");
    expect(await page.locator("li.part").first().locator(".alt-hint").textContent()).toBe("No alt text yet: describe the image for people who cannot see it.");
    await partAlt.fill("A bowl of beans soaking in water");
    // The hint follows the typing.
    expect(await page.locator("li.part").first().locator(".alt-hint").textContent()).toBe("Read aloud to people who cannot see the image.");
    expect(await page.locator("li.part").first().locator(".alt-hint.alt-missing").count()).toBe(0);
    await page.getByLabel("First comment (optional)").fill("Seeds from the club shed, ask at https://allotment.test/shed");

    // Mastodon's tab: its own shorter caption.
    await page.getByRole("tab", { name: "Mastodon" }).click();
    await page.getByLabel("Caption on Mastodon").fill("Broad beans: sow now, eat in May. https://allotment.test/beans");

    const pv = page.locator("#net-mastodon .pv");
    await page.waitForFunction(() => document.querySelector("#net-mastodon .pv > .pv-text")?.textContent?.startsWith("Broad beans: sow now"));
    expect(await pv.locator(":scope > .pv-text a").getAttribute("href")).toBe("https://allotment.test/beans");
    expect(await pv.locator(":scope > .pv-grid.pv-grid-4 img").count()).toBe(4);
    expect(await pv.locator(":scope > .pv-grid img").first().getAttribute("alt")).toBe("Broad bean seeds in an open hand");
    expect(await pv.locator(".pv-thread > li").count()).toBe(2);
    expect(await pv.locator(".pv-thread > li").first().locator(".pv-grid img").count()).toBe(1);
    expect(await pv.locator(".pv-comment").isVisible()).toBe(true);
    expect(await pv.locator(".pv-comment a").getAttribute("href")).toBe("https://allotment.test/shed");
    expect(await pv.locator(".pv-handle").first().textContent()).toContain("@seedcast");
    // Mastodon counts the link as 23 characters: "Broad beans: sow now, eat in May. " is 34.
    expect(await page.locator("#net-mastodon .net-counts li").first().textContent()).toBe("Post: 57/500");
    await page.getByLabel("Caption on Mastodon").fill(`${"x".repeat(480)} https://allotment.test/beans`);
    await page.waitForFunction(() => document.querySelector("#net-mastodon .net-counts li")?.classList.contains("over"));
    expect(await page.locator("#net-mastodon .net-counts li").first().textContent()).toBe("Post: 504/500 · too long");
    await page.getByLabel("Caption on Mastodon").fill("Broad beans: sow now, eat in May. https://allotment.test/beans");
    await page.getByRole("tab", { name: "Webhook" }).click();
    expect(await page.locator("#net-mastodon").isHidden()).toBe(true);
    await page.getByRole("tab", { name: "Webhook" }).press("ArrowLeft");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tab-mastodon");
    expect(await page.locator("#net-mastodon").isVisible()).toBe(true);
    await shoot("02-composer-filled");
  }, 120_000);

  test("images are reordered with the keyboard: the cursor stays on the moved image's button and the move is announced", async () => {
    const down = page.getByRole("button", { name: "Move down image 1", exact: true });
    await down.focus();
    await page.keyboard.press("Enter");
    expect(await postOrder(page)).toEqual([image.Packets, image.Seeds, image.Bed, image.Sowing]);
    expect(await page.evaluate(() => document.activeElement?.closest("li.image-item")?.getAttribute("data-asset"))).toBe(image.Seeds);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Move down image 2");
    expect(await page.locator("#composer-status").textContent()).toBe("Image moved to position 2.");
    // Space on the focused button moves it again; the last image's Move down is disabled.
    await page.keyboard.press("Space");
    expect(await postOrder(page)).toEqual([image.Packets, image.Bed, image.Seeds, image.Sowing]);
    expect(await page.getByRole("button", { name: "Move down image 4", exact: true }).isDisabled()).toBe(true);
    // Back to where it was, upwards.
    const up = page.getByRole("button", { name: "Move up image 3", exact: true });
    await up.focus();
    await page.keyboard.press("Enter");
    await page.keyboard.press("Enter");
    expect(await postOrder(page)).toEqual([image.Seeds, image.Packets, image.Bed, image.Sowing]);
    // The preview follows the order.
    expect(await page.locator("#net-mastodon .pv > .pv-grid img").first().getAttribute("alt")).toBe("Broad bean seeds in an open hand");
    // Thread parts move the same way, by their own buttons.
    const partTexts = () => page.locator("li.part textarea[data-part-caption]").evaluateAll((areas) => areas.map((a) => (a as HTMLTextAreaElement).value));
    await page.getByRole("button", { name: "Move part 3 up", exact: true }).focus();
    await page.keyboard.press("Enter");
    expect(await partTexts()).toEqual(["Pinch out the tips once the first pods set.", "Soak them overnight, then sow 20 cm apart."]);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Move part 2 down");
    expect(await page.locator("#composer-status").textContent()).toBe("Part moved to position 2.");
    await page.keyboard.press("Enter");
    expect(await partTexts()).toEqual(["Soak them overnight, then sow 20 cm apart.", "Pinch out the tips once the first pods set."]);
    // And the sowing picture moves up one, to lead the post's second row.
    await page.getByRole("button", { name: "Move up image 4", exact: true }).click();
    expect(await postOrder(page)).toEqual([image.Seeds, image.Packets, image.Sowing, image.Bed]);
  }, 60_000);

  test("Save stores what was typed (read back through the service); the post's page shows all of it", async () => {
    await page.getByRole("button", { name: "Save post" }).click();
    await page.waitForURL(/\/dashboard\/creations\/[0-9a-f-]{36}\?notice=composed/);
    creationId = /creations\/([0-9a-f-]{36})/.exec(page.url())?.[1] ?? "";
    const c = await getCreation(world.deps, owner.accountId, creationId);
    expect(c.body.caption).toBe(CAPTION);
    expect(c.body.images.map((i) => [i.assetId, i.altText])).toEqual([
      [image.Seeds, "Broad bean seeds in an open hand"],
      [image.Packets, "Three seed packets on a potting bench"],
      [image.Sowing, "Sowing beans in a drill, 5 cm deep"],
      [image.Bed, ""],
    ]);
    expect(c.body.thread.map((p) => [p.caption, p.images.map((i) => [i.assetId, i.altText])])).toEqual([
      ["Soak them overnight, then sow 20 cm apart.", [[image.Water, "A bowl of beans soaking in water"]]],
      ["Pinch out the tips once the first pods set.", []],
    ]);
    expect(c.body.firstComment).toBe("Seeds from the club shed, ask at https://allotment.test/shed");
    expect(c.body.variants).toEqual({ mastodon: { caption: "Broad beans: sow now, eat in May. https://allotment.test/beans" } });
    expect(await page.locator(".content-images").first().locator("img").count()).toBe(4);
    expect(await page.getByText("Alt text: Three seed packets on a potting bench").count()).toBe(1);
    expect(await page.getByText("Pinch out the tips once the first pods set.").count()).toBe(1);
    await shoot("03-post-page");
  }, 60_000);

  test("without script the same buttons move images as round trips, keeping the cursor on the moved image's button", async () => {
    const plain = await browser.newContext({ javaScriptEnabled: false, timezoneId: ZONE, locale: "en-GB", viewport: { width: 1280, height: 900 } });
    const p = await plain.newPage();
    try {
      await signIn(p);
      await p.goto(`${world.base}/dashboard/creations/${creationId}/edit`);
      expect(await postOrder(p)).toEqual([image.Seeds, image.Packets, image.Sowing, image.Bed]);
      await p.getByRole("button", { name: "Move up image 4", exact: true }).focus();
      // The round trip: the page the POST answers has loaded.
      await Promise.all([p.waitForEvent("load"), p.keyboard.press("Enter")]);
      expect(await postOrder(p)).toEqual([image.Seeds, image.Packets, image.Bed, image.Sowing]);
      expect(await p.evaluate(() => document.activeElement?.textContent)).toBe("Move up image 3");
      // Nothing was stored by the move: the post keeps its order until Save.
      expect((await getCreation(world.deps, owner.accountId, creationId)).body.images.map((i) => i.assetId)).toEqual([image.Seeds, image.Packets, image.Sowing, image.Bed]);
      // The network panels are plain sections one under the other, without tabs that would do nothing.
      expect(await p.locator(".tab-list").isHidden()).toBe(true);
      expect(await p.locator("#net-mastodon").isVisible()).toBe(true);
      expect(await p.locator("#net-webhook").isVisible()).toBe(true);
      await p.screenshot({ path: resolve(ARTIFACTS, "04-no-script-desktop.png"), fullPage: true });
    } finally {
      await plain.close();
    }
  }, 60_000);

  test("with script, files are uploaded one by one to the library and added to the post; an image can be dragged by its thumbnail", async () => {
    await page.goto(`${world.base}/dashboard/compose`);
    await page.getByLabel("Caption", { exact: true }).fill("Two new photos");
    // A file that is not an image is refused at the upload field; the page stays as it is.
    await page.getByLabel("Upload from this device").setInputFiles([{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not an image") }]);
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector("#upload-error");
    expect(await page.locator("#upload-error").textContent()).toStartWith("notes.txt: ");
    expect(await page.getByLabel("Upload from this device").getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Caption", { exact: true }).inputValue()).toBe("Two new photos");
    const kaleBytes = Buffer.from(await picture("Kale", "#3d6b2a"));
    await page.getByLabel("Upload from this device").setInputFiles([
      { name: "kale.png", mimeType: "image/png", buffer: kaleBytes },
      { name: "chard.png", mimeType: "image/png", buffer: Buffer.from(await picture("Chard", "#a3213a")) },
    ]);
    const uploads: string[] = [];
    page.on("request", (r) => {
      if (r.method() === "POST") uploads.push(new URL(r.url()).pathname);
    });
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector("ol.image-list[data-scope=post] > li:nth-child(2)");
    // One request per file to the library, then the form itself.
    expect(uploads).toEqual(["/dashboard/library/upload", "/dashboard/library/upload", "/dashboard/compose"]);
    expect(await page.locator("ol.image-list[data-scope=post] .image-fields label .muted").allTextContents()).toEqual(["kale.png", "chard.png"]);
    expect(await page.getByLabel("Caption", { exact: true }).inputValue()).toBe("Two new photos");
    // The same photo chosen again (another name, same bytes) is not stored a second time: the page says so.
    const libraryCount = async () => Number((await world.sql<{ n: unknown }>("SELECT count(*) AS n FROM assets WHERE account_id = ?", owner.accountId))[0]?.n);
    const before = await libraryCount();
    await page.getByLabel("Upload from this device").setInputFiles([{ name: "IMG_2041.png", mimeType: "image/png", buffer: kaleBytes }]);
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector(".notice >> text=already in your library");
    expect(await page.locator(".notice").allTextContents()).toContain("“kale.png” was already in your library: the post uses that image, not a second copy.");
    expect(await libraryCount()).toBe(before);
    expect(await page.locator("ol.image-list[data-scope=post] .image-fields label .muted").allTextContents()).toEqual(["kale.png", "chard.png"]);
    await shoot("03b-upload-already-in-library");
    const [kale, chard] = await postOrder(page);
    await page.locator("ol.image-list[data-scope=post] > li:nth-child(2) .image-thumb").dragTo(page.locator("ol.image-list[data-scope=post] > li:nth-child(1) .image-thumb"), { targetPosition: { x: 10, y: 5 } });
    expect(await postOrder(page)).toEqual([chard ?? "", kale ?? ""]);
    expect(await page.locator("#composer-status").textContent()).toBe("Image moved to position 1.");
    // Leaving with what was changed unsaved asks first.
    const dialogs: string[] = [];
    page.once("dialog", (d) => {
      dialogs.push(d.type());
      void d.accept();
    });
    await page.goto(`${world.base}/dashboard/creations`);
    expect(dialogs).toEqual(["beforeunload"]);
  }, 60_000);

  test("scheduled, the calendar's post page shows every image with its alt text, the thread, the first comment and the version", async () => {
    await page.goto(`${world.base}/dashboard/creations/${creationId}`);
    await page.getByRole("checkbox", { name: /@seedcast/ }).check();
    await page.getByRole("checkbox", { name: /Webhook/ }).check();
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.waitForURL(/\/dashboard\/calendar\?.*notice=scheduled/);
    await page.locator(".chip .chip-caption a").first().click();
    await page.waitForURL(/\/dashboard\/calendar\/posts\/[0-9a-f-]{36}/);
    expect(await page.locator(".content-images").first().locator("img").count()).toBe(4);
    expect(await page.getByText("Alt text: Sowing beans in a drill, 5 cm deep").count()).toBe(1);
    expect(await page.getByText("Soak them overnight, then sow 20 cm apart.").count()).toBe(1);
    expect(await page.getByText("Seeds from the club shed, ask at").count()).toBe(1);
    expect(await page.getByText("Broad beans: sow now, eat in May.").count()).toBe(1);
    await shoot("05-calendar-post");
  }, 60_000);
});
