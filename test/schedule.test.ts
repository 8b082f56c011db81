/**
 * The scheduling API (decisions.md §7) against real peers on 127.0.0.1: a webhook receiver and the Mastodon fake.
 * Time is a ManualClock shared with the peers; the dispatcher is run by hand (runDueOnce) after moving it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { scheduledPostTargets } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { REMOVED_CONNECTION_MESSAGE, addConnection, getConnection, removeConnection } from "../src/modules/connections/service";
import { claimDueTargets, deliverClaim, runDueOnce } from "../src/publishing/dispatcher";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { TEST_DIALECT, type TestAccount, type World, createWorld } from "./helpers/world";
import { type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, leaveDeadWorker, WEBHOOK_SECRET, countPosts, makeCreation, postRows, solidPng } from "./publishing-fixtures";

let world: World;
let receiver: WebhookReceiver;
let mastodon: MastodonServer;
let acct: TestAccount;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET, effectIdentity: (body) => (body as { post?: { targetId?: string } })?.post?.targetId });
  mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 120 });
  acct = await world.createAccount();
});

afterAll(async () => {
  await receiver.stop();
  await mastodon.stop();
  await world.close();
});

const later = (ms = FIVE_MIN + 60_000) => isoAt(world.clock.now() + ms);

async function webhookFor(a: TestAccount, url = receiver.url) {
  return addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${url}/hook`, secret: WEBHOOK_SECRET });
}

describeAuthMatrix("schedule", () => world, [
  { method: "GET", path: "/api/v1/schedule/targets" },
  {
    method: "POST",
    path: "/api/v1/schedule",
    validBody: { type: "social_post", creation_id: "0190a0a0-0000-7000-8000-000000000000", scheduled_time: "2030-01-01T00:00:00Z", targets: ["webhook"] },
  },
  { method: "PATCH", path: "/api/v1/schedule/0190a0a0-0000-7000-8000-000000000000", validBody: { scheduled_time: "2030-01-01T00:00:00Z" } },
  { method: "DELETE", path: "/api/v1/schedule/0190a0a0-0000-7000-8000-000000000000" },
  { method: "GET", path: "/api/v1/schedule/posts" },
  { method: "GET", path: "/api/v1/schedule/posts/0190a0a0-0000-7000-8000-000000000000" },
]);

describe("targets", () => {
  test("lists ready and blocked connections with manageUrl; the webhook check is a signed ping", async () => {
    const a = await world.createAccount();
    const before = receiver.deliveries.length;
    const ok = await webhookFor(a);
    expect(ok).toMatchObject({ platform: "webhook", readyToPost: true, blockedReason: null });
    const ping = receiver.deliveries[before]!;
    expect(ping.event).toBe("ping");
    expect(ping.verified).toBe(true);
    const bad = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/x`, secret: "another-secret-0123456789" });
    expect(bad.readyToPost).toBe(false);
    expect(bad.blockedReason).toContain("signing secret");
    const res = await world.call("GET", "/api/v1/schedule/targets", { key: (await a.mint(["read"])).key });
    expect(res.status).toBe(200);
    expect(res.json.manageUrl).toBe("http://localhost/dashboard/connections");
    expect(res.json.targets).toEqual([
      { platform: "webhook", accountId: ok.accountId, label: new URL(receiver.url).host, readyToPost: true, blockedReason: null, expiresAt: null },
      { platform: "webhook", accountId: bad.accountId, label: new URL(receiver.url).host, readyToPost: false, blockedReason: bad.blockedReason, expiresAt: null },
    ]);
  });

  // SQLite: the database file is read; on PostgreSQL the sealing is the same code (store/sealing.ts).
  test.skipIf(TEST_DIALECT !== "sqlite")("credentials are sealed at rest (no secret in the database file)", async () => {
    const a = await world.createAccount();
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/s`, secret: "sealed-secret-value-XYZ123" });
    await world.sql("PRAGMA wal_checkpoint(TRUNCATE)");
    const bytes = await Bun.file(`${world.dataDir}/seedcast.db`).text();
    expect(bytes.includes("sealed-secret-value-XYZ123")).toBe(false);
  });

  test("a webhook URL that is http and not exempt is refused at connect", async () => {
    const a = await world.createAccount();
    await expect(addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: "http://example.com/h", secret: WEBHOOK_SECRET })).rejects.toThrow(
      "https",
    );
  });
});

describe("POST /schedule refusals (nothing written)", () => {
  let a: TestAccount;
  let creationId: string;
  beforeAll(async () => {
    a = await world.createAccount();
    await webhookFor(a);
    creationId = (await makeCreation(world.deps, a.accountId, { caption: "Hello from the calendar" })).id;
  });
  const body = (over: Record<string, unknown> = {}) => ({ type: "social_post", creation_id: creationId, scheduled_time: later(), targets: ["webhook"], ...over });

  test("400s: type, time format, too soon, unknown and ambiguous targets", async () => {
    const before = await countPosts(world.deps);
    const cases: [Record<string, unknown>, number, string][] = [
      [{ type: "story" }, 400, "invalid_request"],
      [{ scheduled_time: "tomorrow" }, 400, "invalid_request"],
      [{ scheduled_time: "2026-11-22T12:00:00" }, 400, "invalid_request"],
      [{ targets: [] }, 400, "invalid_request"],
      [{ scheduled_time: later(FIVE_MIN - 1000) }, 400, "scheduled_time_too_soon"],
      [{ targets: ["myspace"] }, 400, "unknown_target"],
    ];
    for (const [over, status, code] of cases) {
      const res = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body(over) });
      expect({ over, status: res.status, code: res.json.error }).toEqual({ over, status, code });
    }
    const second = await webhookFor(a);
    const amb = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body() });
    expect(amb.status).toBe(400);
    expect(amb.json.error).toBe("ambiguous_target");
    expect(amb.json.accountIds).toHaveLength(2);
    expect(amb.json.accountIds).toContain(second.accountId);
    await world.sql("DELETE FROM connections WHERE id = ?", second.accountId);
    expect(await countPosts(world.deps)).toBe(before);
  });

  test("exactly five minutes ahead is accepted", async () => {
    const res = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ scheduled_time: later(FIVE_MIN) }) });
    expect(res.status).toBe(200);
    expect(res.json.post.status).toBe("scheduled");
  });

  test("404 for a missing or another account's creation, identical", async () => {
    const other = await world.createAccount();
    const foreign = (await makeCreation(world.deps, other.accountId, { caption: "not yours" })).id;
    const missing = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ creation_id: crypto.randomUUID() }) });
    const theirs = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ creation_id: foreign }) });
    expect(missing.status).toBe(404);
    expect(theirs.status).toBe(404);
    expect(theirs.text).toBe(missing.text);
  });

  test("409 target_not_ready with blockedReason; 409 not_schedulable with problems", async () => {
    const b = await world.createAccount();
    const blocked = await addConnection(world.deps, { accountId: b.accountId, platform: "webhook", url: `${receiver.url}/b`, secret: "wrong-secret-0123456789" });
    const c = (await makeCreation(world.deps, b.accountId, { caption: "ok" })).id;
    const before = await countPosts(world.deps);
    const res = await world.call("POST", "/api/v1/schedule", { key: b.key, body: { ...body(), creation_id: c } });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ error: "target_not_ready", accountId: blocked.accountId, blockedReason: blocked.blockedReason });

    const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: "mastodon-test-token" });
    expect(m.readyToPost).toBe(true);
    const long = (await makeCreation(world.deps, a.accountId, { caption: "x".repeat(121) })).id;
    const tooLong = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ creation_id: long, targets: [m.accountId] }) });
    expect(tooLong.status).toBe(409);
    expect(tooLong.json.error).toBe("not_schedulable");
    expect(tooLong.json.problems[0]).toMatchObject({ accountId: m.accountId, field: "caption" });
    expect(tooLong.json.problems[0].problem).toContain("allows 120");
    // A URL counts 23 on Mastodon: 100 x + a long URL fits.
    const withUrl = (await makeCreation(world.deps, a.accountId, { caption: `${"y".repeat(90)} https://example.com/${"p".repeat(80)}` })).id;
    const fits = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ creation_id: withUrl, targets: [m.accountId] }) });
    expect(fits.status).toBe(200);
    const empty = (await makeCreation(world.deps, a.accountId, { caption: "   " })).id;
    const noCaption = await world.call("POST", "/api/v1/schedule", { key: a.key, body: body({ creation_id: empty }) });
    expect(noCaption.status).toBe(409);
    expect(noCaption.json.problems[0].field).toBe("caption");
    expect(await countPosts(world.deps)).toBe(before + 1);
    await world.sql("DELETE FROM connections WHERE id = ?", m.accountId);
  });

  test("403 for a key without the schedule group; nothing written", async () => {
    const before = await countPosts(world.deps);
    const res = await world.call("POST", "/api/v1/schedule", { key: (await a.mint(["read", "create"])).key, body: body() });
    expect(res.status).toBe(403);
    expect(res.json.requiredGroup).toBe("schedule");
    const del = await world.call("DELETE", `/api/v1/schedule/${crypto.randomUUID()}`, { key: (await a.mint(["read"])).key });
    expect(del.status).toBe(403);
    const read = await world.call("GET", "/api/v1/schedule/posts", { key: (await a.mint(["schedule"])).key });
    expect(read.status).toBe(403);
    expect(await countPosts(world.deps)).toBe(before);
  });
});

describe("webhook delivery", () => {
  let a: TestAccount;
  beforeAll(async () => {
    a = await world.createAccount();
    await webhookFor(a);
  });

  test("a post goes out at its time, signed, with the snapshot taken at scheduling", async () => {
    const creation = await makeCreation(world.deps, a.accountId, { caption: "Launch day https://example.com", altText: "a blue card", image: await solidPng() });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    expect(res.status).toBe(200);
    const post = res.json.post;
    expect(post).toMatchObject({ creationId: creation.id, status: "scheduled" });
    expect(post.targets[0]).toMatchObject({ platform: "webhook", status: "scheduled", providerPostId: null, publishedUrl: null, errorMessage: null });
    // Editing the creation after scheduling changes nothing that goes out.
    await world.sql("UPDATE creations SET caption = 'edited' WHERE id = ?", creation.id);

    await runDueOnce(world.deps);
    expect((await postRows(world.deps, post.id)).targets[0]!.status).toBe("scheduled"); // not due yet
    world.clock.advance(FIVE_MIN + 60_000);
    const before = receiver.deliveries.length;
    await runDueOnce(world.deps);
    const got = receiver.deliveries.slice(before).filter((d) => (d.body as { post?: { id?: string } }).post?.id === post.id);
    expect(got).toHaveLength(1);
    const d = got[0]!;
    expect(d.verified).toBe(true);
    expect(d.rawBody.length).toBeGreaterThan(0);
    expect(d.signatureValid).toBe(true);
    expect(d.timestamp).toBe(String(Math.floor(world.clock.now() / 1000)));
    expect(d.idempotencyKey).toBe((await postRows(world.deps, post.id)).targets[0]!.id);
    const sent = d.body as { event: string; post: { id: string; caption: string; altText: string; imageUrl: string } };
    expect(sent.event).toBe("post.publish");
    expect(sent.post).toMatchObject({ id: post.id, caption: "Launch day https://example.com", altText: "a blue card" });
    expect(sent.post.imageUrl).toBe(`http://localhost/media/${creation.imageAssetId}.png`);

    const after = await world.call("GET", `/api/v1/schedule/posts/${post.id}`, { key: (await a.mint(["read"])).key });
    expect(after.json.post.status).toBe("published");
    expect(after.json.post.targets[0].status).toBe("published");
    expect(after.json.post.errorMessage).toBeUndefined();
    // Published: cancel is refused.
    const cancel = await world.call("DELETE", `/api/v1/schedule/${post.id}`, { key: a.key });
    expect(cancel.status).toBe(409);
    expect(cancel.json.error).toBe("already_published");
  });

  test("transient failures retry with backoff; the 5th failure fails with the receiver's message", async () => {
    const creation = await makeCreation(world.deps, a.accountId, { caption: "retry me" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    const id = res.json.post.id;
    receiver.setMode("error500");
    world.clock.advance(FIVE_MIN + 60_000);
    const waits = [30_000, 120_000, 600_000, 1_800_000];
    for (let attempt = 1; attempt <= 5; attempt++) {
      await runDueOnce(world.deps);
      const { targets } = await postRows(world.deps, id);
      expect(targets[0]!.attempts).toBe(attempt);
      if (attempt < 5) {
        expect(targets[0]!.status).toBe("scheduled");
        world.clock.advance(waits[attempt - 1]! - 1);
        await runDueOnce(world.deps);
        expect((await postRows(world.deps, id)).targets[0]!.attempts).toBe(attempt); // backoff respected
        world.clock.advance(1);
      }
    }
    receiver.setMode("ok");
    const post = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: a.key })).json.post;
    expect(post.status).toBe("failed");
    expect(post.errorMessage).toContain("receiver failing (test mode)");
    expect(post.targets[0].errorMessage).toContain("Gave up after 5 attempts");
  });

  test("a 4xx refusal fails at once with the message (no retry)", async () => {
    const creation = await makeCreation(world.deps, a.accountId, { caption: "refuse me" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    receiver.setMode("reject400");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    receiver.setMode("ok");
    const { targets, post } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]!.attempts).toBe(1);
    expect(post!.status).toBe("failed");
    expect(post!.errorMessage).toContain("receiver rejecting (test mode)");
  });

  test("a claim whose lease expired is fenced out: the new owner delivers, the old one writes nothing", async () => {
    const creation = await makeCreation(world.deps, a.accountId, { caption: "fenced" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    world.clock.advance(FIVE_MIN + 60_000);
    const [first] = await claimDueTargets(world.deps, 10, 1000);
    expect(first).toBeDefined();
    world.clock.advance(1001);
    const [second] = await claimDueTargets(world.deps, 10, 60_000);
    expect(second!.targetId).toBe(first!.targetId);
    await deliverClaim(world.deps, first!); // stale: must not send nor write
    let { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]!.status).toBe("publishing");
    expect(targets[0]!.leaseToken).toBe(second!.leaseToken);
    const before = receiver.effects().length;
    await deliverClaim(world.deps, second!);
    ({ targets } = (await postRows(world.deps, res.json.post.id)));
    expect(targets[0]!.status).toBe("published");
    expect(receiver.effects().length).toBe(before + 1);
  });

  test("an unknown outcome (crash after sending) is resent under the same Idempotency-Key: one effect", async () => {
    const creation = await makeCreation(world.deps, a.accountId, { caption: "crash after send" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    world.clock.advance(FIVE_MIN + 60_000);
    const [claim] = await claimDueTargets(world.deps, 10, 1000);
    await deliverClaim(world.deps, claim!);
    // Simulate the crash between the receiver's 2xx and our write: put the row back as a dead worker leaves it.
    await world.store.write((tx) =>
      tx
        .update(scheduledPostTargets)
        .set({
          status: "publishing",
          leaseToken: "dead",
          leaseExpiresAt: world.clock.now(),
          sendStartedAt: world.clock.now(),
          nextAttemptAt: world.clock.now() - 1,
          providerPostId: null,
        })
        .where(eq(scheduledPostTargets.id, claim!.targetId))
        .run(),
    );
    world.clock.advance(1);
    await runDueOnce(world.deps);
    const keyed = receiver.deliveries.filter((d) => d.idempotencyKey === claim!.targetId);
    expect(keyed).toHaveLength(2);
    expect(keyed[1]!.repeat).toBe(true);
    expect(receiver.duplicates()).toBe(0);
    expect((await postRows(world.deps, res.json.post.id)).post!.status).toBe("published");
  });
});

describe("removing a connection", () => {
  test("its pending webhook target fails at once, the post's status is recomputed, and nothing is ever delivered", async () => {
    const a = await world.createAccount();
    const leaving = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/leaving`, secret: WEBHOOK_SECRET });
    const staying = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/staying`, secret: WEBHOOK_SECRET });
    const creation = await makeCreation(world.deps, a.accountId, { caption: "half of this goes out" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: [leaving.accountId, staying.accountId] },
    });
    expect(res.status).toBe(200);
    const id = res.json.post.id;

    await removeConnection(world.deps, a.accountId, leaving.accountId);
    const now = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: a.key })).json.post;
    expect(now.status).toBe("scheduled"); // the other target is still to go
    const gone = now.targets.find((t: { accountId: string }) => t.accountId === leaving.accountId);
    expect(gone).toMatchObject({ status: "failed", errorMessage: REMOVED_CONNECTION_MESSAGE });
    expect((await postRows(world.deps, id)).targets.find((t) => t.connectionId === leaving.accountId)!.nextAttemptAt).toBeNull();
    const targets = (await world.call("GET", "/api/v1/schedule/targets", { key: a.key })).json.targets;
    expect(targets.map((t: { accountId: string }) => t.accountId)).toEqual([staying.accountId]);

    world.clock.advance(FIVE_MIN + 60_000);
    const before = receiver.deliveries.length;
    await runDueOnce(world.deps);
    const got = receiver.deliveries.slice(before).filter((d) => (d.body as { post?: { id?: string } }).post?.id === id);
    const stayingTarget = (await postRows(world.deps, id)).targets.find((t) => t.connectionId === staying.accountId)!;
    expect(got.map((d) => d.idempotencyKey)).toEqual([stayingTarget.id]); // the removed connection's target never went
    const after = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: a.key })).json.post;
    expect(after.status).toBe("partially_failed");
    expect(after.errorMessage).toContain(REMOVED_CONNECTION_MESSAGE);
    // Another account's connection id is a 404, and nothing changes.
    const b = await world.createAccount();
    await expect(removeConnection(world.deps, b.accountId, staying.accountId)).rejects.toMatchObject({ code: "not_found" });
    expect(await getConnection(world.deps, a.accountId, staying.accountId)).not.toBeNull();
  });
});

describe("cancel and reads", () => {
  test("cancel a service-held post: row removed, providerPostWithdrawn false; 404 for others' and missing ids", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "cancel me" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    const id = res.json.post.id;
    const other = await world.createAccount();
    const foreign = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: other.key });
    const missing = await world.call("DELETE", `/api/v1/schedule/${crypto.randomUUID()}`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(missing.text);
    expect((await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: other.key })).status).toBe(404);
    const ok = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: a.key });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ id, cancelled: true, providerPostWithdrawn: false });
    expect((await postRows(world.deps, id)).post).toBeUndefined();
    const sent = receiver.deliveries.length;
    world.clock.advance(FIVE_MIN + 120_000);
    await runDueOnce(world.deps);
    expect(receiver.deliveries.slice(sent).some((d) => (d.body as { post?: { id?: string } }).post?.id === id)).toBe(false);
  });

  test("list: newest first, from/to bound scheduledTime, status filter, cursor", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "listed" });
    const times = [10, 20, 30].map((m) => later(m * 60_000));
    const ids: string[] = [];
    for (const t of times) {
      const r = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { type: "social_post", creation_id: creation.id, scheduled_time: t, targets: ["webhook"] } });
      ids.push(r.json.post.id);
    }
    const read = (await a.mint(["read"])).key;
    const all = await world.call("GET", "/api/v1/schedule/posts", { key: read });
    expect(all.json.posts.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
    const bounded = await world.call("GET", `/api/v1/schedule/posts?from=${times[1]}&to=${times[2]}`, { key: read });
    expect(bounded.json.posts.map((p: { id: string }) => p.id)).toEqual([ids[1]]);
    const page1 = await world.call("GET", "/api/v1/schedule/posts?limit=2", { key: read });
    expect(page1.json.posts).toHaveLength(2);
    const page2 = await world.call("GET", `/api/v1/schedule/posts?limit=2&cursor=${page1.json.nextCursor}`, { key: read });
    expect(page2.json.posts.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(page2.json.nextCursor).toBeNull();
    const failed = await world.call("GET", "/api/v1/schedule/posts?status=failed", { key: read });
    expect(failed.json.posts).toEqual([]);
    const badStatus = await world.call("GET", "/api/v1/schedule/posts?status=nope", { key: read });
    expect(badStatus.status).toBe(400);
  });
});

describe("Idempotency-Key, CLI and graceful stop", () => {
  test("POST /schedule with the same Idempotency-Key replays the first answer and stores one post", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "once" });
    const body = { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] };
    const before = await countPosts(world.deps);
    const first = await world.call("POST", "/api/v1/schedule", { key: a.key, body, headers: { "idempotency-key": "sched-1" } });
    const again = await world.call("POST", "/api/v1/schedule", { key: a.key, body, headers: { "idempotency-key": "sched-1" } });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.json.post.id).toBe(first.json.post.id);
    expect(await countPosts(world.deps)).toBe(before + 1);
    const reused = await world.call("POST", "/api/v1/schedule", { key: a.key, body: { ...body, targets: [first.json.post.targets[0].accountId] }, headers: { "idempotency-key": "sched-1" } });
    expect(reused.status).toBe(422);
  });

  test("seedcast connections add --json prints {accountId, platform, label, readyToPost, blockedReason}", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join, resolve } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "seedcast-cli-"));
    const root = resolve(import.meta.dir, "..");
    const env = { ...process.env, DATA_DIR: dir, ALLOW_PRIVATE_HOSTS: "127.0.0.1", LOG_LEVEL: "silent" };
    const run = async (...args: string[]) => {
      const p = Bun.spawn([process.execPath, "src/main.ts", ...args, "--json"], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
      const out = await new Response(p.stdout).text();
      return { code: await p.exited, json: JSON.parse(out.trim().split("\n").pop()!) };
    };
    try {
      const account = await run("account", "create", "--name", "CLI", "--email", "cli@example.test", "--password", "correct horse battery");
      expect(account.code).toBe(0);
      const added = await run("connections", "add", "--account", account.json.accountId, "--platform", "webhook", "--url", `${receiver.url}/cli`, "--secret", WEBHOOK_SECRET);
      expect(added.code).toBe(0);
      expect(added.json).toEqual({ accountId: expect.any(String), platform: "webhook", label: new URL(receiver.url).host, readyToPost: true, blockedReason: null });
      const blocked = await run("connections", "add", "--account", account.json.accountId, "--platform", "mastodon", "--instance", mastodon.url, "--token", "bad");
      expect(blocked.json).toMatchObject({ platform: "mastodon", readyToPost: false });
      expect(blocked.json.blockedReason).toContain("access token");
      const listed = await run("connections", "list", "--account", account.json.accountId);
      expect(listed.json.connections).toHaveLength(2);
      const bad = await run("connections", "add", "--account", account.json.accountId, "--platform", "myspace");
      expect(bad.code).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  test("stopping the dispatcher waits until the delivery in flight is recorded", async () => {
    const { startDispatcher } = await import("../src/publishing/dispatcher");
    const hanging = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
    try {
      const a = await world.createAccount();
      const conn = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${hanging.url}/h`, secret: WEBHOOK_SECRET });
      const creation = await makeCreation(world.deps, a.accountId, { caption: "in flight at shutdown" });
      const res = await world.call("POST", "/api/v1/schedule", {
        key: a.key,
        body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: [conn.accountId] },
      });
      // Only this post is due: finish everything else first.
      world.clock.advance(FIVE_MIN + 60_000);
      await world.sql("UPDATE scheduled_post_targets SET next_attempt_at = NULL WHERE post_id <> ? AND status = 'scheduled'", res.json.post.id);
      hanging.setMode("hang");
      // The connection check's ping is already there; wait for the post itself (the claim is an async write).
      const before = hanging.deliveries.length;
      const dispatcher = startDispatcher(world.deps, { concurrency: 4, leaseMs: 60_000, pollMs: 20 });
      for (let i = 0; i < 200 && hanging.deliveries.length === before; i++) await Bun.sleep(10);
      expect(hanging.deliveries).toHaveLength(before + 1);
      expect(dispatcher.inFlight()).toBe(1);
      let stopped = false;
      const stopping = dispatcher.stop().then(() => (stopped = true));
      await Bun.sleep(50);
      expect(stopped).toBe(false); // still waiting for the delivery
      await hanging.stop(); // the receiver answers 503 to the held request
      await stopping;
      const target = (await postRows(world.deps, res.json.post.id)).targets[0]!;
      expect(target.leaseToken).toBeNull();
      expect(target.attempts).toBe(1);
      expect(target.status).toBe("scheduled");
    } finally {
      await hanging.stop().catch(() => {});
    }
  });
});

describe("the dispatcher while the database fails", () => {
  test("a failing claim or wake-up query is logged and retried with backoff; deliveries resume when it answers again", async () => {
    const { startDispatcher } = await import("../src/publishing/dispatcher");
    const a = await world.createAccount();
    const conn = await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "after the outage" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: [conn.accountId] },
    });
    expect(res.status).toBe(200);
    // Only this post is due: park everything else.
    await world.sql("UPDATE scheduled_post_targets SET next_attempt_at = NULL WHERE post_id <> ? AND status = 'scheduled'", res.json.post.id);
    // The store as the dispatcher sees it: while `down`, every read and write fails as an unreachable database does.
    let down = true;
    let refused = 0;
    const unreachable = () => {
      refused += 1;
      return new Error("connect ECONNREFUSED (test: database down)");
    };
    const store = new Proxy(world.store, {
      get(target, prop) {
        if (down && prop === "db") throw unreachable();
        if (down && prop === "write") return async () => Promise.reject(unreachable());
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const errors: string[] = [];
    const log = { ...world.deps.log, error: (msg: string) => void errors.push(msg) };
    const dispatcher = startDispatcher({ ...world.deps, store, log }, { concurrency: 4, leaseMs: 60_000, pollMs: 20 });
    try {
      world.clock.advance(FIVE_MIN + 60_000);
      const before = receiver.deliveries.length;
      await Bun.sleep(300);
      // Still running, backing off: 20, 40, 80, 160 ms between passes, not a pass every few milliseconds.
      expect(errors).toContain("dispatch claim failed");
      expect(refused).toBeGreaterThan(1);
      expect(refused).toBeLessThan(10);
      expect(receiver.deliveries.length).toBe(before);
      down = false;
      for (let i = 0; i < 300 && (await postRows(world.deps, res.json.post.id)).post?.status !== "published"; i++) await Bun.sleep(10);
      expect((await postRows(world.deps, res.json.post.id)).post!.status).toBe("published");
      expect(receiver.deliveries.length).toBe(before + 1);
    } finally {
      down = false;
      await dispatcher.stop();
    }
  });
});

describe("assets referenced by posts", () => {
  test("an image used by a pending post cannot be deleted (409 asset_in_use); once published it can", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "with picture", altText: "pic", image: await solidPng() });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    // Only the post's snapshot refers to the asset now.
    await world.sql("DELETE FROM creations WHERE id = ?", creation.id);
    const blocked = await world.call("DELETE", `/api/v1/assets/${creation.imageAssetId}`, { key: a.key });
    expect(blocked.status).toBe(409);
    expect(blocked.json.error).toBe("asset_in_use");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, res.json.post.id)).post!.status).toBe("published");
    const ok = await world.call("DELETE", `/api/v1/assets/${creation.imageAssetId}`, { key: a.key });
    expect(ok.status).toBe(200);
  });
});

describe("reconnect", () => {
  test("new credentials replace the old ones in place: same accountId, pending posts go out with them", async () => {
    const { replaceConnectionCredentials } = await import("../src/modules/connections/service");
    const a = await world.createAccount();
    const conn = await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "survives a reconnect" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    const wrong = await replaceConnectionCredentials(world.deps, a.accountId, conn.accountId, {
      accountId: a.accountId,
      platform: "webhook",
      url: `${receiver.url}/hook`,
      secret: "some-other-secret-123456",
    });
    expect(wrong).toMatchObject({ accountId: conn.accountId, readyToPost: false });
    const fixed = await replaceConnectionCredentials(world.deps, a.accountId, conn.accountId, {
      accountId: a.accountId,
      platform: "webhook",
      url: `${receiver.url}/hook2`,
      secret: WEBHOOK_SECRET,
    });
    expect(fixed).toMatchObject({ accountId: conn.accountId, readyToPost: true, blockedReason: null });
    await expect(
      replaceConnectionCredentials(world.deps, a.accountId, conn.accountId, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: "x" }),
    ).rejects.toThrow("must stay webhook");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, res.json.post.id)).post!.status).toBe("published");
  });
});

describe("cancel after an unknown outcome", () => {
  test("a webhook target whose last attempt may have landed is settled first: 502 now, then the truth (409)", async () => {
    const a = await world.createAccount();
    await webhookFor(a);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "maybe out there" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: later(), targets: ["webhook"] },
    });
    const id = res.json.post.id;
    world.clock.advance(FIVE_MIN + 60_000);
    const target = (await postRows(world.deps, id)).targets[0]!;
    // A worker died after sending: lease expired, send started, outcome never recorded.
    await leaveDeadWorker(world, target.id);
    const first = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: a.key });
    expect(first.status).toBe(502);
    expect(first.json).toMatchObject({ error: "distribution_failed", retryable: true });
    expect((await postRows(world.deps, id)).targets[0]!.sendStartedAt).not.toBeNull(); // still to be settled
    await runDueOnce(world.deps);
    const second = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: a.key });
    expect(second.status).toBe(409);
    expect(second.json.error).toBe("already_published");
  });
});

describe("the 30-minute credential check job", () => {
  test("re-checks every connection: a receiver that stops answering 2xx blocks it, recovery unblocks it", async () => {
    const { publishingJobs, PUBLISHING_JOB_IDS } = await import("../src/modules/schedule/jobs");
    const job = publishingJobs.find((j) => j.id === PUBLISHING_JOB_IDS.connectionChecks)!;
    expect(job.schedule).toBe("0 */30 * * * *");
    const a = await world.createAccount();
    const conn = await webhookFor(a);
    receiver.setMode("reject400");
    try {
      await job.run(world.deps);
    } finally {
      receiver.setMode("ok");
    }
    let target = (await world.call("GET", "/api/v1/schedule/targets", { key: a.key })).json.targets[0];
    expect(target).toMatchObject({ accountId: conn.accountId, readyToPost: false });
    expect(target.blockedReason).toContain("It must answer 2xx");
    await job.run(world.deps);
    target = (await world.call("GET", "/api/v1/schedule/targets", { key: a.key })).json.targets[0];
    expect(target).toMatchObject({ readyToPost: true, blockedReason: null });
  });
});
