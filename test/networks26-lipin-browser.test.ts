/**
 * LinkedIn and Pinterest in real Chromium (Debian `chromium` + playwright-core) against the BUILT executable and the
 * stand-ins (test/peers/linkedin, test/peers/pinterest), reached through PLATFORM_ORIGIN_OVERRIDES: each app entered on
 * the Instance page, "Connect LinkedIn" → LinkedIn's page → Allow → connected; "Connect Pinterest" → Pinterest's page
 * → the board chooser → one board connected; then a post with 2 images (alt text each) and, on LinkedIn, a first
 * comment, written in the composer and sent from the dashboard (its schedule form's "Add to queue", then the Queue's
 * "Post now"; test/helpers/dashboard-post.ts), delivered once (checked by what the stand-ins received). Seedcast's pages are checked at 1280 and 390 px
 * (one h1, no horizontal scroll, axe-core) and shot to test-artifacts/networks26/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { scheduledPosts } from "../src/db/tables";
import type { Deps } from "../src/deps";
import { silentLogger } from "../src/lib/log";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { postFromDashboard } from "./helpers/dashboard-post";
import { twoImagePost } from "./helpers/network-walk-post";
import { LINKEDIN_MEMBER, type LinkedInStandIn, startLinkedInStandIn } from "./peers/linkedin/server";
import { type PinterestStandIn, startPinterestStandIn } from "./peers/pinterest/server";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks26");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let linkedin: LinkedInStandIn;
let pinterest: PinterestStandIn;
let env: Record<string, string>;

async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  linkedin = startLinkedInStandIn({ now: () => Date.now() });
  pinterest = startPinterestStandIn({ now: () => Date.now() });
  env = {
    PLATFORM_ORIGIN_OVERRIDES: `www.linkedin.com=${linkedin.origin},api.linkedin.com=${linkedin.origin},www.pinterest.com=${pinterest.origin},api.pinterest.com=${pinterest.origin}`,
    DISPATCH_POLL_MS: "100",
  };
  e2e = await startDashboardE2E("seedcast-lipin-e2e-", env, { timezoneId: "UTC", locale: "en-GB" });
  ({ base, page } = e2e);
  await page.goto(`${base}/dashboard`);
  await submitSetup(page, base, { account: "Harbour Bakery", email: "ada@harbour.test", password: PASSWORD });
}, 240_000);

afterAll(async () => {
  await e2e?.close();
  await linkedin?.stop();
  await pinterest?.stop();
});

/** The server's data, opened beside it (SQLite in WAL mode: the running server keeps going). */
async function beside(): Promise<Deps> {
  const dataDir = join(e2e!.server.work, "data");
  return bootstrap(loadConfig({ ...env, DATA_DIR: dataDir, BASE_URL: base, LOG_LEVEL: "silent" }), { log: silentLogger });
}

async function postStatus(postId: string): Promise<string> {
  const deps = await beside();
  try {
    return (await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get())?.status ?? "gone";
  } finally {
    await deps.store.close();
  }
}

async function waitFor(postId: string, status: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && (await postStatus(postId)) !== status) await Bun.sleep(250);
  expect(await postStatus(postId)).toBe(status);
}

