/**
 * PATCH /api/v1/schedule/{id} (decisions.md §10) and RFC 3339 offsets in scheduled_time / from / to, against real
 * peers on 127.0.0.1: the webhook receiver (service-held posts) and the Mastodon fake (provider-held posts, withdrawn
 * and placed again). Time is a ManualClock shared with the peers; the dispatcher is run by hand.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { parseRfc3339 } from "../src/lib/rfc3339";
import { addConnection } from "../src/modules/connections/service";
import { claimDueTargets, runDueOnce } from "../src/publishing/dispatcher";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, postRows } from "./publishing-fixtures";

let world: World;
let receiver: WebhookReceiver;
let mastodon: MastodonServer;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET, effectIdentity: (body) => (body as { post?: { targetId?: string } })?.post?.targetId });
  mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 100 });
});

afterAll(async () => {
  await receiver.stop();
  await mastodon.stop();
  await world.close();
});

const HOUR = 60 * 60 * 1000;
const at = (ms: number) => isoAt(world.clock.now() + ms);
/** The same instant written with a local offset, e.g. "2026-11-22T12:00:00.000+02:00". */
function withOffset(ms: number, offsetMinutes: number): string {
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}
const patch = (a: TestAccount, id: string, body: unknown) => world.call("PATCH", `/api/v1/schedule/${id}`, { key: a.key, body });
const deliveriesOf = (postId: string) => receiver.deliveries.filter((d) => (d.body as { post?: { id?: string } }).post?.id === postId);

async function accountWithWebhook() {
  const a = await world.createAccount();
  const hook = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
  return { a, hook };
}

async function schedule(a: TestAccount, caption: string, scheduledTime: string, targets: string[]) {
  const creation = await makeCreation(world.deps, a.accountId, { caption });
  const res = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: creation.id, scheduled_time: scheduledTime, targets } });
  expect(res.status).toBe(200);
  return res.json.post;
}

describeAuthMatrix("reschedule", () => world, [
  { method: "PATCH", path: "/api/v1/schedule/0190a0a0-0000-7000-8000-000000000000", validBody: { scheduled_time: "2030-01-01T00:00:00Z" } },
]);

describe("RFC 3339 timestamps", () => {
  test("the parser: offsets, lower-case t/z, fractions; impossible dates and offsets refused", () => {
    const utc = Date.UTC(2026, 10, 22, 10, 0, 0);
    expect(parseRfc3339("2026-11-22T10:00:00Z")).toBe(utc);
    expect(parseRfc3339("2026-11-22t12:00:00+02:00")).toBe(utc);
    expect(parseRfc3339("2026-11-22T05:30:00-04:30")).toBe(utc);
    expect(parseRfc3339("2026-11-22 10:00z")).toBe(utc);
    expect(parseRfc3339("2026-11-22T10:00:00.123456789Z")).toBe(utc + 123);
    for (const bad of ["2026-02-30T10:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T10:00:00+24:00", "2026-11-22T10:00:00", "2026-11-22", "tomorrow", "2026-11-22T10:00:00+0200"]) {
      expect({ bad, parsed: parseRfc3339(bad) }).toEqual({ bad, parsed: null });
    }
  });

  test("POST takes scheduled_time with an offset and answers it in UTC with Z; from/to take offsets too", async () => {
    const { a } = await accountWithWebhook();
    const when = world.clock.now() + HOUR;
    const post = await schedule(a, "offset", withOffset(when, 120), ["webhook"]);
    expect(post.scheduledTime).toBe(new Date(when).toISOString());
    expect(post.scheduledTime.endsWith("Z")).toBe(true);
    const west = await schedule(a, "offset west", withOffset(when + 60_000, -330), ["webhook"]);
    expect(west.scheduledTime).toBe(new Date(when + 60_000).toISOString());
    const from = encodeURIComponent(withOffset(when, 60));
    const to = encodeURIComponent(withOffset(when + 1, -600));
    const listed = await world.call("GET", `/api/v1/schedule/posts?from=${from}&to=${to}`, { key: a.key });
    expect(listed.status).toBe(200);
    expect(listed.json.posts.map((p: { id: string }) => p.id)).toEqual([post.id]);
    const bad = await world.call("GET", "/api/v1/schedule/posts?from=2026-13-01T00:00:00Z", { key: a.key });
    expect(bad.status).toBe(400);
    expect(bad.json.details[0].field).toBe("from");
  });
});

