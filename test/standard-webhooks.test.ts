/**
 * The Standard Webhooks headers (decisions.md §10) on real deliveries, verified by a library nobody here wrote: the
 * `standardwebhooks` package (the reference TypeScript implementation of standardwebhooks.com). The deliveries are
 * captured by the test webhook receiver (test/peers/webhook-receiver.ts), which also verifies the X-Seedcast-* headers:
 * - an event webhook: its `whsec_` secret, exactly as POST /api/v1/webhooks shows it, is the library's secret;
 * - a webhook publishing target: its typed secret as UTF-8 bytes, the library's raw-secret option (a secret with
 *   non-ASCII letters shows the bytes are UTF-8);
 * - a tampered timestamp, body or id, and a wrong secret, are refused by the library.
 *
 * NB: the library checks `webhook-timestamp` against the real clock (5 minutes either way), so this world's manual
 * clock starts a few minutes before the real time and stays within that window.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { ManualClock, isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { runDueEventsOnce } from "../src/publishing/event-delivery";
import { type World, createWorld } from "./helpers/world";
import { type WebhookDelivery, type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, makeCreation } from "./publishing-fixtures";

/** A typed target secret with letters outside ASCII: its key is its UTF-8 bytes. */
const TARGET_SECRET = "gëhéim-signing-secret-0123456789";

let world: World;
let target: WebhookReceiver;
let events: WebhookReceiver;
let eventSecret = "";
let postId = "";

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" }, clock: new ManualClock(Date.now() - 2 * 60_000) });
  target = await startWebhookReceiver({ secret: TARGET_SECRET });
  events = await startWebhookReceiver({ secret: "not-known-yet" });
  const a = await world.createAccount();
  // The connection's credential check is a signed ping: the first target delivery.
  await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${target.url}/posts`, secret: TARGET_SECRET });
  const hook = await world.call("POST", "/api/v1/webhooks", { key: a.key, body: { url: `${events.url}/events`, events: ["post.published"] } });
  expect(hook.status).toBe(201);
  eventSecret = hook.json.secret;
  events.setSecret(eventSecret);
  const creation = await makeCreation(world.deps, a.accountId, { caption: "Standard Webhooks, verified elsewhere" });
  const scheduled = await world.call("POST", "/api/v1/schedule", {
    key: a.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(world.clock.now() + FIVE_MIN + 30_000), targets: ["webhook"] },
  });
  expect(scheduled.status).toBe(200);
  postId = scheduled.json.post.id;
  world.clock.advance(FIVE_MIN + 30_000);
  await runDueOnce(world.deps);
  await runDueEventsOnce(world.deps);
});

afterAll(async () => {
  await target.stop();
  await events.stop();
  await world.close();
});

/** The one delivery of `receiver` whose body's event/type is `event`. */
function delivered(receiver: WebhookReceiver, event: string): WebhookDelivery {
  const found = receiver.deliveries.filter((d) => d.event === event);
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** What the library answers for `d` under `hook`: the parsed payload, or the error it threw. */
function verify(hook: Webhook, rawBody: string, headers: Record<string, string>): unknown {
  try {
    return hook.verify(rawBody, headers);
  } catch (error) {
    return error;
  }
}

describe("standardwebhooks (npm) verifies real deliveries", () => {
  test("an event webhook: the whsec_ secret as shown is the library's secret; webhook-id is the event id", () => {
    expect(eventSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const d = delivered(events, "post.published");
    expect(d.verified).toBe(true); // X-Seedcast-Signature and X-Seedcast-Timestamp still there for existing receivers
    const payload = verify(new Webhook(eventSecret), d.rawBody, d.headers) as { id: string; type: string; data: { post: { id: string } } };
    expect(payload.type).toBe("post.published");
    expect(payload.data.post.id).toBe(postId);
    expect(d.headers["webhook-id"]).toBe(payload.id);
    expect(d.headers["idempotency-key"]).toBe(payload.id);
    expect(d.headers["webhook-timestamp"]).toBe(d.headers["x-seedcast-timestamp"]!);
    expect(d.headers["webhook-timestamp"]).toBe(String(Math.floor(world.clock.now() / 1000)));
  });

  test("a webhook target: its typed secret's UTF-8 bytes (the raw-secret option), on the ping and on the post", () => {
    const hook = new Webhook(new TextEncoder().encode(TARGET_SECRET), { format: "raw" });
    const ping = delivered(target, "ping");
    const post = delivered(target, "post.publish");
    for (const d of [ping, post]) {
      expect(d.verified).toBe(true);
      expect(verify(hook, d.rawBody, d.headers)).toEqual(JSON.parse(d.rawBody));
      expect(d.headers["webhook-id"]).toBe(d.headers["idempotency-key"]!);
    }
    expect((JSON.parse(post.rawBody) as { post: { id: string } }).post.id).toBe(postId);
    // Latin-1 bytes of the same secret (what the library's raw option makes of a string) are another key.
    const latin1 = verify(new Webhook(TARGET_SECRET, { format: "raw" }), post.rawBody, post.headers);
    expect(latin1).toBeInstanceOf(WebhookVerificationError);
  });

  test("a tampered timestamp, body or id, or another secret, is refused", () => {
    const d = delivered(events, "post.published");
    const hook = new Webhook(eventSecret);
    const timestamp = Number(d.headers["webhook-timestamp"]);
    const refusals = [
      verify(hook, d.rawBody, { ...d.headers, "webhook-timestamp": String(timestamp - 1) }),
      verify(hook, d.rawBody, { ...d.headers, "webhook-timestamp": String(timestamp + 60) }),
      verify(hook, d.rawBody.replace("post.published", "post.failed"), d.headers),
      verify(hook, d.rawBody, { ...d.headers, "webhook-id": "another-id" }),
      verify(new Webhook(`whsec_${Buffer.from("another secret of 32 bytes......").toString("base64")}`), d.rawBody, d.headers),
    ];
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(WebhookVerificationError);
      expect((refusal as Error).message).toBe("No matching signature found");
    }
    // The untouched delivery still verifies: the refusals are the tampering's.
    expect(verify(hook, d.rawBody, d.headers)).toEqual(JSON.parse(d.rawBody));
  });
});
