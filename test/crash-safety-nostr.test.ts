/**
 * Crash safety on Nostr: `seedcast serve` runs as a child process and publishes to the REAL relay (test/peers/nostr,
 * its own Node 22 process, so it keeps its events while the server dies). The server is killed with SIGKILL at random
 * points during dispatch, 10 times, and restarted each time. Every post has a 1-part thread. Read back from the relay
 * with nostr-tools: every post and every thread part is there, each exactly once (no two notes carry the same text),
 * every signature valid. A resend after a crash signs the same event (created_at from the scheduled time), which the
 * relay stores once.
 *
 * Posts are made due quickly by inserting them with due times a few seconds ahead through the database, as
 * test/crash-safety.test.ts does. SQLite only (the server runs on the DATA_DIR's database file).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { isSqliteStore } from "../src/db/store";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { generateKeys } from "../src/publishing/networks/nostr/keys";
import { type NostrTestRelay, isNostrRelayInstalled, startNostrRelay } from "./helpers/nostr-relay";
import { TEST_DIALECT } from "./helpers/world";
import { makeCreation } from "./publishing-fixtures";
import { insertDuePosts } from "./publishing-load";
import { crashDispatchEnv, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
const POSTS = 60;
const SPREAD_MS = 10_000;
const LEASE_MS = 1500;
const FINISH_TIMEOUT_MS = 60_000;

let dataDir: string;
let relay: NostrTestRelay;
const startServer = () => startServe(dataDir, { DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "localhost", ...crashDispatchEnv(LEASE_MS) });

beforeAll(async () => {
  if (!isNostrRelayInstalled()) throw new Error("Nostr relay peer not installed: run test/peers/nostr/install.sh");
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-nostr-"));
  relay = await startNostrRelay();
});

afterAll(async () => {
  await relay?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during Nostr delivery ${KILLS} times: every note and thread part on the relay exactly once`,
  async () => {
    const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "localhost", LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash@example.test", password: "correct horse battery", credits: 0 });
    const keys = generateKeys();
    const connection = await addConnection(setup, { accountId, platform: "nostr", secretKey: keys.nsec, relays: relay.url });
    expect(connection.readyToPost).toBe(true);
    const creation = await makeCreation(setup, accountId, { caption: "unused" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS });
    await insertDuePosts(setup, { accountId, connectionId: connection.accountId, creationId: creation.id, count: POSTS, firstDueAt: Date.now() + 1500, spreadMs: spread, platform: "nostr" });
    // Every post gets a thread part of its own text: "Post i" and "Post i, continued".
    await setup.store.write((tx) => tx.run(sql`UPDATE scheduled_posts SET thread = json_array(json_object('caption', caption || ', continued', 'images', json_array()))`));
    await setup.store.close();

    const { kills, killsDuringDispatch } = await killDuringDispatch({
      rounds: KILLS,
      start: startServer,
      progress: async () => (await relay.query({ authors: [keys.pubkey] })).length,
      total: POSTS * 2,
    });

    const final = await startServer();
    const watch = await bootstrap(config, { log: silentLogger });
    if (!isSqliteStore(watch.store)) throw new Error("SQLite only");
    const published = watch.store.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM scheduled_post_targets WHERE status = 'published'");
    const deadline = Date.now() + FINISH_TIMEOUT_MS;
    while (Date.now() < deadline && published.get()!.n < POSTS) await Bun.sleep(200);
    const states = watch.store.sqlite.query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM scheduled_post_targets GROUP BY status").all();
    await watch.store.close();
    final.proc.kill("SIGTERM");
    expect(await final.proc.exited, final.log()).toBe(0);

    const notes = await relay.query({ authors: [keys.pubkey] });
    const byText = new Map<string, number>();
    for (const n of notes) byText.set(n.content, (byText.get(n.content) ?? 0) + 1);
    const twice = [...byText.entries()].filter(([, n]) => n > 1).map(([text]) => text);
    const missing = Array.from({ length: POSTS }, (_, i) => [`Post ${i}`, `Post ${i}, continued`]).flat().filter((text) => !byText.has(text));
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: POSTS, notes: notes.length, duplicates: twice.length, missing: missing.length }));
    expect(states).toEqual([{ status: "published", n: POSTS }]);
    expect(twice).toEqual([]);
    expect(missing).toEqual([]);
    expect(notes).toHaveLength(POSTS * 2);
    // Every reply names its post as root (NIP-10).
    const roots = new Map(notes.filter((n) => !n.content.endsWith(", continued")).map((n) => [n.content, n.id]));
    for (const reply of notes.filter((n) => n.content.endsWith(", continued"))) {
      expect(reply.tags.find((t) => t[0] === "e")?.[1]).toBe(roots.get(reply.content.replace(", continued", "")));
    }
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(3);
  },
  { timeout: 240_000 },
);
