/**
 * Issue 27, bulk (decisions.md §14): POST /api/v1/schedule/import (text/csv) checks every row before storing anything
 * and answers 400 invalid_rows naming each bad row, field and problem; a good file becomes creations and posts in one
 * transaction (10,000 rows); images are fetched once per URL over HTTPS from a local server with the test CA, a failing
 * one stores nothing; GET /api/v1/schedule/posts.csv → import round-trips; Idempotency-Key replays. Real webhook
 * receiver on 127.0.0.1 as the connection.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Papa from "papaparse";
import sharp from "sharp";
import { isoAt } from "../src/lib/clock";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { addConnection } from "../src/modules/connections/service";
import { type TestCa, type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { WEBHOOK_SECRET } from "./publishing-fixtures";
import { connectV2, grantFor, refusalOf, registerTestClient, serveWorld } from "./helpers/mcp";

let world: World;
let receiver: WebhookReceiver;
let ca: TestCa;
let images: TestHttpsServer;
const hits = new Map<string, number>();
let png: Uint8Array<ArrayBuffer>;

const HEADER = "caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment";
const HOUR = 60 * 60 * 1000;

beforeAll(async () => {
  png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 4, background: "#3a7" } }).png().toBuffer());
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "localhost,127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  ca = createTestCa();
  images = startHttpsServer(
    (req) => {
      const path = new URL(req.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      if (path.startsWith("/img/")) return new Response(png, { headers: { "content-type": "image/png" } });
      return new Response("gone", { status: 404 });
    },
    { ca },
  );
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
});

afterAll(async () => {
  await images.stop();
  ca.dispose();
  await receiver.stop();
  await world.close();
});

async function webhookFor(a: TestAccount, path = "/hook"): Promise<string> {
  return (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}${path}`, secret: WEBHOOK_SECRET })).accountId;
}

async function importCsv(a: TestAccount, csv: string, headers: Record<string, string> = {}, key = a.key) {
  return world.call("POST", "/api/v1/schedule/import", { key, rawBody: csv, headers: { "content-type": "text/csv", ...headers } });
}

async function counts(a: TestAccount): Promise<{ posts: number; creations: number; assets: number }> {
  const n = async (table: string) =>
    Number((await world.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`, a.accountId))[0]?.n ?? 0);
  return { posts: await n("scheduled_posts"), creations: await n("creations"), assets: await n("assets") };
}

/** A CSV cell, quoted. */
const q = (value: string) => `"${value.replaceAll('"', '""')}"`;
const at = (hoursAhead: number) => isoAt(world.clock.now() + hoursAhead * HOUR);

