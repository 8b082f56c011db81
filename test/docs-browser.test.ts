/**
 * The API reference in real Chromium: /docs and /docs/ render Swagger UI from the served document, offline (every
 * request stays on the instance), with the operations, their error responses and the named schemas visible.
 * Screenshots go to test-artifacts/docs/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { launchChromium } from "./helpers/browser";
import { type Served, serveApp } from "./helpers/openapi-contract";
import { type World, createWorld } from "./helpers/world";

const ARTIFACTS = join(import.meta.dir, "..", "test-artifacts", "docs");

let world: World;
let server: Served;
let browser: Browser;
let context: BrowserContext;
const foreign: string[] = [];
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  world = await createWorld();
  server = serveApp(world.app);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.on("request", (request) => {
    if (!request.url().startsWith(server.base) && !request.url().startsWith("data:")) foreign.push(request.url());
  });
  context.on("weberror", (error) => problems.push(error.error().message));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await world?.close();
});

describe("Swagger UI", () => {
  for (const [path, name] of [["/docs", "docs"], ["/docs/", "docs-slash"]] as const) {
    test(`${path} shows every tag and the operations, from /openapi.json, with no request leaving the instance`, async () => {
      const page = await context.newPage();
      const spec = page.waitForResponse((response) => new URL(response.url()).pathname === "/openapi.json");
      await page.goto(`${server.base}${path}`);
      expect((await spec).status()).toBe(200);
      await page.getByText("Seedcast API").first().waitFor();
      for (const tag of ["seeds", "creations", "schedule", "assets", "voice", "credits"]) {
        await page.locator(`h3#operations-tag-${tag}`).waitFor();
      }
      await expect(page.getByText("Save a seed (free; runs no model)").count()).resolves.toBeGreaterThan(0);
      // Open one operation: its refusals are listed with the envelope's examples.
      await page.locator("#operations-seeds-postSeeds button.opblock-summary-control").click();
      const responses = page.locator("#operations-seeds-postSeeds .responses-table");
      await responses.waitFor();
      const codes = await responses.locator("td.response-col_status").allInnerTexts();
      expect(codes.map((c) => c.trim().slice(0, 3))).toEqual(expect.arrayContaining(["201", "400", "401", "403", "404", "409", "413", "415", "422", "429"]));
      await expect(page.getByText('"Invalid API key"').count()).resolves.toBeGreaterThan(0);
      await responses.locator("tr.response").nth(2).scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
      await page.close();
      expect(foreign).toEqual([]);
      expect(problems).toEqual([]);
    });
  }

  test("the named schemas are listed", async () => {
    const page = await context.newPage();
    await page.goto(`${server.base}/docs`);
    const models = page.locator("section.models");
    await models.waitFor();
    for (const name of ["Seed", "Creation", "Post", "ValidationError", "InvalidApiKey"]) {
      await expect(models.getByText(name, { exact: true }).count()).resolves.toBeGreaterThan(0);
    }
    await models.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "schemas.png"), fullPage: false });
    await page.close();
  });
});
