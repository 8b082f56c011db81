/**
 * "Connect Mastodon" by sign-in in real Chromium (Debian `chromium` + playwright-core) against the BUILT executable and
 * the Mastodon-API fake (its apps endpoint, authorization page and token endpoint): type the server → the server's
 * authorization page → Authorize → back on the connections page, connected and ready; Deny → one sentence, nothing
 * stored; a forged state → one sentence; Reconnect → signed in again, the same connection. Every Seedcast page on the
 * way is checked at 1280 and 390 px (one h1, no horizontal scroll, axe-core without critical or serious findings)
 * and shot to test-artifacts/networks/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { type MastodonServer, startMastodonServer } from "./peers/mastodon-server";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let mastodon: MastodonServer;

async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
}

const cards = () => page.locator(".post.connection");
const connectCard = () => page.locator("section", { has: page.getByRole("heading", { name: "Connect Mastodon", exact: true }) });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  mastodon = await startMastodonServer();
  e2e = await startDashboardE2E("seedcast-signin-e2e-", { ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  ({ base, page } = e2e);
  await page.goto(`${base}/dashboard`);
  await submitSetup(page, base, { account: "Harbour Café", email: "anna@harbour.test", password: PASSWORD });
}, 240_000);

afterAll(async () => {
  await e2e?.close();
  await mastodon?.stop();
});

describe("Connect Mastodon by signing in, in Chromium", () => {
  let connectionId = "";

  test("type the server → the server's authorization page → Authorize → back, connected and ready", async () => {
    await page.goto(`${base}/dashboard/connections`);
    await shoot("mastodon-01-connections");
    await connectCard().getByLabel("Your server").fill(mastodon.url);
    await connectCard().getByRole("button", { name: "Sign in with Mastodon" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${mastodon.url}/oauth/authorize`));
    expect(await page.locator("h1").textContent()).toBe("Authorization required");
    expect(await page.textContent("body")).toContain("Seedcast would like permission to access your account @seedcast");
    await page.screenshot({ path: join(ARTIFACTS, "mastodon-02-server-authorize-page.png"), fullPage: true });
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections" && url.searchParams.get("notice") === "signed-in");
    expect(await page.locator(".notice").first().textContent()).toContain("Signed in: the connection was added and checked.");
    expect(await cards().count()).toBe(1);
    expect(await cards().first().textContent()).toContain(`@seedcast@${new URL(mastodon.url).host}`);
    expect(await cards().first().textContent()).toContain("Ready to post.");
    connectionId = ((await cards().first().getAttribute("id")) ?? "").replace("connection-", "");
    expect(mastodon.state.signIn.apps).toHaveLength(1);
    expect(mastodon.state.signIn.tokenRequests.at(-1)).toMatchObject({ status: 200 });
    await shoot("mastodon-03-connected");
  }, 90_000);

  test("an address that is not a Mastodon server: said beside the field, nothing stored", async () => {
    await page.goto(`${base}/dashboard/connections`);
    // Seedcast itself answers no Mastodon instance document.
    await connectCard().getByLabel("Your server").fill(base);
    await connectCard().getByRole("button", { name: "Sign in with Mastodon" }).click();
    await page.waitForSelector("#mastodon-signin-server-error");
    expect(await page.locator("#mastodon-signin-server-error").textContent()).toContain("does not answer like a Mastodon server");
    expect(await page.locator("#mastodon-signin-server").inputValue()).toBe(base);
    expect(await cards().count()).toBe(1);
    await shoot("mastodon-04a-not-mastodon");
  }, 60_000);

  test("Deny: one sentence, nothing more stored", async () => {
    await page.goto(`${base}/dashboard/connections`);
    await connectCard().getByLabel("Your server").fill(mastodon.url);
    await connectCard().getByRole("button", { name: "Sign in with Mastodon" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${mastodon.url}/oauth/authorize`));
    await page.getByRole("button", { name: "Deny" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections/callback/mastodon");
    expect(await page.locator(".notice-error").textContent()).toContain("You did not allow Seedcast on Mastodon, so nothing was connected.");
    expect(await cards().count()).toBe(1);
    await shoot("mastodon-04-denied");
  }, 90_000);

  test("a forged state: one sentence, nothing stored", async () => {
    await page.goto(`${base}/dashboard/connections/callback/mastodon?code=made-up&state=${"A".repeat(43)}`);
    expect(await page.locator(".notice-error").textContent()).toContain("That Mastodon sign-in link is no longer valid");
    expect(await cards().count()).toBe(1);
    await shoot("mastodon-05-forged-state");
  }, 60_000);

  test("Reconnect signs in again: the same connection, a new token", async () => {
    const tokensBefore = mastodon.state.signIn.issuedTokens.size;
    await page.goto(`${base}/dashboard/connections`);
    await page.getByRole("link", { name: /Reconnect/ }).click();
    await page.waitForURL(`${base}/dashboard/connections/${connectionId}/reconnect`);
    expect(await page.getByLabel("Your server").inputValue()).toBe(mastodon.url);
    await shoot("mastodon-06-reconnect");
    await page.getByRole("button", { name: "Sign in with Mastodon" }).click();
    await page.waitForURL((url) => url.toString().startsWith(`${mastodon.url}/oauth/authorize`));
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.waitForURL((url) => url.pathname === "/dashboard/connections" && url.searchParams.get("notice") === "signed-in-again");
    expect(await page.locator(".notice").first().textContent()).toContain("Signed in again and checked: posts already scheduled to this account go out with the new sign-in.");
    expect(await cards().count()).toBe(1);
    expect(await cards().first().getAttribute("id")).toBe(`connection-${connectionId}`);
    expect(await cards().first().textContent()).toContain("Ready to post.");
    expect(mastodon.state.signIn.issuedTokens.size).toBe(tokensBefore + 1);
    expect(mastodon.state.signIn.apps).toHaveLength(1);
    await shoot("mastodon-07-reconnected");
  }, 90_000);
});
