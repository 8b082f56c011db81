/**
 * "Connect Mastodon" by sign-in in real Chromium (Debian `chromium` + playwright-core) against the BUILT executable and
 * the Mastodon-API fake (its apps endpoint, authorization page and token endpoint): type the server → the server's
 * authorization page → Authorize → back on the connections page, connected and ready; Deny → one sentence, nothing
 * stored; a forged state → one sentence; Reconnect → signed in again, the same connection. Then posts written in the
 * composer and scheduled in the dashboard (test/helpers/dashboard-post.ts): one for tomorrow is handed to the server as
 * a scheduled status, and cancelling it on its page withdraws it there; one with 2 images (one uploaded, one from the
 * library), alt text, a 2-part thread and a first comment, sent at once ("Add to queue", then the Queue view's "Post
 * now"), is published once as 4 statuses: the parts each a reply to the one before, the comment a reply to the post. Every Seedcast page on the way is checked at 1280 and 390 px (one h1, no horizontal scroll, axe-core
 * without critical or serious findings) and shot to test-artifacts/networks/. On the run's database (SQLite, or
 * PostgreSQL with SEEDCAST_TEST_DATABASE=postgres).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { eq } from "drizzle-orm";
import type { Page } from "playwright-core";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { checkBothWidths } from "./helpers/browser";
import { type DashboardE2E, openServerData, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { cancelInDashboard, postFromDashboard } from "./helpers/dashboard-post";
import { testDatabaseEnv } from "./helpers/test-database";
import { type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { solidPng } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let base = "";
let page: Page;
let mastodon: MastodonServer;
let env: Record<string, string> = {};

async function shoot(name: string): Promise<void> {
  await checkBothWidths(page, name, { artifacts: ARTIFACTS });
}

/** The post's status and its one target's, read beside the server ("gone" once it is cancelled). */
async function stored(postId: string): Promise<{ post: string; target: string; held: boolean }> {
  const deps = await openServerData(e2e!.server, env);
  try {
    const post = await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get();
    const target = await deps.store.db.select().from(scheduledPostTargets).where(eq(scheduledPostTargets.postId, postId)).get();
    return { post: post?.status ?? "gone", target: target?.status ?? "gone", held: target?.heldByProvider ?? false };
  } finally {
    await deps.store.close();
  }
}

/** Polls `stored(postId)` until `done` holds (30 s at most); answers the last reading. */
async function until(postId: string, done: (s: Awaited<ReturnType<typeof stored>>) => boolean): Promise<Awaited<ReturnType<typeof stored>>> {
  const deadline = Date.now() + 30_000;
  let now = await stored(postId);
  while (!done(now) && Date.now() < deadline) {
    await Bun.sleep(200);
    now = await stored(postId);
  }
  return now;
}

const cards = () => page.locator(".post.connection");
const connectCard = () => page.locator("section", { has: page.getByRole("heading", { name: "Connect Mastodon", exact: true }) });

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  mastodon = await startMastodonServer();
  env = { ...(await testDatabaseEnv()), ALLOW_PRIVATE_HOSTS: "127.0.0.1", DISPATCH_POLL_MS: "100" };
  e2e = await startDashboardE2E("seedcast-signin-e2e-", env);
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

  test("a post scheduled for tomorrow in the dashboard is handed to the server; cancelled on its page, it is withdrawn there", async () => {
    const account = `@seedcast@${new URL(mastodon.url).host}`;
    const postId = await postFromDashboard(
      page,
      base,
      { caption: "The harbour is closed for the regatta on Saturday", images: [{ alt: "Sailing boats at the harbour mouth", upload: { name: "regatta.png", bytes: await solidPng(320, 200) } }] },
      { targets: [account], when: "later" },
    );
    // No thread: Mastodon holds it as a scheduled status until its time.
    expect(await until(postId, (s) => s.held)).toEqual({ post: "scheduled", target: "scheduled", held: true });
    expect([...mastodon.state.scheduled.values()].map((s) => s.params.text)).toEqual(["The harbour is closed for the regatta on Saturday"]);
    await cancelInDashboard(page, postId);
    expect(await page.locator(".notice").first().textContent()).toContain("The post was cancelled.");
    expect(await stored(postId)).toEqual({ post: "gone", target: "gone", held: false });
    expect(mastodon.state.scheduled.size).toBe(0);
    expect(mastodon.state.statuses.size).toBe(0);
  }, 90_000);

  test("a post with 2 images, alt text, a 2-part thread and a first comment, written in the composer and sent from the dashboard, is published once", async () => {
    const account = `@seedcast@${new URL(mastodon.url).host}`;
    const postId = await postFromDashboard(
      page,
      base,
      {
        caption: "Fresh mackerel on the menu today",
        // One uploaded, one ticked in the library (the cancelled post's): the composer lists the library's first.
        images: [
          // Another photo than the regatta's (the composer would use the library's copy of the same bytes).
          { alt: "Grilled mackerel on a blue plate", upload: { name: "mackerel.png", bytes: await solidPng(300, 200) } },
          { alt: "The regatta boats at the quay", library: "regatta.png" },
        ],
        thread: ["Caught this morning off the point", "Served with new potatoes"],
        firstComment: "Table bookings: 01234 567890",
      },
      { targets: [account], when: "now" },
      { onStep: (step) => shoot(`mastodon-08-${step}`) },
    );
    expect(await until(postId, (s) => s.post === "published")).toEqual({ post: "published", target: "published", held: false });
    // Everything the server ever published: these four, once each (nothing cancelled); the parts reply each to the one
    // before, the first comment to the post itself (decisions §13: a comment on the post).
    const statuses = [...mastodon.state.statuses.values()];
    expect(statuses.map((s) => s.text)).toEqual(["Fresh mackerel on the menu today", "Caught this morning off the point", "Served with new potatoes", "Table bookings: 01234 567890"]);
    expect(statuses.map((s) => s.media_attachments.map((m) => m.description))).toEqual([["The regatta boats at the quay", "Grilled mackerel on a blue plate"], [], [], []]);
    expect(statuses.map((s) => s.in_reply_to_id)).toEqual([null, statuses[0]!.id, statuses[1]!.id, statuses[0]!.id]);
    expect(mastodon.state.scheduled.size).toBe(0);
  }, 90_000);
});
