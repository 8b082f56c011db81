/**
 * The dashboard end to end in real Chromium (Debian `chromium` + playwright-core) against the BUILT executable:
 * setup → login → mint a key and use it → rotate (both work) → revoke (401) → connect a webhook (ready) → upload an
 * image → a creation generated through the API shows in the dashboard → a post scheduled through the API is cancelled
 * from the calendar → a viewer cannot mint more than Read. Screenshots of every page at desktop and phone width go
 * to test-artifacts/dashboard/.
 *
 * The executable: $SEEDCAST_BIN when set (e.g. dist/seedcast from `npm run build`), otherwise built here into a temp
 * dir with scripts/compile.ts, the same compile step and flags `npm run build` uses.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import sharp from "sharp";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/dashboard");
const PASSWORD = "correct horse battery";
const OWNER = { name: "Northwind Studio", email: "owner@northwind.test" };
const VIEWER = { email: "viewer@northwind.test" };
const WEBHOOK_SECRET = "whsec-0123456789abcdef";

let e2e: DashboardE2E | null = null;
let base = "";
let context: BrowserContext;
let page: Page;
let receiver: WebhookReceiver;

/** Basic accessibility of the page shown: a main landmark, a lang, every form control labelled, every button named. */
async function basicProblems(shown: Page): Promise<string[]> {
  return shown.evaluate(() => {
    const out: string[] = [];
    if (!document.querySelector("main")) out.push("no main landmark");
    if (!document.documentElement.lang) out.push("no lang");
    for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
      const control = el as HTMLInputElement;
      if ((control.labels?.length ?? 0) === 0 && !control.getAttribute("aria-label")) out.push(`unlabelled ${control.name || control.id}`);
    }
    for (const b of document.querySelectorAll("button, a.button")) if (!(b.textContent ?? "").trim()) out.push("button without text");
    return out;
  });
}

/** The page shown, checked at both widths (one h1, no horizontal scroll, axe: test/helpers/browser.ts) and shot. */
const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS, more: [basicProblems] });

async function api(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any = null; // biome-ignore lint: test reads arbitrary JSON.
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json, text };
}

async function login(email: string) {
  await page.goto(`${base}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${base}/dashboard`);
}

async function logout() {
  await page.getByRole("button", { name: /Sign out/ }).click();
  await page.waitForURL(/\/login\?out=1$/);
}

async function newSecret(): Promise<string> {
  const value = await page.locator("#new-secret").inputValue();
  expect(value).toMatch(/^svc_[0-9A-Za-z]{49}$/);
  return value;
}

async function mint(name: string, groups: string[]): Promise<string> {
  await page.goto(`${base}/dashboard/keys`);
  await page.getByLabel("Name", { exact: true }).fill(name);
  for (const box of await page.locator('input[name="groups"]').all()) {
    const value = await box.getAttribute("value");
    if (groups.includes(value ?? "")) await box.check();
    else await box.uncheck();
  }
  await page.getByRole("button", { name: "Mint key" }).click();
  await page.waitForLoadState();
  return newSecret();
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  e2e = await startDashboardE2E("seedcast-dash-e2e-", { ALLOW_PRIVATE_HOSTS: "127.0.0.1", GENERATOR: "builtin" });
  ({ base, context, page } = e2e);
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
}, 120_000);

afterAll(async () => {
  await e2e?.close();
  await receiver?.stop();
});

