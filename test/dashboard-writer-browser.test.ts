/**
 * Nothing typed is lost, and the offline writer is honest (decisions.md §15), in real Chromium against the BUILT
 * executable: the post page's offline sentence and the style picker's card names, the confirm step before a regenerate
 * replaces a hand-written caption, earlier versions with Restore, editing a scheduled post's text, and the Instance
 * page setting and testing an OpenAI-compatible server (the test peer: a bad key's 401 in words, then success), after
 * which the next post is written by that server. axe-core on every page at 1280 and 390 px; screenshots in
 * test-artifacts/dashboard-writer/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Page } from "playwright-core";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { type OpenAiServer, startOpenAiServer } from "./peers/openai-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/dashboard-writer");
const PASSWORD = "correct horse battery";
const WEBHOOK_SECRET = "whsec-0123456789abcdef";
const ZONE = "Europe/Berlin";
const OFFLINE = "Written offline from your own words; connect a language model in Settings → Instance for new wording.";
const MINE = "Winter hours from 1 December: Mon–Sat 8:00–14:00. Rye loaf €4.50. Written by Anna, by hand.";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let receiver: WebhookReceiver;
let model: OpenAiServer;

/** The page shown, checked at both widths and shot (test/helpers/browser.ts). */
const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  model = await startOpenAiServer({ apiKey: "sk-local-5e6f7a8b9c0d" });
  // No GENERATOR in the environment: the Instance page decides which writer is used.
  e2e = await startDashboardE2E("seedcast-writer-e2e-", { ALLOW_PRIVATE_HOSTS: "127.0.0.1" }, { timezoneId: ZONE, locale: "en-GB" });
  ({ base, page } = e2e);
}, 180_000);

afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
  await model?.stop();
});

