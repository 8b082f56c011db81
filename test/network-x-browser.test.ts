/**
 * X through the dashboard in real Chromium (Debian `chromium` + playwright-core), against the BUILT executable and the
 * X stand-in (test/peers/x/server.ts) reached through PLATFORM_ORIGIN_OVERRIDES: Connect X disabled until the admin
 * sets the app up; the Instance page's X section (redirect URI, scopes, console, steps), the app entered there; Connect
 * X → X's authorization page → Authorize → back, connected and ready; then a post with 2 images (alt text each) and a
 * first comment, written in the composer and sent from the dashboard (its schedule form's "Add to queue", then the
 * Queue's "Post now"; test/helpers/dashboard-post.ts), checked by what the stand-in received. axe-core clean and no
 * horizontal scroll at 1280 and 390 px; screenshots in test-artifacts/networks26/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import { scheduledPosts } from "../src/db/tables";
import { silentLogger } from "../src/lib/log";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { postFromDashboard } from "./helpers/dashboard-post";
import { twoImagePost } from "./helpers/network-walk-post";
import { type XStandIn, startXStandIn } from "./peers/x/server";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks26");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let x: XStandIn;
let env: Record<string, string>;

async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
}

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  x = startXStandIn({ redirectUri: "unset" });
  // No ALLOW_PRIVATE_HOSTS: the overridden origins alone let the sign-in form's redirect reach the stand-in (CSP form-action).
  env = { PLATFORM_ORIGIN_OVERRIDES: `api.x.com=${x.origin},x.com=${x.origin}`, DISPATCH_POLL_MS: "100" };
  e2e = await startDashboardE2E("seedcast-x-e2e-", env, { timezoneId: "UTC", locale: "en-GB" });
  ({ base, page } = e2e);
  x.registerRedirectUri(`${base}/dashboard/connections/callback/x`);
}, 180_000);

afterAll(async () => {
  await e2e?.close();
  await x?.stop();
});

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

describe("X in the dashboard", () => {
  test("Connect X is disabled until the admin sets the app up on the Instance page", async () => {
    await page.goto(`${base}/dashboard`);
    await submitSetup(page, base, { account: "Corner Bakery", email: "anna@bakery.test", password: PASSWORD });
    await page.goto(`${base}/dashboard/connections`);
    const card = page.getByRole("region", { name: "Connect X", exact: true });
    expect(await card.textContent()).toContain("Your instance admin has not set up X yet.");
    expect(await card.getByRole("button", { name: "Connect X" }).isDisabled()).toBe(true);
    await shoot("x-01-connect-disabled");
    await card.getByRole("link", { name: "Set up X" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/instance");
    const section = page.locator("#app-x");
    expect(await section.textContent()).toContain(`${base}/dashboard/connections/callback/x`);
    expect(await section.textContent()).toContain("media.write");
    await section.getByText("Set up X, step by step").click();
    await shoot("x-02-instance-setup");
    await section.getByLabel(/OAuth 2.0 Client ID/).fill(x.clientId);
    await section.getByLabel(/OAuth 2.0 Client Secret/).fill(x.clientSecret);
    await section.getByRole("button", { name: "Save X app" }).click();
    await page.waitForURL((url) => url.searchParams.get("notice") === "app-saved");
    expect(await page.locator("#app-x").textContent()).toContain("set here.");
    expect(await page.content()).not.toContain(x.clientSecret);
    await shoot("x-03-app-saved");
  }, 90_000);

  test("Connect X → X's authorization page → Authorize → back, connected and ready", async () => {
    await page.goto(`${base}/dashboard/connections`);
    await page.getByRole("button", { name: "Connect X" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${x.origin}/i/oauth2/authorize`));
    expect(await page.textContent("body")).toContain("Seedcast wants to access your X account");
    await page.screenshot({ path: join(ARTIFACTS, "x-04-x-authorize-page.png"), fullPage: true });
    await page.getByRole("button", { name: "Authorize app" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections" && url.searchParams.get("notice") === "signed-in");
    const cards = page.locator(".post.connection");
    expect(await cards.count()).toBe(1);
    expect(await cards.first().textContent()).toContain("X · @cornerbakery");
    expect(await cards.first().textContent()).toContain("Ready to post.");
    await shoot("x-05-connected");
  }, 90_000);

  test("a post with 2 images, alt text and a first comment goes out once", async () => {
    const post = await twoImagePost("Rye loaves are back on Saturday", ["Two rye loaves", "The shop window at dawn"], "Pre-order until Friday noon.");
    const id = await postFromDashboard(page, base, post, { targets: ["@cornerbakery"], when: "now" }, { onStep: (step) => shoot(`x-06-${step}`) });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await postStatus(id)) !== "published") await Bun.sleep(200);
    expect(await postStatus(id)).toBe("published");
    expect(x.posts.map((p) => [p.text, p.mediaIds.map((m) => x.media.get(m)?.altText ?? null), p.inReplyTo === null ? null : "reply"])).toEqual([
      ["Rye loaves are back on Saturday", ["Two rye loaves", "The shop window at dawn"], null],
      ["Pre-order until Friday noon.", [], "reply"],
    ]);
    expect(x.posts[1]!.inReplyTo).toBe(x.posts[0]!.id);
    expect(x.violations).toEqual([]);
    await page.goto(`${base}/dashboard/calendar/posts/${id}`);
    await shoot("x-07-post-published");
  }, 120_000);
});
