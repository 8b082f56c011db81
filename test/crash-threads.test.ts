/**
 * Crash safety of threads (issue 24): `seedcast serve` runs as a child process and delivers 5-part posts (the post,
 * 3 thread parts, a first comment) to the REAL Bluesky PDS (its own process) and to the Mastodon peer (in this test's
 * process), both of which keep running while the server is killed with SIGKILL at random points during dispatch,
 * 10 times, and restarted each time. Afterwards everything is read back from the peers: every part of every post is
 * there exactly once (none twice, none missing), each reply pointing at the right parent, and every target
 * records its five parts in order.
 *
 * Posts are inserted due a few seconds ahead through the database (test/publishing-load.ts). SQLite only, like
 * crash-safety.test.ts (the server runs on the DATA_DIR's database file).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { isSqliteStore } from "../src/db/store";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { recordKeyForPart } from "../src/publishing/bluesky-rkey";
import { type BlueskyPds, isBlueskyPdsInstalled, startBlueskyPds } from "./helpers/bluesky-pds";
import { TEST_DIALECT } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { makeCreation } from "./publishing-fixtures";
import { insertDuePosts } from "./publishing-load";
import { crashDispatchEnv, dueSpread, killDuringDispatch, startServe } from "./helpers/kill-rounds";

const KILLS = 10;
/** Posts per network. */
const POSTS = 16;
const PARTS = 5;
const SPREAD_MS = 8_000;
const LEASE_MS = 1500;
const FINISH_TIMEOUT_MS = 90_000;
const PDS_START_TIMEOUT_MS = 60_000;
const COLLECTION = "app.bsky.feed.post";

let dataDir: string;
let pds: BlueskyPds;
let mastodon: MastodonServer;

