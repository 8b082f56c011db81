/**
 * Feeds (decisions.md §14), against a real HTTPS server with the test CA serving hand-written copies of real feeds:
 * a WordPress RSS 2.0 feed, a GitHub releases Atom feed and a JSON Feed 1.1 (test/fixtures/feeds/). The server
 * answers conditional requests with 304 as real servers do, and can add an item, fail, or answer no feed.
 * Runs on SQLite and, with SEEDCAST_TEST_DATABASE=postgres, on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import sharp from "sharp";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { silentLogger } from "../src/lib/log";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { addConnection } from "../src/modules/connections/service";
import { configureFeedFetch } from "../src/modules/feeds/fetch";
import { FEEDS_POLL_JOB_ID } from "../src/modules/feeds/jobs";
import { MAX_FAILURES, POLL_INTERVAL_MS, pollDueFeeds } from "../src/modules/feeds/service";
import { systemJobs } from "../src/system-jobs";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { WEBHOOK_SECRET } from "./publishing-fixtures";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";

const FIXTURES = `${import.meta.dir}/fixtures/feeds`;
const WORDPRESS = await Bun.file(`${FIXTURES}/wordpress-rss.xml`).text();
const GITHUB = await Bun.file(`${FIXTURES}/github-releases.atom`).text();
const JSON_FEED = await Bun.file(`${FIXTURES}/json-feed.json`).text();

/** One document the server serves at a path; `version` moves its ETag and Last-Modified. */
interface Served {
  body: string;
  type: string;
  version: number;
  /** Answer this status instead of the document. */
  failWith: number | null;
  /** Send ETag / Last-Modified and honour If-None-Match / If-Modified-Since. */
  validators: boolean;
}

/** What the server saw of one request. */
interface Seen {
  path: string;
  ifNoneMatch: string | null;
  ifModifiedSince: string | null;
  status: number;
}

const docs = new Map<string, Served>();
const seen: Seen[] = [];
let server: TestHttpsServer;
let receiver: WebhookReceiver;
let world: World;
let png: Uint8Array<ArrayBuffer>;
const ca = createTestCa();

const etagOf = (doc: Served) => `"v${doc.version}"`;
const lastModifiedOf = (doc: Served) => new Date(Date.UTC(2026, 10, 20, 12, 0, doc.version)).toUTCString();

function serve(path: string, body: string, type: string, validators = true): Served {
  const doc: Served = { body, type, version: 1, failWith: null, validators };
  docs.set(path, doc);
  return doc;
}

/** Puts `item` in front of the document's items (where a blog puts its newest post) and moves its version. */
function publish(path: string, item: string | Record<string, unknown>): void {
  const doc = docs.get(path);
  if (!doc) throw new Error(`nothing served at ${path}`);
  if (typeof item === "string") {
    const at = doc.body.search(/<item>|<entry>/);
    doc.body = `${doc.body.slice(0, at)}${item}\n${doc.body.slice(at)}`;
  } else {
    const json = JSON.parse(doc.body) as { items: unknown[] };
    json.items.unshift(item);
    doc.body = JSON.stringify(json);
  }
  doc.version += 1;
}

beforeAll(async () => {
  png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: "#c84" } }).png().toBuffer());
  server = startHttpsServer(
    (request) => {
      const path = new URL(request.url).pathname;
      const record = (status: number) => {
        seen.push({ path, ifNoneMatch: request.headers.get("if-none-match"), ifModifiedSince: request.headers.get("if-modified-since"), status });
      };
      if (path === "/images/loaf.png") return new Response(png, { headers: { "content-type": "image/png" } });
      const doc = docs.get(path);
      if (!doc) {
        record(404);
        return new Response("not found", { status: 404 });
      }
      if (doc.failWith !== null) {
        record(doc.failWith);
        return new Response("upstream trouble", { status: doc.failWith });
      }
      const headers: Record<string, string> = { "content-type": doc.type };
      if (doc.validators) {
        headers.etag = etagOf(doc);
        headers["last-modified"] = lastModifiedOf(doc);
        // RFC 9110 §13.1.2: If-None-Match wins; If-Modified-Since only when it is absent.
        const inm = request.headers.get("if-none-match");
        const ims = request.headers.get("if-modified-since");
        if ((inm !== null && inm === etagOf(doc)) || (inm === null && ims !== null && ims === lastModifiedOf(doc))) {
          record(304);
          return new Response(null, { status: 304, headers });
        }
      }
      record(200);
      return new Response(doc.body, { headers });
    },
    { ca },
  );
  // 127.0.0.1: the event webhook receiver (plain http on loopback).
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1" } });
  const outbound = { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] };
  configureFeedFetch(world.deps, outbound);
  configureIngestFetch(world.deps, outbound);
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await server.stop();
  ca.dispose();
  await world.close();
});

