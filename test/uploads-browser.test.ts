/**
 * The upload page driven in real Chromium (Debian's package + playwright-core) against a real server: choose a file,
 * see the preview and the progress bar, the asset appears in the library, the used link then shows its 410 page;
 * a refused file leaves the link usable; drag and drop; expired and unknown links. No request leaves the page's
 * origin and the strict CSP reports nothing. Screenshots go to test-artifacts/uploads/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { launchChromium } from "./helpers/browser";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { freePort } from "./helpers/child-server";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/uploads");
const DESKTOP = { width: 1100, height: 820 };
const PHONE = { width: 390, height: 844 };

let world: World;
let acct: TestAccount;
let server: ReturnType<typeof Bun.serve>;
let origin = "";
let browser: Browser;
let context: BrowserContext;
let page: Page;
const foreignRequests: string[] = [];
const consoleProblems: string[] = [];
let photo: Buffer;

async function mintLink(): Promise<{ id: string; uploadUrl: string }> {
  const res = await world.call("POST", "/api/v1/assets/upload-link", { key: acct.key });
  expect(res.status).toBe(201);
  return res.json;
}

async function shoot(name: string, viewport = DESKTOP): Promise<void> {
  await page.setViewportSize(viewport);
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** A photo-like image big enough (a few MB) that a throttled upload shows its progress. */
async function makePhoto(): Promise<Buffer> {
  const width = 900;
  const height = 700;
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const noise = Math.floor(Math.random() * 40);
      raw[i] = Math.min(255, 40 + Math.floor((x / width) * 120) + noise);
      raw[i + 1] = Math.min(255, 110 + Math.floor((y / height) * 80) + noise);
      raw[i + 2] = Math.min(255, 150 + noise);
    }
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

/** Uploads go at ~500 KB/s so the progress bar can be seen moving. */
async function throttleUploads(target: Page): Promise<void> {
  const cdp = await context.newCDPSession(target);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", {
    offline: false,
    latency: 20,
    downloadThroughput: -1,
    uploadThroughput: 500 * 1024,
  });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  world = await createWorld({ env: { BASE_URL: origin } });
  acct = await world.createAccount();
  server = Bun.serve({ hostname: "127.0.0.1", port, fetch: (request) => world.app.handle(request) });
  photo = await makePhoto();
  // playwright gives every launch a fresh temporary profile (user-data dir) of its own.
  browser = await launchChromium();
  context = await browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  context.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith("blob:") && !url.startsWith("data:")) foreignRequests.push(url);
  });
  context.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") consoleProblems.push(message.text());
  });
  context.on("weberror", (error) => consoleProblems.push(error.error().message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop(true);
  await world?.close();
});

