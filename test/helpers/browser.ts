/**
 * Real Chromium from Debian's `chromium` package, driven by playwright-core (which downloads no browser). The flags
 * keep it off the network it cannot reach here (background networking, component updates, sync) and run it as root.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

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

/** Launches Chromium with a fresh throwaway profile; fails with a clear message when it is not installed. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`${CHROMIUM_PATH} is missing: apt-get install chromium (npm test's pretest does it)`);
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS });
}
