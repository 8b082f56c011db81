/**
 * /metrics exposes request, auth-failure, ingest, dispatch and credit figures in Prometheus text; delivery outcomes,
 * dispatch lateness and image refusals move when those things happen (real webhook receiver on 127.0.0.1).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { addConnection } from "../src/modules/connections/service";
import { captureHold, reserveCredits } from "../src/modules/credits/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, makeCreation, postRows, solidPng } from "./publishing-fixtures";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world.close();
});

function value(text: string, line: RegExp): number {
  const match = text.split("\n").find((l) => line.test(l));
  return match ? Number(match.split(" ").pop()) : Number.NaN;
}

test("requests by route and status, latency, auth failures and credit totals are exported", async () => {
  const acct = await world.createAccount({ credits: 30 });
  await world.call("GET", "/api/v1/health", { key: acct.key });
  await world.call("GET", "/api/v1/health", { key: acct.key });
  await world.call("GET", "/api/v1/health", { key: "svc_nope" });
  await world.call("GET", "/api/v1/seeds/00000000-0000-7000-8000-000000000000", { key: acct.key });
  // NB: Elysia runs onAfterResponse on a later macrotask; give the recorded requests their turn before scraping.
  await Bun.sleep(20);
  const res = await world.call("GET", "/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  const text = res.text;
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/health",status="200"\}/)).toBe(2);
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/health",status="401"\}/)).toBe(1);
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/seeds\/:id",status="404"\}/)).toBe(1);
  expect(value(text, /^seedcast_auth_failures_total /)).toBe(1);
  expect(value(text, /^seedcast_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/health"\}/)).toBe(3);
  expect(text).toContain("seedcast_dispatch_queue_depth");
  expect(text).toContain("seedcast_credits_reserved 0");
  expect(text).toContain("seedcast_ingest_refusals_total");
  expect(text).toContain("seedcast_deliveries_total");
  expect(text).toContain("seedcast_process_resident_memory_bytes");
  expect(text).not.toContain(acct.key);
});

test("METRICS_TOKEN guards the endpoint when set", async () => {
  const w = await createWorld({ env: { METRICS_TOKEN: "scrape-me" } });
  try {
    expect((await w.call("GET", "/metrics")).status).toBe(401);
    expect((await w.call("GET", "/metrics", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await w.call("GET", "/metrics", { headers: { authorization: "Bearer scrape-me" } })).status).toBe(200);
  } finally {
    await w.close();
  }
});

describe("deliveries, dispatch lateness and ingest refusals are recorded where they happen", () => {
  let w: World;
  let receiver: WebhookReceiver;
  let acct: TestAccount;
  beforeAll(async () => {
    w = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
    receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET, effectIdentity: (body) => (body as { post?: { targetId?: string } })?.post?.targetId });
    acct = await w.createAccount();
    await addConnection(w.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
  });
  afterAll(async () => {
    await receiver.stop();
    await w.close();
  });

  const LEAD_MS = FIVE_MIN + 60_000;

  async function scheduleWebhookPost(caption: string): Promise<{ id: string; dueAt: number }> {
    const creation = await makeCreation(w.deps, acct.accountId, { caption });
    const dueAt = w.clock.now() + LEAD_MS;
    const res = await w.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(dueAt), targets: ["webhook"] },
    });
    expect(res.status).toBe(200);
    return { id: res.json.post.id, dueAt };
  }

  async function scrape(): Promise<string> {
    await Bun.sleep(20); // request metrics land on a later macrotask (see above)
    const res = await w.call("GET", "/metrics");
    expect(res.status).toBe(200);
    return res.text;
  }

  const delivered = (text: string, outcome: string) =>
    value(text, new RegExp(`^seedcast_deliveries_total\\{platform="webhook",outcome="${outcome}"\\}`));

  test("published (with its lateness), retry, failed and withdrawn each count once", async () => {
    // Published 7 s after its time: one lateness observation of 7 s, in the 10 s bucket and not the 5 s one.
    const onTime = await scheduleWebhookPost("late by seven seconds");
    w.clock.set(onTime.dueAt + 7_000);
    await runDueOnce(w.deps);
    expect((await postRows(w.deps, onTime.id)).post!.status).toBe("published");
    let text = await scrape();
    expect(delivered(text, "published")).toBe(1);
    expect(value(text, /^seedcast_dispatch_lateness_seconds_count\{platform="webhook"\}/)).toBe(1);
    expect(value(text, /^seedcast_dispatch_lateness_seconds_sum\{platform="webhook"\}/)).toBe(7);
    expect(value(text, /^seedcast_dispatch_lateness_seconds_bucket\{le="5",platform="webhook"\}/)).toBe(0);
    expect(value(text, /^seedcast_dispatch_lateness_seconds_bucket\{le="10",platform="webhook"\}/)).toBe(1);

    // A 500 from the receiver: retried later (counted as retry, not failed).
    receiver.setMode("error500");
    const retried = await scheduleWebhookPost("receiver down");
    w.clock.set(retried.dueAt);
    await runDueOnce(w.deps);
    expect((await postRows(w.deps, retried.id)).targets[0]!.status).toBe("scheduled");
    // A 400 from the receiver is final.
    receiver.setMode("reject400");
    const refused = await scheduleWebhookPost("receiver refuses");
    w.clock.set(refused.dueAt);
    await runDueOnce(w.deps, {}, [(await postRows(w.deps, refused.id)).targets[0]!.id]);
    expect((await postRows(w.deps, refused.id)).targets[0]!.status).toBe("failed");
    receiver.setMode("ok");
    // Cancelled before its time: withdrawn.
    const cancelled = await scheduleWebhookPost("never mind");
    expect((await w.call("DELETE", `/api/v1/schedule/${cancelled.id}`, { key: acct.key })).status).toBe(200);

    text = await scrape();
    expect(delivered(text, "published")).toBe(1);
    expect(delivered(text, "retry")).toBe(1);
    expect(delivered(text, "failed")).toBe(1);
    expect(delivered(text, "withdrawn")).toBe(1);
    expect(value(text, /^seedcast_dispatch_lateness_seconds_count\{platform="webhook"\}/)).toBe(1);
  });

  test("refused images count by reason at each door (URL ingest, upload page); accepted ones and dead links do not", async () => {
    const refusedUrl = await w.call("POST", "/api/v1/assets/ingest-url", { key: acct.key, body: { url: "http://example.com/picture.png" } });
    expect([refusedUrl.status, refusedUrl.json.error]).toEqual([400, "https_required"]);
    const link = await w.call("POST", "/api/v1/assets/upload-link", { key: acct.key });
    const path = new URL(link.json.uploadUrl).pathname;
    const upload = (bytes: Uint8Array<ArrayBuffer>, name: string) => {
      const form = new FormData();
      form.append("file", new File([bytes], name, { type: "application/octet-stream" }));
      return w.app.handle(new Request(`http://localhost${path}`, { method: "POST", body: form, headers: { accept: "application/json" } }));
    };
    const notImage = await upload(new TextEncoder().encode("just some text, not an image"), "notes.txt");
    expect(notImage.status).toBe(400);
    expect(((await notImage.json()) as { error: string }).error).toBe("unsupported_type");
    const empty = await upload(new Uint8Array(0), "empty.png");
    expect(((await empty.json()) as { error: string }).error).toBe("empty_body");
    const ok = await upload(new Uint8Array(await solidPng(40, 30)), "fine.png");
    expect(ok.status).toBe(201);
    const used = await upload(new Uint8Array(await solidPng(40, 30)), "again.png");
    expect(used.status).toBe(410); // a used link is not an image refusal

    const text = await scrape();
    expect(value(text, /^seedcast_ingest_refusals_total\{reason="https_required"\}/)).toBe(1);
    expect(value(text, /^seedcast_ingest_refusals_total\{reason="unsupported_type"\}/)).toBe(1);
    expect(value(text, /^seedcast_ingest_refusals_total\{reason="empty_body"\}/)).toBe(1);
    expect(text).not.toMatch(/^seedcast_ingest_refusals_total\{reason="upload_link_used"\}/m);
  });
});

test("answers the idempotency layer gives before any handler (replays, 422) are counted like every request", async () => {
  const w = await createWorld();
  try {
    const acct = await w.createAccount();
    const headers = { "idempotency-key": "metrics-replay-1" };
    const body = { title: "Counted", content: "Replays are requests too." };
    expect((await w.call("POST", "/api/v1/seeds", { key: acct.key, body, headers })).status).toBe(201);
    const replay = await w.call("POST", "/api/v1/seeds", { key: acct.key, body, headers });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await w.call("POST", "/api/v1/seeds", { key: acct.key, body: { ...body, title: "Other" }, headers })).status).toBe(422);
    await Bun.sleep(20);
    const text = (await w.call("GET", "/metrics")).text;
    expect(value(text, /^seedcast_http_requests_total\{method="POST",route="\/api\/v1\/seeds",status="201"\}/)).toBe(2);
    expect(value(text, /^seedcast_http_requests_total\{method="POST",route="\/api\/v1\/seeds",status="422"\}/)).toBe(1);
  } finally {
    await w.close();
  }
});

test("the database gauges (queue depth, scheduled targets, credits reserved and captured) are read at scrape time, as numbers on either backend", async () => {
  const w = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  const receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  try {
    const acct = await w.createAccount({ credits: 100 });
    const gauges = async () => {
      const text = (await w.call("GET", "/metrics")).text;
      return {
        depth: value(text, /^seedcast_dispatch_queue_depth /),
        scheduled: value(text, /^seedcast_dispatch_scheduled_targets /),
        reserved: value(text, /^seedcast_credits_reserved /),
        captured: value(text, /^seedcast_credits_captured_total /),
      };
    };
    expect(await gauges()).toEqual({ depth: 0, scheduled: 0, reserved: 0, captured: 0 });

    // Credits: 7 captured, 4 still held.
    await captureHold(w.deps, await reserveCredits(w.deps, acct.accountId, 7, "metrics test"));
    await reserveCredits(w.deps, acct.accountId, 4, "metrics test");
    // A webhook post an hour ahead: scheduled, not yet due; then due once the clock gets there.
    await addConnection(w.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    const creation = await makeCreation(w.deps, acct.accountId, { caption: "counted" });
    const dueAt = w.clock.now() + 3_600_000;
    const res = await w.call("POST", "/api/v1/schedule", {
      key: acct.key,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: isoAt(dueAt), targets: ["webhook"] },
    });
    expect(res.status).toBe(200);
    expect(await gauges()).toEqual({ depth: 0, scheduled: 1, reserved: 4, captured: 7 });
    w.clock.set(dueAt);
    expect(await gauges()).toEqual({ depth: 1, scheduled: 1, reserved: 4, captured: 7 });
  } finally {
    await receiver.stop();
    await w.close();
  }
});