describe("nothing lost, an honest offline writer, the model page", () => {
  let creationPath = "";
  let seedPath = "";
  let postId = "";

  test("sets up the instance and connects a webhook", async () => {
    await page.goto(`${base}/dashboard`);
    await submitSetup(page, base, { account: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD });
    await page.waitForFunction(() => !document.body.hasAttribute("data-set-zone"));
    await page.goto(`${base}/dashboard/connections`);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Connect Webhook" }) });
    await form.getByLabel("Webhook URL").fill(`${receiver.url}/bakery`);
    await form.getByLabel("Signing secret").fill(WEBHOOK_SECRET);
    await form.getByRole("button", { name: "Connect" }).click();
    await page.waitForURL(/notice=connected/);
  }, 60_000);

  test("the style picker names card styles; the offline writer keeps the seed's facts and says what it is", async () => {
    await page.goto(`${base}/dashboard/seeds`);
    await page.getByLabel("Title").fill("Winter opening hours");
    await page.getByLabel("What is the post about?").fill("From 1 December we open Mon–Sat 8:00–14:00. Rye loaf €4.50. Find us at 12 Market Street, Springfield. Tel. +49 30 1234567.");
    await page.getByRole("button", { name: "Save seed" }).click();
    await page.waitForURL(/\/dashboard\/seeds\/[0-9a-f-]{36}\?notice=seed-saved$/);
    seedPath = new URL(page.url()).pathname;
    const styles = await page.getByLabel("Style").locator("option").allTextContents();
    expect(styles).toContain("Photo-look card (a text card; photos need an image model)");
    expect(styles).toContain("Minimal card");
    await shoot("01-seed-style-picker");
    await page.getByRole("button", { name: "Generate" }).click();
    await page.waitForURL(/\/dashboard\/creations\/[0-9a-f-]{36}\?notice=generated$/);
    creationPath = new URL(page.url()).pathname;
    const caption = (await page.locator(".post-preview .caption").textContent()) ?? "";
    for (const fact of ["Mon–Sat 8:00–14:00", "€4.50", "12 Market Street, Springfield", "Tel. +49 30 1234567"]) expect(caption).toContain(fact);
    expect(caption).not.toMatch(/thanks for reading/i);
    expect(await page.locator(".offline-note").textContent()).toBe(OFFLINE);
    await shoot("02-post-offline");
  }, 90_000);

  test("regenerating a hand-written caption asks first; the earlier versions list restores it", async () => {
    await page.getByLabel("Caption", { exact: true }).fill(MINE);
    await page.getByRole("button", { name: /Save caption/ }).click();
    await page.waitForURL(/notice=creation-saved/);
    await page.locator("summary", { hasText: "Regenerate" }).click();
    await page.getByLabel("The caption").check();
    await page.getByRole("button", { name: "Regenerate", exact: true }).click();
    await page.waitForURL(`${base}${creationPath}/regenerate`);
    expect(await page.locator("main").textContent()).toContain("You wrote this post's caption by hand.");
    await shoot("03-regenerate-confirm");
    await page.getByRole("button", { name: "Replace and regenerate" }).click();
    await page.waitForURL(/notice=regenerated/);
    expect(await page.locator(".post-preview .caption").textContent()).not.toBe(MINE);
    await page.locator("#versions summary").click();
    const mine = page.locator("#versions li.version", { hasText: "Written by Anna" });
    expect(await mine.locator(".badge").textContent()).toBe("written by hand");
    await shoot("04-versions");
    await mine.getByRole("button", { name: /Restore/ }).click();
    await page.waitForURL(/notice=version-restored/);
    expect(await page.locator(".post-preview .caption").textContent()).toBe(MINE);
    await shoot("05-restored");
  }, 90_000);

  test("a scheduled post's text is edited from its page; the post it was made from stays", async () => {
    await page.locator('input[name="targets"]').check();
    await page.getByLabel("Time").fill("09:00");
    await page.getByRole("button", { name: "Schedule" }).click();
    await page.waitForURL(/\/dashboard\/calendar\?view=month/);
    postId = ((await page.locator("article.chip").first().getAttribute("id")) ?? "").replace(/^post-/, "");
    await page.goto(`${base}/dashboard/calendar/posts/${postId}`);
    const edit = page.locator("form", { has: page.getByRole("heading", { name: "Edit what it sends" }) });
    await edit.getByLabel("Caption").fill("  ");
    await edit.getByRole("button", { name: "Save the post's text" }).click();
    await page.waitForSelector("#caption-error");
    expect(await page.locator("#caption-error").textContent()).toBe("Write a caption; it cannot be empty.");
    await shoot("06-scheduled-edit-error");
    await page.locator("form", { has: page.getByRole("heading", { name: "Edit what it sends" }) }).getByLabel("Caption").fill("Winter hours start tomorrow: Mon–Sat 8:00–14:00.");
    await page.getByRole("button", { name: "Save the post's text" }).click();
    await page.waitForURL(/notice=post-content-saved/);
    expect(await page.locator(".post-caption").textContent()).toBe("Winter hours start tomorrow: Mon–Sat 8:00–14:00.");
    await shoot("07-scheduled-edited");
    await page.goto(`${base}${creationPath}`);
    expect(await page.locator(".post-preview .caption").textContent()).toBe(MINE);
  }, 60_000);

  test("the Instance page: a bad key fails in words, the right one answers, saved as set; the next post is the model's", async () => {
    await page.goto(`${base}/dashboard/instance`);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Language model" }) });
    expect(await form.textContent()).toContain("No language model is connected");
    await form.getByLabel("Server address").fill(model.baseUrl);
    await form.getByLabel(/API key/).fill("sk-wrong-111111111111");
    await form.getByLabel("Text model").fill("llama3.2");
    await form.getByRole("button", { name: "Test" }).click();
    await page.waitForSelector(".notice-error");
    const failure = (await page.locator(".notice-error").textContent()) ?? "";
    expect(failure).toContain("HTTP 401");
    expect(failure).not.toContain("sk-wrong-111111111111");
    await shoot("08-instance-test-failed");
    const again = page.locator("form", { has: page.getByRole("heading", { name: "Language model" }) });
    await again.getByLabel(/API key/).fill(model.apiKey);
    await again.getByRole("button", { name: "Test" }).click();
    await page.waitForSelector(".notice-success");
    expect(await page.locator(".notice-success").textContent()).toContain("The server answered");
    await page.locator("form", { has: page.getByRole("heading", { name: "Language model" }) }).getByLabel(/API key/).fill(model.apiKey);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.waitForURL(/notice=model-saved/);
    const saved = page.locator("form", { has: page.getByRole("heading", { name: "Language model" }) });
    expect(await saved.locator('label[for="m-key"]').textContent()).toContain("(set)");
    expect(await page.content()).not.toContain(model.apiKey);
    await shoot("09-instance-saved");

    model.queueChat(JSON.stringify({ caption: "Winter hours from the model: Mon–Sat 8:00–14:00." }));
    await page.goto(`${base}${seedPath}`);
    expect(await page.getByLabel("Style").locator("option").allTextContents()).toContain("Photorealistic");
    // Text only: the test server's images are not what this checks.
    await page.getByLabel("No image (text only)").check();
    await page.getByRole("button", { name: "Generate" }).click();
    await page.waitForURL(/\/dashboard\/creations\/[0-9a-f-]{36}\?notice=generated$/);
    expect(await page.locator(".post-preview .caption").textContent()).toBe("Winter hours from the model: Mon–Sat 8:00–14:00.");
    expect(await page.locator(".offline-note").count()).toBe(0);
  }, 90_000);
});
