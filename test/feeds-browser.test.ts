/**
 * The Feeds page in real Chromium (Debian `chromium` + playwright-core) against the app on a real socket: follow a
 * blog's feed (served over HTTPS with the test CA) with a mode and targets, see it listed with its last read and state,
 * read it now, see a feed paused after 5 failed reads with its reason, resume it, remove one. Every page shown: axe-core
 * (no critical or serious finding), one h1 and no horizontal scroll at 1280 and 390 px, no raw ids or UTC times.
 * Screenshots go to test-artifacts/feeds/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { configureFeedFetch } from "../src/modules/feeds/fetch";
import { MAX_FAILURES, POLL_INTERVAL_MS, pollDueFeeds } from "../src/modules/feeds/service";
import { addConnection } from "../src/modules/connections/service";
import { checkBothWidths, openBrowserPage } from "./helpers/browser";
import { PASSWORD, type Person, type ServedWorld, ownerWithAccount, servedWorld } from "./helpers/oauth";
import { type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/feeds");
const FIXTURES = `${import.meta.dir}/fixtures/feeds`;
const ZONE = "Europe/Berlin";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

let world: ServedWorld;
let owner: Person;
let blog: TestHttpsServer;
let browser: Browser;
let page: Page;
/** Paths the blog server answers 503 for. */
const down = new Set<string>();
const ca = createTestCa();

/** What a person reads on the page that could be a raw id, an API path or a UTC time. */
async function developerWords(shown: Page): Promise<string[]> {
  const text = await shown.evaluate(() => document.body.innerText);
  const found: string[] = [];
  const id = UUID.exec(text);
  if (id) found.push(`an id: ${id[0]}`);
  for (const word of ["/api/v1", "UTC"]) if (text.includes(word)) found.push(word);
  return found;
}

const shoot = (name: string) => checkBothWidths(page, name, { artifacts: ARTIFACTS, more: [developerWords] });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  blog = startHttpsServer(
    (request) => {
      const path = new URL(request.url).pathname;
      if (down.has(path)) return new Response("maintenance", { status: 503 });
      const file = { "/feed/": "wordpress-rss.xml", "/releases.atom": "github-releases.atom", "/feed.json": "json-feed.json" }[path];
      return file ? new Response(Bun.file(`${FIXTURES}/${file}`)) : new Response("not found", { status: 404 });
    },
    { ca },
  );
  world = await servedWorld({ ALLOW_PRIVATE_HOSTS: "localhost" });
  configureFeedFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  owner = await ownerWithAccount(world, "Corner Bakery");
  await addConnection(world.deps, { accountId: owner.accountId, platform: "webhook", url: "https://localhost/hooks/bakery", secret: "whsec-feeds-0123456789abcdef" });
  ({ browser, page } = await openBrowserPage({ timezoneId: ZONE, locale: "en-GB" }));
  await page.goto(`${world.base}/login`);
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${world.base}/dashboard`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
  await blog?.stop();
  ca.dispose();
});

describe("the Feeds page", () => {
  test("empty, then following a WordPress blog: its articles become ideas at once", async () => {
    await page.goto(`${world.base}/dashboard/settings`);
    await page.getByRole("link", { name: "Feeds" }).first().click();
    await page.waitForURL(`${world.base}/dashboard/feeds`);
    expect(await page.locator("h1").textContent()).toBe("Feeds");
    expect(await page.getByText("No feeds yet.").isVisible()).toBe(true);
    await page.locator("#add-feed > summary").click();
    await shoot("01-empty-add-form");

    await page.getByLabel("Feed address").fill(`${blog.url}/feed/`);
    await page.getByLabel("Ideas only").check();
    await page.getByRole("button", { name: "Follow" }).click();
    await page.waitForURL(/notice=feed-added/);
    const card = page.locator(".feed-card").first();
    expect(await card.locator("h3").textContent()).toContain("The Corner Bakery Blog");
    expect(await card.locator(".badge").textContent()).toBe("Active");
    expect(await card.locator("dd").nth(1).textContent()).toBe("3");
    expect(await page.getByText("Its articles so far are now ideas").isVisible()).toBe(true);
    await shoot("02-following");
    await page.goto(`${world.base}/dashboard/seeds`);
    expect(await page.getByRole("link", { name: "Our winter stollen is back – and it’s bigger" }).isVisible()).toBe(true);
  });

  test("a refused address says why beside the field and keeps what was typed; queue mode asks where", async () => {
    await page.goto(`${world.base}/dashboard/feeds`);
    await page.locator("#add-feed > summary").click();
    await page.getByLabel("Feed address").fill("https://intranet.example/feed.xml");
    await page.getByRole("button", { name: "Follow" }).click();
    expect(await page.locator("#url-error").textContent()).toContain("does not resolve to a public address");
    expect(await page.getByLabel("Feed address").inputValue()).toBe("https://intranet.example/feed.xml");
    await shoot("03-refused");

    await page.getByLabel("Feed address").fill(`${blog.url}/feed.json`);
    await page.getByLabel("Ideas, posts, and into the queue").check();
    await page.getByRole("button", { name: "Follow" }).click();
    expect(await page.locator("#targets-error").textContent()).toBe("Choose where the queued posts go.");
  });

  test(`a feed that fails ${MAX_FAILURES} times is shown paused with the reason; "Resume and read now" brings it back; remove asks first`, async () => {
    await page.goto(`${world.base}/dashboard/feeds`);
    await page.locator("#add-feed > summary").click();
    await page.getByLabel("Feed address").fill(`${blog.url}/releases.atom`);
    await page.getByLabel("Ideas and draft posts").check();
    await page.getByRole("button", { name: "Follow" }).click();
    await page.waitForURL(/notice=feed-added/);
    down.add("/releases.atom");
    for (let i = 0; i < MAX_FAILURES; i++) {
      world.clock.advance(POLL_INTERVAL_MS + 1000);
      await pollDueFeeds(world.deps);
    }
    await page.goto(`${world.base}/dashboard/feeds`);
    const paused = page.locator(".feed-card", { hasText: "Release notes from widget" });
    expect(await paused.locator(".badge").textContent()).toBe("Paused");
    expect(await paused.locator(".field-error").textContent()).toBe(
      `Paused after ${MAX_FAILURES} failed reads in a row. The last one said: The feed's server answered 503.`,
    );
    await shoot("04-paused");

    down.delete("/releases.atom");
    await paused.getByRole("button", { name: "Resume and read now" }).click();
    await page.waitForURL(/notice=feed-unchanged/);
    const resumed = page.locator(".feed-card", { hasText: "Release notes from widget" });
    expect(await resumed.locator(".badge").textContent()).toBe("Active");
    await shoot("05-resumed");

    await resumed.getByRole("link", { name: "Remove" }).click();
    expect(await page.getByText("Stop following").isVisible()).toBe(true);
    await shoot("06-remove-confirm");
    await page.getByRole("button", { name: "Remove feed" }).click();
    await page.waitForURL(/notice=feed-removed/);
    expect(await page.locator(".feed-card", { hasText: "Release notes from widget" }).count()).toBe(0);
  });
});