const feedsOf = async (a: TestAccount) => Number((await world.sql("SELECT count(*) AS n FROM feeds WHERE account_id = ?", a.accountId))[0]?.n);
const seedsOf = async (a: TestAccount) => Number((await world.sql("SELECT count(*) AS n FROM seeds WHERE account_id = ?", a.accountId))[0]?.n);
const creationsOf = async (a: TestAccount) => Number((await world.sql("SELECT count(*) AS n FROM creations WHERE account_id = ?", a.accountId))[0]?.n);

async function addFeed(a: TestAccount, path: string, mode: "seed" | "draft" | "queue" = "seed", extra: Record<string, unknown> = {}) {
  return world.call("POST", "/api/v1/feeds", { key: a.key, body: { url: `${server.url}${path}`, mode, ...extra } });
}

/** Moves the clock past the poll interval and runs the system job once, as croner would. */
async function runJob(): Promise<{ polled: number; failed: number }> {
  world.clock.advance(POLL_INTERVAL_MS + 1000);
  return pollDueFeeds(world.deps);
}

describeAuthMatrix("feeds", () => world, [
  { method: "POST", path: "/api/v1/feeds", validBody: { url: "https://example.com/feed", mode: "seed" } },
  { method: "GET", path: "/api/v1/feeds" },
  { method: "GET", path: "/api/v1/feeds/0190a0a0-0000-7000-8000-000000000000" },
  { method: "DELETE", path: "/api/v1/feeds/0190a0a0-0000-7000-8000-000000000000" },
  { method: "POST", path: "/api/v1/feeds/0190a0a0-0000-7000-8000-000000000000/poll" },
]);

