/**
 * Issue 27, repeats (decisions.md §14): `repeat` on POST /schedule; after each occurrence publishes, the next is
 * scheduled from the same snapshot with the same seriesId, at the same wall-clock time in the account's zone, across
 * the DST changes of Europe/Berlin and America/New_York (the clock moved and the dispatcher run, never slept);
 * cancelling an occurrence schedules the next at once; DELETE /schedule/series/{id} ends the series. Real webhook
 * receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addConnection } from "../src/modules/connections/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { countPosts, makeCreation, WEBHOOK_SECRET } from "./publishing-fixtures";

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

interface Post {
  id: string;
  scheduledTime: string;
  status: string;
  seriesId: string | null;
  content: { caption: string };
}

async function zonedAccount(timeZone: string): Promise<{ a: TestAccount; hook: string }> {
  const a = await world.createAccount();
  const hook = (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET })).accountId;
  expect((await world.call("PATCH", "/api/v1/account", { key: a.key, body: { time_zone: timeZone } })).status).toBe(200);
  return { a, hook };
}

async function scheduleRepeating(a: TestAccount, hook: string, at: string, repeat: Record<string, unknown>, caption = "Every time") {
  const creation = await makeCreation(world.deps, a.accountId, { caption });
  return world.call("POST", "/api/v1/schedule", {
    key: a.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: at, targets: [hook], repeat },
  });
}

/** The series' posts, by time. */
async function seriesPosts(a: TestAccount, seriesId: string): Promise<Post[]> {
  const res = await world.call("GET", "/api/v1/schedule/posts?limit=200", { key: a.key });
  return (res.json.posts as Post[]).filter((p) => p.seriesId === seriesId).sort((x, y) => x.scheduledTime.localeCompare(y.scheduledTime));
}

/** Moves the clock just past `post`'s time and runs the dispatcher: the occurrence publishes. */
async function publishAt(post: Post): Promise<void> {
  world.clock.set(Date.parse(post.scheduledTime) + 1000);
  await runDueOnce(world.deps);
}

/** Publishes every occurrence in turn until none is pending; answers every occurrence's time. */
async function runSeries(a: TestAccount, seriesId: string, max = 10): Promise<string[]> {
  for (let i = 0; i < max; i++) {
    const pending = (await seriesPosts(a, seriesId)).find((p) => p.status === "scheduled");
    if (!pending) break;
    await publishAt(pending);
  }
  const posts = await seriesPosts(a, seriesId);
  expect(posts.every((p) => p.status === "published")).toBe(true);
  return posts.map((p) => p.scheduledTime);
}