describe("refusals", () => {
  test("only text/csv: JSON → 415 here, and CSV → 415 on POST /schedule; a key without the schedule group → 403", async () => {
    const a = await world.createAccount();
    const json = await world.call("POST", "/api/v1/schedule/import", { key: a.key, body: { caption: "x" } });
    expect([json.status, json.json.error]).toEqual([415, "unsupported_media_type"]);
    const csvElsewhere = await world.call("POST", "/api/v1/schedule", { key: a.key, rawBody: `${HEADER}\r\n`, headers: { "content-type": "text/csv" } });
    expect([csvElsewhere.status, csvElsewhere.json.error]).toEqual([415, "unsupported_media_type"]);
    const readOnly = (await a.mint(["read"])).key;
    const refused = await importCsv(a, `${HEADER}\r\nx,,,${at(2)},,webhook,\r\n`, {}, readOnly);
    expect([refused.status, refused.json.error, refused.json.requiredGroup]).toEqual([403, "forbidden", "schedule"]);
  });

  test("one bad row among three stores nothing and names that row, its field and problem", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const before = await counts(a);
    const csv = [HEADER, `First,,,${at(2)},,webhook,`, `Second,,,not a time,,webhook,`, `Third,,,${at(4)},,webhook,Say hi`].join("\r\n");
    const res = await importCsv(a, csv);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe("invalid_rows");
    expect(res.json.rows).toEqual([{ row: 2, field: "scheduled_time", problem: "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z" }]);
    expect(await counts(a)).toEqual(before);
  });

  test("every bad row is named, each field once per problem; nothing stored", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const before = await counts(a);
    const csv = [
      HEADER,
      `OK,,,${at(2)},,webhook,`,
      `,,,${at(2)},,webhook,`, // 2: empty caption
      `Too soon,,,${at(0)},,webhook,`, // 3
      `Both,,,${at(2)},true,webhook,`, // 4
      `Neither,,,,,webhook,`, // 5
      `Queue word,,,,maybe,webhook,`, // 6
      `Nowhere,,,${at(2)},,myspace,`, // 7
      `No targets,,,${at(2)},,,`, // 8
      `Bad URL,ftp://example.com/a.png,,${at(2)},,webhook,`, // 9
      `Alt texts,,one|two,${at(2)},,webhook,`, // 10
    ].join("\r\n");
    const res = await importCsv(a, csv);
    expect(res.status).toBe(400);
    const named = (res.json.rows as { row: number; field: string }[]).map((r) => [r.row, r.field]);
    expect(named).toEqual([
      [2, "caption"],
      [3, "scheduled_time"],
      [4, "scheduled_time"],
      [5, "scheduled_time"],
      [6, "queue"],
      [7, "targets"],
      [8, "targets"],
      [9, "image_urls"],
      [10, "alt_texts"],
    ]);
    expect(res.json.message).toBe("9 rows cannot be imported; nothing was stored.");
    expect(await counts(a)).toEqual(before);
  });

  test("a malformed file names the row where reading stopped; an unknown or missing column names the header (row 0)", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const ragged = await importCsv(a, [HEADER, `One,,,${at(2)},,webhook,`, `Two,,,${at(2)}`].join("\n"));
    expect([ragged.status, ragged.json.rows]).toEqual([400, [{ row: 2, field: "csv", problem: "this row has a different number of cells than the header" }]]);
    const unknown = await importCsv(a, `caption,targets,colour\r\nHi,webhook,red\r\n`);
    expect(unknown.json.rows).toEqual([{ row: 0, field: "colour", problem: expect.stringContaining("is not a column") }]);
    const missing = await importCsv(a, `caption,scheduled_time\r\nHi,${at(2)}\r\n`);
    expect(missing.json.rows).toEqual([{ row: 0, field: "targets", problem: "is missing from the header row" }]);
    expect((await counts(a)).posts).toBe(0);
  });

  test("a caption over the hand-written limit (63,206 characters) is named at its row", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const long = "x".repeat(63_207);
    const res = await importCsv(a, [HEADER, `${q(long)},,,${at(2)},,webhook,`].join("\r\n"));
    expect(res.status).toBe(400);
    expect(res.json.rows[0]).toMatchObject({ row: 1, field: "caption" });
  });
});

