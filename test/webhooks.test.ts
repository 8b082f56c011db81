/**
 * Event webhooks of API clients (decisions.md §10) against real receivers on 127.0.0.1 (test/peers/webhook-receiver.ts,
 * which verifies X-Seedcast-Signature and dedupes by Idempotency-Key): registration and its refusals, the signature,
 * every event type, retries with backoff, at least once across a dead worker, SSRF refusal at delivery, nothing
 * delivered after delete, account isolation, and the secret never stored in clear nor replayed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { webhookDeliveries, webhookEvents } from "../src/db/tables";
import { GenerationError } from "../src/generation/generator";
import { isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { grantCredits } from "../src/modules/credits/grant";
import { MAX_WEBHOOKS_PER_ACCOUNT } from "../src/modules/webhooks/model";
import { runDueOnce, startDispatcher } from "../src/publishing/dispatcher";
import { claimDueEvents, runDueEventsOnce } from "../src/publishing/event-delivery";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { TEST_DIALECT, type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, runDueRefused } from "./publishing-fixtures";

let world: World;
/** Receives the posts of webhook *targets* (publishing), not events. */
let target: WebhookReceiver;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  target = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
});

afterAll(async () => {
  await target.stop();
  for (const r of receivers) await r.stop();
  await world.close();
});

interface Subscribed {
  a: TestAccount;
  receiver: WebhookReceiver;
  webhookId: string;
  secret: string;
}

/** A fresh receiver and a webhook of `a` pointing at it, the receiver verifying under the secret the server issued. */
async function subscribe(a: TestAccount, events: string[]): Promise<Subscribed> {
  const receiver = await startWebhookReceiver({ secret: "not-known-yet" });
  receivers.push(receiver);
  const res = await world.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `${receiver.url}/events`, events } });
  expect(res.status).toBe(201);
  receiver.setSecret(res.json.secret);
  return { a, receiver, webhookId: res.json.webhook.id, secret: res.json.secret };
}

async function scheduleToTarget(a: TestAccount, caption: string): Promise<string> {
  const creation = await makeCreation(world.deps, a.accountId, { caption });
  const res = await world.call("POST", "/api/v1/schedule", {
    key: a.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: ["webhook"] },
  });
  expect(res.status).toBe(200);
  return res.json.post.id;
}

