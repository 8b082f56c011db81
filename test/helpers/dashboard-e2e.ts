/**
 * The BUILT executable serving on 127.0.0.1 for the dashboard's browser tests: $SEEDCAST_BIN when set (e.g.
 * dist/seedcast from `npm run build`), otherwise compiled here into a temp dir with scripts/compile.ts, the same
 * compile step and flags `npm run build` uses. `startDashboardE2E` adds a Chromium page (test/helpers/browser.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { BrowserContextOptions, Page } from "playwright-core";
import { compile } from "../../scripts/compile";
import { bootstrap } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import { silentLogger } from "../../src/lib/log";
import { type BrowserPage, openBrowserPage } from "./browser";
import { type ChildServer, freePort, startChildServer } from "./child-server";

export interface BuiltServer {
  /** `http://127.0.0.1:<port>`, also its BASE_URL. */
  base: string;
  /** The temp dir holding the data dir, the log and (when compiled here) the executable. */
  work: string;
  /** Everything the server printed (stdout and stderr). */
  logFile: string;
  /** SIGTERM, then waits for it to exit; again, does nothing. */
  stop(): Promise<void>;
  /** Stops it and deletes `work`. */
  close(): Promise<void>;
}

/**
 * Starts `seedcast serve` from the built executable in a fresh temp dir (`<prefix>XXXXXX`) with BASE_URL, DATA_DIR
 * (in that dir), LOG_LEVEL=warn and `env` (which may override any of them); resolves once it answers /readyz.
 */
export async function startBuiltServer(prefix: string, env: Record<string, string>): Promise<BuiltServer> {
  const work = mkdtempSync(join(tmpdir(), prefix));
  let server: ChildServer | null = null;
  const stop = async () => {
    const proc = server?.proc;
    server = null;
    if (!proc) return;
    proc.kill("SIGTERM");
    await proc.exited;
  };
  const close = async () => {
    await stop();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    let bin = process.env.SEEDCAST_BIN ?? "";
    if (!bin) {
      bin = join(work, "seedcast");
      await compile(resolve(import.meta.dir, "../../src/main.ts"), bin);
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const logFile = join(work, "server.log");
    server = await startChildServer([bin, "serve"], {
      cwd: work,
      port,
      logFile,
      env: { BASE_URL: base, DATA_DIR: join(work, "data"), LOG_LEVEL: "warn", ...env },
    });
    return { base, work, logFile, stop, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The built server and a browser page to drive it. */
export interface DashboardE2E extends BrowserPage {
  server: BuiltServer;
  /** The server's `http://127.0.0.1:<port>`. */
  base: string;
  /** Closes the browser, then stops the server and deletes its temp dir. */
  close(): Promise<void>;
}

/**
 * startBuiltServer(`prefix`, `env`), then openBrowserPage(`context`) on it. When the browser cannot start, the server
 * is stopped again before the error is thrown.
 */
export async function startDashboardE2E(prefix: string, env: Record<string, string>, context: BrowserContextOptions = {}): Promise<DashboardE2E> {
  const server = await startBuiltServer(prefix, env);
  let opened: BrowserPage;
  try {
    opened = await openBrowserPage(context);
  } catch (error) {
    await server.close();
    throw error;
  }
  return {
    ...opened,
    server,
    base: server.base,
    close: async () => {
      await opened.browser.close();
      await server.close();
    },
  };
}

/**
 * Fills in the first-run setup form `page` shows (the owner's name only when given) and submits it; resolves once the
 * new owner lands on `<base>/dashboard`.
 */
export async function submitSetup(page: Page, base: string, owner: { account: string; email: string; password: string; name?: string }): Promise<void> {
  await page.getByLabel("Account name").fill(owner.account);
  if (owner.name !== undefined) await page.getByLabel("Your name").fill(owner.name);
  await page.getByLabel("Your email").fill(owner.email);
  await page.getByLabel("Password", { exact: true }).fill(owner.password);
  await page.getByLabel("Password again").fill(owner.password);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(`${base}/dashboard`);
}

/**
 * The running server's data, opened beside it with the same `env` it was started with (SQLite in WAL mode, or the same
 * PostgreSQL database): for a test's reads of what the server stored. The caller closes `deps.store`.
 */
export async function openServerData(server: BuiltServer, env: Record<string, string>): Promise<Deps> {
  return bootstrap(loadConfig({ ...env, DATA_DIR: join(server.work, "data"), BASE_URL: server.base, LOG_LEVEL: "silent" }), { log: silentLogger });
}
