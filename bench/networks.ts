/**
 * Issue 25 bench: 1,000 posts interleaved over Discord, Telegram, Nostr and Mastodon (post k to network k mod 4), all
 * due within 10 s, delivered by `seedcast serve` (a child process, from source, SQLite, default dispatcher settings) to
 * the Discord and Telegram stand-ins (test/peers/discord, test/peers/telegram, reached through
 * PLATFORM_ORIGIN_OVERRIDES), the REAL Nostr relay (test/peers/nostr, its own Node 22 process) and the Mastodon-API
 * peer. Lateness is taken at each peer, minus the post's scheduled time: the Discord message's `timestamp`, the
 * Telegram stand-in's store time, the Mastodon status's `created_at`, and for Nostr the moment the relay broadcast the
 * note to a live subscription (nostr-tools' Relay in this process). Delivered and duplicates are counted by what each
 * peer holds at the end (the same text stored twice is a duplicate; Nostr: the relay's stored notes, read back).
 *
 * Where Nostr's time goes, in the same run: during the dispatch a bare nostr-tools client publishes a note every
 * 200 ms to the same relay (the relay's `OK` latency under the same load), and after it two loops, side by side, each
 * send as many notes as Nostr's share over the same window: one with nostr-tools alone (the ceiling) and one through
 * Seedcast's signing and relay client (bench/lib/nostr-ceiling.ts). Goals: all delivered, p99 lateness < 2 s, 0 duplicates.
 * Usage: bun bench/networks.ts [--posts N] [--window-ms W] [--json]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Event } from "nostr-tools/core";
import { finalizeEvent, generateSecretKey } from "nostr-tools/pure";
import { Relay } from "nostr-tools/relay";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { isSqliteStore } from "../src/db/store";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { generateKeys } from "../src/publishing/networks/nostr/keys";
import { RELAY_ANSWER_TIMEOUT_MS } from "../src/publishing/networks/nostr/relay";
import { startChildServer } from "../test/helpers/child-server";
import { startNostrRelay } from "../test/helpers/nostr-relay";
import { startDiscordStandIn } from "../test/peers/discord/server";
import { DEFAULT_TOKEN, startMastodonServer } from "../test/peers/mastodon-server";
import { startTelegramStandIn } from "../test/peers/telegram/server";
import { makeCreation } from "../test/publishing-fixtures";
import { insertDuePosts } from "../test/publishing-load";
import { bareLoop, seedcastLoop } from "./lib/nostr-ceiling";
import { cpuMs, tcpStatesOnPort } from "./lib/process";
import { loadAverage, spreadOf } from "./lib/stats";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 1000);
const WINDOW_MS = argOf("window-ms", 10_000);
const LEAD_MS = 5_000;
const CEILING_MS = 2_000;
const PROBE_EVERY_MS = 200;
const json = args.includes("--json");
const NETWORKS = ["discord", "telegram", "nostr", "mastodon"] as const;
type Network = (typeof NETWORKS)[number];

const loadAtStart = await loadAverage();
const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-networks-"));
const relay = await startNostrRelay();
const mastodon = await startMastodonServer({ maxCharacters: 500 });
const discord = startDiscordStandIn();
const telegram = startTelegramStandIn();
const env = {
  DATA_DIR: dataDir,
  ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost",
  PLATFORM_ORIGIN_OVERRIDES: `discord.com=${discord.origin},api.telegram.org=${telegram.origin}`,
  LOG_LEVEL: "warn",
};
const live = await Relay.connect(relay.url);
live.publishTimeout = RELAY_ANSWER_TIMEOUT_MS; // the probe waits for an OK as long as Seedcast does (default 4.4 s)
let server: Awaited<ReturnType<typeof startChildServer>> | null = null;
try {
  const config = loadConfig({ ...env, LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
  const setup = await bootstrap(config, { log: silentLogger });
  const { accountId } = await createAccount(setup, { name: "Bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });
  const keys = generateKeys();
  const bot = telegram.addBot("bench_bot");
  telegram.addChannel("benchnews", bot);
  const connections: Record<Network, string> = {
    discord: (await addConnection(setup, { accountId, platform: "discord", webhookUrl: discord.addWebhook("Bench").url })).accountId,
    telegram: (await addConnection(setup, { accountId, platform: "telegram", botToken: bot.token, chat: "@benchnews" })).accountId,
    nostr: (await addConnection(setup, { accountId, platform: "nostr", secretKey: keys.nsec, relays: relay.url })).accountId,
    mastodon: (await addConnection(setup, { accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN })).accountId,
  };
  const creation = await makeCreation(setup, accountId, { caption: "Bench post" });
  // Post k goes to network k mod 4, due at firstDue + k × window / posts; captions "<network> Post <i>" are unique.
  const perNetwork = Math.floor(POSTS / NETWORKS.length);
  const total = perNetwork * NETWORKS.length;
  const step = WINDOW_MS / total;
  const firstDue = Date.now() + LEAD_MS;
  const due = new Map<string, number>();
  for (const [n, network] of NETWORKS.entries()) {
    const first = Math.round(firstDue + n * step);
    await insertDuePosts(setup, {
      accountId,
      connectionId: connections[network],
      creationId: creation.id,
      count: perNetwork,
      firstDueAt: first,
      spreadMs: WINDOW_MS,
      platform: network,
      content: (i) => ({ caption: `${network} Post ${i}` }),
    });
    for (let i = 0; i < perNetwork; i++) due.set(`${network} Post ${i}`, first + Math.floor((i * WINDOW_MS) / perNetwork));
  }
  await setup.store.close();

  // The relay broadcasts each stored note to this subscription, which dates its arrival.
  const nostrArrivals = new Map<string, number>();
  live.subscribe([{ authors: [keys.pubkey], kinds: [1] }], { onevent: (e) => nostrArrivals.set(e.content, nostrArrivals.get(e.content) ?? Date.now()) });

  // The preload (bench only) dates each Nostr EVENT frame as the server sends it: due → sent is Seedcast's part.
  const sendLog = join(dataDir, "nostr-sent.jsonl");
  const serve = [process.execPath, "--preload", "./bench/lib/nostr-send-log.ts", "src/main.ts", "serve"];
  server = await startChildServer(serve, { cwd: ROOT, logFile: join(dataDir, "server.log"), timeoutMs: 30_000, env: { ...env, NOSTR_SEND_LOG: sendLog } });
  const cpuBefore = { serve: await cpuMs(server.proc.pid), relay: await cpuMs(relay.pid) };
  // The relay's OK latency while the dispatch runs: a bare client, pre-signed notes, one every PROBE_EVERY_MS.
  const probeSecret = generateSecretKey();
  const probeEvents: Event[] = Array.from({ length: Math.floor(WINDOW_MS / PROBE_EVERY_MS) }, (_, i) =>
    finalizeEvent({ kind: 1, created_at: Math.floor(firstDue / 1000) + i, tags: [], content: `probe ${i}` }, probeSecret),
  );
  const probeOkMs: number[] = [];
  const probe = (async () => {
    for (const [i, event] of probeEvents.entries()) {
      const wait = firstDue + i * PROBE_EVERY_MS - Date.now();
      if (wait > 0) await Bun.sleep(wait);
      const t0 = performance.now();
      void live.publish(event).then(() => probeOkMs.push(performance.now() - t0), () => {});
    }
  })();
  const received = () => discord.messages.length + telegram.messages.length + nostrArrivals.size + mastodon.state.statuses.size;
  const deadline = firstDue + WINDOW_MS + 60_000;
  while (Date.now() < deadline && received() < total) await Bun.sleep(100);
  await probe;
  await Bun.sleep(1_000);
  const loadAfterDispatch = await loadAverage();
  // CPU spent in the dispatch (the probe's notes included in the relay's), and the sockets to the relay: the
  // server's pooled connection, the bench's subscription; TIME_WAIT would show connections opened and closed per post.
  const cpu = { serveMs: (await cpuMs(server.proc.pid)) - cpuBefore.serve, relayMs: (await cpuMs(relay.pid)) - cpuBefore.relay };
  const relaySockets = await tcpStatesOnPort(relay.port);
  server.proc.kill("SIGTERM");
  await server.proc.exited;
  server = null;

  // Where Nostr's time goes: Nostr's share at the same pace through nostr-tools alone and through Seedcast's own
  // client, side by side so both meet the same load; Seedcast's notes half a step after nostr-tools' ones, so neither
  // always reaches the relay first and waits behind the other.
  const loopStart = Date.now() + 500;
  const [bare, ours] = await Promise.all([
    bareLoop(relay.url, perNetwork, WINDOW_MS, loopStart, "bare"),
    seedcastLoop(config, relay.url, perNetwork, WINDOW_MS, loopStart + Math.floor(WINDOW_MS / perNetwork / 2), "seedcast"),
  ]);
  const loadAtEnd = await loadAverage();

  const watch = await bootstrap(config, { log: silentLogger });
  const states = isSqliteStore(watch.store)
    ? watch.store.sqlite.query<{ platform: string; status: string; n: number }, []>("SELECT platform, status, count(*) AS n FROM scheduled_post_targets GROUP BY platform, status").all()
    : [];
  await watch.store.close();

  const sentAt = new Map<string, number>();
  for (const line of (existsSync(sendLog) ? readFileSync(sendLog, "utf8") : "").split("\n").filter(Boolean)) {
    const { content, sentAt: at } = JSON.parse(line) as { content: string; sentAt: number };
    if (!sentAt.has(content)) sentAt.set(content, at);
  }
  const nostrSplit = { dueToSent: [] as number[], sentToStored: [] as number[] };
  for (const [content, at] of sentAt) {
    const d = due.get(content);
    const arrived = nostrArrivals.get(content);
    if (d === undefined) continue;
    nostrSplit.dueToSent.push(at - d);
    if (arrived !== undefined) nostrSplit.sentToStored.push(arrived - at);
  }
  const stored = await relay.query({ authors: [keys.pubkey], kinds: [1] });
  const held: Record<Network, { text: string; at: number }[]> = {
    discord: discord.messages.map((m) => ({ text: m.content, at: Date.parse(m.timestamp) })),
    telegram: telegram.messages.map((m) => ({ text: m.text ?? m.caption ?? "", at: m.at })),
    nostr: stored.map((e) => ({ text: e.content, at: nostrArrivals.get(e.content) ?? Number.NaN })),
    mastodon: [...mastodon.state.statuses.values()].map((s) => ({ text: s.content.replace(/<[^>]+>/g, ""), at: Date.parse(s.created_at) })),
  };
  const per = Object.fromEntries(
    NETWORKS.map((network) => {
      const times = new Map<string, number>();
      for (const m of held[network]) times.set(m.text, (times.get(m.text) ?? 0) + 1);
      const lateness = held[network].filter((m) => due.has(m.text) && Number.isFinite(m.at)).map((m) => m.at - (due.get(m.text) as number));
      const delivered = [...times.keys()].filter((t) => due.has(t)).length;
      const duplicates = [...times.values()].filter((c) => c > 1).length;
      const targets = Object.fromEntries(states.filter((s) => s.platform === network).map((s) => [s.status, s.n]));
      return [network, { delivered, duplicates, latenessMs: spreadOf(lateness), targets, lateness }];
    }),
  ) as Record<Network, { delivered: number; duplicates: number; latenessMs: ReturnType<typeof spreadOf>; targets: Record<string, number>; lateness: number[] }>;
  const overall = spreadOf(NETWORKS.flatMap((n) => per[n].lateness));
  const delivered = NETWORKS.reduce((s, n) => s + per[n].delivered, 0);
  const duplicates = NETWORKS.reduce((s, n) => s + per[n].duplicates, 0);
  const violations = discord.violations.length + telegram.violations.length;
  const ok = delivered === total && duplicates === 0 && overall.p99 < CEILING_MS;
  const summary = {
    bench: "networks",
    posts: total,
    windowMs: WINDOW_MS,
    machine: `${cpus().length} cores, ${cpus()[0]?.model ?? "unknown CPU"}`,
    load: { start: loadAtStart, afterDispatch: loadAfterDispatch, end: loadAtEnd },
    perNetwork: Object.fromEntries(NETWORKS.map((n) => [n, { delivered: per[n].delivered, duplicates: per[n].duplicates, latenessMs: per[n].latenessMs, p99OfCeiling: +(per[n].latenessMs.p99 / CEILING_MS).toFixed(2), targets: per[n].targets }])),
    overall: { delivered, duplicates, latenessMs: overall, p99OfCeiling: +(overall.p99 / CEILING_MS).toFixed(2) },
    cpuMsDuringDispatch: cpu,
    nostrSplit: { dueToSentMs: spreadOf(nostrSplit.dueToSent), sentToStoredMs: spreadOf(nostrSplit.sentToStored) },
    nostrRelay: { okMsDuringDispatch: spreadOf(probeOkMs), socketsAfterDispatch: relaySockets, bareLoop: bare, seedcastLoop: ours },
    violations,
    goalsMet: ok,
  };
  if (json) {
    console.log(
      JSON.stringify({
        ...summary,
        figures: [
          { label: `posts delivered (${total} over Discord, Telegram, Nostr, Mastodon, due within ${WINDOW_MS / 1000} s)`, value: delivered, unit: "posts", goal: `= ${total}`, ok: delivered === total },
          { label: "lateness p99 (all networks)", value: overall.p99, unit: "ms", goal: `< ${CEILING_MS}`, ok: overall.p99 < CEILING_MS },
          { label: "Nostr lateness p99 (ceiling: nostr-tools alone, same relay and rate)", value: per.nostr.latenessMs.p99, unit: "ms", goal: `< ${CEILING_MS}`, ok: per.nostr.latenessMs.p99 < CEILING_MS, ceiling: bare.latenessMs.p99 },
          { label: "duplicates", value: duplicates, unit: "", goal: "= 0", ok: duplicates === 0 },
        ],
      }),
    );
  } else {
    console.log(`${total} posts (${perNetwork} per network) due within ${WINDOW_MS / 1000} s; ${summary.machine}`);
    console.log(`load average (1, 5, 15 min): start ${loadAtStart}; after the dispatch ${loadAfterDispatch}; end ${loadAtEnd}`);
    const row = (s: ReturnType<typeof spreadOf>) => `p50 ${s.p50}, p95 ${s.p95}, p99 ${s.p99}, max ${s.max} ms`;
    for (const n of NETWORKS) {
      const p = per[n];
      console.log(`${n.padEnd(9)} delivered ${p.delivered}/${perNetwork}, duplicates ${p.duplicates}, lateness ${row(p.latenessMs)} (p99 ${(p.latenessMs.p99 / CEILING_MS).toFixed(2)} × 2 s), targets ${JSON.stringify(p.targets)}`);
    }
    console.log(`all       delivered ${delivered}/${total}, duplicates ${duplicates}, lateness ${row(overall)} (p99 ${(overall.p99 / CEILING_MS).toFixed(2)} × 2 s)`);
    console.log(`CPU during the dispatch: seedcast serve ${cpu.serveMs} ms (${(cpu.serveMs / total).toFixed(2)} ms a post), relay ${cpu.relayMs} ms (${(cpu.relayMs / (perNetwork + probeEvents.length)).toFixed(2)} ms a note)`);
    console.log(`TCP sockets on the relay's port after the dispatch: ${JSON.stringify(relaySockets)} (ESTABLISHED counts both ends; LISTEN is the relay)`);
    console.log(`nostr split: due → sent by seedcast serve ${row(spreadOf(nostrSplit.dueToSent))}; sent → stored and broadcast by the relay ${row(spreadOf(nostrSplit.sentToStored))}`);
    console.log(`nostr relay OK latency during the dispatch (bare client, every ${PROBE_EVERY_MS} ms): ${row(spreadOf(probeOkMs))}`);
    for (const l of [bare, ours]) {
      console.log(`nostr loop ${l.client.padEnd(11)} ${l.accepted}/${l.sent} accepted; sign ${row(l.signMs)}; OK ${row(l.okMs)}; lateness ${row(l.latenessMs)}`);
    }
    console.log(`requests outside the Discord/Telegram descriptions: ${violations}`);
    console.log(ok ? "GOALS MET" : "GOALS NOT MET");
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  server?.proc.kill("SIGKILL");
  live.close();
  await discord.stop();
  await telegram.stop();
  await mastodon.stop();
  await relay.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