describe("reschedule a service-held post", () => {
  test("moves the time (given with an offset): nothing goes out at the old time, one delivery at the new one", async () => {
    const { a } = await accountWithWebhook();
    const post = await schedule(a, "moved later", at(FIVE_MIN + 60_000), ["webhook"]);
    const newTime = world.clock.now() + 2 * HOUR;
    const res = await patch(a, post.id, { scheduled_time: withOffset(newTime, -300) });
    expect(res.status).toBe(200);
    expect(res.json.post).toMatchObject({ id: post.id, creationId: post.creationId, status: "scheduled", scheduledTime: new Date(newTime).toISOString() });
    expect(res.json.post.targets).toHaveLength(1);
    expect(res.json.post.targets[0]).toMatchObject({ accountId: post.targets[0].accountId, status: "scheduled", withdrawn: false });
    expect((await postRows(world.deps, post.id)).targets).toHaveLength(1); // no withdrawn leftovers
    world.clock.advance(FIVE_MIN + 120_000);
    await runDueOnce(world.deps);
    expect(deliveriesOf(post.id)).toHaveLength(0);
    world.clock.advance(2 * HOUR);
    await runDueOnce(world.deps);
    expect(deliveriesOf(post.id)).toHaveLength(1);
    expect(deliveriesOf(post.id)[0]!.verified).toBe(true);
    const got = await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: a.key });
    expect(got.json.post.status).toBe("published");
    // Done: no more moving.
    const late = await patch(a, post.id, { scheduled_time: at(HOUR) });
    expect(late.status).toBe(409);
    expect(late.json.error).toBe("already_published");
  });

  test("the 5-minute lead, formats and an empty body are 400s, nothing changes; exactly 5 minutes is accepted", async () => {
    const { a } = await accountWithWebhook();
    const post = await schedule(a, "lead time", at(HOUR), ["webhook"]);
    const cases: [unknown, string][] = [
      [{ scheduled_time: at(FIVE_MIN - 1000) }, "scheduled_time_too_soon"],
      [{ scheduled_time: withOffset(world.clock.now() + FIVE_MIN - 1000, 330) }, "scheduled_time_too_soon"],
      [{ scheduled_time: "next tuesday" }, "invalid_request"],
      [{ scheduled_time: "2026-11-22T10:00:00" }, "invalid_request"],
      [{}, "invalid_request"],
      [{ targets: [] }, "invalid_request"],
    ];
    for (const [body, code] of cases) {
      const res = await patch(a, post.id, body);
      expect({ body, status: res.status, code: res.json.error }).toEqual({ body, status: 400, code });
    }
    const unchanged = await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: a.key });
    expect(unchanged.json.post).toEqual(post);
    const ok = await patch(a, post.id, { scheduled_time: at(FIVE_MIN) });
    expect(ok.status).toBe(200);
    expect(ok.json.post.scheduledTime).toBe(at(FIVE_MIN));
    // Moving only the targets re-places them at the stored time, which is now under 5 minutes away.
    world.clock.advance(60_000);
    const targetsOnly = await patch(a, post.id, { targets: ["webhook"] });
    expect(targetsOnly.status).toBe(400);
    expect(targetsOnly.json.error).toBe("scheduled_time_too_soon");
  });

  test("targets are resolved as POST resolves them: replaced, unknown, ambiguous, not ready", async () => {
    const { a, hook } = await accountWithWebhook();
    const post = await schedule(a, "retargeted", at(HOUR), ["webhook"]);
    const unknown = await patch(a, post.id, { targets: ["myspace"] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toBe("unknown_target");
    const second = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/second`, secret: WEBHOOK_SECRET });
    const ambiguous = await patch(a, post.id, { targets: ["webhook"] });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.json.error).toBe("ambiguous_target");
    expect(ambiguous.json.accountIds.sort()).toEqual([hook.accountId, second.accountId].sort());
    const both = await patch(a, post.id, { targets: [hook.accountId, second.accountId] });
    expect(both.status).toBe(200);
    expect(both.json.post.targets.map((t: { accountId: string }) => t.accountId)).toEqual([hook.accountId, second.accountId]);
    expect(both.json.post.scheduledTime).toBe(post.scheduledTime);
    const blocked = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/b`, secret: "a-wrong-secret-0123456789" });
    const notReady = await patch(a, post.id, { targets: [blocked.accountId] });
    expect(notReady.status).toBe(409);
    expect(notReady.json).toMatchObject({ error: "target_not_ready", accountId: blocked.accountId });
    const only = await patch(a, post.id, { targets: [second.accountId], scheduled_time: at(2 * HOUR) });
    expect(only.status).toBe(200);
    expect(only.json.post.targets.map((t: { accountId: string }) => t.accountId)).toEqual([second.accountId]);
    world.clock.advance(2 * HOUR);
    await runDueOnce(world.deps);
    const sent = deliveriesOf(post.id);
    expect(sent).toHaveLength(1);
    const [target] = (await postRows(world.deps, post.id)).targets;
    expect(target!.connectionId).toBe(second.accountId);
    expect(sent[0]!.idempotencyKey).toBe(target!.id);
  });

  test("409 not_reschedulable while publishing and once its time has come; 404 for another account", async () => {
    const { a } = await accountWithWebhook();
    const post = await schedule(a, "busy", at(FIVE_MIN + 60_000), ["webhook"]);
    const other = await world.createAccount();
    const foreign = await patch(other, post.id, { scheduled_time: at(HOUR) });
    const missing = await patch(other, crypto.randomUUID(), { scheduled_time: at(HOUR) });
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(missing.text);
    world.clock.advance(FIVE_MIN + 60_000);
    // Due, not claimed yet: publishing has started as far as the client can know.
    const due = await patch(a, post.id, { scheduled_time: at(HOUR) });
    expect(due.status).toBe(409);
    expect(due.json.error).toBe("not_reschedulable");
    const claims = await claimDueTargets(world.deps, 100, 60_000, (await postRows(world.deps, post.id)).targets.map((t) => t.id));
    expect(claims).toHaveLength(1);
    expect((await postRows(world.deps, post.id)).post!.status).toBe("publishing");
    const busy = await patch(a, post.id, { scheduled_time: at(HOUR) });
    expect(busy.status).toBe(409);
    expect(busy.json.error).toBe("not_reschedulable");
    expect((await postRows(world.deps, post.id)).targets[0]!.leaseToken).toBe(claims[0]!.leaseToken); // untouched
  });

  test("403 without the schedule group", async () => {
    const { a } = await accountWithWebhook();
    const post = await schedule(a, "forbidden", at(HOUR), ["webhook"]);
    const res = await world.call("PATCH", `/api/v1/schedule/${post.id}`, { key: (await a.mint(["read", "create"])).key, body: { scheduled_time: at(2 * HOUR) } });
    expect(res.status).toBe(403);
    expect(res.json.requiredGroup).toBe("schedule");
  });
});

