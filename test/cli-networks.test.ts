/**
 * Discord, Telegram and Mastodon (its token paste) through the CLI as an admin runs it (real processes, a real data
 * dir, --json answers), against the stand-ins reached through PLATFORM_ORIGIN_OVERRIDES and the Mastodon peer: `connections add --platform discord --webhook-url U` and
 * `--platform telegram --bot-token T --chat C` refuse each bad input with a sentence and store nothing; the good ones
 * connect and check; `connections list` (without --account) shows every connection with its state. Then, with a key
 * the CLI minted, a post with 2 images (alt text) and a 2-part thread is written and scheduled through the API, delivered once to
 * both (read back from the stand-ins), and another is cancelled before it is due. SQLite (the CLI's data dir).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { silentLogger } from "../src/lib/log";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { runDueOnce } from "../src/publishing/dispatcher";
import { type CliRun, runCli } from "./helpers/cli";
import { TEST_DIALECT } from "./helpers/world";
import { type DiscordStandIn, startDiscordStandIn } from "./peers/discord/server";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type TelegramStandIn, startTelegramStandIn } from "./peers/telegram/server";
import { solidPng } from "./publishing-fixtures";

let dataDir: string;
let discord: DiscordStandIn;
let telegram: TelegramStandIn;
let mastodon: MastodonServer;
let env: Record<string, string>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-cli-networks-"));
  discord = startDiscordStandIn();
  telegram = startTelegramStandIn();
  mastodon = await startMastodonServer({ username: "allotment" });
  env = {
    DATA_DIR: dataDir,
    PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`,
    // The Mastodon peer listens on loopback, like a server on the admin's own network.
    ALLOW_PRIVATE_HOSTS: "127.0.0.1",
  };
});

afterAll(async () => {
  await discord.stop();
  await telegram.stop();
  await mastodon.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const cli = (...args: string[]): Promise<CliRun> => runCli(args, { env });

describe.skipIf(TEST_DIALECT !== "sqlite")("Discord and Telegram through the CLI", () => {
  let accountId = "";
  let key = "";

  test("connections add: each bad input is refused with a sentence, nothing stored; the good ones connect; list shows their state", async () => {
    const created = await cli("account", "create", "--name", "Allotment", "--email", "a@allot.test", "--password", "hunter2hunter2", "--json");
    accountId = created.json.accountId as string;
    key = (await cli("keys", "mint", "--account", accountId, "--name", "ops", "--groups", "read,create,schedule", "--expires-days", "never", "--json")).json.key as string;

    const notHook = await cli("connections", "add", "--account", accountId, "--platform", "discord", "--webhook-url", "https://discord.com/channels/1/2", "--json");
    expect(notHook.code).toBe(1);
    expect(notHook.json.error).toBe("invalid_request");
    expect(notHook.json.message).toContain("webhookUrl: This is not a Discord webhook URL.");

    const bot = telegram.addBot("allotment_bot");
    const channel = telegram.addChannel("allotment", bot, { status: "left" });
    const wrongToken = await cli("connections", "add", "--account", accountId, "--platform", "telegram", "--bot-token", `${bot.id}:AAE${"w".repeat(32)}`, "--chat", "@allotment", "--json");
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.json.message).toContain("Telegram does not accept this bot token.");
    const notAdmin = await cli("connections", "add", "--account", accountId, "--platform", "telegram", "--bot-token", bot.token, "--chat", "@allotment", "--json");
    expect(notAdmin.code).toBe(1);
    expect(notAdmin.json.message).toBe('chat: Add @allotment_bot to the channel @allotment as an administrator with "Post messages" (channel settings → Administrators → Add Admin).');
    expect((await cli("connections", "list", "--account", accountId, "--json")).json).toEqual({ connections: [] });

    const hook = discord.addWebhook("Allotment news");
    const d = await cli("connections", "add", "--account", accountId, "--platform", "discord", "--webhook-url", hook.url, "--json");
    expect(d.code).toBe(0);
    expect(d.json).toMatchObject({ platform: "discord", label: "Allotment news", readyToPost: true, blockedReason: null });
    channel.members.set(bot.id, { status: "administrator", canPost: true });
    const t = await cli("connections", "add", "--account", accountId, "--platform", "telegram", "--bot-token", bot.token, "--chat", "@allotment", "--json");
    expect(t.code).toBe(0);
    expect(t.json).toMatchObject({ platform: "telegram", label: "@allotment", readyToPost: true });
    const checked = await cli("connections", "check", t.json.accountId as string, "--account", accountId, "--json");
    expect(checked.json).toMatchObject({ readyToPost: true });

    // A bot that loses its rights: the check says so, and `list` shows the state of every connection.
    channel.members.set(bot.id, { status: "administrator", canPost: false });
    expect((await cli("connections", "check", t.json.accountId as string, "--account", accountId, "--json")).json).toMatchObject({ readyToPost: false });
    const listed = await cli("connections", "list");
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`${accountId}  ${d.json.accountId}  discord   ready    Allotment news`);
    expect(listed.out).toContain(`${accountId}  ${t.json.accountId}  telegram  blocked  @allotment`);
    expect(listed.out).toContain('turn on "Post messages"');
    channel.members.set(bot.id, { status: "administrator", canPost: true });
    expect((await cli("connections", "check", t.json.accountId as string, "--account", accountId, "--json")).json).toMatchObject({ readyToPost: true });
    expect(listed.out).not.toContain(bot.token);

    // Mastodon: the token paste stays for the CLI (the dashboard signs in). A wrong token gets the server's refusal in words.
    const wrongMastodon = await cli("connections", "add", "--account", accountId, "--platform", "mastodon", "--instance", mastodon.url, "--token", "not-the-token", "--json");
    expect(wrongMastodon.json).toMatchObject({ platform: "mastodon", readyToPost: false, blockedReason: expect.stringMatching(/token/i) });
    expect(wrongMastodon.out).not.toContain("not-the-token");
    await cli("connections", "remove", wrongMastodon.json.accountId as string, "--account", accountId);
    const m = await cli("connections", "add", "--account", accountId, "--platform", "mastodon", "--instance", mastodon.url, "--token", DEFAULT_TOKEN, "--json");
    expect(m.code).toBe(0);
    expect(m.json).toMatchObject({ platform: "mastodon", readyToPost: true, blockedReason: null });
    expect((await cli("connections", "check", m.json.accountId as string, "--account", accountId, "--json")).json).toMatchObject({ readyToPost: true });
    expect((await cli("connections", "list")).out).toContain(`${accountId}  ${m.json.accountId}  mastodon  ready`);
    expect(discord.violations).toEqual([]);
    expect(telegram.violations).toEqual([]);
  }, 60_000);

  test("a post with 2 images and a 2-part thread is delivered once to all three; another is cancelled before it is due", async () => {
    const deps: Deps = await bootstrap(loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" }), { log: silentLogger });
    try {
      const app = createApp(deps);
      const api = async (method: string, path: string, body?: unknown) => {
        const res = await app.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
            ...(body ? { body: JSON.stringify(body) } : {}),
          }),
        );
        return { status: res.status, json: (await res.json()) as { post: { id: string; status: string }; creation: { id: string }; cancelled?: boolean } };
      };
      const wide = await ingestImageBytes(deps, accountId, { bytes: await solidPng(320, 200), fileName: "wide" });
      const tall = await ingestImageBytes(deps, accountId, { bytes: await solidPng(200, 320), fileName: "tall" });
      const images = [
        { assetId: wide.id, altText: "Leeks in a row" },
        { assetId: tall.id, altText: "A tall sunflower" },
      ];
      const schedule = async (caption: string) => {
        const made = await api("POST", "/api/v1/creations", {
          type: "social_post",
          caption,
          images: images.map((i) => ({ asset_id: i.assetId, alt_text: i.altText })),
          thread: [2, 3].map((n) => ({ caption: `${caption} (${n}/3)` })),
        });
        expect(made.status).toBe(201);
        const res = await api("POST", "/api/v1/schedule", {
          type: "social_post",
          creation_id: made.json.creation.id,
          scheduled_time: isoAt(Date.now() + 6 * 60_000),
          targets: ["discord", "telegram", "mastodon"],
        });
        expect(res.status).toBe(200);
        return res.json.post.id;
      };
      const kept = await schedule("Leek harvest");
      const cancelled = await schedule("Not this week");
      expect((await api("DELETE", `/api/v1/schedule/${cancelled}`)).json).toMatchObject({ cancelled: true });
      // Due: the dispatcher of `seedcast serve` would run now; here it runs once, then again (nothing left to send).
      await deps.store.write((tx) => tx.update(scheduledPosts).set({ scheduledTime: Date.now() }).where(eq(scheduledPosts.id, kept)).run());
      await deps.store.write((tx) => tx.update(scheduledPostTargets).set({ nextAttemptAt: Date.now() }).where(eq(scheduledPostTargets.postId, kept)).run());
      await runDueOnce(deps);
      await runDueOnce(deps);
      const post = (await api("GET", `/api/v1/schedule/posts/${kept}`)).json.post;
      expect(post.status).toBe("published");
      expect(discord.messages.map((m) => [m.content, m.attachments.map((a) => a.description)])).toEqual([
        ["Leek harvest", ["Leeks in a row", "A tall sunflower"]],
        ["Leek harvest (2/3)", []],
        ["Leek harvest (3/3)", []],
      ]);
      expect(telegram.messages.map((m) => [m.caption ?? m.text, m.photos.length])).toEqual([
        ["Leek harvest", 1],
        [null, 1],
        ["Leek harvest (2/3)", 0],
        ["Leek harvest (3/3)", 0],
      ]);
      // Mastodon: the post with both images (alt text as each description), then the parts, each replying to the one before.
      const statuses = [...mastodon.state.statuses.values()];
      expect(statuses.map((st) => [st.text, st.media_attachments.map((a) => a.description)])).toEqual([
        ["Leek harvest", ["Leeks in a row", "A tall sunflower"]],
        ["Leek harvest (2/3)", []],
        ["Leek harvest (3/3)", []],
      ]);
      expect(statuses.map((st) => st.in_reply_to_id)).toEqual([null, statuses[0]!.id, statuses[1]!.id]);
      expect(mastodon.state.scheduled.size).toBe(0);
      expect(discord.violations).toEqual([]);
      expect(telegram.violations).toEqual([]);
    } finally {
      await deps.store.close();
    }
  }, 60_000);
});