describe("the first read, when a feed is added", () => {
  test("a WordPress RSS feed: each item a seed with its title, summary text, link and first image", async () => {
    const a = await world.createAccount();
    serve("/wp/feed/", WORDPRESS, "application/rss+xml; charset=UTF-8");
    const res = await addFeed(a, "/wp/feed/");
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`/api/v1/feeds/${res.json.feed.id}`);
    expect(res.json.feed).toMatchObject({ mode: "seed", title: "The Corner Bakery Blog", state: "active", failures: 0, itemsSeen: 3, lastError: null });
    expect(res.json.poll).toMatchObject({ outcome: "read", newItems: 3, creationIds: [], postIds: [], skipped: [] });
    const seeds = (await world.call("GET", "/api/v1/seeds", { key: a.key })).json.seeds as { title: string; content: string; image_url: string | null; category: string | null }[];
    const stollen = seeds.find((s) => s.title.startsWith("Our winter stollen"));
    expect(stollen?.title).toBe("Our winter stollen is back – and it’s bigger");
    expect(stollen?.content).toBe(
      "From Saturday 28 November the stollen is on the counter again: marzipan, rum-soaked raisins, and a loaf 200 g heavier than last year. Pre-orders open today at €14.50.\n\nhttps://cornerbakery.example/2026/11/24/winter-stollen-is-back/",
    );
    expect(stollen?.image_url).toBe("https://cornerbakery.example/wp-content/uploads/2026/11/stollen-1024x683.jpg");
    expect(stollen?.category).toBe("Seasonal");
    expect(seeds.find((s) => s.title === "Meet Jonas, our new early-shift baker")?.image_url).toBeNull();
    // Oldest item first: the newest post is the newest seed.
    expect(seeds[0]?.title).toBe(stollen?.title);
  });

  test("a GitHub releases Atom feed: the entry's HTML content read as text, its alternate link, the avatar as image", async () => {
    const a = await world.createAccount();
    serve("/gh/releases.atom", GITHUB, "application/atom+xml; charset=utf-8");
    const res = await addFeed(a, "/gh/releases.atom");
    expect(res.status).toBe(201);
    expect(res.json.feed.title).toBe("Release notes from widget");
    expect(res.json.poll.newItems).toBe(2);
    const seed = (await world.call("GET", `/api/v1/seeds/${res.json.poll.seedIds[1]}`, { key: a.key })).json;
    expect(seed.title).toBe("v2.4.0");
    expect(seed.content).toContain("Dark mode for the settings panel by @ana-dev in #311");
    expect(seed.content).not.toContain("<");
    expect(seed.content.endsWith("\n\nhttps://github.com/seedcast-demo/widget/releases/tag/v2.4.0")).toBe(true);
    expect(seed.image_url).toBe("https://avatars.githubusercontent.com/u/4412345?s=60&v=4");
  });

  test("a JSON Feed: summary, url and image; an item without an image has none", async () => {
    const a = await world.createAccount();
    serve("/notes/feed.json", JSON_FEED, "application/feed+json");
    const res = await addFeed(a, "/notes/feed.json");
    expect(res.status).toBe(201);
    expect(res.json.feed.title).toBe("Field Notes");
    const [older, newer] = await Promise.all(
      (res.json.poll.seedIds as string[]).map(async (id) => (await world.call("GET", `/api/v1/seeds/${id}`, { key: a.key })).json),
    );
    expect(newer).toMatchObject({
      title: "First frost, and what survived it",
      content: "The kale is fine. The last tomatoes are not.\n\nhttps://fieldnotes.example/2026/11/22/first-frost/",
      image_url: "https://fieldnotes.example/uploads/2026/frost-kale.jpg",
      category: "garden",
    });
    expect(older).toMatchObject({ title: "Saving bean seeds for next year", image_url: null });
  });

  test("an address that answers no feed: 400 not_a_feed, nothing stored", async () => {
    const a = await world.createAccount();
    serve("/blog/", "<!doctype html><html><head><title>Blog</title></head><body><p>Hello</p></body></html>", "text/html");
    const res = await addFeed(a, "/blog/");
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("not_a_feed");
    expect(await feedsOf(a)).toBe(0);
    expect(await seedsOf(a)).toBe(0);
  });

  test("a private address is refused with the ingest's reason, and nothing is stored", async () => {
    const a = await world.createAccount();
    // The resolver answers 127.0.0.1 for every name; only `localhost` and `127.0.0.1` are in ALLOW_PRIVATE_HOSTS.
    for (const [url, reason] of [
      ["https://intranet.example/feed.xml", "host_not_public"],
      ["https://10.0.0.7/feed.xml", "host_not_public"],
      ["https://[::1]/feed.xml", "host_not_public"],
      ["https://[::ffff:10.0.0.7]/feed.xml", "host_not_public"],
      ["http://blog.example/feed", "https_required"],
      ["https://blog.example:8443/feed", "port_not_allowed"],
    ] as const) {
      const res = await world.call("POST", "/api/v1/feeds", { key: a.key, body: { url, mode: "seed" } });
      expect({ url, status: res.status, error: res.json.error }).toEqual({ url, status: 400, error: reason });
    }
    expect(seen.some((s) => s.path === "/feed.xml")).toBe(false);
    expect(await feedsOf(a)).toBe(0);
  });

  test("an upstream error answers upstream_status; the same URL twice is 409 feed_exists; queue mode needs targets", async () => {
    const a = await world.createAccount();
    const missing = await addFeed(a, "/nothing-here.xml");
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ error: "upstream_status", upstreamStatus: 404 });
    serve("/twice.xml", WORDPRESS, "application/rss+xml");
    expect((await addFeed(a, "/twice.xml")).status).toBe(201);
    const again = await addFeed(a, "/twice.xml");
    expect(again.status).toBe(409);
    expect(again.json.error).toBe("feed_exists");
    const noTargets = await addFeed(a, "/twice.xml", "queue");
    expect(noTargets.status).toBe(400);
    expect(noTargets.json.details).toEqual([{ field: "targets", problem: "must name at least one connection in queue mode" }]);
    const unknown = await addFeed(a, "/twice.xml", "queue", { targets: ["threads"] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("unknown_target");
    expect(await feedsOf(a)).toBe(1);
  });
});

