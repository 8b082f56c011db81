/**
 * Real Chromium from Debian's `chromium` package, driven by playwright-core (which downloads no browser). The flags
 * keep it off the network it cannot reach here (background networking, component updates, sync) and run it as root.
 * Also the checks every dashboard page passes in the browser tests: axe-core, one h1 and no horizontal scroll at a
 * desktop and a phone width, with full-page screenshots of both.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { expect } from "bun:test";
import { type Browser, type BrowserContext, type BrowserContextOptions, type Page, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/** The two widths every page is checked at. */
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-dev-shm-usage",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Launches Chromium with a fresh throwaway profile; fails with a clear message when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install chromium (npm test's pretest does it)`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS });
}

/** A browser, its one context and the page the test drives. */
export interface BrowserPage {
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

/**
 * Chromium with one context (`options`; the desktop viewport unless they name another) and one page in it, whose
 * waits give up after 15 s so a missing element fails the step rather than the whole test's timeout.
 */
export async function openBrowserPage(options: BrowserContextOptions = {}): Promise<BrowserPage> {
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return { browser, context, page };
}

/** axe-core's findings of impact critical or serious on the page shown (evaluated through CDP, not under the CSP). */
export async function axeProblems(page: Page): Promise<string[]> {
  await page.evaluate(`${AXE_SOURCE}\n;0`);
  const result = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] })`)) as {
    violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === "critical" || v.impact === "serious")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
}

/** One more check of a page: what it finds wrong (empty when nothing is). */
export type PageCheck = (page: Page) => Promise<string[]>;

/**
 * Checks the page shown at DESKTOP and at PHONE width: exactly one h1, no horizontal scroll (a failure names the
 * innermost elements reaching past the right edge), no critical or serious axe-core finding, and nothing found by each
 * of `more` (in its order); then a full-page screenshot `<name>-desktop.png` / `<name>-phone.png` in `artifacts`.
 * Leaves the page at DESKTOP width.
 */
export async function checkBothWidths(page: Page, name: string, options: { artifacts: string; more?: PageCheck[] }): Promise<void> {
  for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
    await page.setViewportSize(viewport);
    const layout = await page.evaluate(() => {
      const width = window.innerWidth;
      const wide = [...document.querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().right > width + 0.5 && ![...el.children].some((c) => c.getBoundingClientRect().right > width + 0.5))
        .slice(0, 3)
        .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${(el as HTMLElement).className}`);
      return { h1: document.querySelectorAll("h1").length, overflow: document.documentElement.scrollWidth - width, wide };
    });
    expect([name, size, layout.h1, layout.overflow <= 0 ? "no horizontal scroll" : `${layout.overflow}px too wide: ${layout.wide.join(", ")}`]).toEqual([name, size, 1, "no horizontal scroll"]);
    expect([name, size, await axeProblems(page)]).toEqual([name, size, []]);
    for (const check of options.more ?? []) expect([name, size, await check(page)]).toEqual([name, size, []]);
    await page.screenshot({ path: join(options.artifacts, `${name}-${size}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}