describe("reschedule a Mastodon-held post", () => {
  test("the scheduled status is withdrawn from Mastodon and placed again at the new time", async () => {
    const a = await world.createAccount();
    const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    const post = await schedule(a, "held by Mastodon", at(HOUR), [m.accountId]);
    const firstId = post.targets[0].providerPostId;
    expect(mastodon.state.scheduled.get(firstId)?.scheduled_at).toBe(post.scheduledTime);
    const res = await patch(a, post.id, { scheduled_time: withOffset(world.clock.now() + 3 * HOUR, 60) });
    expect(res.status).toBe(200);
    const moved = res.json.post;
    expect(moved.scheduledTime).toBe(at(3 * HOUR));
    const secondId = moved.targets[0].providerPostId;
    expect(secondId).not.toBeNull();
    expect(secondId).not.toBe(firstId);
    expect(mastodon.state.deletedScheduled).toContain(firstId);
    expect(mastodon.state.scheduled.has(firstId)).toBe(false);
    const held = mastodon.state.scheduled.get(secondId)!;
    expect(held.scheduled_at).toBe(moved.scheduledTime);
    expect(held.params.text).toBe("held by Mastodon");
    expect((await postRows(world.deps, post.id)).targets).toMatchObject([{ heldByProvider: true, status: "scheduled", providerPostId: secondId }]);
  });

  test("a caption over the instance's limit is 409 not_schedulable against the post's snapshot", async () => {
    const { a } = await accountWithWebhook();
    const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    const post = await schedule(a, "x".repeat(150), at(HOUR), ["webhook"]);
    const res = await patch(a, post.id, { targets: [m.accountId] });
    expect(res.status).toBe(409);
    expect(res.json.error).toBe("not_schedulable");
    expect(res.json.problems[0]).toMatchObject({ accountId: m.accountId, field: "caption" });
    expect((await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: a.key })).json.post).toEqual(post);
  });

  test("an unreachable instance: 502 retryable, the post stays as it was; what was already withdrawn is placed again", async () => {
    const a = await world.createAccount();
    const other = await startMastodonServer({ now: () => world.clock.now(), username: "second" });
    try {
      const first = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
      const second = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: other.url, token: DEFAULT_TOKEN });
      const post = await schedule(a, "two instances", at(HOUR), [first.accountId, second.accountId]);
      const [firstHeld, secondHeld] = post.targets.map((t: { providerPostId: string }) => t.providerPostId);
      await other.setMode("unreachable");
      const res = await patch(a, post.id, { scheduled_time: at(2 * HOUR) });
      expect(res.status).toBe(502);
      expect(res.json).toMatchObject({ error: "distribution_failed", retryable: true });
      const kept = (await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: a.key })).json.post;
      expect(kept.scheduledTime).toBe(post.scheduledTime);
      expect(kept.status).toBe("scheduled");
      expect(kept.targets.map((t: { accountId: string; status: string; withdrawn: boolean }) => [t.accountId, t.status, t.withdrawn]).sort()).toEqual(
        [
          [first.accountId, "scheduled", false],
          [second.accountId, "scheduled", false],
        ].sort(),
      );
      // The first instance's status was deleted on the way and placed again at the unchanged time.
      const firstNow = kept.targets.find((t: { accountId: string }) => t.accountId === first.accountId).providerPostId;
      if (mastodon.state.deletedScheduled.includes(firstHeld)) {
        expect(firstNow).not.toBe(firstHeld);
        expect(mastodon.state.scheduled.get(firstNow)?.scheduled_at).toBe(post.scheduledTime);
      } else {
        expect(firstNow).toBe(firstHeld);
      }
      expect(other.state.scheduled.get(secondHeld)?.scheduled_at).toBe(post.scheduledTime);

      await other.setMode("ok");
      const ok = await patch(a, post.id, { scheduled_time: at(2 * HOUR) });
      expect(ok.status).toBe(200);
      expect(ok.json.post.targets.every((t: { status: string; providerPostId: string | null }) => t.status === "scheduled" && t.providerPostId)).toBe(true);
      expect(other.state.deletedScheduled).toContain(secondHeld);
      const live = [...mastodon.state.scheduled.values(), ...other.state.scheduled.values()].filter((s) => s.params.text === "two instances");
      expect(live.map((s) => s.scheduled_at)).toEqual([at(2 * HOUR), at(2 * HOUR)]);
    } finally {
      await other.stop();
    }
  });
});

