/**
 * Issue 25 bench: 1,000 posts spread over Nostr (the REAL relay, test/peers/nostr), a webhook receiver and the
 * Mastodon-API peer, all due within 10 s, delivered by `seedcast serve` (a child process). Lateness is measured at
 * each peer: the webhook receiver's arrival time, the Mastodon peer's status `created_at`, and for Nostr the moment
 * the relay broadcast the note to a live subscription (nostr-tools' Relay in this process); each minus the post's
 * scheduled time. Duplicates: a webhook key taking effect twice, two Mastodon statuses or two Nostr notes with the
 * same text. Goals: all delivered, p99 lateness < 2 s, 0 duplicates.
 * Usage: bun bench/networks.ts [--posts N] [--window-ms W] [--json]
 */
import { spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { count, eq, inArray } from "drizzle-orm";
import { Relay } from "nostr-tools/relay";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { generateKeys } from "../src/publishing/networks/nostr/keys";
import { startNostrRelay } from "../test/helpers/nostr-relay";
import { spawnReceiver } from "../test/helpers/receiver-process";
import { DEFAULT_TOKEN, startMastodonServer } from "../test/peers/mastodon-server";
import { readWebhookLog } from "../test/peers/webhook-receiver";
import { makeCreation } from "../test/publishing-fixtures";
import { insertDuePosts } from "../test/publishing-load";

const ROOT = resolve(import.meta.dir, "..");
const args = process.argv.slice(2);
const argOf = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const POSTS = argOf("posts", 1000);
const WINDOW_MS = argOf("window-ms", 10_000);
const LEAD_MS = 5_000;
const SECRET = "bench-secret-0123456789abcdef";
const json = args.includes("--json");
const NETWORKS = ["nostr", "webhook", "mastodon"] as const;
type Network = (typeof NETWORKS)[number];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-networks-"));
const logFile = join(dataDir, "receiver.jsonl");
const relay = await startNostrRelay();
const mastodon = await startMastodonServer({ maxCharacters: 500 });
const { process: receiver, url: receiverUrl } = await spawnReceiver({ port: 0, secret: SECRET, log: logFile });
let server: ReturnType<typeof spawn> | null = null;
try {
  const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost", LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
  const deps = await bootstrap(config, { log: silentLogger });
  const { accountId } = await createAccount(deps, { name: "Bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });
  const keys = generateKeys();
  const connections: Record<Network, string> = {
    nostr: (await addConnection(deps, { accountId, platform: "nostr", secretKey: keys.nsec, relays: relay.url })).accountId,
    webhook: (await addConnection(deps, { accountId, platform: "webhook", url: `${receiverUrl}/hook`, secret: SECRET })).accountId,
    mastodon: (await addConnection(deps, { accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN })).accountId,
  };
  const creation = await makeCreation(deps, accountId, { caption: "Bench post" });

  // A live subscription: the relay broadcasts each stored note to it, which dates its arrival.
  const arrivals = new Map<string, number[]>();
  const live = await Relay.connect(relay.url);
  live.subscribe([{ authors: [keys.pubkey], kinds: [1] }], {
    onevent: (e) => arrivals.set(e.content, [...(arrivals.get(e.content) ?? []), Date.now()]),
  });

  server = spawn([process.execPath, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost", LOG_LEVEL: "warn" },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
  });
  const firstDue = Date.now() + LEAD_MS;
  // Posts interleave over the window: post k goes to network k mod 3, due at firstDue + k × window / posts.
  const perNetwork = Math.floor(POSTS / NETWORKS.length);
  const step = WINDOW_MS / POSTS;
  const scheduledOf = new Map<string, number>(); // `${network} ${caption}` → due time
  for (const [n, network] of NETWORKS.entries()) {
    const first = Math.round(firstDue + n * step);
    await insertDuePosts(deps, { accountId, connectionId: connections[network], creationId: creation.id, count: perNetwork, firstDueAt: first, spreadMs: WINDOW_MS, platform: network });
    for (let i = 0; i < perNetwork; i++) scheduledOf.set(`${network} Post ${i}`, first + Math.floor((i * WINDOW_MS) / perNetwork));
  }
  // Captions unique across networks too ("Post i" per call): prefix each with its network.
  const targets = await deps.store.db.select({ postId: scheduledPostTargets.postId, platform: scheduledPostTargets.platform }).from(scheduledPostTargets).all();
  await deps.store.write(async (tx) => {
    for (const network of NETWORKS) {
      const ids = targets.filter((t) => t.platform === network).map((t) => t.postId);
      const rows = await tx.select({ id: scheduledPosts.id, caption: scheduledPosts.caption }).from(scheduledPosts).where(inArray(scheduledPosts.id, ids)).all();
      for (const r of rows) await tx.update(scheduledPosts).set({ caption: `${network} ${r.caption}` }).where(eq(scheduledPosts.id, r.id)).run();
    }
  });
  const total = perNetwork * NETWORKS.length;
  const lastDue = firstDue + WINDOW_MS;
  const countPublished = async () =>
    (await deps.store.db.select({ n: count() }).from(scheduledPostTargets).where(eq(scheduledPostTargets.status, "published")).get())?.n ?? 0;
  while (Date.now() < lastDue + 60_000 && (await countPublished()) < total) await Bun.sleep(250);
  const published = await countPublished();
  // The dispatcher's own view: published_at − scheduled_time per network (the peers' views are computed below).
  const recorded = await deps.store.db
    .select({ platform: scheduledPostTargets.platform, publishedAt: scheduledPostTargets.publishedAt, scheduledTime: scheduledPosts.scheduledTime })
    .from(scheduledPostTargets)
    .innerJoin(scheduledPosts, eq(scheduledPosts.id, scheduledPostTargets.postId))
    .all();
  const recordedP99 = Object.fromEntries(
    NETWORKS.map((n) => [n, percentile(recorded.filter((r) => r.platform === n).map((r) => (r.publishedAt ?? 0) - r.scheduledTime).sort((a, b) => a - b), 99)]),
  );
  await Bun.sleep(500);
  live.close();
  server.kill("SIGTERM");
  await server.exited;
  server = null;
  await deps.store.close();

  const lateness: Record<Network, number[]> = { nostr: [], webhook: [], mastodon: [] };
  const duplicates: Record<Network, number> = { nostr: 0, webhook: 0, mastodon: 0 };
  for (const [text, times] of arrivals) {
    if (times.length > 1) duplicates.nostr++;
    const due = scheduledOf.get(text);
    if (due !== undefined) lateness.nostr.push((times[0] as number) - due);
  }
  const hooks = readWebhookLog(logFile).filter((d) => d.event === "post.publish" && !d.repeat);
  const perKey = new Map<string, number>();
  for (const d of hooks) {
    perKey.set(d.idempotencyKey ?? "", (perKey.get(d.idempotencyKey ?? "") ?? 0) + 1);
    lateness.webhook.push(Date.parse(d.receivedAt) - Date.parse((d.body as { post: { scheduledTime: string } }).post.scheduledTime));
  }
  duplicates.webhook = [...perKey.values()].filter((n) => n > 1).length;
  const statuses = new Map<string, number>();
  for (const s of mastodon.state.statuses.values()) {
    const text = s.content.replace(/<[^>]+>/g, "");
    statuses.set(text, (statuses.get(text) ?? 0) + 1);
    const due = scheduledOf.get(text);
    if (due !== undefined) lateness.mastodon.push(Date.parse(s.created_at) - due);
  }
  duplicates.mastodon = [...statuses.values()].filter((n) => n > 1).length;
  const all = [...lateness.nostr, ...lateness.webhook, ...lateness.mastodon].sort((a, b) => a - b);
  const delivered = { nostr: arrivals.size, webhook: perKey.size, mastodon: statuses.size };
  const dupTotal = duplicates.nostr + duplicates.webhook + duplicates.mastodon;
  const sum = delivered.nostr + delivered.webhook + delivered.mastodon;
  const p99 = percentile(all, 99);
  const ok = sum === total && published === total && dupTotal === 0 && p99 < 2000;
  const per = Object.fromEntries(NETWORKS.map((n) => [n, { delivered: delivered[n], duplicates: duplicates[n], p50: percentile(lateness[n].sort((a, b) => a - b), 50), p99: percentile(lateness[n], 99), max: lateness[n].at(-1) ?? 0 }]));
  if (json) {
    console.log(
      JSON.stringify({
        bench: "networks",
        figures: [
          { label: `posts delivered (${total} over Nostr, webhook, Mastodon, due within ${WINDOW_MS / 1000} s)`, value: sum, unit: "posts", goal: `= ${total}`, ok: sum === total },
          { label: "lateness p99 (all networks)", value: p99, unit: "ms", goal: "< 2000", ok: p99 < 2000 },
          { label: "duplicates", value: dupTotal, unit: "", goal: "= 0", ok: dupTotal === 0 },
        ],
        per,
      }),
    );
  } else {
    console.log(`posts due within ${WINDOW_MS / 1000} s: ${total} (${perNetwork} per network); published in db: ${published}`);
    for (const n of NETWORKS) console.log(`${n.padEnd(8)} delivered ${per[n]!.delivered}, duplicates ${per[n]!.duplicates}, lateness ms p50 ${per[n]!.p50}, p99 ${per[n]!.p99}, max ${per[n]!.max}`);
    console.log(`all: lateness p99 ${p99} ms, duplicates ${dupTotal}; recorded by the dispatcher (published_at − due), p99 ms: ${JSON.stringify(recordedP99)}`);
    console.log(ok ? "GOALS MET" : "GOALS NOT MET");
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  server?.kill("SIGKILL");
  receiver.kill("SIGTERM");
  await receiver.exited;
  await mastodon.stop();
  await relay.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
