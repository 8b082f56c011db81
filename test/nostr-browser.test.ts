/**
 * Nostr end to end against the BUILT executable, the REAL relay (test/peers/nostr) and the Blossom stand-in: a person
 * connects Nostr in Chromium through the dashboard's form (each bad input gets a sentence and nothing is stored; "Make
 * a new key" connects with a fresh key and shows its npub), the admin connects another key with the CLI
 * (`--generate-key`, the nsec printed once only when asked); a post scheduled in the dashboard for a date and time
 * two days ahead and cancelled on its page never reaches the relay; a post with 2 images, alt text and a 2-part thread, written in the
 * composer and sent from the dashboard (test/helpers/dashboard-post.ts: "Add to queue", then the Queue view's "Post
 * now", so it is due at once), goes to both keys once, and the notes are read back from the relay with nostr-tools
 * (signatures, NIP-10 tags, imeta). On the run's database (SQLite, or PostgreSQL with SEEDCAST_TEST_DATABASE). The
 * forms are checked with axe-core at 1280 and 390 px and shot to test-artifacts/networks/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { decode } from "nostr-tools/nip19";
import type { Event } from "nostr-tools/core";
import type { Deps } from "../src/deps";
import { npubLabel } from "../src/publishing/networks/nostr/connector";
import { checkBothWidths } from "./helpers/browser";
import { runCli } from "./helpers/cli";
import { type DashboardE2E, openServerData, startDashboardE2E, submitSetup } from "./helpers/dashboard-e2e";
import { cancelInDashboard, postFromDashboard } from "./helpers/dashboard-post";
import { type NostrTestRelay, isNostrRelayInstalled, startNostrRelay } from "./helpers/nostr-relay";
import { testDatabaseEnv } from "./helpers/test-database";
import { type BlossomServer, startBlossomServer } from "./peers/blossom-server";
import { solidPng } from "./publishing-fixtures";

const ARTIFACTS = resolve(import.meta.dir, "../test-artifacts/networks");
const PASSWORD = "correct horse battery";

let e2e: DashboardE2E | null = null;
let relay: NostrTestRelay;
let blossom: BlossomServer;
let page: Page;
let base = "";
let dataDir = "";
let deps: Deps;
let accountId = "";
let apiKey = "";
let databaseEnv: Record<string, string> = {};
const pubkeys: string[] = [];
/** The two connections' labels, as the schedule form shows them. */
const labels: string[] = [];

const cli = (...args: string[]) => runCli(args, { env: { ...databaseEnv, DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "localhost" } });
const nostrForm = () => page.locator("form", { has: page.getByRole("heading", { name: "Connect Nostr" }) });

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

beforeAll(async () => {
  if (!isNostrRelayInstalled()) throw new Error("Nostr relay peer not installed: run test/peers/nostr/install.sh");
  mkdirSync(ARTIFACTS, { recursive: true });
  relay = await startNostrRelay();
  blossom = startBlossomServer();
  databaseEnv = await testDatabaseEnv();
  e2e = await startDashboardE2E("seedcast-nostr-e2e-", { ...databaseEnv, ALLOW_PRIVATE_HOSTS: "localhost", DISPATCH_POLL_MS: "100" });
  ({ base, page } = e2e);
  dataDir = join(e2e.server.work, "data");
}, 180_000);

afterAll(async () => {
  await deps?.store.close();
  await e2e?.close();
  await Promise.all([relay?.stop(), blossom?.stop()]);
});