describe("LinkedIn and Pinterest through the dashboard, in Chromium", () => {
  test("the Instance page: each app's redirect URI, scopes and guide; both apps entered", async () => {
    await page.goto(`${base}/dashboard/instance`);
    const li = page.locator("#app-linkedin");
    expect(await li.textContent()).toContain(`${base}/dashboard/connections/callback/linkedin`);
    expect(await li.textContent()).toContain("w_member_social");
    await page.locator("#app-linkedin-id").fill(linkedin.clientId);
    await page.locator("#app-linkedin-secret").fill(linkedin.clientSecret);
    await li.getByRole("button", { name: "Save LinkedIn app" }).click();
    await page.waitForLoadState("load");
    const pin = page.locator("#app-pinterest");
    expect(await pin.textContent()).toContain(`${base}/dashboard/connections/callback/pinterest`);
    await page.locator("#app-pinterest-id").fill(pinterest.clientId);
    await page.locator("#app-pinterest-secret").fill(pinterest.clientSecret);
    await pin.getByRole("button", { name: "Save Pinterest app" }).click();
    await page.waitForLoadState("load");
    expect(await page.locator("#app-linkedin").textContent()).toContain("(set)");
    expect(await page.locator("#app-pinterest").textContent()).toContain("(set)");
    await page.locator("#app-linkedin").scrollIntoViewIfNeeded();
    await shoot("lipin-01-instance-apps");
  }, 90_000);

  test("Connect LinkedIn → LinkedIn's page → Allow → connected and ready", async () => {
    await page.goto(`${base}/dashboard/connections`);
    await page.getByRole("button", { name: "Connect LinkedIn" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${linkedin.origin}/oauth/v2/authorization`));
    await page.screenshot({ path: join(ARTIFACTS, "lipin-02-linkedin-authorize.png"), fullPage: true });
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections" && url.searchParams.get("notice") === "signed-in");
    const card = page.locator(".post.connection", { hasText: LINKEDIN_MEMBER.name });
    expect(await card.textContent()).toContain("Ready to post.");
    expect(await card.textContent()).toContain("This sign-in ends");
    await shoot("lipin-03-linkedin-connected");
  }, 90_000);

  test("Connect Pinterest → Pinterest's page → the board chooser → one board connected", async () => {
    await page.goto(`${base}/dashboard/connections`);
    await page.getByRole("button", { name: "Connect Pinterest" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${pinterest.origin}/oauth/`));
    await page.screenshot({ path: join(ARTIFACTS, "lipin-04-pinterest-authorize.png"), fullPage: true });
    await page.getByRole("button", { name: "Give access" }).click();
    await page.waitForSelector("#chooser-title");
    await shoot("lipin-05-pinterest-chooser");
    await page.getByLabel("Bread we bake (@harbourbakery)").check();
    await page.getByRole("button", { name: "Connect the ticked boards" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections" && url.searchParams.get("notice") === "signed-in");
    const card = page.locator(".post.connection", { hasText: "Bread we bake" });
    expect(await card.textContent()).toContain("Ready to post.");
    expect(await page.locator(".post.connection", { hasText: "Cakes for weddings" }).count()).toBe(0);
    await shoot("lipin-06-pinterest-connected");
  }, 90_000);

  test("a post with 2 images and alt text: LinkedIn gets it with its first comment once; Pinterest a carousel pin once", async () => {
    const alts = ["Loaves, wide", "Loaves, tall"] as const;
    const li = await postFromDashboard(page, base, await twoImagePost("Fresh loaves this morning", alts, "Order at harbour.example"), { targets: [LINKEDIN_MEMBER.name], when: "now" }, {
      onStep: (step) => shoot(`lipin-07-linkedin-${step}`),
    });
    await waitFor(li, "published");
    // Pinterest takes no first comment: its post has none.
    const pin = await postFromDashboard(page, base, await twoImagePost("Fresh loaves\nShaped by hand this morning.", alts), { targets: ["Bread we bake (@harbourbakery)"], when: "now" });
    await waitFor(pin, "published");
    expect(linkedin.violations).toEqual([]);
    expect(pinterest.violations).toEqual([]);
    expect(linkedin.posts).toHaveLength(1);
    expect(linkedin.posts[0]!.images.map((i) => i.altText)).toEqual(["Loaves, wide", "Loaves, tall"]);
    expect(linkedin.comments.map((c) => c.text)).toEqual(["Order at harbour.example"]);
    expect(pinterest.pins).toHaveLength(1);
    expect(pinterest.pins[0]).toMatchObject({ sourceType: "multiple_image_base64", title: "Fresh loaves", altText: "Loaves, wide; Loaves, tall" });
    await page.goto(`${base}/dashboard/calendar/posts/${li}`);
    await shoot("lipin-08-linkedin-post-published");
    await page.goto(`${base}/dashboard/calendar/posts/${pin}`);
    await shoot("lipin-09-pinterest-post-published");
  }, 180_000);
});