describe("dashboard in Chromium on the built binary", () => {
  let automationKey = "";
  let imageAssetId = "";
  let creationId = "";

  test("first-run setup creates the owner and signs them in; logout and login work", async () => {
    await page.goto(`${base}/dashboard/keys`);
    expect(page.url()).toBe(`${base}/setup`); // no session → /login → no users → /setup
    await shoot("01-setup");
    // Keyboard order: the skip link first, then the form's first field.
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.className)).toBe("skip");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("name");
    await submitSetup(page, base, { account: OWNER.name, email: OWNER.email, password: PASSWORD });
    expect(await page.locator("h1").textContent()).toBe(OWNER.name);
    await shoot("02-overview");
    const cookie = (await context.cookies()).find((c) => c.name === "seedcast_session");
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe("Lax");
    await logout();
    await shoot("03-login-signed-out");
    await login(OWNER.email);
  }, 60_000);

  test("mint a key, use it, see it never again; rotate (both work); revoke (401)", async () => {
    const secret = await mint("Zapier bridge", ["read", "create", "schedule", "voice"]);
    expect(await page.getByText("It will not be shown again").count()).toBe(1);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.waitForFunction(() => document.getElementById("new-secret-status")?.textContent === "Copied to the clipboard.");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shoot("04-keys-minted-secret");
    const health = await api("GET", "/api/v1/health", secret);
    expect(health.status).toBe(200);
    expect(health.json.scopes).toEqual(["read", "create", "schedule", "voice"]);

    await page.goto(`${base}/dashboard/keys`);
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator("#new-secret").count()).toBe(0);
    await shoot("05-keys");

    await page.getByRole("link", { name: "Rotate Zapier bridge" }).click();
    await page.getByRole("button", { name: "Rotate key" }).click();
    await page.waitForURL(/\/dashboard\/keys\?shown=/);
    const replacement = await newSecret();
    expect(replacement).not.toBe(secret);
    expect(await page.getByText("keeps working until").count()).toBe(1);
    await shoot("06-keys-rotated");
    expect((await api("GET", "/api/v1/health", secret)).status).toBe(200);
    expect((await api("GET", "/api/v1/health", replacement)).status).toBe(200);

    await page.goto(`${base}/dashboard/keys`);
    // The replacement is the active one (the old one is in its grace window): revoke it.
    const activeRow = page.locator("tr", { has: page.locator(".state-active") }).filter({ hasText: "Zapier bridge" });
    await activeRow.getByRole("link", { name: /Revoke/ }).click();
    await page.waitForURL(/\/revoke$/);
    await shoot("07-keys-revoke-confirm");
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.waitForURL(/notice=revoked/);
    expect((await api("GET", "/api/v1/health", replacement)).status).toBe(401);
    expect((await api("GET", "/api/v1/health", replacement)).text).toBe('{"error":"Invalid API key"}');

    automationKey = await mint("Automation", ["read", "create", "schedule"]);
  }, 60_000);

  test("connect a webhook and see it ready", async () => {
    await page.goto(`${base}/dashboard/connections`);
    const form = page.locator("form", { has: page.getByRole("heading", { name: "Connect Webhook" }) });
    await form.getByLabel("Webhook URL").fill(`${receiver.url}/hook`);
    await form.getByLabel("Signing secret").fill(WEBHOOK_SECRET);
    await form.getByRole("button", { name: "Connect" }).click();
    await page.waitForURL(/notice=connected/);
    const card = page.locator("li.post").first();
    expect(await card.locator(".state-ready").textContent()).toBe("ready");
    expect(receiver.deliveries.some((d) => d.event === "ping" && d.verified)).toBe(true);
    await shoot("08-connections");
    const targets = await api("GET", "/api/v1/schedule/targets", automationKey);
    expect(targets.json.targets[0].readyToPost).toBe(true);
    expect(targets.json.manageUrl).toBe(`${base}/dashboard/connections`);
  }, 60_000);

  test("upload an image from the library page (with progress) and by drag and drop", async () => {
    const png = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 30, g: 120, b: 200 } } }).png().toBuffer();
    const jpeg = await sharp({ create: { width: 480, height: 480, channels: 3, background: { r: 220, g: 140, b: 40 } } }).jpeg().toBuffer();
    await page.goto(`${base}/dashboard/library`);
    await page.getByLabel("Drop images here, or choose files").setInputFiles({ name: "harbour.png", mimeType: "image/png", buffer: png });
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await page.waitForURL(/notice=uploaded/);
    expect(await page.locator(".gallery li").count()).toBe(1);
    expect(await page.locator(".gallery .file-name").first().textContent()).toBe("harbour.png");

    // Drag and drop: a real drop event carrying a File.
    const data = jpeg.toString("base64");
    await page.evaluate((b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([bytes], "sunset.jpg", { type: "image/jpeg" }));
      const zone = document.querySelector(".dropzone");
      zone?.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, data);
    await page.waitForFunction(() => document.querySelectorAll(".gallery li").length === 2);
    await shoot("09-library");
    const assets = await api("GET", "/api/v1/assets", automationKey);
    expect(assets.json.assets.map((a: { fileName: string }) => a.fileName).sort()).toEqual(["harbour.png", "sunset.jpg"]);
    imageAssetId = assets.json.assets.find((a: { fileName: string }) => a.fileName === "harbour.png").id;
  }, 60_000);

  test("a creation generated through the API shows in the dashboard as it will appear", async () => {
    const seed = await api("POST", "/api/v1/seeds", automationKey, { title: "Harbour festival", content: "Boats, lanterns and music on Saturday night at the old harbour.", category: "events" });
    expect(seed.status).toBe(201);
    const generated = await api("POST", "/api/v1/creations/generate", automationKey, { type: "social_post", seed_id: seed.json.id ?? seed.json.seed?.id, image_asset_id: imageAssetId });
    expect([200, 201]).toContain(generated.status);
    creationId = generated.json.id ?? generated.json.creation?.id;
    const caption: string = generated.json.body?.caption ?? generated.json.creation?.body?.caption;
    await page.goto(`${base}/dashboard/creations`);
    expect(await page.getByText("From “Harbour festival”").count()).toBe(1);
    await shoot("10-creations");
    await page.locator(".gallery.creations a", { hasText: "Open" }).first().click();
    await page.waitForURL(`${base}/dashboard/creations/${creationId}`);
    expect(await page.locator(".post-preview .caption").textContent()).toBe(caption);
    const img = page.locator(".post-preview img");
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    await shoot("11-creation");
  }, 60_000);

  test("a post scheduled through the API is cancelled from the calendar", async () => {
    const when = new Date(Date.now() + 2 * 60 * 60 * 1000).toISOString();
    const scheduled = await api("POST", "/api/v1/schedule", automationKey, { type: "social_post", creation_id: creationId, scheduled_time: when, targets: ["webhook"] });
    expect(scheduled.status).toBe(200);
    const postId: string = scheduled.json.post.id;
    await page.goto(`${base}/dashboard/calendar?view=day&date=${when.slice(0, 10)}`);
    const post = page.locator(`#post-${postId}`);
    expect(await post.locator(".badge").first().textContent()).toContain("Scheduled");
    await shoot("12-calendar");
    await post.getByRole("link", { name: /Details/ }).click();
    await page.waitForURL(`${base}/dashboard/calendar/posts/${postId}`);
    await page.getByRole("link", { name: /Cancel this post/ }).click();
    await page.waitForURL(/\/cancel$/);
    await page.getByRole("button", { name: "Cancel this post" }).click();
    await page.waitForURL(/notice=cancelled/);
    expect(await page.locator(`#post-${postId}`).count()).toBe(0);
    expect((await api("GET", `/api/v1/schedule/posts/${postId}`, automationKey)).status).toBe(404);
  }, 60_000);

  test("credits, voice, members and instance pages", async () => {
    await page.goto(`${base}/dashboard/credits`);
    expect(Number(await page.locator("#balance").textContent())).toBeGreaterThan(0);
    await shoot("13-credits");
    await page.goto(`${base}/dashboard/voice`);
    await page.getByLabel("Tone").fill("warm and direct");
    await page.getByLabel("Hashtags").fill("harbour, festival");
    await page.getByRole("button", { name: "Save voice" }).click();
    await page.waitForURL(/notice=voice-saved/);
    expect(await page.getByLabel("Hashtags").inputValue()).toBe("#harbour, #festival");
    await shoot("14-voice");
    await page.goto(`${base}/dashboard/members`);
    // The owner here is the instance admin, who alone may still type a teammate's password (decisions.md §15).
    await page.locator("#m-email").fill(VIEWER.email);
    await page.getByLabel("Initial password").fill(PASSWORD);
    await page.locator("#m-role").selectOption("viewer");
    await page.getByRole("button", { name: "Add person" }).click();
    await page.waitForURL(/notice=member-added/);
    await shoot("15-members");
    await page.goto(`${base}/dashboard/instance`);
    await shoot("16-instance");
    await page.goto(`${base}/dashboard`);
    expect(await page.locator(".stat", { hasText: "connections ready" }).locator(".value").textContent()).toBe("1 / 1");
    await shoot("19-overview-with-data");
    await page.goto(`${base}/dashboard/no-such-page`);
    await shoot("20-not-found");
  }, 60_000);

  test("a viewer is offered only Read and cannot mint more, even with a forged form", async () => {
    await logout();
    await login(VIEWER.email);
    await page.goto(`${base}/dashboard/keys`);
    const offered = await page.locator('input[name="groups"]').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value));
    expect(offered).toEqual(["read"]);
    await shoot("17-keys-viewer");
    await page.getByLabel("Name", { exact: true }).fill("forged");
    await page.evaluate(() => {
      const box = document.querySelector('input[name="groups"]') as HTMLInputElement;
      box.value = "create";
    });
    await page.getByRole("button", { name: "Mint key" }).click();
    await page.waitForLoadState();
    expect(await page.getByRole("alert").textContent()).toContain("cannot grant");
    expect(await page.locator("#new-secret").count()).toBe(0);
    await shoot("18-keys-viewer-refused");
    const secret = await mint("viewer read", ["read"]);
    expect((await api("GET", "/api/v1/health", secret)).json.scopes).toEqual(["read"]);
    expect((await api("POST", "/api/v1/seeds", secret, { title: "x", content: "y", category: "z" })).status).toBe(403);
  }, 60_000);
});