describe("imports", () => {
  test("rows become creations and posts: times, queue slots one after the other, first comments, alt texts; the posts read back", async () => {
    const a = await world.createAccount();
    const hook = await webhookFor(a);
    const slots = await world.call("PUT", "/api/v1/schedule/slots", {
      key: a.key,
      body: { timeZone: "UTC", slots: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time: "09:00", targets: [hook] }] },
    });
    expect(slots.status).toBe(200);
    const csv = [
      HEADER,
      `"Hello, world",,,${at(3)},false,webhook,${q('She said "hi"')}`,
      `Queued one,,,,true,${hook},`,
      `Queued two,,,,TRUE,webhook,`,
    ].join("\r\n");
    const res = await importCsv(a, csv);
    expect(res.status).toBe(200);
    expect(res.json.imported).toBe(3);
    const [first, q1, q2] = res.json.posts as { row: number; id: string; scheduledTime: string; queued: boolean }[];
    expect(first).toMatchObject({ row: 1, scheduledTime: at(3), queued: false });
    expect([q1!.queued, q2!.queued]).toEqual([true, true]);
    expect(q1!.scheduledTime).not.toBe(q2!.scheduledTime);
    expect(q1!.scheduledTime.endsWith("T09:00:00.000Z")).toBe(true);
    expect(Date.parse(q2!.scheduledTime) - Date.parse(q1!.scheduledTime)).toBe(24 * HOUR);
    const post = await world.call("GET", `/api/v1/schedule/posts/${first!.id}`, { key: a.key });
    expect(post.json.post.content).toMatchObject({ caption: "Hello, world", firstComment: 'She said "hi"', images: [] });
    expect(post.json.post.targets.map((t: { accountId: string }) => t.accountId)).toEqual([hook]);
    expect(await counts(a)).toMatchObject({ posts: 3, creations: 3 });
  });

  test("images: each distinct URL fetched once, alt texts by position; a URL that fails stores nothing and removes what was fetched", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const shared = `${images.url}/img/shared.png`;
    const csv = [HEADER, `One,${shared}|${images.url}/img/own.png,|A green square,${at(2)},,webhook,`, `Two,${shared},,${at(3)},,webhook,`].join("\r\n");
    const res = await importCsv(a, csv);
    expect(res.status).toBe(200);
    expect(hits.get("/img/shared.png")).toBe(1);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${res.json.posts[0].id}`, { key: a.key })).json.post;
    expect(post.content.images.map((i: { altText: string }) => i.altText)).toEqual(["", "A green square"]);
    const second = (await world.call("GET", `/api/v1/schedule/posts/${res.json.posts[1].id}`, { key: a.key })).json.post;
    expect(second.content.images[0].assetId).toBe(post.content.images[0].assetId);

    const before = await counts(a);
    const failing = [HEADER, `Fine,${images.url}/img/fine.png,,${at(2)},,webhook,`, `Broken,${images.url}/missing.png,,${at(2)},,webhook,`].join("\r\n");
    const refused = await importCsv(a, failing);
    expect(refused.status).toBe(400);
    expect(refused.json.rows).toEqual([{ row: 2, field: "image_urls", problem: expect.stringContaining("upstream_status") }]);
    expect(hits.get("/img/fine.png")).toBe(1);
    // The image fetched for row 1 was removed again: nothing of the refused file stays.
    expect(await counts(a)).toEqual(before);
  });

  test("more than 1,000 different image URLs to fetch: the row past the limit is named before anything is fetched", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const lines = [HEADER];
    for (let i = 0; i < 1_001; i++) lines.push(`Row ${i + 1},${images.url}/img/many-${i}.png,,${at(2)},,webhook,`);
    const res = await importCsv(a, lines.join("\r\n"));
    expect(res.status).toBe(400);
    expect(res.json.rows).toEqual([{ row: 1_001, field: "image_urls", problem: expect.stringContaining("at most 1000 different image URLs") }]);
    expect(hits.get("/img/many-0.png")).toBeUndefined();
    expect((await counts(a)).assets).toBe(0);
  });

  test("approval: an editor's import on an account that requires approval stores every post pending_approval; an owner's is scheduled", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    expect((await world.call("PATCH", "/api/v1/account", { key: a.key, body: { approval_required: true } })).status).toBe(200);
    const editorKey = (await a.mint(["read", "schedule"], { userId: await a.addMember("editor") })).key;
    const csv = [HEADER, `Needs a yes,,,${at(2)},,webhook,`, `So does this,,,${at(3)},,webhook,`].join("\r\n");
    const res = await importCsv(a, csv, {}, editorKey);
    expect(res.status).toBe(200);
    for (const { id } of res.json.posts as { id: string }[]) {
      const post = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: a.key })).json.post;
      expect([post.status, post.targets[0].status]).toEqual(["pending_approval", "pending_approval"]);
    }
    const owners = await importCsv(a, [HEADER, `An owner's,,,${at(2)},,webhook,`].join("\r\n"));
    expect((await world.call("GET", `/api/v1/schedule/posts/${owners.json.posts[0].id}`, { key: a.key })).json.post.status).toBe("scheduled");
  });

  test("Idempotency-Key: the same file twice with one key stores it once and replays the answer", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const csv = [HEADER, `Once,,,${at(2)},,webhook,`].join("\r\n");
    const first = await importCsv(a, csv, { "idempotency-key": "import-1" });
    const again = await importCsv(a, csv, { "idempotency-key": "import-1" });
    expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([200, 200, "true"]);
    expect(again.json).toEqual(first.json);
    expect((await counts(a)).posts).toBe(1);
    const other = await importCsv(a, `${csv}\r\nTwice,,,${at(3)},,webhook,`, { "idempotency-key": "import-1" });
    expect([other.status, other.json.error]).toEqual([422, "idempotency_key_reused"]);
  });

  test("10,000 rows import in one request; a bad last row among 10,000 stores none of them", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const lines = [HEADER];
    for (let i = 0; i < 10_000; i++) lines.push(`Post number ${i + 1},,,${at(2 + i / 100)},,webhook,Comment ${i + 1}`);
    const bad = [...lines.slice(0, -1), `Post number 10000,,,${at(2)},,nowhere,`];
    const refused = await importCsv(a, bad.join("\r\n"));
    expect(refused.status).toBe(400);
    expect(refused.json.rows).toEqual([{ row: 10_000, field: "targets", problem: expect.stringContaining('"nowhere"') }]);
    expect((await counts(a)).posts).toBe(0);
    const res = await importCsv(a, lines.join("\r\n"));
    expect(res.status).toBe(200);
    expect(res.json.imported).toBe(10_000);
    expect(await counts(a)).toMatchObject({ posts: 10_000, creations: 10_000 });
    const targets = Number((await world.sql<{ n: number | string }>("SELECT count(*) AS n FROM scheduled_post_targets WHERE account_id = ?", a.accountId))[0]?.n);
    expect(targets).toBe(10_000);
  }, 300_000);
});

