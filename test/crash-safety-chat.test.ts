/**
 * Crash safety on Discord and Telegram (decisions.md §12, "never twice, never silently lost"): `seedcast serve` runs as
 * a child process and delivers posts (each a post and a 2-part thread, so 3 messages) to the Discord and Telegram
 * stand-ins in this test's process, which keep counting while the server is killed with SIGKILL at random points
 * during dispatch, 10 times, and restarted each time. Neither network can be asked what it stored, so a target whose
 * send was interrupted becomes `unconfirmed` and is never resent on its own. Must hold: no message twice on either
 * network (Discord 0 duplicates; Telegram a single message or unconfirmed, never two); every target ends published
 * (all 3 messages there once) or unconfirmed (a prefix of its messages there, each once); none lost.
 *
 * SQLite only (like test/crash-safety.test.ts: the server runs on the DATA_DIR's database file).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { TEST_DIALECT } from "./helpers/world";
import { type DiscordStandIn, startDiscordStandIn } from "./peers/discord/server";
import { type TelegramStandIn, startTelegramStandIn } from "./peers/telegram/server";
import { makeCreation } from "./publishing-fixtures";
import { countOf, crashDispatchEnv, deliverTheRest, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
const POSTS = 24;
const SPREAD_MS = 8_000;
const LEASE_MS = 1500;
const PARTS = 3;

let dataDir: string;
let discord: DiscordStandIn;
let telegram: TelegramStandIn;
let env: Record<string, string>;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-chat-"));
  discord = startDiscordStandIn();
  telegram = startTelegramStandIn();
  // Every send takes a while, so kills land before and after the networks stored a message.
  discord.mode.latencyMs = 120;
  telegram.mode.latencyMs = 120;
  env = {
    DATA_DIR: dataDir,
    PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`,
    ...crashDispatchEnv(LEASE_MS),
  };
});

afterAll(async () => {
  await discord.stop();
  await telegram.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const startServer = () => startServe(dataDir, env);


test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during Discord and Telegram deliveries ${KILLS} times: no message twice; every target published whole or unconfirmed`,
  async () => {
    const config = loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash-chat@example.test", password: "correct horse battery", credits: 0 });
    const hook = discord.addWebhook("Crash channel");
    const bot = telegram.addBot("crash_bot");
    telegram.addChannel("crashnews", bot);
    const d = await addConnection(setup, { accountId, platform: "discord", webhookUrl: hook.url });
    const tg = await addConnection(setup, { accountId, platform: "telegram", botToken: bot.token, chat: "@crashnews" });
    expect([d.readyToPost, tg.readyToPost]).toEqual([true, true]);
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS, maxDelayMs: 900 });
    const start = Date.now() + 1500;
    const now = Date.now();
    await setup.store.write(async (tx) => {
      for (let i = 0; i < POSTS; i++) {
        const postId = newId();
        const due = start + Math.floor((i * spread) / POSTS);
        const thread = [2, 3].map((n) => ({ caption: `Post ${i} (${n}/${PARTS})`, images: [] }));
        await tx
          .insert(scheduledPosts)
          .values({ id: postId, accountId, creationId: creation.id, scheduledTime: due, status: "scheduled", caption: `Post ${i} (1/${PARTS})`, thread, createdAt: now, updatedAt: now })
          .run();
        for (const c of [d, tg]) {
          await tx
            .insert(scheduledPostTargets)
            .values({ id: newId(), postId, accountId, connectionId: c.accountId, platform: c.platform, label: c.label, status: "scheduled", nextAttemptAt: due, createdAt: now, updatedAt: now })
            .run();
        }
      }
    });
    await setup.store.close();

    const { kills, killsDuringDispatch } = await killDuringDispatch({
      rounds: KILLS,
      start: startServer,
      progress: () => discord.messages.length + telegram.messages.length,
      total: 2 * POSTS * PARTS,
      maxDelayMs: 900,
    });

    const { sqlite, close } = await deliverTheRest(startServer, config, 60_000);
    const rows = sqlite
      .query<{ platform: string; status: string; caption: string; parts_out: string }, []>(
        "SELECT t.platform, t.status, p.caption, t.parts_out FROM scheduled_post_targets t JOIN scheduled_posts p ON p.id = t.post_id",
      )
      .all();
    await close();

    expect(discord.violations).toEqual([]);
    expect(telegram.violations).toEqual([]);
    const sent = { discord: countOf(discord.messages.map((m) => m.content)), telegram: countOf(telegram.messages.map((m) => m.text ?? m.caption ?? "")) };
    const summary: Record<string, Record<string, number>> = { discord: {}, telegram: {} };
    for (const row of rows) {
      const platform = row.platform as "discord" | "telegram";
      summary[platform]![row.status] = (summary[platform]![row.status] ?? 0) + 1;
      const base = row.caption.replace(` (1/${PARTS})`, "");
      const parts = [1, 2, 3].map((n) => sent[platform].get(`${base} (${n}/${PARTS})`) ?? 0);
      // Never twice, on either network.
      expect(parts.every((n) => n <= 1), `${platform} ${base}: ${parts}`).toBe(true);
      if (row.status === "published") {
        expect(parts, `${platform} ${base}`).toEqual([1, 1, 1]);
        expect(JSON.parse(row.parts_out)).toHaveLength(PARTS);
      } else {
        // Unconfirmed: the parts recorded are out; at most the one after them may be (that is what is unknown).
        expect(row.status, `${platform} ${base}`).toBe("unconfirmed");
        const recorded = JSON.parse(row.parts_out).length as number;
        expect(parts.slice(0, recorded).every((n) => n === 1), `${platform} ${base}: ${parts} after ${recorded}`).toBe(true);
        expect(parts.slice(recorded + 1).every((n) => n === 0), `${platform} ${base}: ${parts} after ${recorded}`).toBe(true);
      }
    }
    const duplicates = {
      discord: [...sent.discord.values()].filter((n) => n > 1).length,
      telegram: [...sent.telegram.values()].filter((n) => n > 1).length,
    };
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, targets: summary, duplicates }));
    expect(duplicates).toEqual({ discord: 0, telegram: 0 });
    expect(rows).toHaveLength(2 * POSTS);
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(5);
  },
  { timeout: 240_000 },
);