describe("repeats keep their wall-clock time across DST (the clock moved, the dispatcher run)", () => {
  test("Europe/Berlin, daily 09:00 over the spring change (29 March 2026)", async () => {
    world.clock.set("2026-03-27T12:00:00Z");
    const { a, hook } = await zonedAccount("Europe/Berlin");
    const first = await scheduleRepeating(a, hook, "2026-03-28T09:00:00+01:00", { every: "day", count: 3 });
    expect(first.status).toBe(200);
    expect(first.json.post.seriesId).toBeString();
    expect(await runSeries(a, first.json.post.seriesId)).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
  });

  test("Europe/Berlin, daily 09:00 over the autumn change (25 October 2026), until a time", async () => {
    world.clock.set("2026-10-23T12:00:00Z");
    const { a, hook } = await zonedAccount("Europe/Berlin");
    const first = await scheduleRepeating(a, hook, "2026-10-24T07:00:00Z", { every: "day", until: "2026-10-26T12:00:00Z" });
    expect(await runSeries(a, first.json.post.seriesId)).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z"]);
  });

  test("America/New_York, weekly 09:00 over the spring change (8 March 2026)", async () => {
    world.clock.set("2026-02-27T12:00:00Z");
    const { a, hook } = await zonedAccount("America/New_York");
    const first = await scheduleRepeating(a, hook, "2026-03-01T09:00:00-05:00", { every: "week", count: 3 });
    expect(await runSeries(a, first.json.post.seriesId)).toEqual(["2026-03-01T14:00:00.000Z", "2026-03-08T13:00:00.000Z", "2026-03-15T13:00:00.000Z"]);
  });

  test("America/New_York, every 2 days at 09:00 over the autumn change (1 November 2026)", async () => {
    world.clock.set("2026-10-29T12:00:00Z");
    const { a, hook } = await zonedAccount("America/New_York");
    const first = await scheduleRepeating(a, hook, "2026-10-30T13:00:00Z", { every: "day", interval: 2, count: 3 });
    expect(await runSeries(a, first.json.post.seriesId)).toEqual(["2026-10-30T13:00:00.000Z", "2026-11-01T14:00:00.000Z", "2026-11-03T14:00:00.000Z"]);
  });

  test("monthly on the 31st falls on the last day of shorter months, counted from the first (no drift)", async () => {
    world.clock.set("2026-01-30T12:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const first = await scheduleRepeating(a, hook, "2026-01-31T10:00:00Z", { every: "month", count: 4 });
    expect(await runSeries(a, first.json.post.seriesId)).toEqual([
      "2026-01-31T10:00:00.000Z",
      "2026-02-28T10:00:00.000Z",
      "2026-03-31T10:00:00.000Z",
      "2026-04-30T10:00:00.000Z",
    ]);
  });
});

describe("occurrences", () => {
  test("each is a new post from the same snapshot: editing the creation afterwards changes nothing", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const first = (await scheduleRepeating(a, hook, "2026-06-02T10:00:00Z", { every: "day", count: 2 }, "The snapshot")).json.post as Post & {
      creationId: string;
    };
    expect((await world.call("PATCH", `/api/v1/creations/${first.creationId}`, { key: a.key, body: { caption: "Edited later" } })).status).toBe(200);
    await publishAt(first);
    const posts = await seriesPosts(a, first.seriesId!);
    expect(posts).toHaveLength(2);
    expect(posts[1]!.id).not.toBe(first.id);
    expect(posts.map((p) => p.content.caption)).toEqual(["The snapshot", "The snapshot"]);
    expect(posts[1]!.status).toBe("scheduled");
  });

  test("cancelling a pending occurrence skips it: the next is scheduled at once; the count includes the skipped one", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const first = (await scheduleRepeating(a, hook, "2026-06-02T10:00:00Z", { every: "day", count: 3 })).json.post as Post;
    const cancelled = await world.call("DELETE", `/api/v1/schedule/${first.id}`, { key: a.key });
    expect(cancelled.status).toBe(200);
    const afterCancel = await seriesPosts(a, first.seriesId!);
    expect(afterCancel.map((p) => [p.scheduledTime, p.status])).toEqual([["2026-06-03T10:00:00.000Z", "scheduled"]]);
    await publishAt(afterCancel[0]!);
    const last = (await seriesPosts(a, first.seriesId!)).find((p) => p.status === "scheduled")!;
    expect(last.scheduledTime).toBe("2026-06-04T10:00:00.000Z");
    await publishAt(last);
    // Three occurrences in all (one skipped): nothing more is scheduled.
    expect((await seriesPosts(a, first.seriesId!)).map((p) => p.status)).toEqual(["published", "published"]);
  });

  test("a failed occurrence does not end the series: the next is scheduled", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const first = (await scheduleRepeating(a, hook, "2026-06-02T10:00:00Z", { every: "week", count: 2 })).json.post as Post;
    receiver.setMode("reject400");
    try {
      world.clock.set(Date.parse(first.scheduledTime) + 1000);
      for (let i = 0; i < 8; i++) {
        await runDueOnce(world.deps);
        world.clock.advance(30 * 60_000);
      }
    } finally {
      receiver.setMode("ok");
    }
    const posts = await seriesPosts(a, first.seriesId!);
    expect(posts.map((p) => [p.scheduledTime, p.status])).toEqual([
      ["2026-06-02T10:00:00.000Z", "failed"],
      ["2026-06-09T10:00:00.000Z", "scheduled"],
    ]);
  });

  test("DELETE /schedule/series/{id} ends it: the pending occurrence is cancelled and nothing more comes", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const first = (await scheduleRepeating(a, hook, "2026-06-02T10:00:00Z", { every: "day" })).json.post as Post;
    await publishAt(first);
    const pending = (await seriesPosts(a, first.seriesId!)).find((p) => p.status === "scheduled")!;
    const ended = await world.call("DELETE", `/api/v1/schedule/series/${first.seriesId}`, { key: a.key });
    expect(ended.status).toBe(200);
    expect(ended.json).toEqual({ seriesId: first.seriesId, ended: true, cancelledPostIds: [pending.id] });
    world.clock.advance(3 * 24 * 3_600_000);
    await runDueOnce(world.deps);
    expect((await seriesPosts(a, first.seriesId!)).map((p) => p.status)).toEqual(["published"]);
    // Another account cannot see or end it.
    const other = await world.createAccount();
    expect((await world.call("DELETE", `/api/v1/schedule/series/${first.seriesId}`, { key: other.key })).status).toBe(404);
  });

  test("repeat with queue: true starts in the first free slot and repeats at that wall-clock time", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("Europe/Berlin");
    await world.call("PUT", "/api/v1/schedule/slots", { key: a.key, body: { timeZone: "Europe/Berlin", slots: [{ days: ["wed"], time: "18:15", targets: [hook] }] } });
    const creation = await makeCreation(world.deps, a.accountId, { caption: "queued and repeated" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, queue: true, targets: [hook], repeat: { every: "day", count: 2 } },
    });
    expect(res.status).toBe(200);
    expect(res.json.post).toMatchObject({ scheduledTime: "2026-06-03T16:15:00.000Z", queued: true });
    await publishAt(res.json.post);
    const posts = await seriesPosts(a, res.json.post.seriesId);
    expect(posts.map((p) => p.scheduledTime)).toEqual(["2026-06-03T16:15:00.000Z", "2026-06-04T16:15:00.000Z"]);
  });
});

describe("refusals (nothing stored)", () => {
  test("bad repeat fields: 400 naming the field", async () => {
    world.clock.set("2026-06-01T08:00:00Z");
    const { a, hook } = await zonedAccount("UTC");
    const before = await countPosts(world.deps);
    const cases: [Record<string, unknown>, string][] = [
      [{ every: "year" }, "repeat.every"],
      [{ every: "day", interval: 13 }, "repeat.interval"],
      [{ every: "day", interval: 0 }, "repeat.interval"],
      [{ every: "day", count: 1 }, "repeat.count"],
      [{ every: "day", count: 101 }, "repeat.count"],
      [{ every: "day", until: "soon" }, "repeat.until"],
      [{ every: "day", until: "2026-06-01T09:00:00Z" }, "repeat.until"],
    ];
    for (const [repeat, field] of cases) {
      const res = await scheduleRepeating(a, hook, "2026-06-02T10:00:00Z", repeat);
      expect({ repeat, status: res.status, body: res.status === 400 ? "" : res.text, field: String(res.json.details?.[0]?.field ?? "").startsWith(field) }).toEqual({ repeat, status: 400, body: "", field: true });
    }
    expect(await countPosts(world.deps)).toBe(before);
  });
});
