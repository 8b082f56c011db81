/**
 * Issue 27, the queue (decisions.md §14): the account's settings (time zone, approval flag; owners change them),
 * posting slots, `queue: true` on POST /schedule (first free slot, no_free_slot, concurrent callers, freed slots), and
 * slots around the DST changes of Europe/Berlin and America/New_York with the clock moved, never slept. Real webhook
 * receiver on 127.0.0.1 as the connection.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addConnection } from "../src/modules/connections/service";
import { queuePost } from "../src/modules/schedule/queue";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { countPosts, makeCreation, WEBHOOK_SECRET } from "./publishing-fixtures";
import { connectV2, grantFor, refusalOf, registerTestClient, serveWorld } from "./helpers/mcp";

let world: World;
let receiver: WebhookReceiver;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await receiver.stop();
  await world.close();
});

async function webhookFor(a: TestAccount, path = "/hook"): Promise<string> {
  return (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}${path}`, secret: WEBHOOK_SECRET })).accountId;
}

async function creationFor(a: TestAccount, caption = "From the queue"): Promise<string> {
  return (await makeCreation(world.deps, a.accountId, { caption })).id;
}

const ALL_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

async function putSlots(a: TestAccount, timeZone: string, slots: { days: string[]; time: string; targets: string[] }[], key = a.key) {
  return world.call("PUT", "/api/v1/schedule/slots", { key, body: { timeZone, slots } });
}

async function queue(a: TestAccount, creationId: string, targets: string[], key = a.key) {
  return world.call("POST", "/api/v1/schedule", { key, body: { type: "social_post", creation_id: creationId, queue: true, targets } });
}

describeAuthMatrix("queue", () => world, [
  { method: "GET", path: "/api/v1/account" },
  { method: "PATCH", path: "/api/v1/account", validBody: { time_zone: "Europe/Berlin" } },
  { method: "GET", path: "/api/v1/schedule/slots" },
  { method: "PUT", path: "/api/v1/schedule/slots", validBody: { timeZone: "UTC", slots: [] } },
  { method: "DELETE", path: "/api/v1/schedule/series/0190a0a0-0000-7000-8000-000000000000" },
]);

describe("account settings", () => {
  test("GET answers the defaults: UTC, approval off", async () => {
    const a = await world.createAccount({ name: "Settings Co" });
    const res = await world.call("GET", "/api/v1/account", { key: (await a.mint(["read"])).key });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ account: { id: a.accountId, name: "Settings Co", timeZone: "UTC", approvalRequired: false } });
  });

  test("an owner changes the time zone and the approval flag; the zone name is checked and canonical", async () => {
    const a = await world.createAccount();
    const res = await world.call("PATCH", "/api/v1/account", { key: a.key, body: { time_zone: "europe/berlin", approval_required: true } });
    expect(res.status).toBe(200);
    expect(res.json.account).toMatchObject({ timeZone: "Europe/Berlin", approvalRequired: true });
    const bad = await world.call("PATCH", "/api/v1/account", { key: a.key, body: { time_zone: "Mars/Olympus_Mons", approval_required: false } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe("invalid_request");
    expect(bad.json.details[0].field).toBe("time_zone");
    // Nothing of the refused change was written.
    expect((await world.call("GET", "/api/v1/account", { key: a.key })).json.account).toMatchObject({ timeZone: "Europe/Berlin", approvalRequired: true });
  });

  test("an editor's key: 403 forbidden with requiredRole owner, nothing changed; a key without the schedule group: requiredGroup", async () => {
    const a = await world.createAccount();
    const editor = await a.addMember("editor");
    const editorKey = (await a.mint(["read", "schedule"], { userId: editor })).key;
    const refused = await world.call("PATCH", "/api/v1/account", { key: editorKey, body: { approval_required: true } });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: "forbidden", requiredRole: "owner" });
    const readOnly = await world.call("PATCH", "/api/v1/account", { key: (await a.mint(["read"])).key, body: { approval_required: true } });
    expect(readOnly.status).toBe(403);
    expect(readOnly.json).toMatchObject({ error: "forbidden", requiredGroup: "schedule" });
    expect((await world.call("GET", "/api/v1/account", { key: a.key })).json.account.approvalRequired).toBe(false);
  });

  test("unknown fields are refused", async () => {
    const a = await world.createAccount();
    const res = await world.call("PATCH", "/api/v1/account", { key: a.key, body: { name: "Renamed" } });
    expect(res.status).toBe(400);
  });
});

describe("posting slots", () => {
  test("PUT then GET answers the same schedule; days come back in week order, each once", async () => {
    const a = await world.createAccount();
    const hook = await webhookFor(a);
    const put = await putSlots(a, "UTC", [{ days: ["fri", "mon", "mon"], time: "09:30", targets: [hook, hook] }]);
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ timeZone: "UTC", slots: [{ days: ["mon", "fri"], time: "09:30", targets: [hook] }] });
    const got = await world.call("GET", "/api/v1/schedule/slots", { key: (await a.mint(["read"])).key });
    expect(got.json).toEqual(put.json);
  });

  test("refusals write nothing: an unknown target, a bad time, no days; another account's connection is unknown", async () => {
    const a = await world.createAccount();
    const b = await world.createAccount();
    const hook = await webhookFor(a);
    const theirs = await webhookFor(b);
    await putSlots(a, "UTC", [{ days: ["mon"], time: "09:00", targets: [hook] }]);
    const cases: [unknown[], number, string][] = [
      [[{ days: ["mon"], time: "09:00", targets: [theirs] }], 400, "unknown_target"],
      [[{ days: ["mon"], time: "9:00", targets: [hook] }], 400, "invalid_request"],
      [[{ days: ["mon"], time: "24:00", targets: [hook] }], 400, "invalid_request"],
      [[{ days: [], time: "09:00", targets: [hook] }], 400, "invalid_request"],
      [[{ days: ["someday"], time: "09:00", targets: [hook] }], 400, "invalid_request"],
    ];
    for (const [slots, status, code] of cases) {
      const res = await world.call("PUT", "/api/v1/schedule/slots", { key: a.key, body: { timeZone: "UTC", slots } });
      expect({ slots, status: res.status, code: res.json.error }).toEqual({ slots, status, code });
    }
    expect((await world.call("GET", "/api/v1/schedule/slots", { key: a.key })).json.slots).toEqual([{ days: ["mon"], time: "09:00", targets: [hook] }]);
  });

  test("a timeZone other than the account's changes it: an owner may, an editor gets 403 requiredRole owner", async () => {
    const a = await world.createAccount();
    const hook = await webhookFor(a);
    const editor = await a.addMember("editor");
    const editorKey = (await a.mint(["read", "schedule"], { userId: editor })).key;
    const slots = [{ days: ["tue"], time: "08:00", targets: [hook] }];
    // The editor may change the slots in the account's own zone.
    expect((await putSlots(a, "UTC", slots, editorKey)).status).toBe(200);
    const refused = await putSlots(a, "America/New_York", slots, editorKey);
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: "forbidden", requiredRole: "owner" });
    expect((await world.call("GET", "/api/v1/account", { key: a.key })).json.account.timeZone).toBe("UTC");
    expect((await putSlots(a, "America/New_York", slots)).status).toBe(200);
    expect((await world.call("GET", "/api/v1/account", { key: a.key })).json.account.timeZone).toBe("America/New_York");
  });
});

describe("queue: true", () => {
  test("takes the first slot at least 5 minutes ahead that has all the targets and no other queued post", async () => {
    world.clock.set("2026-06-01T08:57:00Z"); // a Monday
    const a = await world.createAccount();
    const one = await webhookFor(a, "/one");
    const two = await webhookFor(a, "/two");
    await putSlots(a, "UTC", [
      { days: ALL_DAYS, time: "09:00", targets: [one, two] },
      { days: ALL_DAYS, time: "12:00", targets: [one] },
      { days: ALL_DAYS, time: "15:00", targets: [one, two] },
    ]);
    const creation = await creationFor(a);
    // 09:00 is 3 minutes ahead: too soon. 12:00 lacks `two`.
    const first = await queue(a, creation, [one, two]);
    expect(first.status).toBe(200);
    expect(first.json.post).toMatchObject({ scheduledTime: "2026-06-01T15:00:00.000Z", queued: true, seriesId: null, status: "scheduled" });
    const second = await queue(a, creation, [one]);
    expect(second.json.post.scheduledTime).toBe("2026-06-01T12:00:00.000Z");
    const third = await queue(a, creation, [one]);
    expect(third.json.post.scheduledTime).toBe("2026-06-02T09:00:00.000Z");
    const fourth = await queue(a, creation, [one, two]);
    expect(fourth.json.post.scheduledTime).toBe("2026-06-02T15:00:00.000Z");
    // The post reads back the same.
    const read = await world.call("GET", `/api/v1/schedule/posts/${first.json.post.id}`, { key: a.key });
    expect(read.json.post).toMatchObject({ queued: true, scheduledTime: "2026-06-01T15:00:00.000Z" });
  });

  test("no slot with these targets in 90 days → 409 no_free_slot, nothing stored; no slots at all → the same", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a, "/one");
    const two = await webhookFor(a, "/two");
    const creation = await creationFor(a);
    const before = await countPosts(world.deps);
    const none = await queue(a, creation, [one]);
    expect(none.status).toBe(409);
    expect(none.json.error).toBe("no_free_slot");
    await putSlots(a, "UTC", [{ days: ["wed"], time: "10:00", targets: [one] }]);
    const lacking = await queue(a, creation, [one, two]);
    expect(lacking.status).toBe(409);
    expect(lacking.json.error).toBe("no_free_slot");
    expect(await countPosts(world.deps)).toBe(before);
    // 13 Wednesdays in 90 days: the 14th queued post finds no slot.
    const times: string[] = [];
    for (let i = 0; i < 13; i++) times.push((await queue(a, creation, [one])).json.post.scheduledTime);
    expect(new Set(times).size).toBe(13);
    expect(times[0]).toBe("2026-06-03T10:00:00.000Z");
    expect((await queue(a, creation, [one])).json.error).toBe("no_free_slot");
  });

  test("scheduled_time and queue together, or neither: 400 invalid_request", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }]);
    const creation = await creationFor(a);
    const both = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation, queue: true, scheduled_time: "2026-06-02T10:00:00Z", targets: [one] },
    });
    expect(both.status).toBe(400);
    expect(both.json.details[0].field).toBe("scheduled_time");
    const neither = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: creation, targets: [one] } });
    expect(neither.status).toBe(400);
    expect(neither.json.error).toBe("invalid_request");
    const queueFalse = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: creation, queue: false, targets: [one] } });
    expect(queueFalse.status).toBe(400);
  });

  test("cancelling a queued post frees its slot; moving one to another time takes it out of the queue", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }]);
    const creation = await creationFor(a);
    const first = (await queue(a, creation, [one])).json.post;
    const second = (await queue(a, creation, [one])).json.post;
    expect([first.scheduledTime, second.scheduledTime]).toEqual(["2026-06-01T10:00:00.000Z", "2026-06-02T10:00:00.000Z"]);
    expect((await world.call("DELETE", `/api/v1/schedule/${first.id}`, { key: a.key })).status).toBe(200);
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-01T10:00:00.000Z");
    const moved = await world.call("PATCH", `/api/v1/schedule/${second.id}`, { key: a.key, body: { scheduled_time: "2026-06-02T11:30:00Z" } });
    expect(moved.status).toBe(200);
    expect(moved.json.post).toMatchObject({ scheduledTime: "2026-06-02T11:30:00.000Z", queued: false });
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-02T10:00:00.000Z");
  });

  test("a slot freed behind the server's back (another process's statements) is found by the next queue: true", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }]);
    const creation = await creationFor(a);
    const posts = [];
    for (let i = 0; i < 4; i++) posts.push((await queue(a, creation, [one])).json.post);
    expect(posts.map((p) => p.scheduledTime)).toEqual(["2026-06-01T10:00:00.000Z", "2026-06-02T10:00:00.000Z", "2026-06-03T10:00:00.000Z", "2026-06-04T10:00:00.000Z"]);
    // As the CLI next to the server or an operator's statement would: out of the queue, then moved to another time.
    await world.sql("UPDATE scheduled_posts SET queued = ? WHERE id = ?", world.dialect === "postgres" ? false : 0, posts[1].id);
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-02T10:00:00.000Z");
    await world.sql("UPDATE scheduled_posts SET scheduled_time = scheduled_time + 60000 WHERE id = ?", posts[0].id);
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-01T10:00:00.000Z");
    await world.sql("DELETE FROM scheduled_post_targets WHERE post_id = ?", posts[2].id);
    await world.sql("DELETE FROM scheduled_posts WHERE id = ?", posts[2].id);
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-03T10:00:00.000Z");
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-05T10:00:00.000Z");
  });

  test("the clock moved back: a slot before the last queued call's start is still found", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }]);
    const creation = await creationFor(a);
    // Called at 12:00 through the service (the HTTP rate limiter's window would not survive the clock going back).
    world.clock.set("2026-06-01T12:00:00Z");
    expect((await queuePost(world.deps, a.accountId, { creationId: creation, targets: [one] })).post.scheduledTime).toBe("2026-06-02T10:00:00.000Z");
    world.clock.set("2026-06-01T08:00:00Z");
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-01T10:00:00.000Z");
    expect((await queue(a, creation, [one])).json.post.scheduledTime).toBe("2026-06-03T10:00:00.000Z");
  });

  test("20 concurrent queue: true calls take 20 distinct slots", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }, { days: ALL_DAYS, time: "16:00", targets: [one] }]);
    const creation = await creationFor(a);
    const answers = await Promise.all(Array.from({ length: 20 }, () => queue(a, creation, [one])));
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    const times = answers.map((r) => r.json.post.scheduledTime as string).sort();
    expect(new Set(times).size).toBe(20);
    // They are the first 20 slots: 10 days × 2.
    expect(times[0]).toBe("2026-06-01T10:00:00.000Z");
    expect(times[19]).toBe("2026-06-10T16:00:00.000Z");
  });

  test("the database refuses a second queued post in one slot (the unique index), whatever a writer believed", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const a = await world.createAccount();
    const one = await webhookFor(a);
    await putSlots(a, "UTC", [{ days: ALL_DAYS, time: "10:00", targets: [one] }]);
    const post = (await queue(a, await creationFor(a), [one])).json.post;
    const now = world.clock.now();
    await expect(
      world.sql(
        "INSERT INTO scheduled_posts (id, account_id, creation_id, scheduled_time, status, caption, queued, created_at, updated_at) VALUES (?, ?, ?, ?, 'scheduled', 'x', ?, ?, ?)",
        crypto.randomUUID(),
        a.accountId,
        post.creationId,
        Date.parse(post.scheduledTime),
        world.dialect === "postgres" ? true : 1,
        now,
        now,
      ),
    ).rejects.toThrow();
  });
});

/** Queues `n` posts for `a` and answers their times. */
async function queueTimes(a: TestAccount, target: string, n: number): Promise<string[]> {
  const creation = await creationFor(a);
  const times: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await queue(a, creation, [target]);
    expect(res.status).toBe(200);
    times.push(res.json.post.scheduledTime);
  }
  return times;
}