async function accountWithTarget(credits?: number): Promise<TestAccount> {
  const a = await world.createAccount(credits === undefined ? {} : { credits });
  await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${target.url}/posts`, secret: WEBHOOK_SECRET });
  return a;
}

const deliveryRows = (webhookId: string) => world.store.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId)).all();

describeAuthMatrix("webhooks", () => world, [
  { method: "POST", path: "/api/v1/webhooks", validBody: { url: "https://example.com/hook", events: ["post.published"] } },
  { method: "GET", path: "/api/v1/webhooks" },
  { method: "DELETE", path: "/api/v1/webhooks/0190a0a0-0000-7000-8000-000000000000" },
]);

describe("registration", () => {
  test("201 with the webhook and its secret (shown once); GET lists it without; the secret is sealed at rest", async () => {
    const a = await world.createAccount();
    const res = await world.call("POST", "/api/v1/webhooks", {
      key: a.key,
      body: { url: `${target.url}/mine`, events: ["post.failed", "post.published", "post.failed"] },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json.webhook).toEqual({ id: expect.any(String), url: `${target.url}/mine`, events: ["post.published", "post.failed"], createdAt: isoAt(world.clock.now()) });
    expect(res.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await world.call("GET", "/api/v1/webhooks", { key: (await a.mint(["read"])).key });
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual({ webhooks: [res.json.webhook] });
    expect(listed.text.includes(res.json.secret)).toBe(false);
    if (TEST_DIALECT === "sqlite") {
      await world.sql("PRAGMA wal_checkpoint(TRUNCATE)");
      const file = await Bun.file(`${world.dataDir}/seedcast.db`).text();
      expect(file.includes(res.json.secret)).toBe(false);
    }
  });

  test("an Idempotency-Key replay answers the same webhook with secret null; one webhook stored", async () => {
    const a = await world.createAccount();
    const body = { url: `${target.url}/idem`, events: ["credits.low"] };
    const first = await world.call("POST", "/api/v1/webhooks", { key: a.key, body, headers: { "idempotency-key": "hook-1" } });
    const again = await world.call("POST", "/api/v1/webhooks", { key: a.key, body, headers: { "idempotency-key": "hook-1" } });
    expect(first.status).toBe(201);
    expect(typeof first.json.secret).toBe("string");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual({ webhook: first.json.webhook, secret: null });
    expect((await world.call("GET", "/api/v1/webhooks", { key: a.key })).json.webhooks).toHaveLength(1);
    const stored = await world.sql<{ body: string }>("SELECT body FROM idempotency_keys");
    expect(stored.some((r) => r.body.includes(first.json.secret))).toBe(false);
  });

  test("at most MAX_WEBHOOKS_PER_ACCOUNT per account, also when registrations arrive at once (409 too_many_webhooks)", async () => {
    const a = await world.createAccount();
    const register = (i: number) =>
      world.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `${target.url}/many-${i}`, events: ["credits.low"] } });
    const answers = await Promise.all(Array.from({ length: MAX_WEBHOOKS_PER_ACCOUNT + 5 }, (_, i) => register(i)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_WEBHOOKS_PER_ACCOUNT);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(5);
    for (const r of refused) expect({ status: r.status, error: r.json.error }).toEqual({ status: 409, error: "too_many_webhooks" });
    expect((await world.call("GET", "/api/v1/webhooks", { key: a.key })).json.webhooks).toHaveLength(MAX_WEBHOOKS_PER_ACCOUNT);
  });

  test("400s: the outbound rule (SSRF) on the URL, unknown or no events; 403 without the schedule group; nothing stored", async () => {
    const a = await world.createAccount();
    const cases: [unknown, string][] = [
      [{ url: "https://10.1.2.3/hook", events: ["post.published"] }, "host_not_public"],
      [{ url: "https://localhost/hook", events: ["post.published"] }, "host_not_public"],
      [{ url: "https://[::1]/hook", events: ["post.published"] }, "host_not_public"],
      [{ url: "https://169.254.169.254/latest/meta-data", events: ["post.published"] }, "host_not_public"],
      [{ url: "http://example.com/hook", events: ["post.published"] }, "https_required"],
      [{ url: "https://example.com:8443/hook", events: ["post.published"] }, "port_not_allowed"],
      [{ url: "https://user:pw@example.com/hook", events: ["post.published"] }, "invalid_url"],
      [{ url: "not a url", events: ["post.published"] }, "invalid_url"],
      [{ url: "https://example.com/hook", events: ["post.nope"] }, "invalid_request"],
      [{ url: "https://example.com/hook", events: [] }, "invalid_request"],
      [{ url: "https://example.com/hook" }, "invalid_request"],
    ];
    for (const [body, code] of cases) {
      const res = await world.call("POST", "/api/v1/webhooks", { key: a.key, body });
      expect({ body, status: res.status, code: res.json.error }).toEqual({ body, status: 400, code });
    }
    const forbidden = await world.call("POST", "/api/v1/webhooks", { key: (await a.mint(["read", "create"])).key, body: { url: `${target.url}/x`, events: ["post.published"] } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.requiredGroup).toBe("schedule");
    expect((await world.call("GET", "/api/v1/webhooks", { key: a.key })).json.webhooks).toEqual([]);
  });
});

describe("delivery", () => {
  test("post.published: signed exactly like webhook targets, Idempotency-Key = the event id, the post as GET shows it", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    const postId = await scheduleToTarget(a, "event me");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(0); // the outbox is delivered by the dispatcher, not inline
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(1);
    const d = sub.receiver.deliveries[0]!;
    expect(d.signatureValid).toBe(true);
    expect(d.verified).toBe(true);
    expect(d.timestamp).toBe(String(Math.floor(world.clock.now() / 1000)));
    expect(d.path).toBe("/events");
    const body = d.body as { id: string; type: string; createdAt: string; data: { post: unknown } };
    expect(Object.keys(body).sort()).toEqual(["createdAt", "data", "id", "type"]);
    expect(body.type).toBe("post.published");
    expect(d.idempotencyKey).toBe(body.id);
    expect(body.createdAt).toBe(isoAt(world.clock.now()));
    const post = (await world.call("GET", `/api/v1/schedule/posts/${postId}`, { key: a.key })).json.post;
    expect(body.data.post).toEqual(post);
    expect((await deliveryRows(sub.webhookId))).toMatchObject([{ status: "delivered", attempts: 0, leaseToken: null }]);
    // Delivered once: running again sends nothing.
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(1);
  });

  test("post.failed, post.cancelled, and only the subscribed types", async () => {
    const a = await accountWithTarget();
    const failures = await subscribe(a, ["post.failed", "post.cancelled"]);
    const published = await subscribe(a, ["post.published"]);
    const failing = await scheduleToTarget(a, "refused by the target");
    const cancelled = await scheduleToTarget(a, "cancelled before its time");
    const del = await world.call("DELETE", `/api/v1/schedule/${cancelled}`, { key: a.key });
    expect(del.status).toBe(200);
    await runDueRefused(world, target, FIVE_MIN + 60_000);
    await runDueEventsOnce(world.deps);
    const got = failures.receiver.deliveries.map((d) => d.body as { type: string; data: { post: { id: string; status: string; errorMessage?: string }; providerPostWithdrawn?: boolean } });
    expect(got.map((b) => b.type).sort()).toEqual(["post.cancelled", "post.failed"]);
    const failed = got.find((b) => b.type === "post.failed")!;
    expect(failed.data.post).toMatchObject({ id: failing, status: "failed" });
    expect(failed.data.post.errorMessage).toContain("receiver rejecting (test mode)");
    const cancel = got.find((b) => b.type === "post.cancelled")!;
    expect(cancel.data).toMatchObject({ post: { id: cancelled, status: "scheduled" }, providerPostWithdrawn: false });
    expect(failures.receiver.deliveries.every((d) => d.verified)).toBe(true);
    expect(published.receiver.deliveries).toHaveLength(0);
  });

  test("post.partially_failed when one target of two refuses, with the failing target's message", async () => {
    const a = await world.createAccount();
    const refusing = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
    receivers.push(refusing);
    refusing.setMode("reject400");
    const ok = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${target.url}/ok`, secret: WEBHOOK_SECRET });
    // Connected while it still answered the ping, then it starts refusing.
    refusing.setMode("ok");
    const bad = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${refusing.url}/bad`, secret: WEBHOOK_SECRET });
    refusing.setMode("reject400");
    const sub = await subscribe(a, ["post.partially_failed", "post.published", "post.failed"]);
    const creation = await makeCreation(world.deps, a.accountId, { caption: "half of it" });
    const res = await world.call("POST", "/api/v1/schedule", {
      key: a.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 60_000), targets: [ok.accountId, bad.accountId] },
    });
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(1);
    const body = sub.receiver.deliveries[0]!.body as { type: string; data: { post: { id: string; status: string; errorMessage: string; targets: { status: string }[] } } };
    expect(body.type).toBe("post.partially_failed");
    expect(body.data.post).toMatchObject({ id: res.json.post.id, status: "partially_failed" });
    expect(body.data.post.targets.map((t) => t.status).sort()).toEqual(["failed", "published"]);
    expect(body.data.post.errorMessage).toContain("receiver rejecting (test mode)");
  });

  test("creation.generated on generate and regenerate; credits.low once when a charge takes the balance under 10", async () => {
    const a = await world.createAccount({ credits: 16 });
    const sub = await subscribe(a, ["creation.generated", "credits.low"]);
    const seed = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "Launch", content: "We launch the new garden planner on Monday." } });
    const first = await world.call("POST", "/api/v1/creations/generate", { key: a.key, body: { seed_id: seed.json.id } });
    expect(first.status).toBe(201); // 16 → 11: not low yet
    const second = await world.call("POST", "/api/v1/creations/regenerate", { key: a.key, body: { creation_id: first.json.creation.id, parts: "both" } });
    expect(second.status).toBe(200); // 11 → 7: low
    const third = await world.call("POST", "/api/v1/creations/regenerate", { key: a.key, body: { creation_id: first.json.creation.id, parts: "caption" } });
    expect(third.status).toBe(200); // 7 → 6: still low, not reported again
    await runDueEventsOnce(world.deps);
    const bodies = sub.receiver.deliveries.map((d) => d.body as { type: string; data: Record<string, unknown> });
    // Deliveries run in parallel: compare as a set, each found by what it reports.
    expect(bodies.map((b) => b.type).sort()).toEqual(["creation.generated", "creation.generated", "creation.generated", "credits.low"]);
    const generated = bodies.filter((b) => b.type === "creation.generated").map((b) => b.data);
    expect(generated).toContainEqual({ creation: first.json.creation, creditsCharged: 5, operation: "generate" });
    expect(generated).toContainEqual({ creation: second.json.creation, creditsCharged: 4, operation: "regenerate" });
    expect(generated).toContainEqual({ creation: third.json.creation, creditsCharged: 1, operation: "regenerate" });
    expect(bodies.find((b) => b.type === "credits.low")!.data).toEqual({ balance: 7, reserved: 0, threshold: 10 });
    // A grant and a fresh drop report again.
    await grantCredits(world.deps, a.accountId, 10, "top up");
    await world.call("POST", "/api/v1/creations/generate", { key: a.key, body: { seed_id: seed.json.id } }); // 16 → 11
    await world.call("POST", "/api/v1/creations/generate", { key: a.key, body: { seed_id: seed.json.id } }); // 11 → 6
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries.filter((d) => (d.body as { type: string }).type === "credits.low")).toHaveLength(2);
  });

  test("transient failures retry with the dispatcher's backoff; the 5th failure gives up; every try carries the same key", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    await scheduleToTarget(a, "retry the event");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    sub.receiver.setMode("error500");
    const waits = [30_000, 120_000, 600_000, 1_800_000];
    for (let attempt = 1; attempt <= 5; attempt++) {
      await runDueEventsOnce(world.deps);
      const [row] = await deliveryRows(sub.webhookId);
      expect(row!.attempts).toBe(attempt);
      if (attempt < 5) {
        expect(row!.status).toBe("pending");
        world.clock.advance(waits[attempt - 1]! - 1);
        await runDueEventsOnce(world.deps);
        expect((await deliveryRows(sub.webhookId))[0]!.attempts).toBe(attempt); // backoff respected
        world.clock.advance(1);
      }
    }
    const [row] = await deliveryRows(sub.webhookId);
    expect(row!.status).toBe("failed");
    expect(row!.lastError).toContain("Gave up after 5 attempts");
    expect(row!.lastError).toContain("receiver failing (test mode)");
    expect(sub.receiver.deliveries).toHaveLength(5);
    expect(new Set(sub.receiver.deliveries.map((d) => d.idempotencyKey)).size).toBe(1);
    expect(sub.receiver.deliveries.every((d) => d.signatureValid)).toBe(true);
  });

  test("a receiver that recovers gets the event (4xx retried too): delivered once", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    await scheduleToTarget(a, "recovering receiver");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    sub.receiver.setMode("reject400");
    await runDueEventsOnce(world.deps);
    sub.receiver.setMode("ok");
    world.clock.advance(30_000);
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries.map((d) => d.status)).toEqual([400, 200]);
    expect(sub.receiver.effects()).toHaveLength(1);
    expect((await deliveryRows(sub.webhookId))[0]).toMatchObject({ status: "delivered", attempts: 1 });
  });

  test("at least once: a worker that died mid-delivery is taken over after its lease; a repeat carries the same key", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    await scheduleToTarget(a, "worker dies");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    const [dead] = await claimDueEvents(world.deps, 10, 1000); // claimed, never delivered: the worker died
    expect(dead).toBeDefined();
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(0); // its lease still holds
    world.clock.advance(1001);
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(1);
    // A worker that died after the receiver's 2xx but before recording: sent again, same key, absorbed.
    await world.store.write((tx) =>
      tx
        .update(webhookDeliveries)
        .set({ status: "pending", nextAttemptAt: world.clock.now(), deliveredAt: null })
        .where(eq(webhookDeliveries.webhookId, sub.webhookId))
        .run(),
    );
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(2);
    expect(sub.receiver.deliveries[1]!.idempotencyKey).toBe(sub.receiver.deliveries[0]!.idempotencyKey);
    expect(sub.receiver.deliveries[1]!.repeat).toBe(true);
    expect(sub.receiver.duplicates()).toBe(0);
  });

  test("SSRF at delivery: an address the outbound rule refuses is never called and fails at once", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    // As if the name had come to resolve privately since registration (DNS rebinding): `localhost` resolves to
    // 127.0.0.1 but is not itself in ALLOW_PRIVATE_HOSTS, so the check at delivery refuses it before connecting.
    await world.sql("UPDATE event_webhooks SET url = ? WHERE id = ?", "https://localhost/events", sub.webhookId);
    await scheduleToTarget(a, "ssrf");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(0);
    const [row] = await deliveryRows(sub.webhookId);
    expect(row).toMatchObject({ status: "failed", attempts: 1 });
    expect(row!.lastError).toContain("cannot be used");
    expect(row!.lastError).toContain("does not resolve to a public address");
  });

  test("nothing is delivered after the webhook is deleted, even what was already owed to it", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    await scheduleToTarget(a, "owed then deleted");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    expect((await deliveryRows(sub.webhookId))).toHaveLength(1); // owed
    const del = await world.call("DELETE", `/api/v1/webhooks/${sub.webhookId}`, { key: a.key });
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ id: sub.webhookId, deleted: true });
    expect((await deliveryRows(sub.webhookId))).toHaveLength(0);
    await runDueEventsOnce(world.deps);
    await scheduleToTarget(a, "after delete");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    await runDueEventsOnce(world.deps);
    expect(sub.receiver.deliveries).toHaveLength(0);
    expect((await world.call("DELETE", `/api/v1/webhooks/${sub.webhookId}`, { key: a.key })).status).toBe(404);
  });

  test("account isolation: events go only to the account's own webhooks; others' ids are 404 and not listed", async () => {
    const a = await accountWithTarget();
    const b = await accountWithTarget();
    const subA = await subscribe(a, ["post.published"]);
    const subB = await subscribe(b, ["post.published"]);
    const postA = await scheduleToTarget(a, "from a");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    await runDueEventsOnce(world.deps);
    expect(subA.receiver.deliveries.map((d) => (d.body as { data: { post: { id: string } } }).data.post.id)).toEqual([postA]);
    expect(subB.receiver.deliveries).toHaveLength(0);
    expect((await world.call("GET", "/api/v1/webhooks", { key: b.key })).json.webhooks.map((w: { id: string }) => w.id)).toEqual([subB.webhookId]);
    const foreign = await world.call("DELETE", `/api/v1/webhooks/${subA.webhookId}`, { key: b.key });
    const missing = await world.call("DELETE", `/api/v1/webhooks/${crypto.randomUUID()}`, { key: b.key });
    expect(foreign.status).toBe(404);
    expect(foreign.text).toBe(missing.text);
    expect((await world.call("GET", "/api/v1/webhooks", { key: a.key })).json.webhooks).toHaveLength(1);
  });

  test("an event is written with its state change or not at all: a failed generate records nothing", async () => {
    const failing = await createWorld({
      env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" },
      generator: {
        name: "failing",
        writeCaption: async () => {
          throw new GenerationError("down");
        },
        renderImage: async () => {
          throw new Error("unused");
        },
        describeImage: async () => "",
      },
    });
    try {
      const a = await failing.createAccount();
      await failing.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `${target.url}/never`, events: ["creation.generated", "credits.low"] } });
      const seed = await failing.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "T", content: "Some content here." } });
      const res = await failing.call("POST", "/api/v1/creations/generate", { key: a.key, body: { seed_id: seed.json.id } });
      expect(res.status).toBe(502);
      expect(await failing.store.db.select().from(webhookEvents).all()).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  test("the hourly tidy job deletes events a week old once nothing is owed, never a pending one", async () => {
    const { JOB_IDS, systemJobs } = await import("../src/system-jobs");
    const job = systemJobs.find((j) => j.id === JOB_IDS.webhookEventsTidy)!;
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    const down = await subscribe(a, ["post.published"]);
    down.receiver.setMode("error500");
    await scheduleToTarget(a, "kept a week");
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    await runDueEventsOnce(world.deps);
    expect((await deliveryRows(sub.webhookId))[0]!.status).toBe("delivered");
    expect((await deliveryRows(down.webhookId))[0]!.status).toBe("pending");
    world.clock.advance(8 * 24 * 60 * 60 * 1000);
    await job.run(world.deps);
    expect((await deliveryRows(sub.webhookId))).toHaveLength(1); // the event is still owed to `down`
    down.receiver.setMode("ok");
    await runDueEventsOnce(world.deps);
    expect((await deliveryRows(down.webhookId))[0]!.status).toBe("delivered");
    await job.run(world.deps);
    expect((await deliveryRows(sub.webhookId))).toHaveLength(0);
    expect((await deliveryRows(down.webhookId))).toHaveLength(0);
  });

  test("the running dispatcher delivers events too, after the due posts", async () => {
    const a = await accountWithTarget();
    const sub = await subscribe(a, ["post.published"]);
    await scheduleToTarget(a, "by the loop");
    world.clock.advance(FIVE_MIN + 60_000);
    const dispatcher = startDispatcher(world.deps, { concurrency: 4, leaseMs: 60_000, pollMs: 20 });
    try {
      for (let i = 0; i < 500 && sub.receiver.deliveries.length === 0; i++) await Bun.sleep(10);
    } finally {
      await dispatcher.stop();
    }
    expect(sub.receiver.deliveries).toHaveLength(1);
    expect((sub.receiver.deliveries[0]!.body as { type: string }).type).toBe("post.published");
    expect(sub.receiver.deliveries[0]!.verified).toBe(true);
  });
});