describe("the upload page in Chromium", () => {
  test("choose a file → preview → progress → the asset is in the library; the used link shows its 410 page", async () => {
    const link = await mintLink();
    const response = await page.goto(link.uploadUrl);
    expect(response?.status()).toBe(200);
    expect(await page.locator("h1").textContent()).toBe("Add an image to your library");
    await shoot("01-form");
    await shoot("01-form-phone", PHONE);
    await page.setViewportSize(DESKTOP);

    await page.setInputFiles("#file", { name: "harbour.png", mimeType: "image/png", buffer: photo });
    await page.locator("#preview").waitFor({ state: "visible" });
    const natural = await page.locator("#preview").evaluate((img) => (img as HTMLImageElement).naturalWidth);
    expect(natural).toBe(900);
    expect(await page.locator("#file-info").textContent()).toContain("harbour.png");
    await shoot("02-chosen");

    await throttleUploads(page);
    // Record every value the bar shows, so the test proves it moved rather than jumping to the end.
    await page.evaluate(() => {
      const bar = document.getElementById("progress-bar") as HTMLProgressElement;
      const seen: number[] = [];
      (window as unknown as { __progress: number[] }).__progress = seen;
      new MutationObserver(() => seen.push(bar.value)).observe(bar, { attributes: true, attributeFilter: ["value"] });
      const text = document.getElementById("progress-text") as HTMLElement;
      new MutationObserver(() => seen.push(bar.value)).observe(text, { childList: true, characterData: true, subtree: true });
    });
    await page.click("#submit");
    await page.waitForFunction(() => {
      const bar = document.getElementById("progress-bar") as HTMLProgressElement;
      return bar.value >= 20 && bar.value <= 80;
    }, undefined, { timeout: 20_000 });
    expect(await page.locator("#submit").isDisabled()).toBe(true);
    expect(await page.locator("#submit").textContent()).toBe("Uploading…");
    await shoot("03-progress");

    await page.locator("#done").waitFor({ state: "visible", timeout: 30_000 });
    const seen = await page.evaluate(() => (window as unknown as { __progress: number[] }).__progress);
    expect(seen.some((v) => v > 0 && v < 100)).toBe(true);
    expect(seen[seen.length - 1]).toBe(100);
    expect(await page.locator("#done").textContent()).toContain("Saved as harbour.png");
    await shoot("04-done");

    const list = await world.call("GET", "/api/v1/assets", { key: acct.key });
    const asset = list.json.assets.find((a: { fileName: string }) => a.fileName === "harbour.png");
    expect(asset).toBeDefined();
    expect(asset.sizeBytes).toBe(photo.byteLength);
    const media = await fetch(asset.url);
    expect(new Uint8Array(await media.arrayBuffer())).toEqual(new Uint8Array(photo));
    const poll = await world.call("GET", `/api/v1/assets/upload-links/${link.id}`, { key: acct.key });
    expect(poll.json).toMatchObject({ status: "used", assetId: asset.id });

    const reloaded = await page.goto(link.uploadUrl);
    expect(reloaded?.status()).toBe(410);
    expect(await page.locator("h1").textContent()).toBe("This link was already used");
    await shoot("05-used");
  }, 90_000);

  test("a refused file shows a clear message and the same link then takes a good one", async () => {
    const fresh = await context.newPage();
    const link = await mintLink();
    await fresh.goto(link.uploadUrl);
    await fresh.setInputFiles("#file", { name: "notes.png", mimeType: "image/png", buffer: Buffer.from("these are my notes, not a picture\n") });
    await fresh.click("#submit");
    const message = fresh.locator("#message");
    await message.waitFor({ state: "visible" });
    await fresh.waitForFunction(() => !(document.getElementById("submit") as HTMLButtonElement).disabled);
    expect(await message.textContent()).toBe("That file is not a PNG, JPEG, GIF or WebP image. Choose another file. This link still works.");
    page = fresh;
    await shoot("06-refused");

    const small = await sharp({ create: { width: 640, height: 400, channels: 3, background: "#d9822b" } }).jpeg().toBuffer();
    await fresh.setInputFiles("#file", { name: "sunset.jpg", mimeType: "image/jpeg", buffer: small });
    expect(await message.isHidden()).toBe(true);
    await fresh.click("#submit");
    await fresh.locator("#done").waitFor({ state: "visible" });
    expect(await fresh.locator("#done").textContent()).toContain("sunset.jpg");
    const poll = await world.call("GET", `/api/v1/assets/upload-links/${link.id}`, { key: acct.key });
    expect(poll.json.status).toBe("used");
  }, 60_000);

  test("drag and drop: the zone lights up, the dropped image previews and uploads", async () => {
    const link = await mintLink();
    await page.goto(link.uploadUrl);
    const bytes = [...new Uint8Array(await sharp({ create: { width: 500, height: 320, channels: 3, background: "#3b5bdb" } }).webp().toBuffer())];
    const transfer = await page.evaluateHandle((data) => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(data)], "dropped.webp", { type: "image/webp" }));
      return dt;
    }, bytes);
    await page.dispatchEvent("#drop", "dragenter", { dataTransfer: transfer });
    await page.dispatchEvent("#drop", "dragover", { dataTransfer: transfer });
    expect(await page.locator("#drop").getAttribute("class")).toContain("dragging");
    await shoot("07-dragging");
    await page.dispatchEvent("#drop", "drop", { dataTransfer: transfer });
    await page.locator("#preview").waitFor({ state: "visible" });
    expect(await page.locator("#drop").getAttribute("class")).not.toContain("dragging");
    await page.click("#submit");
    await page.locator("#done").waitFor({ state: "visible" });
    expect(await page.locator("#done").textContent()).toContain("dropped.webp");
    const list = await world.call("GET", "/api/v1/assets", { key: acct.key });
    expect(list.json.assets[0].fileName).toBe("dropped.webp");
    expect(list.json.assets[0].mimeType).toBe("image/webp");
  }, 60_000);

  test("expired and unknown links show their pages (and the form reads well in dark mode)", async () => {
    const dark = await mintLink();
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(dark.uploadUrl);
    await page.setInputFiles("#file", { name: "notes.png", mimeType: "image/png", buffer: Buffer.from("not an image") });
    await page.locator("#message").waitFor({ state: "visible" });
    expect(await page.locator("#message").textContent()).toContain("cannot be previewed");
    await shoot("10-dark-form");
    await page.emulateMedia({ colorScheme: "light" });
    const link = await mintLink();
    world.clock.advance(16 * 60 * 1000);
    const expired = await page.goto(link.uploadUrl);
    expect(expired?.status()).toBe(410);
    expect(await page.locator("h1").textContent()).toBe("This link has expired");
    await shoot("08-expired");
    const unknown = await page.goto(`${origin}/upload/${"x".repeat(43)}`);
    expect(unknown?.status()).toBe(404);
    expect(await page.locator("h1").textContent()).toBe("This upload link does not exist");
    await shoot("09-unknown");
    await shoot("09-unknown-phone", PHONE);
  }, 30_000);

  test("nothing was requested from another origin and the CSP blocked nothing", () => {
    expect(foreignRequests).toEqual([]);
    expect(consoleProblems.filter((m) => !m.includes("410") && !m.includes("404") && !m.includes("400"))).toEqual([]);
  });
});