describe("Nostr through the dashboard and the CLI", () => {
  test("the connect form: each bad input gets a sentence on its field, nothing is stored", async () => {
    await page.goto(`${base}/dashboard`);
    await submitSetup(page, base, { account: "Nostr Garden", email: "nora@garden.test", password: PASSWORD });
    await page.goto(`${base}/dashboard/connections`);
    await checkBothWidths(page, "nostr-01-connect-form", { artifacts: ARTIFACTS });

    const attempts: Array<{ key: string; relays: string; field: string; words: RegExp; shot?: string }> = [
      { key: "nsec1notakey", relays: relay.url, field: "Secret key", words: /That nsec key is not valid/, shot: "nostr-02-bad-key" },
      { key: "", relays: "http://relay.example.com", field: "Relays", words: /web address; a relay address starts with wss:\/\//, shot: "nostr-03-relay-on-http" },
      { key: "", relays: "ws://relay.example.com", field: "Relays", words: /not encrypted \(ws:\/\/\)/ },
      { key: "", relays: Array.from({ length: 11 }, (_, i) => `wss://r${i}.example.com`).join("\n"), field: "Relays", words: /11 relays are listed; a connection can use at most 10/ },
    ];
    for (const a of attempts) {
      const form = nostrForm();
      // The valid key for the relay cases: an npub is refused too, so a real key is typed.
      await form.getByLabel("Secret key").fill(a.key || "0000000000000000000000000000000000000000000000000000000000000001");
      await form.getByLabel("Relays").fill(a.relays);
      await form.getByRole("button", { name: "Connect", exact: true }).click();
      await page.waitForLoadState("load");
      const fieldBox = nostrForm().getByLabel(a.field);
      expect(await fieldBox.getAttribute("aria-invalid")).toBe("true");
      expect(await nostrForm().textContent()).toMatch(a.words);
      // The key is never put back into the page.
      expect(await nostrForm().getByLabel("Secret key").inputValue()).toBe("");
      if (a.shot) await checkBothWidths(page, a.shot, { artifacts: ARTIFACTS });
    }
    expect(await page.getByText("Nothing connected yet.").count()).toBe(1);
  }, 120_000);

  test("“Make a new key and connect”: ready, its npub on the card", async () => {
    const form = nostrForm();
    await form.getByLabel("Relays").fill(relay.url);
    await form.getByLabel("Blossom server (for images, optional)").fill(blossom.url);
    await form.getByRole("button", { name: "Make a new key and connect" }).click();
    await page.waitForURL(/notice=connected/);
    const card = page.locator("li.connection", { hasText: "Nostr" });
    expect(await card.textContent()).toContain("Ready to post.");
    const npub = /npub1[02-9ac-hj-np-z]{58}/.exec((await card.textContent()) ?? "")?.[0];
    expect(npub).toBeDefined();
    const decoded = decode(npub as string);
    pubkeys.push(decoded.data as string);
    labels.push(npubLabel(npub as string));
    await checkBothWidths(page, "nostr-04-connected", { artifacts: ARTIFACTS });
  }, 60_000);

  test("the CLI: --generate-key prints the npub (the nsec only once, when asked); a pasted npub is refused in words", async () => {
    deps = await openServerData(e2e!.server, { ...databaseEnv, ALLOW_PRIVATE_HOSTS: "localhost" });
    accountId = (await deps.store.db.query.accounts.findFirst())!.id;
    const refused = await cli("connections", "add", "--account", accountId, "--platform", "nostr", "--secret-key", "npub1a", "--relays", relay.url, "--json");
    expect(refused.code).toBe(1);
    expect(refused.out + refused.err).toContain("That is a public key (npub). Paste the secret key instead");
    const onHttp = await cli("connections", "add", "--account", accountId, "--platform", "nostr", "--generate-key", "--relays", "http://relay.example.com", "--json");
    expect(onHttp.code).toBe(1);
    expect(onHttp.out + onHttp.err).toContain("a relay address starts with wss://");
    const made = await cli("connections", "add", "--account", accountId, "--platform", "nostr", "--generate-key", "--show-secret-key", "--relays", relay.url, "--blossom", blossom.url, "--json");
    expect(made.code).toBe(0);
    expect(made.json).toMatchObject({ platform: "nostr", readyToPost: true, blockedReason: null });
    expect(made.json.npub as string).toMatch(/^npub1/);
    expect(made.json.nsec as string).toMatch(/^nsec1/);
    pubkeys.push(decode(made.json.npub as string).data as string);
    labels.push(npubLabel(made.json.npub as string));
    const listed = await cli("connections", "list", "--account", accountId);
    expect(listed.out).not.toContain(made.json.nsec as string);
    expect(listed.out.match(/nostr/g)).toHaveLength(2);
    const keys = await cli("keys", "mint", "--account", accountId, "--name", "e2e", "--groups", "read,create,schedule", "--expires-days", "never", "--json");
    apiKey = keys.json.key as string;
    const targets = (await api("GET", "/api/v1/schedule/targets")).json.targets as Array<{ platform: string; label: string; readyToPost: boolean }>;
    expect(targets.filter((t) => t.platform === "nostr" && t.readyToPost).map((t) => t.label).sort()).toEqual([...labels].sort());
  }, 60_000);

  test("a post scheduled in the dashboard for a typed date and time, cancelled on its page before it is due: gone, nothing on the relay", async () => {
    // A date and time typed in the form (the person's zone is UTC): two days ahead, 10:30.
    const date = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const postId = await postFromDashboard(page, base, { caption: "Frost tonight, cover the dahlias" }, { targets: labels, when: "later", at: { date, time: "10:30" } });
    const scheduled = await api("GET", `/api/v1/schedule/posts/${postId}`);
    expect(scheduled.status).toBe(200);
    expect((scheduled.json.post as { scheduledTime: string }).scheduledTime).toBe(`${date}T10:30:00.000Z`);
    await cancelInDashboard(page, postId);
    expect(await page.locator(".notice").first().textContent()).toContain("The post was cancelled.");
    expect((await api("GET", `/api/v1/schedule/posts/${postId}`)).status).toBe(404);
    // Nothing now; and (next test) the post sent after it is all either key ever publishes.
    for (const pubkey of pubkeys) expect(await relay.query({ authors: [pubkey] })).toEqual([]);
  }, 90_000);

  test("a post with 2 images, alt text and a 2-part thread, written in the composer and sent from the dashboard, reaches both keys once; read back and verified", async () => {
    const postId = await postFromDashboard(
      page,
      base,
      {
        caption: "Tulips are up",
        images: [
          { alt: "Red tulips", upload: { name: "red.png", bytes: await solidPng(64, 48) } },
          { alt: "Yellow tulips", upload: { name: "yellow.png", bytes: await solidPng(48, 64) } },
        ],
        thread: ["Planted in October", "Watered weekly"],
      },
      { targets: labels, when: "now" },
      { onStep: (step) => checkBothWidths(page, `nostr-05-${step}`, { artifacts: ARTIFACTS }) },
    );
    let post: { status: string } = { status: "" };
    for (let i = 0; i < 100 && post.status !== "published"; i++) {
      post = (await api("GET", `/api/v1/schedule/posts/${postId}`)).json.post as typeof post;
      if (post.status !== "published") await Bun.sleep(200);
    }
    expect(post.status).toBe("published");
    for (const pubkey of pubkeys) {
      // Every note the key ever published: these three once each, and nothing of the cancelled post.
      const notes = (await relay.query({ authors: [pubkey] })).sort((a, b) => a.created_at - b.created_at);
      expect(notes.map((n) => n.content.split("\n")[0])).toEqual(["Tulips are up", "Planted in October", "Watered weekly"]);
      const [root, first, second] = notes as [Event, Event, Event];
      const alts = root.tags.filter((t) => t[0] === "imeta").map((t) => t.find((e) => e.startsWith("alt "))?.slice(4));
      expect(alts).toEqual(["Red tulips", "Yellow tulips"]);
      expect(root.tags.filter((t) => t[0] === "imeta").map((t) => t.find((e) => e.startsWith("dim ")))).toEqual(["dim 64x48", "dim 48x64"]);
      expect(first.tags).toEqual([["e", root.id, relay.url, "root", pubkey], ["p", pubkey]]);
      expect(second.tags).toEqual([["e", root.id, relay.url, "root", pubkey], ["e", first.id, relay.url, "reply", pubkey], ["p", pubkey]]);
    }
  }, 90_000);
});