describe("later reads", () => {
  test("conditional GETs: the validators go out and a 304 makes nothing; a new item makes one seed, never twice", async () => {
    const a = await world.createAccount();
    const doc = serve("/cond/feed/", WORDPRESS, "application/rss+xml");
    const added = await addFeed(a, "/cond/feed/");
    const id = added.json.feed.id as string;
    const before = seen.length;
    const unchanged = await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key });
    expect(unchanged.status).toBe(200);
    expect(unchanged.json.poll).toMatchObject({ outcome: "not_modified", newItems: 0 });
    expect(seen.slice(before)).toEqual([{ path: "/cond/feed/", ifNoneMatch: etagOf(doc), ifModifiedSince: lastModifiedOf(doc), status: 304 }]);

    publish("/cond/feed/", `<item><title>Advent calendar cookies</title><link>https://cornerbakery.example/2026/11/26/advent/</link><guid isPermaLink="false">https://cornerbakery.example/?p=1501</guid><description><![CDATA[Twenty-four cookies, one a day.]]></description></item>`);
    const read = await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key });
    expect(read.json.poll).toMatchObject({ outcome: "read", newItems: 1 });
    expect(seen.at(-1)?.status).toBe(200);
    expect((await world.call("GET", `/api/v1/seeds/${read.json.poll.seedIds[0]}`, { key: a.key })).json.title).toBe("Advent calendar cookies");
    expect(await seedsOf(a)).toBe(4);
    // The job's read 30 minutes later: 304 again, nothing new.
    expect(await runJob()).toMatchObject({ failed: 0 });
    expect(seen.at(-1)).toMatchObject({ path: "/cond/feed/", ifNoneMatch: etagOf(doc), status: 304 });
    expect(await seedsOf(a)).toBe(4);
  });

  test("without validators every read is a full GET, and the items already taken stay taken", async () => {
    const a = await world.createAccount();
    serve("/plain.json", JSON_FEED, "application/json", false);
    const added = await addFeed(a, "/plain.json");
    const id = added.json.feed.id as string;
    const reads = [];
    for (let i = 0; i < 3; i++) reads.push(await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key }));
    expect(reads.map((r) => r.json.poll.outcome)).toEqual(["read", "read", "read"]);
    expect(reads.map((r) => r.json.poll.newItems)).toEqual([0, 0, 0]);
    expect(seen.filter((s) => s.path === "/plain.json").every((s) => s.ifNoneMatch === null && s.ifModifiedSince === null && s.status === 200)).toBe(true);
    expect(await seedsOf(a)).toBe(2);
  });

  test("polls of one feed at the same moment: one reads, the others are told it is busy; the new item is one seed", async () => {
    const a = await world.createAccount();
    serve("/race.json", JSON_FEED, "application/json", false);
    const id = (await addFeed(a, "/race.json")).json.feed.id as string;
    publish("/race.json", { id: "https://fieldnotes.example/2026/11/26/garlic/", url: "https://fieldnotes.example/2026/11/26/garlic/", title: "Planting garlic late", content_text: "Still time." });
    world.clock.advance(POLL_INTERVAL_MS + 1000);
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key })),
      pollDueFeeds(world.deps).then(() => null),
    ]);
    const calls = answers.filter((r) => r !== null);
    const read = calls.filter((r) => r.status === 200);
    expect(read.length).toBeLessThanOrEqual(1);
    for (const busy of calls.filter((r) => r.status !== 200)) expect({ status: busy.status, error: busy.json.error }).toEqual({ status: 409, error: "feed_busy" });
    expect(await seedsOf(a)).toBe(3);
    const rows = await world.sql("SELECT item_key FROM feed_items WHERE feed_id = ?", id);
    expect(rows.map((r) => r.item_key).sort()).toEqual([
      "https://fieldnotes.example/2026/11/15/saving-seeds/",
      "https://fieldnotes.example/2026/11/22/first-frost/",
      "https://fieldnotes.example/2026/11/26/garlic/",
    ]);
  });

  test("two replicas on one database reading due feeds at once: each feed is read by one of them per round, each new item is one seed", async () => {
    const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1", ...world.env() });
    const replica = await bootstrap(config, { clock: world.clock, log: silentLogger });
    configureFeedFetch(replica, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
    try {
      const a = await world.createAccount();
      const paths = ["/replicas/one.json", "/replicas/two.json", "/replicas/three.json"];
      for (const path of paths) {
        serve(path, JSON_FEED, "application/feed+json", false);
        expect((await addFeed(a, path)).status).toBe(201);
        publish(path, { id: `${path}#new`, url: `https://fieldnotes.example${path.replace(".json", "/")}`, title: `New on ${path}`, content_text: "Fresh." });
      }
      const before = seen.length;
      const readSoFar = () => new Set(seen.slice(before).filter((s) => paths.includes(s.path)).map((s) => s.path));
      world.clock.advance(POLL_INTERVAL_MS + 1000);
      for (let round = 0; round < 3 && readSoFar().size < paths.length; round++) {
        const start = seen.length;
        await Promise.all([pollDueFeeds(world.deps), pollDueFeeds(replica), pollDueFeeds(world.deps), pollDueFeeds(replica)]);
        const requests = seen.slice(start).filter((s) => paths.includes(s.path)).map((s) => s.path);
        expect(requests.length).toBe(new Set(requests).size);
      }
      expect(seen.slice(before).filter((s) => paths.includes(s.path)).map((s) => s.path).sort()).toEqual([...paths].sort());
      expect(await seedsOf(a)).toBe(paths.length * 3);
    } finally {
      await replica.store.close();
    }
  });

  test("an item is remembered by a unique (feed, key): a second row for it is refused by the database", async () => {
    const a = await world.createAccount();
    serve("/unique.json", JSON_FEED, "application/json");
    const id = (await addFeed(a, "/unique.json")).json.feed.id as string;
    await expect(
      world.sql("INSERT INTO feed_items (feed_id, item_key, seed_id, created_at) VALUES (?, ?, NULL, 0)", id, "https://fieldnotes.example/2026/11/22/first-frost/"),
    ).rejects.toThrow();
  });
});