describe("storing in chunks", () => {
  test("137 rows, every third with two targets: each chunk's posts go in before their targets, and every post has its own", async () => {
    const a = await world.createAccount();
    const one = await webhookFor(a, "/one");
    const two = await webhookFor(a, "/two");
    const lines = [HEADER];
    for (let i = 0; i < 137; i++) lines.push(`Post ${i + 1},,,${at(2 + i / 10)},,${i % 3 === 0 ? `${one}|${two}` : one},`);
    const res = await importCsv(a, lines.join("\r\n"));
    expect(res.status).toBe(200);
    expect(res.json.imported).toBe(137);
    const perPost = await world.sql<{ post_id: string; n: number | string }>(
      "SELECT post_id, count(*) AS n FROM scheduled_post_targets WHERE account_id = ? GROUP BY post_id",
      a.accountId,
    );
    const byPost = new Map(perPost.map((r) => [r.post_id, Number(r.n)]));
    expect(res.json.posts.map((p: { row: number; id: string }) => byPost.get(p.id))).toEqual(Array.from({ length: 137 }, (_, i) => (i % 3 === 0 ? 2 : 1)));
    expect(await counts(a)).toMatchObject({ posts: 137, creations: 137 });
  });
});

describe("export", () => {
  test("posts.csv has the import's columns plus id, status, published_urls; importing it makes the same posts again", async () => {
    const a = await world.createAccount();
    const hook = await webhookFor(a);
    await world.call("PUT", "/api/v1/schedule/slots", {
      key: a.key,
      body: { timeZone: "UTC", slots: [{ days: ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], time: "18:30", targets: [hook] }] },
    });
    const csv = [
      HEADER,
      `${q("Line one\nline two, with a comma")},${images.url}/img/rt.png,${q("Alt | not split? no: one")},${at(5)},,webhook,${q("First comment")}`,
      `Queued,,,,true,webhook,`,
      `Plain,,,${at(7)},false,webhook,`,
    ].join("\r\n");
    expect((await importCsv(a, csv)).status).toBe(400); // an alt text holding | is two alt texts for one image: refused
    const good = csv.replace(q("Alt | not split? no: one"), "A green square");
    expect((await importCsv(a, good)).status).toBe(200);

    const exported = await world.call("GET", "/api/v1/schedule/posts.csv", { key: (await a.mint(["read"])).key });
    expect(exported.status).toBe(200);
    expect(exported.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(exported.headers.get("content-disposition")).toMatch(/^attachment; filename="seedcast-posts-\d{4}-\d{2}-\d{2}\.csv"$/);
    const byCaption = (a: Record<string, string>, b: Record<string, string>) => a.caption!.localeCompare(b.caption!);
    const rows = (Papa.parse<Record<string, string>>(exported.text, { header: true, skipEmptyLines: true }).data).sort(byCaption);
    expect(Object.keys(rows[0]!)).toEqual([...HEADER.split(","), "id", "status", "published_urls"]);
    expect(rows.map((r) => [r.caption, r.queue, r.status, r.targets])).toEqual([
      ["Line one\nline two, with a comma", "false", "scheduled", hook],
      ["Plain", "false", "scheduled", hook],
      ["Queued", "true", "scheduled", hook],
    ]);
    expect(rows[0]!.image_urls).toMatch(/^http:\/\/localhost\/media\/[0-9a-f-]{36}\.png$/);

    // Round trip: the export imported (to a second account would need its assets; the same account reuses them).
    const assetsBefore = (await counts(a)).assets;
    world.clock.advance(1000); // the new posts are the newest, listed first
    const again = await importCsv(a, exported.text);
    expect(again.status).toBe(200);
    expect(again.json.imported).toBe(3);
    expect((await counts(a)).assets).toBe(assetsBefore);
    const second = await world.call("GET", "/api/v1/schedule/posts.csv", { key: a.key });
    const rows2 = (Papa.parse<Record<string, string>>(second.text, { header: true, skipEmptyLines: true }).data).slice(0, 3).sort(byCaption);
    const strip = (r: Record<string, string>) => ({ ...r, id: "", scheduled_time: r.queue === "true" ? "" : r.scheduled_time });
    expect(rows2.map(strip)).toEqual(rows.map(strip));
    expect(new Set([...rows2, ...rows].map((r) => r.id)).size).toBe(6);
  });
});