const startServer = () => startServe(dataDir, { DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", ...crashDispatchEnv(LEASE_MS) });

/** The five captions of post `i` on `network`, in sending order. */
function captions(network: string, i: number): string[] {
  return [`${network} ${i}: the post`, `${network} ${i}: part 2`, `${network} ${i}: part 3`, `${network} ${i}: part 4`, `${network} ${i}: first comment`];
}

function contentOf(network: string) {
  return (i: number) => {
    const [caption, two, three, four, comment] = captions(network, i);
    return { caption, thread: [two!, three!, four!].map((c) => ({ caption: c, images: [] })), firstComment: comment! };
  };
}

beforeAll(async () => {
  if (TEST_DIALECT !== "sqlite") return;
  if (!isBlueskyPdsInstalled()) throw new Error("Bluesky PDS peer not installed: run test/peers/bluesky/install.sh");
  dataDir = mkdtempSync(join(tmpdir(), "seedcast-crash-threads-"));
  pds = await startBlueskyPds({ readyTimeoutMs: PDS_START_TIMEOUT_MS });
  mastodon = await startMastodonServer({ mediaProcessingPolls: 0 });
}, PDS_START_TIMEOUT_MS + 10_000);

afterAll(async () => {
  await pds?.stop();
  await mastodon?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test.skipIf(TEST_DIALECT !== "sqlite")(
  `kill -9 during delivery of 5-part threads ${KILLS} times: read back from the PDS and the Mastodon peer, no part twice, none missing`,
  async () => {
    const config = loadConfig({ DATA_DIR: dataDir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "silent", BASE_URL: "http://localhost" });
    const setup = await bootstrap(config, { log: silentLogger });
    const { accountId } = await createAccount(setup, { name: "Crash", email: "crash-threads@example.test", password: "correct horse battery", credits: 0 });
    const bsky = await pds.createAccount();
    const blueskyConnection = await addConnection(setup, { accountId, platform: "bluesky", handle: bsky.handle, appPassword: bsky.appPassword, service: pds.url });
    const mastodonConnection = await addConnection(setup, { accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    expect([blueskyConnection.readyToPost, mastodonConnection.readyToPost]).toEqual([true, true]);
    const creation = await makeCreation(setup, accountId, { caption: "Crash-safe threads" });
    const spread = await dueSpread({ rounds: KILLS, start: startServer, atLeastMs: SPREAD_MS });
    const start = Date.now() + 1500;
    const common = { accountId, creationId: creation.id, count: POSTS, firstDueAt: start, spreadMs: spread };
    const blueskyTargets = await insertDuePosts(setup, { ...common, connectionId: blueskyConnection.accountId, platform: "bluesky", content: contentOf("Bluesky") });
    const mastodonTargets = await insertDuePosts(setup, { ...common, connectionId: mastodonConnection.accountId, platform: "mastodon", content: contentOf("Mastodon") });
    await setup.store.close();

    const partsOnPeers = async () => (await pds.listRecords(bsky.did, COLLECTION)).length + mastodon.state.statuses.size;
    const { kills, killsDuringDispatch } = await killDuringDispatch({ rounds: KILLS, start: startServer, progress: partsOnPeers, total: 2 * POSTS * PARTS });

    const final = await startServer();
    const watch = await bootstrap(config, { log: silentLogger });
    if (!isSqliteStore(watch.store)) throw new Error("SQLite only");
    const reader = watch.store.sqlite;
    const published = () => reader.query<{ n: number }, []>("SELECT count(*) AS n FROM scheduled_post_targets WHERE status = 'published'").get()!.n;
    const deadline = Date.now() + FINISH_TIMEOUT_MS;
    while (Date.now() < deadline && published() < 2 * POSTS) await Bun.sleep(200);
    const states = reader.query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM scheduled_post_targets GROUP BY status").all();
    const partsOut = new Map(
      reader
        .query<{ id: string; parts_out: string }, []>("SELECT id, parts_out FROM scheduled_post_targets")
        .all()
        .map((r) => [r.id, JSON.parse(r.parts_out) as string[]]),
    );
    const publishedAtEnd = published();
    await watch.store.close();
    final.proc.kill("SIGTERM");
    expect(await final.proc.exited, final.log()).toBe(0);
    if (publishedAtEnd < 2 * POSTS) console.log(final.log().split("\n").slice(-40).join("\n"));
    expect(states).toEqual([{ status: "published", n: 2 * POSTS }]);

    // Bluesky: every part exactly once, under its derived key, replying to its root and its parent.
    const records = await pds.listRecords(bsky.did, COLLECTION);
    const byText = new Map<string, number>();
    for (const r of records) {
      const text = (r.value as { text: string }).text;
      byText.set(text, (byText.get(text) ?? 0) + 1);
    }
    const expectedBluesky = Array.from({ length: POSTS }, (_, i) => captions("Bluesky", i)).flat();
    expect([...byText.keys()].sort()).toEqual([...expectedBluesky].sort());
    expect([...byText.values()].every((n) => n === 1)).toBe(true);
    const byUri = new Map(records.map((r) => [r.uri, r]));
    for (const [i, targetId] of blueskyTargets.entries()) {
      const uris = [0, 1, 2, 3, 4].map((p) => `at://${bsky.did}/${COLLECTION}/${recordKeyForPart(targetId, p)}`);
      expect(partsOut.get(targetId)).toEqual(uris);
      const parts = uris.map((uri) => byUri.get(uri)!);
      expect(parts.map((r) => (r.value as { text: string }).text)).toEqual(captions("Bluesky", i));
      const replyOf = (p: number) => (parts[p]!.value as { reply?: { root: { uri: string; cid: string }; parent: { uri: string; cid: string } } }).reply;
      const ref = (p: number) => ({ uri: parts[p]!.uri, cid: parts[p]!.cid });
      expect(replyOf(0)).toBeUndefined();
      expect([1, 2, 3, 4].map(replyOf)).toEqual([
        { root: ref(0), parent: ref(0) },
        { root: ref(0), parent: ref(1) },
        { root: ref(0), parent: ref(2) },
        { root: ref(0), parent: ref(0) },
      ]);
    }

    // Mastodon: every part exactly once, each thread part replying to the one before, the comment to the post.
    const statuses = [...mastodon.state.statuses.values()];
    const mastodonTexts = statuses.map((s) => s.text);
    const expectedMastodon = Array.from({ length: POSTS }, (_, i) => captions("Mastodon", i)).flat();
    expect([...mastodonTexts].sort()).toEqual([...expectedMastodon].sort());
    for (const [i, targetId] of mastodonTargets.entries()) {
      const ids = partsOut.get(targetId)!;
      expect(ids).toHaveLength(PARTS);
      const parts = ids.map((id) => mastodon.state.statuses.get(id)!);
      expect(parts.map((s) => s.text)).toEqual(captions("Mastodon", i));
      expect(parts.map((s) => s.in_reply_to_id)).toEqual([null, ids[0]!, ids[1]!, ids[2]!, ids[0]!]);
    }
    const absorbed = mastodon.state.requests.filter((r) => r.method === "POST" && r.path === "/api/v1/statuses").length - statuses.length;
    console.log(JSON.stringify({ kills, killsDuringDispatch, posts: 2 * POSTS, parts: records.length + statuses.length, mastodonResendsAbsorbed: absorbed }));
    expect(killsDuringDispatch).toBeGreaterThanOrEqual(3);
  },
  { timeout: 300_000 },
);