describe("slots across DST changes (the clock moved, never slept)", () => {
  async function zonedAccount(timeZone: string, time = "09:00") {
    const a = await world.createAccount();
    const hook = await webhookFor(a);
    expect((await putSlots(a, timeZone, [{ days: ALL_DAYS, time, targets: [hook] }])).status).toBe(200);
    return { a, hook };
  }

  test("Europe/Berlin, spring (29 March 2026): 09:00 stays 09:00, one hour earlier in UTC", async () => {
    world.clock.set("2026-03-27T12:00:00Z");
    const { a, hook } = await zonedAccount("Europe/Berlin");
    expect(await queueTimes(a, hook, 3)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
  });

  test("Europe/Berlin, autumn (25 October 2026): 09:00 stays 09:00, one hour later in UTC", async () => {
    world.clock.set("2026-10-23T12:00:00Z");
    const { a, hook } = await zonedAccount("Europe/Berlin");
    expect(await queueTimes(a, hook, 3)).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z"]);
  });

  test("America/New_York, spring (8 March 2026) and autumn (1 November 2026)", async () => {
    world.clock.set("2026-03-06T20:00:00Z");
    const spring = await zonedAccount("America/New_York");
    expect(await queueTimes(spring.a, spring.hook, 3)).toEqual(["2026-03-07T14:00:00.000Z", "2026-03-08T13:00:00.000Z", "2026-03-09T13:00:00.000Z"]);
    world.clock.set("2026-10-30T20:00:00Z");
    const autumn = await zonedAccount("America/New_York");
    expect(await queueTimes(autumn.a, autumn.hook, 3)).toEqual(["2026-10-31T13:00:00.000Z", "2026-11-01T14:00:00.000Z", "2026-11-02T14:00:00.000Z"]);
  });

  test("a slot time the spring night skips (02:30 in Berlin) falls an hour later that night; the autumn night's repeated 02:30 is taken once", async () => {
    world.clock.set("2026-03-28T12:00:00Z");
    const spring = await zonedAccount("Europe/Berlin", "02:30");
    // 29 March 02:30 does not exist: 03:30 CEST = 01:30Z. 30 March 02:30 CEST = 00:30Z.
    expect(await queueTimes(spring.a, spring.hook, 2)).toEqual(["2026-03-29T01:30:00.000Z", "2026-03-30T00:30:00.000Z"]);
    world.clock.set("2026-10-24T12:00:00Z");
    const autumn = await zonedAccount("Europe/Berlin", "02:30");
    // 25 October 02:30 happens twice (CEST, then CET): one slot, the later instant (01:30Z); 26 October 02:30 CET = 01:30Z.
    expect(await queueTimes(autumn.a, autumn.hook, 2)).toEqual(["2026-10-25T01:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });
});

describe("MCP (the official SDK's client over HTTP, an OAuth grant)", () => {
  test("set_slots, schedule_post with queue and repeat, get_account; update_account refused to an editor's grant", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const served = serveWorld(world);
    try {
      const clientId = await registerTestClient(world);
      const a = await world.createAccount({ name: "MCP Co" });
      const hook = await webhookFor(a);
      const owner = await connectV2(`${served.base}/mcp`, (await grantFor(world, clientId, a.accountId, a.userId, ["read", "schedule"])).accessToken);
      try {
        const slots = await owner.callTool("set_slots", { timeZone: "Europe/Berlin", slots: [{ days: ["tue"], time: "09:00", targets: [hook] }] });
        expect(slots.structuredContent).toEqual({ timeZone: "Europe/Berlin", slots: [{ days: ["tue"], time: "09:00", targets: [hook] }] });
        expect((await owner.callTool("get_slots", {})).structuredContent).toEqual(slots.structuredContent);
        const creation = await creationFor(a);
        const queued = await owner.callTool("schedule_post", { creation_id: creation, queue: true, targets: [hook], repeat: { every: "week", count: 2 } });
        expect(queued.isError).toBeFalsy();
        const post = (queued.structuredContent as { post: { scheduledTime: string; queued: boolean; seriesId: string } }).post;
        expect(post).toMatchObject({ scheduledTime: "2026-06-02T07:00:00.000Z", queued: true });
        expect(post.seriesId).toBeString();
        expect((await owner.callTool("get_account", {})).structuredContent).toEqual({
          account: { id: a.accountId, name: "MCP Co", timeZone: "Europe/Berlin", approvalRequired: false },
        });
        const ended = await owner.callTool("end_series", { id: post.seriesId });
        expect((ended.structuredContent as { ended: boolean }).ended).toBe(true);
      } finally {
        await owner.close();
      }
      const editorId = await a.addMember("editor");
      const editor = await connectV2(`${served.base}/mcp`, (await grantFor(world, clientId, a.accountId, editorId, ["read", "schedule"])).accessToken);
      try {
        const refused = await editor.callTool("update_account", { approval_required: true });
        expect(refusalOf(editor, refused)).toMatchObject({ error: "forbidden", requiredRole: "owner" });
      } finally {
        await editor.close();
      }
    } finally {
      await served.stop();
    }
  });
});