describe("modes", () => {
  const newItem = (n: number) =>
    `<item><title>Rye bread class number ${n}</title><link>https://cornerbakery.example/2026/12/0${n}/rye-class/</link><guid isPermaLink="false">https://cornerbakery.example/?p=16${n}0</guid><description><![CDATA[<p>Learn our 36-hour rye on Saturday ${n} December, 10:00 to 13:00, for €45.</p><p><img src="${server.url}/images/loaf.png" alt="A rye loaf"></p>]]></description></item>`;

  test("draft: the first read makes seeds only; a new item also becomes a creation, charged as generate", async () => {
    const a = await world.createAccount({ credits: 100 });
    serve("/draft/feed/", WORDPRESS, "application/rss+xml");
    const added = await addFeed(a, "/draft/feed/", "draft");
    expect(added.status).toBe(201);
    expect(added.json.poll).toMatchObject({ newItems: 3, creationIds: [] });
    expect(await creationsOf(a)).toBe(0);
    publish("/draft/feed/", newItem(1));
    const poll = (await world.call("POST", `/api/v1/feeds/${added.json.feed.id}/poll`, { key: a.key })).json.poll;
    expect(poll).toMatchObject({ outcome: "read", newItems: 1, skipped: [] });
    expect(poll.creationIds).toHaveLength(1);
    const creation = (await world.call("GET", `/api/v1/creations/${poll.creationIds[0]}`, { key: a.key })).json.creation;
    expect(creation.seedId).toBe(poll.seedIds[0]);
    expect(creation.body.caption.length).toBeGreaterThan(0);
    // The item's first image went into the library through the ingest (served by the blog's own server here).
    expect(creation.imageAssetId).not.toBeNull();
    const credits = (await world.call("GET", "/api/v1/credits", { key: a.key })).json;
    expect(credits.balance).toBe(95);
  });

  test("draft out of credits: seeds only, nothing charged, and a credits.low event", async () => {
    const a = await world.createAccount({ credits: 7 });
    const hook = await world.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `${receiver.url}/events`, events: ["credits.low"] } });
    expect(hook.status).toBe(201);
    serve("/broke/feed/", WORDPRESS, "application/rss+xml");
    const id = (await addFeed(a, "/broke/feed/", "draft")).json.feed.id as string;
    publish("/broke/feed/", newItem(2));
    publish("/broke/feed/", newItem(3));
    const poll = (await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key })).json.poll;
    // The first new item drafts (7 → 2); the second finds 2 credits and stays a seed.
    expect(poll.newItems).toBe(2);
    expect(poll.creationIds).toHaveLength(1);
    expect(poll.skipped).toEqual([{ itemKey: "https://cornerbakery.example/?p=1630", step: "draft", code: "insufficient_credits", message: expect.any(String) }]);
    expect(await seedsOf(a)).toBe(5);
    expect((await world.call("GET", "/api/v1/credits", { key: a.key })).json).toMatchObject({ balance: 2, reserved: 0 });
    const events = await world.sql("SELECT body FROM webhook_events WHERE account_id = ? AND type = 'credits.low'", a.accountId);
    // The capture 7 → 2 crossed nothing (it was under 10 already): the one event is the feed's, when drafting stopped.
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.body).data).toEqual({ balance: 2, reserved: 0, threshold: 10 });
  });
});

