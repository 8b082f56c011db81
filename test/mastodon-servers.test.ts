/**
 * Fediverse servers as they really behave (decisions.md §12), against the Mastodon-API fake's two modes:
 * - GoToSocial 0.19 (NodeInfo names it) accepts `scheduled_at` and posts at once: Seedcast recognises it, stores
 *   `nativeScheduling: false`, and holds the post in its own dispatcher until its time;
 * - a server that answers a repeated Idempotency-Key with 500: after an unknown outcome the post is found among the
 *   account's recent statuses, never sent again.
 * The clock is moved, never slept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { scheduledPostTargets } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { NOT_MASTODON, detectServer, honoursScheduledAt } from "../src/publishing/networks/mastodon/server";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { makeCreation, postRows } from "./publishing-fixtures";

const MINUTE = 60 * 1000;
let world: World;
let acct: TestAccount;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  acct = await world.createAccount();
});

afterAll(async () => {
  await world.close();
});

async function connect(server: MastodonServer): Promise<string> {
  const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: server.url, token: DEFAULT_TOKEN });
  expect(view.readyToPost).toBe(true);
  return view.accountId;
}

async function schedule(caption: string, connectionId: string, inMs: number) {
  const creation = await makeCreation(world.deps, acct.accountId, { caption });
  const res = await world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + inMs), targets: [connectionId] },
  });
  expect(res.status).toBe(200);
  return res.json.post as { id: string; status: string; targets: { status: string; providerPostId: string | null }[] };
}

const statusPosts = (server: MastodonServer) => server.state.requests.filter((r) => r.method === "POST" && r.path === "/api/v1/statuses");

describe("GoToSocial 0.19 ignores scheduled_at: Seedcast holds the post itself", () => {
  let gts: MastodonServer;
  let connectionId = "";

  beforeAll(async () => {
    gts = await startMastodonServer({ now: () => world.clock.now(), software: { name: "gotosocial", version: "0.19.1+git-7a3b2c1" } });
    connectionId = await connect(gts);
  });
  afterAll(async () => {
    await gts.stop();
    await world.sql("DELETE FROM connections WHERE id = ?", connectionId);
  });

  test("the fake behaves as the real one: a status sent with scheduled_at an hour ahead is posted at once", async () => {
    const res = await fetch(`${gts.url}/api/v1/statuses`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEFAULT_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ status: "probe", scheduled_at: isoAt(world.clock.now() + 60 * MINUTE) }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content?: string }).content).toBe("<p>probe</p>");
    expect(gts.state.scheduled.size).toBe(0);
    gts.state.statuses.clear();
    gts.state.requests.length = 0;
  });

  test("the check recognises it through NodeInfo and stores nativeScheduling false", async () => {
    const [row] = await world.sql<{ meta: string }>("SELECT meta FROM connections WHERE id = ?", connectionId);
    expect(JSON.parse(row!.meta)).toMatchObject({ software: "gotosocial", softwareVersion: "0.19.1+git-7a3b2c1", nativeScheduling: false });
  });

  test("a post due in 10 minutes: nothing reaches the server before its time, one status after", async () => {
    const post = await schedule("Soup of the day: leek and potato", connectionId, 10 * MINUTE);
    expect(post.targets[0]!.status).toBe("scheduled");
    expect(statusPosts(gts)).toEqual([]);
    // One minute before: the dispatcher has nothing due.
    world.clock.advance(9 * MINUTE);
    await runDueOnce(world.deps);
    expect(statusPosts(gts)).toEqual([]);
    expect(gts.state.statuses.size).toBe(0);
    // At its time: one status.
    world.clock.advance(MINUTE);
    await runDueOnce(world.deps);
    expect(statusPosts(gts)).toHaveLength(1);
    expect([...gts.state.statuses.values()].map((s) => s.text)).toEqual(["Soup of the day: leek and potato"]);
    const { targets } = await postRows(world.deps, post.id);
    expect(targets[0]).toMatchObject({ status: "published", heldByProvider: false });
  });
});

describe("a server that answers a repeated Idempotency-Key with 500", () => {
  let server: MastodonServer;
  let connectionId = "";

  beforeAll(async () => {
    server = await startMastodonServer({ now: () => world.clock.now(), repeatedIdempotencyKey500: true });
    connectionId = await connect(server);
  });
  afterAll(async () => {
    await server.stop();
  });

  test("after an unknown outcome the status is found among the account's recent statuses: published once, never resent", async () => {
    // Due in 5½ minutes: too close for Mastodon's own scheduling, so Seedcast sends it directly at its time.
    const post = await schedule("Fresh bread from 7", connectionId, 5.5 * MINUTE);
    world.clock.advance(6 * MINUTE);
    await runDueOnce(world.deps);
    const sent = (await postRows(world.deps, post.id)).targets[0]!;
    expect(sent.status).toBe("published");
    expect(server.state.statuses.size).toBe(1);
    const statusId = sent.providerPostId;
    // As a crash right after the server answered leaves it: publishing again, the send started, no id recorded.
    await world.store.write((tx) =>
      tx
        .update(scheduledPostTargets)
        .set({
          status: "publishing",
          providerPostId: null,
          partsOut: [],
          publishedUrl: null,
          nextAttemptAt: world.clock.now(),
          leaseToken: "dead",
          leaseExpiresAt: world.clock.now(),
          sendStartedAt: world.clock.now() - 1000,
        })
        .where(eq(scheduledPostTargets.id, sent.id))
        .run(),
    );
    await world.sql("UPDATE scheduled_posts SET status = 'scheduled' WHERE id = ?", post.id);
    const postsBefore = statusPosts(server).length;
    await runDueOnce(world.deps);
    const after = (await postRows(world.deps, post.id)).targets[0]!;
    expect(after).toMatchObject({ status: "published", providerPostId: statusId });
    expect(after.publishedUrl).toBe(server.state.statuses.get(statusId ?? "")?.url ?? "(missing)");
    // Reconciled from GET /api/v1/accounts/:id/statuses: no second POST (which this server would answer 500), one status.
    expect(statusPosts(server).length).toBe(postsBefore);
    expect(server.state.requests.some((r) => r.method === "GET" && r.path === `/api/v1/accounts/${server.state.account.id}/statuses`)).toBe(true);
    expect(server.state.statuses.size).toBe(1);
  });
});

describe("recognising the server", () => {
  test("limits come from the server's configuration: characters, media per post, image size", async () => {
    const server = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 1000, maxMediaAttachments: 6, imageSizeLimit: 10_000_000 });
    try {
      const id = await connect(server);
      const [row] = await world.sql<{ meta: string }>("SELECT meta FROM connections WHERE id = ?", id);
      expect(JSON.parse(row!.meta)).toMatchObject({ maxCharacters: 1000, maxMediaAttachments: 6, imageSizeLimit: 10_000_000, urlLength: 23, software: "mastodon", nativeScheduling: true });
      await world.sql("DELETE FROM connections WHERE id = ?", id);
    } finally {
      await server.stop();
    }
  });

  test("a server with only the v1 instance document and no NodeInfo (Pleroma's shape) is read from v1", async () => {
    // Pleroma's /api/v1/instance: `uri`, `max_toot_chars`, and a version naming the software it is compatible with.
    const pleroma = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) =>
        new URL(req.url).pathname === "/api/v1/instance"
          ? Response.json({ uri: "pleroma.example", title: "Pleroma", version: "2.7.2 (compatible; Pleroma 2.5.0)", max_toot_chars: 5000 })
          : Response.json({ error: "Not found" }, { status: 404 }),
    });
    try {
      const facts = await detectServer(world.deps, `http://127.0.0.1:${pleroma.port}`);
      expect(facts).toEqual({ software: "pleroma", version: "2.5.0", limits: { maxCharacters: 5000 } });
    } finally {
      await pleroma.stop(true);
    }
  });

  test("an address answering neither instance document is not a Mastodon server", async () => {
    const other = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<h1>Hello</h1>", { headers: { "content-type": "text/html" } }) });
    try {
      expect(await detectServer(world.deps, `http://127.0.0.1:${other.port}`)).toBe(NOT_MASTODON);
    } finally {
      await other.stop(true);
    }
  });

  test("which servers hold scheduled statuses: GoToSocial from 0.20, an unreadable GoToSocial version counts as old", () => {
    const cases: [string | null, string | null, boolean][] = [
      ["mastodon", "4.3.0", true],
      ["gotosocial", "0.19.1+git-7a3b2c1", false],
      ["gotosocial", "0.20.0", true],
      ["gotosocial", "v0.21.2", true],
      ["gotosocial", null, false],
      ["pleroma", "2.5.0", true],
      [null, null, true],
    ];
    for (const [software, version, holds] of cases) expect([software, version, honoursScheduledAt({ software, version })]).toEqual([software, version, holds]);
  });
});