describe("MCP (the official SDK's client over HTTP, an OAuth grant)", () => {
  test("import_posts takes the CSV as text: a bad row is refused with the same rows as REST, a good file is imported", async () => {
    const served = serveWorld(world);
    try {
      const clientId = await registerTestClient(world);
      const a = await world.createAccount();
      await webhookFor(a);
      const client = await connectV2(`${served.base}/mcp`, (await grantFor(world, clientId, a.accountId, a.userId, ["read", "schedule"])).accessToken);
      try {
        const bad = [HEADER, `Fine,,,${at(2)},,webhook,`, `No target,,,${at(2)},,,`].join("\r\n");
        const refused = await client.callTool("import_posts", { csv: bad });
        expect(refusalOf(client, refused)).toMatchObject({ error: "invalid_rows", rows: (await importCsv(a, bad)).json.rows });
        expect((await counts(a)).posts).toBe(0);
        const good = await client.callTool("import_posts", { csv: [HEADER, `From an assistant,,,${at(2)},,webhook,Hi`].join("\r\n") });
        expect(good.isError).toBeFalsy();
        expect(good.structuredContent).toMatchObject({ imported: 1, posts: [{ row: 1, scheduledTime: at(2), queued: false }] });
        expect((await counts(a)).posts).toBe(1);
      } finally {
        await client.close();
      }
    } finally {
      await served.stop();
    }
  });
});
