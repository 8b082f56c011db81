/**
 * Crash safety: `seedcast serve` runs as a child process against a temp DATA_DIR and delivers webhook posts to a
 * receiver running in ANOTHER process (so it keeps counting while the server dies). The server is killed with
 * SIGKILL at random points during dispatch, 20 times, and restarted each time. Every due post must take effect
 * exactly once at the receiver: none lost, none twice (resends after a crash carry the same Idempotency-Key and are
 * absorbed as repeats, which the receiver logs separately).
 *
 * The account also has an event webhook on post.published (to the same receiver, path /events): each publication
 * records its event in the same transaction, so every post delivered has exactly one event delivered too, at least
 * once across the kills (repeats carry the event id as Idempotency-Key and are absorbed).
 *
 * Posts are made due quickly by inserting them with due times a few seconds ahead through the database (the API's
 * 5-minute minimum lead time is a product rule, not what this test is about).
 *
 * SQLite only (the server runs on the DATA_DIR's database file; its counts are read on the store's reader).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import type { Deps } from "../src/deps";
import { isSqliteStore } from "../src/db/store";
import { eventWebhooks } from "../src/db/tables";
import { newId } from "../src/lib/ids";
import { silentLogger } from "../src/lib/log";
import { sealWebhookSecret } from "../src/store/events";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { TEST_DIALECT } from "./helpers/world";
import { readWebhookLog } from "./peers/webhook-receiver";
import { spawnReceiver } from "./helpers/receiver-process";
import { WEBHOOK_SECRET, makeCreation } from "./publishing-fixtures";
import { insertDuePosts } from "./publishing-load";
import { crashDispatchEnv, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 20;
const POSTS = 240;
/** Due times are spread over this window, which the kill loop covers. */
const SPREAD_MS = 20_000;
const LEASE_MS = 1500;
const FINISH_TIMEOUT_MS = 60_000;

let dataDir: string;
let receiverProc: Subprocess;
let receiverUrl: string;
let logFile: string;

/** `seedcast serve` from source with only the variables it needs (nothing else of the runner's environment). */
const startServer = () => startServe(dataDir, { DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...crashDispatchEnv(LEASE_MS) });

/** The store's reader connection (query_only): the counts below are raw reads. */
function reader(deps: Deps) {
  if (!isSqliteStore(deps.store)) throw new Error("crash-safety runs on SQLite only");
  return deps.store.sqlite;
}

function targetStates(deps: Deps): Record<string, number> {
  const rows = reader(deps).query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM scheduled_post_targets GROUP BY status").all();
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-"));
  logFile = join(dataDir, "receiver.jsonl");
  ({ process: receiverProc, url: receiverUrl } = await spawnReceiver({ port: 0, secret: WEBHOOK_SECRET, log: logFile }));
});

afterAll(() => {
  receiverProc?.kill("SIGTERM");
  rmSync(dataDir, { recursive: true, force: true });
});