describe("queue mode", () => {
  test("each new item becomes a creation queued into the next free slot of the feed's targets, one slot each", async () => {
    const a = await world.createAccount({ credits: 100 });
    const hook = (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/queue-hook`, secret: WEBHOOK_SECRET })).accountId;
    const slots = await world.call("PUT", "/api/v1/schedule/slots", {
      key: a.key,
      body: { timeZone: "UTC", slots: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time: "09:00", targets: [hook] }] },
    });
    expect(slots.status).toBe(200);
    serve("/queue/feed.json", JSON_FEED, "application/feed+json");
    const added = await addFeed(a, "/queue/feed.json", "queue", { targets: ["webhook"] });
    expect(added.status).toBe(201);
    expect(added.json.feed.targets).toEqual([hook]);
    expect(added.json.poll).toMatchObject({ newItems: 2, creationIds: [], postIds: [] });
    publish("/queue/feed.json", { id: "q-1", url: "https://fieldnotes.example/q-1/", title: "Leeks in December", content_text: "They stand the cold." });
    publish("/queue/feed.json", { id: "q-2", url: "https://fieldnotes.example/q-2/", title: "Mulching the beds", content_text: "Leaves, not plastic." });
    const poll = (await world.call("POST", `/api/v1/feeds/${added.json.feed.id}/poll`, { key: a.key })).json.poll;
    expect(poll).toMatchObject({ outcome: "read", newItems: 2, skipped: [] });
    expect(poll.creationIds).toHaveLength(2);
    expect(poll.postIds).toHaveLength(2);
    const posts = await Promise.all((poll.postIds as string[]).map(async (id) => (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: a.key })).json.post));
    for (const [i, post] of posts.entries()) {
      expect(post).toMatchObject({ status: "scheduled", queued: true, creationId: poll.creationIds[i] });
      expect(post.scheduledTime).toEndWith("T09:00:00.000Z");
    }
    // Two posts, two slots: the older item takes the earlier one.
    expect(Date.parse(posts[1].scheduledTime) - Date.parse(posts[0].scheduledTime)).toBe(24 * 60 * 60 * 1000);
  });

  test("an account that requires approval: the feed’s queued posts wait for an owner: pending_approval, on the Approvals list", async () => {
    const a = await world.createAccount({ credits: 100 });
    const hook = (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/held-hook`, secret: WEBHOOK_SECRET })).accountId;
    const every = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    expect((await world.call("PUT", "/api/v1/schedule/slots", { key: a.key, body: { timeZone: "UTC", slots: [{ days: every, time: "09:00", targets: [hook] }] } })).status).toBe(200);
    expect((await world.call("PATCH", "/api/v1/account", { key: a.key, body: { approval_required: true } })).status).toBe(200);
    serve("/held/feed.json", JSON_FEED, "application/feed+json");
    const id = (await addFeed(a, "/held/feed.json", "queue", { targets: ["webhook"] })).json.feed.id as string;
    publish("/held/feed.json", { id: "h-1", url: "https://fieldnotes.example/h-1/", title: "Garlic goes in", content_text: "Pointy end up." });
    const poll = (await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key })).json.poll;
    expect(poll.postIds).toHaveLength(1);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${poll.postIds[0]}`, { key: a.key })).json.post;
    expect(post).toMatchObject({ status: "pending_approval", queued: true });
    const waiting = (await world.call("GET", "/api/v1/schedule/approvals", { key: a.key })).json;
    expect(JSON.stringify(waiting)).toContain(poll.postIds[0]);
  });

  test("with no free slot the item keeps its seed and creation, and the answer says why", async () => {
    const a = await world.createAccount({ credits: 100 });
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/no-slots`, secret: WEBHOOK_SECRET });
    serve("/noslot/feed.json", JSON_FEED, "application/feed+json");
    const id = (await addFeed(a, "/noslot/feed.json", "queue", { targets: ["webhook"] })).json.feed.id as string;
    publish("/noslot/feed.json", { id: "n-1", url: "https://fieldnotes.example/n-1/", title: "Seed catalogues", content_text: "They came early." });
    const poll = (await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key })).json.poll;
    expect(poll.creationIds).toHaveLength(1);
    expect(poll.postIds).toEqual([]);
    expect(poll.skipped).toEqual([{ itemKey: "n-1", step: "queue", code: "no_free_slot", message: expect.any(String) }]);
  });
});

