/**
 * Sign-in and consent in real Chromium (Debian `chromium` driven by playwright-core) against the app on a real socket:
 * an assistant's authorization request → the dashboard's login page → the consent page (account picker, groups in
 * plain words) → Allow → back at the assistant's loopback callback with code, state and iss, which the token endpoint
 * exchanges. The page's CSP must let the form's redirect reach the callback. Then the Connected apps page and the
 * overview's connector address with its copy button. Screenshots go to test-artifacts/oauth/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Server } from "bun";
import type { Browser, Page } from "playwright-core";
import { members } from "../src/db/tables";
import { registerClient } from "../src/modules/oauth/clients";
import { s256 } from "../src/modules/oauth/codes";
import { launchChromium } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, ownerWithAccount, servedWorld } from "./helpers/oauth";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/oauth");
const VERIFIER = "chromium-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

let world: ServedWorld;
let owner: Person;
let callback: Server<undefined>;
let browser: Browser;
let page: Page;
const received: URL[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await servedWorld();
  owner = await ownerWithAccount(world, "Northwind Studio");
  // The same person is also an editor of a second account, so the consent page offers a choice.
  const other = await ownerWithAccount(world, "Side Project");
  await world.store.write(async (tx) => {
    await tx.insert(members).values({ accountId: other.accountId, userId: owner.userId, role: "editor", createdAt: world.clock.now() }).run();
  });
  callback = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) => {
      const at = new URL(request.url);
      if (at.pathname === "/callback") received.push(at);
      return new Response("<!doctype html><title>Connected</title><h1>You can close this window</h1>", { headers: { "content-type": "text/html" } });
    },
  });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: world.base });
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await callback?.stop(true);
  await world?.stop();
});

/** One h1, a main landmark, every control labelled, no horizontal scroll, at desktop and phone width; screenshots. */
async function shoot(name: string): Promise<void> {
  for (const [size, viewport] of [["desktop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]] as const) {
    await page.setViewportSize(viewport);
    const problems = await page.evaluate(() => {
      const out: string[] = [];
      if (document.querySelectorAll("h1").length !== 1) out.push("expected exactly one h1");
      if (!document.querySelector("main")) out.push("no main landmark");
      for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
        const control = el as HTMLInputElement;
        if ((control.labels?.length ?? 0) === 0 && !control.getAttribute("aria-label")) out.push(`unlabelled ${control.name || control.id}`);
      }
      if (document.documentElement.scrollWidth > window.innerWidth + 1) out.push(`horizontal scroll at ${window.innerWidth}px`);
      return out;
    });
    expect([name, size, problems]).toEqual([name, size, []]);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test("an assistant is connected through login and consent in Chromium", async () => {
  const redirectUri = `http://127.0.0.1:${callback.port}/callback`;
  const clientId = (await registerClient(world.deps, { client_name: "Claude", redirect_uris: [redirectUri], token_endpoint_auth_method: "none" })).client_id;
  const url = new URL(`${world.base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: s256(VERIFIER),
    code_challenge_method: "S256",
    state: "chromium-state",
    scope: "read create schedule voice",
    resource: `${world.base}/mcp`,
  }))
    url.searchParams.set(k, v);

  await page.goto(url.href);
  expect(new URL(page.url()).pathname).toBe("/login");
  expect(await page.getByText("An app asked to connect to Seedcast").isVisible()).toBe(true);
  await shoot("1-login");
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname === "/oauth/authorize");
  expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Connect Claude?");
  expect(await page.getByText("Schedule posts to your connected social accounts").isVisible()).toBe(true);
  await shoot("2-consent");

  // Switch to the other account through the picker and back, as a person might.
  await page.getByLabel("Account", { exact: true }).selectOption({ label: "Side Project (editor)" });
  await page.getByRole("button", { name: "Use this account" }).click();
  await page.waitForURL((u) => u.searchParams.has("account"));
  expect(await page.getByText("in the account Side Project").isVisible()).toBe(true);
  await page.getByLabel("Account", { exact: true }).selectOption({ label: "Northwind Studio (owner)" });
  await page.getByRole("button", { name: "Use this account" }).click();
  await page.waitForURL((u) => u.searchParams.get("account") === owner.accountId);

  // Untick Brand voice, then Allow.
  await page.getByRole("checkbox", { name: /Brand voice/ }).uncheck();
  await shoot("3-consent-edited");
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL((u) => u.port === String(callback.port));
  await page.screenshot({ path: join(ARTIFACTS, "4-back-at-the-assistant.png") });

  const back = received.at(-1) as URL;
  expect(back.searchParams.get("state")).toBe("chromium-state");
  expect(back.searchParams.get("iss")).toBe(world.base);
  const code = back.searchParams.get("code") as string;
  const answer = await fetch(`${world.base}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code, redirect_uri: redirectUri, code_verifier: VERIFIER }),
  });
  const tokens = await answer.json();
  expect(answer.status).toBe(200);
  expect(tokens.scope).toBe("read create schedule");

  // The dashboard shows the connection, and the overview the connector address with a working copy button.
  await page.goto(`${world.base}/dashboard/apps`);
  expect(await page.getByRole("cell", { name: /Claude/ }).first().isVisible()).toBe(true);
  expect(await page.getByText("Read access, Content creation, Scheduling").isVisible()).toBe(true);
  await shoot("5-connected-apps");
  await page.goto(`${world.base}/dashboard`);
  expect(await page.getByLabel("Connector address").inputValue()).toBe(`${world.base}/mcp`);
  await page.getByRole("button", { name: "Copy" }).click();
  await page.getByText("Copied to the clipboard.").waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${world.base}/mcp`);
  await shoot("6-overview");

  // Deny from a second request lands back with access_denied.
  url.searchParams.set("state", "second");
  await page.goto(url.href);
  await page.getByRole("button", { name: "Deny" }).click();
  await page.waitForURL((u) => u.port === String(callback.port));
  expect(received.at(-1)?.searchParams.get("error")).toBe("access_denied");
}, 60_000);