test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during dispatch ${KILLS} times: every due post delivered exactly once, and its post.published event`,
  async () => {
    const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash@example.test", password: "correct horse battery", credits: 0 });
    const connection = await addConnection(setup, { accountId, platform: "webhook", url: `${receiverUrl}/hook`, secret: WEBHOOK_SECRET });
    expect(connection.blockedReason).toBeNull();
    expect(connection.readyToPost).toBe(true);
    // The row POST /api/v1/webhooks stores, with the secret the receiver process verifies under.
    const webhookId = newId();
    await setup.store.write((tx) =>
      tx
        .insert(eventWebhooks)
        .values({
          id: webhookId,
          accountId,
          url: `${receiverUrl}/events`,
          events: JSON.stringify(["post.published"]),
          secretSealed: sealWebhookSecret(setup.instanceSecret, webhookId, WEBHOOK_SECRET),
          createdAt: Date.now(),
        })
        .run(),
    );
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe delivery" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS });
    const start = Date.now() + 1500;
    const targetIds = await insertDuePosts(setup, {
      accountId,
      connectionId: connection.accountId,
      creationId: creation.id,
      count: POSTS,
      firstDueAt: start,
      spreadMs: spread,
    });
    await setup.store.close();

    const { kills, killsDuringDispatch } = await killDuringDispatch({
      rounds: KILLS,
      start: startServer,
      progress: () => readWebhookLog(logFile).filter((d) => d.event === "post.publish" && !d.repeat).length,
      total: POSTS,
    });

    const final = await startServer();
    const watch = await bootstrap(config, { log: silentLogger });
    const deadline = Date.now() + FINISH_TIMEOUT_MS;
    let states = targetStates(watch);
    const eventsDelivered = reader(watch).query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'delivered'");
    while (Date.now() < deadline && ((states.published ?? 0) < POSTS || eventsDelivered.get()!.n < POSTS)) {
      await Bun.sleep(200);
      states = targetStates(watch);
    }
    const eventRows = reader(watch).query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status").all();
    final.proc.kill("SIGTERM");
    expect(await final.proc.exited, final.log()).toBe(0);

    if ((states.published ?? 0) < POSTS) console.log(final.log().split("\n").slice(-40).join("\n"));
    expect(states).toEqual({ published: POSTS });
    const failedAttempts = reader(watch).query<{ n: number }, []>("SELECT count(*) AS n FROM scheduled_post_targets WHERE attempts > 0").get()!.n;
    await watch.store.close();

    const log = readWebhookLog(logFile).filter((d) => d.event === "post.publish" && d.verified);
    const effects = new Map<string, number>();
    for (const d of log) if (!d.repeat) effects.set(d.idempotencyKey!, (effects.get(d.idempotencyKey!) ?? 0) + 1);
    const byBody = new Map<string, number>();
    for (const d of log) {
      if (d.repeat) continue;
      const id = (d.body as { post: { targetId: string } }).post.targetId;
      byBody.set(id, (byBody.get(id) ?? 0) + 1);
    }
    const lost = targetIds.filter((id) => !effects.has(id));
    const twice = [...effects.values()].filter((n) => n > 1).length;
    const repeats = log.filter((d) => d.repeat).length;
    console.log(
      JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, delivered: effects.size, lost: lost.length, twice, absorbedRepeats: repeats, failedAttempts }),
    );
    expect(lost).toEqual([]);
    expect(twice).toBe(0);
    expect([...byBody.values()].every((n) => n === 1)).toBe(true);
    expect(effects.size).toBe(POSTS);
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(8);

    // Events: one per published post, none lost, each taking effect once.
    expect(eventRows).toEqual([{ status: "delivered", n: POSTS }]);
    const events = readWebhookLog(logFile).filter((d) => d.event === "post.published");
    expect(events.every((d) => d.verified && d.path === "/events")).toBe(true);
    const eventEffects = new Map<string, number>();
    const eventsByPost = new Map<string, number>();
    for (const d of events) {
      if (d.repeat) continue;
      eventEffects.set(d.idempotencyKey!, (eventEffects.get(d.idempotencyKey!) ?? 0) + 1);
      const body = d.body as { id: string; data: { post: { id: string; status: string } } };
      expect(body.id).toBe(d.idempotencyKey!);
      expect(body.data.post.status).toBe("published");
      eventsByPost.set(body.data.post.id, (eventsByPost.get(body.data.post.id) ?? 0) + 1);
    }
    expect(eventEffects.size).toBe(POSTS);
    expect([...eventEffects.values()].every((n) => n === 1)).toBe(true);
    expect(eventsByPost.size).toBe(POSTS);
    expect([...eventsByPost.values()].every((n) => n === 1)).toBe(true);
    console.log(JSON.stringify({ events: eventEffects.size, absorbedEventRepeats: events.filter((d) => d.repeat).length }));
  },
  { timeout: 240_000 },
);