describe("failing feeds", () => {
  test(`${MAX_FAILURES} failed reads in a row pause the feed with the reason; the job leaves it; a good read by hand resumes it`, async () => {
    const a = await world.createAccount();
    const doc = serve("/flaky.xml", WORDPRESS, "application/rss+xml");
    const id = (await addFeed(a, "/flaky.xml")).json.feed.id as string;
    doc.failWith = 503;
    for (let i = 1; i < MAX_FAILURES; i++) {
      await runJob();
      const feed = (await world.call("GET", `/api/v1/feeds/${id}`, { key: a.key })).json.feed;
      expect({ state: feed.state, failures: feed.failures }).toEqual({ state: "active", failures: i });
    }
    await runJob();
    const paused = (await world.call("GET", `/api/v1/feeds/${id}`, { key: a.key })).json.feed;
    expect(paused).toMatchObject({
      state: "paused",
      failures: MAX_FAILURES,
      lastError: "The feed's server answered 503.",
      lastErrorCode: "upstream_status",
      nextPollAt: null,
    });
    const listed = (await world.call("GET", "/api/v1/feeds", { key: a.key })).json.feeds;
    expect(listed.find((f: { id: string }) => f.id === id)?.state).toBe("paused");
    const reads = seen.filter((s) => s.path === "/flaky.xml").length;
    await runJob();
    await runJob();
    expect(seen.filter((s) => s.path === "/flaky.xml").length).toBe(reads);

    const stillFailing = await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key });
    expect(stillFailing.json.poll).toMatchObject({ outcome: "failed", failure: { code: "upstream_status" } });
    expect(stillFailing.json.feed.state).toBe("paused");
    doc.failWith = null;
    const resumed = await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: a.key });
    expect(resumed.json.feed).toMatchObject({ state: "active", failures: 0, lastError: null });
    expect(resumed.json.poll.outcome).not.toBe("failed");
  });
});

describe("the rest of the routes", () => {
  test("list, get, delete; another account's feed is 404; deleting keeps the seeds", async () => {
    const a = await world.createAccount();
    const b = await world.createAccount();
    serve("/own.json", JSON_FEED, "application/json");
    const id = (await addFeed(a, "/own.json")).json.feed.id as string;
    expect((await world.call("GET", "/api/v1/feeds", { key: a.key })).json.feeds.map((f: { id: string }) => f.id)).toEqual([id]);
    expect((await world.call("GET", `/api/v1/feeds/${id}`, { key: b.key })).status).toBe(404);
    expect((await world.call("POST", `/api/v1/feeds/${id}/poll`, { key: b.key })).status).toBe(404);
    expect((await world.call("DELETE", `/api/v1/feeds/${id}`, { key: b.key })).status).toBe(404);
    expect((await world.call("DELETE", `/api/v1/feeds/${id}`, { key: a.key })).json).toEqual({ id, deleted: true });
    expect((await world.call("GET", `/api/v1/feeds/${id}`, { key: a.key })).status).toBe(404);
    expect(await seedsOf(a)).toBe(2);
    expect(Number((await world.sql("SELECT count(*) AS n FROM feed_items WHERE feed_id = ?", id))[0]?.n)).toBe(0);
  });

  test("the job is one of the system jobs, every minute", () => {
    expect(systemJobs.find((j) => j.id === FEEDS_POLL_JOB_ID)?.schedule).toBe("20 * * * * *");
  });
});