describe("edit a scheduled post's content (decisions §15)", () => {
  test("a Mastodon-held post: withdrawn and placed again with the new text; the creation keeps its own", async () => {
    const a = await world.createAccount();
    const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    const post = await schedule(a, "first words", at(HOUR), [m.accountId]);
    const firstId = post.targets[0].providerPostId;
    const res = await patch(a, post.id, { content: { caption: "better words" } });
    expect(res.status).toBe(200);
    expect(res.json.post.content).toEqual({ caption: "better words", altText: null, images: [], thread: [], firstComment: null, variants: {} });
    expect(res.json.post.scheduledTime).toBe(post.scheduledTime);
    const secondId = res.json.post.targets[0].providerPostId;
    expect(secondId).not.toBe(firstId);
    expect(mastodon.state.deletedScheduled).toContain(firstId);
    expect(mastodon.state.scheduled.get(secondId)?.params.text).toBe("better words");
    const creation = await world.call("GET", `/api/v1/creations/${post.creationId}`, { key: a.key });
    expect(creation.json.creation.body.caption).toBe("first words");
  });

  test("a service-held post sends the edited text; checks as scheduling: limits per target (409), empty, no image for alt text (400)", async () => {
    const { a, hook } = await accountWithWebhook();
    const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
    const post = await schedule(a, "short", at(HOUR), [hook.accountId, m.accountId]);
    const tooLong = await patch(a, post.id, { content: { caption: "x".repeat(101) } });
    expect(tooLong.status).toBe(409);
    expect(tooLong.json.error).toBe("not_schedulable");
    expect(tooLong.json.problems.map((p: { platform: string }) => p.platform)).toEqual(["mastodon"]);
    const empty = await patch(a, post.id, { content: { caption: "  " } });
    expect(empty.status).toBe(400);
    expect(empty.json.details[0].field).toBe("content.caption");
    const alt = await patch(a, post.id, { content: { alt_text: "a picture" } });
    expect(alt.status).toBe(400);
    expect(alt.json.details[0].field).toBe("content.alt_text");
    const unknown = await patch(a, post.id, { content: { images: [] } });
    expect(unknown.status).toBe(400);
    expect((await postRows(world.deps, post.id)).post?.caption).toBe("short");

    // Three minutes before its time a content-only edit is still allowed (no new lead needed).
    const soon = await schedule(a, "soon", at(6 * 60 * 1000), [hook.accountId]);
    world.clock.advance(3 * 60 * 1000);
    const edited = await patch(a, soon.id, { content: { caption: "soon, edited" } });
    expect(edited.status).toBe(200);
    world.clock.advance(4 * 60 * 1000);
    await runDueOnce(world.deps);
    const sent = deliveriesOf(soon.id).map((d) => (d.body as { post: { caption: string } }).post.caption);
    expect(sent).toEqual(["soon, edited"]);
    const again = await patch(a, soon.id, { content: { caption: "too late" } });
    expect(again.status).toBe(409);
    expect(["already_published", "not_reschedulable"]).toContain(again.json.error);
  });
});
