/**
 * Issue 25 bench, the Discord and Telegram part: 1,000 posts (each a caption and one thread message, text only) spread
 * evenly over a Discord webhook and a Telegram channel, all due within 10 s, delivered by `seedcast serve` (a child
 * process, from source, SQLite) to the stand-ins (test/peers/discord, test/peers/telegram) running in this process,
 * reached through PLATFORM_ORIGIN_OVERRIDES. Prints per network: delivered, lateness percentiles of each post's first
 * message (the stand-in's store time − the post's scheduled time), duplicates (a message text stored more than once),
 * unconfirmed targets, and request violations against the descriptions. Goals: all delivered, p99 lateness < 2 s,
 * 0 duplicates. NB: the real networks rate-limit (Telegram about 30 messages/s per bot, 20/min in one group; Discord
 * 5 per 2 s per webhook, answered 429 with retry_after): the stand-ins do not, so this measures Seedcast, not them.
 * Usage: bun bench/networks-chat.ts [--posts N] [--window-ms W] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { isSqliteStore } from "../src/db/store";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { startChildServer } from "../test/helpers/child-server";
import { startDiscordStandIn } from "../test/peers/discord/server";
import { startTelegramStandIn } from "../test/peers/telegram/server";
import { makeCreation } from "../test/publishing-fixtures";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 1000);
const WINDOW_MS = argOf("window-ms", 10_000);
const LEAD_MS = 5_000;
const json = args.includes("--json");

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-chat-"));
const discord = startDiscordStandIn();
const telegram = startTelegramStandIn();
const env = {
  DATA_DIR: dataDir,
  PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`,
  LOG_LEVEL: "warn",
};
try {
  const config = loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
  const setup = await bootstrap(config, { log: silentLogger });
  const { accountId } = await createAccount(setup, { name: "Bench", email: "bench-chat@example.test", password: "correct horse battery", credits: 0 });
  const hook = discord.addWebhook("Bench");
  const bot = telegram.addBot("bench_bot");
  telegram.addChannel("benchnews", bot);
  const d = await addConnection(setup, { accountId, platform: "discord", webhookUrl: hook.url });
  const t = await addConnection(setup, { accountId, platform: "telegram", botToken: bot.token, chat: "@benchnews" });
  const creation = await makeCreation(setup, accountId, { caption: "Bench" });
  const firstDue = Date.now() + LEAD_MS;
  const due = new Map<string, number>();
  const now = Date.now();
  await setup.store.write(async (tx) => {
    for (let i = 0; i < POSTS; i++) {
      const at = firstDue + Math.floor((i * WINDOW_MS) / POSTS);
      const connection = i % 2 === 0 ? d : t;
      const postId = newId();
      due.set(`Post ${i}`, at);
      await tx
        .insert(scheduledPosts)
        .values({ id: postId, accountId, creationId: creation.id, scheduledTime: at, status: "scheduled", caption: `Post ${i}`, thread: [{ caption: `Post ${i} (2/2)`, images: [] }], createdAt: now, updatedAt: now })
        .run();
      await tx
        .insert(scheduledPostTargets)
        .values({ id: newId(), postId, accountId, connectionId: connection.accountId, platform: connection.platform, label: connection.label, status: "scheduled", nextAttemptAt: at, createdAt: now, updatedAt: now })
        .run();
    }
  });
  await setup.store.close();

  const server = await startChildServer([process.execPath, "src/main.ts", "serve"], { cwd: ROOT, logFile: join(dataDir, "server.log"), timeoutMs: 20_000, env });
  const expected = POSTS * 2;
  const deadline = firstDue + WINDOW_MS + 60_000;
  while (Date.now() < deadline && discord.messages.length + telegram.messages.length < expected) await Bun.sleep(100);
  await Bun.sleep(500);
  server.proc.kill("SIGTERM");
  await server.proc.exited;

  const watch = await bootstrap(config, { log: silentLogger });
  const states = isSqliteStore(watch.store)
    ? watch.store.sqlite.query<{ platform: string; status: string; n: number }, []>("SELECT platform, status, count(*) AS n FROM scheduled_post_targets GROUP BY platform, status").all()
    : [];
  await watch.store.close();

  const report = (name: string, messages: { text: string; at: number }[]) => {
    const seen = new Map<string, number>();
    for (const m of messages) seen.set(m.text, (seen.get(m.text) ?? 0) + 1);
    const lateness = messages
      .filter((m) => !m.text.endsWith("(2/2)"))
      .map((m) => Math.max(0, m.at - (due.get(m.text) ?? m.at)))
      .sort((a, b) => a - b);
    return {
      network: name,
      postsDelivered: lateness.length,
      messages: messages.length,
      duplicates: [...seen.values()].filter((n) => n > 1).length,
      latenessMs: { p50: percentile(lateness, 50), p95: percentile(lateness, 95), p99: percentile(lateness, 99), max: lateness.at(-1) ?? 0 },
      targets: Object.fromEntries(states.filter((s) => s.platform === name).map((s) => [s.status, s.n])),
    };
  };
  const results = [
    report("discord", discord.messages.map((m) => ({ text: m.content, at: Date.parse(m.timestamp) }))),
    report("telegram", telegram.messages.map((m) => ({ text: m.text ?? m.caption ?? "", at: m.at }))),
  ];
  const summary = {
    bench: "networks-chat",
    posts: POSTS,
    windowMs: WINDOW_MS,
    loadAverage: (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" "),
    results,
    violations: discord.violations.length + telegram.violations.length,
    goalsMet: results.every((r) => r.postsDelivered === POSTS / 2 && r.duplicates === 0 && r.latenessMs.p99 < 2000),
  };
  console.log(json ? JSON.stringify(summary) : JSON.stringify(summary, null, 2));
} finally {
  await discord.stop();
  await telegram.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
