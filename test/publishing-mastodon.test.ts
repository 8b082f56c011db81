/**
 * The Mastodon connector as a contract against the fake written from Mastodon's documented API
 * (test/peers/mastodon-server.ts): native scheduled statuses, media with descriptions, Idempotency-Key, 422
 * refusals, an unreachable instance on cancel, confirmation after the due time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { scheduledPostTargets } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { AppError } from "../src/lib/errors";
import { REMOVED_CONNECTION_MESSAGE, addConnection, checkConnection, getConnection, removeConnection } from "../src/modules/connections/service";
import { confirmProviderHeldPosts } from "../src/modules/schedule/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { DEFAULT_TOKEN, type MastodonServer, startMastodonServer } from "./peers/mastodon-server";
import { FIVE_MIN, makeCreation, postRows, solidPng } from "./publishing-fixtures";

let world: World;
let mastodon: MastodonServer;
let acct: TestAccount;
let connectionId: string;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1" } });
  mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 400, mediaProcessingPolls: 1 });
  acct = await world.createAccount();
  const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
  connectionId = view.accountId;
});

afterAll(async () => {
  await mastodon.stop();
  await world.close();
});

const HOUR = 60 * 60 * 1000;

async function schedule(caption: string, opts: { image?: boolean; inMs?: number; targets?: string[] } = {}) {
  const creation = await makeCreation(world.deps, acct.accountId, {
    caption,
    altText: opts.image ? "A blue rectangle on white" : null,
    ...(opts.image ? { image: await solidPng(320, 200) } : {}),
  });
  const scheduledTime = isoAt(world.clock.now() + (opts.inMs ?? HOUR));
  return world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: scheduledTime, targets: opts.targets ?? ["mastodon"] },
  });
}

describe("connect", () => {
  test("a valid token is ready, labelled from verify_credentials, limits read from the instance", async () => {
    const rows = await world.call("GET", "/api/v1/schedule/targets", { key: acct.key });
    expect(rows.json.targets).toEqual([
      { platform: "mastodon", accountId: connectionId, label: `@seedcast@${new URL(mastodon.url).host}`, readyToPost: true, blockedReason: null, expiresAt: null },
    ]);
    const meta = JSON.parse((await world.sql("SELECT meta FROM connections WHERE id = ?", connectionId))[0]!.meta);
    expect(meta).toMatchObject({ maxCharacters: 400, providerAccountId: mastodon.state.account.id });
  });

  test("a wrong token is not ready and says what to fix", async () => {
    const a = await world.createAccount();
    const view = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: "nope" });
    expect(view.readyToPost).toBe(false);
    expect(view.blockedReason).toContain("The access token is invalid");
    expect(view.blockedReason).toContain("new access token");
  });
});

describe("scheduling hands the post to Mastodon", () => {
  test("media uploaded with its description, scheduled status created with Idempotency-Key; its id is providerPostId", async () => {
    const res = await schedule("Scheduled on Mastodon", { image: true });
    expect(res.status).toBe(200);
    const post = res.json.post;
    expect(post.errorMessage).toBeUndefined();
    expect(post.status).toBe("scheduled");
    const target = post.targets[0];
    expect(target.status).toBe("scheduled");
    const held = mastodon.state.scheduled.get(target.providerPostId);
    expect(held).toBeDefined();
    expect(held!.params.text).toBe("Scheduled on Mastodon");
    expect(held!.scheduled_at).toBe(post.scheduledTime);
    expect(held!.media_attachments[0]!.description).toBe("A blue rectangle on white");
    const { targets } = await postRows(world.deps, post.id);
    const statusRequest = mastodon.state.requests.find((r) => r.method === "POST" && r.path === "/api/v1/statuses" && r.idempotencyKey === targets[0]!.id);
    expect(statusRequest?.status).toBe(200);
  });

  test("a 422 refusal answers 200 with the target failed and the instance's message", async () => {
    await mastodon.setMode("reject422");
    const res = await schedule("Refused by the instance");
    await mastodon.setMode("ok");
    expect(res.status).toBe(200);
    expect(res.json.post.status).toBe("failed");
    expect(res.json.post.errorMessage).toContain("Validation failed: Rejected by test mode");
    expect(res.json.post.targets[0]).toMatchObject({ status: "failed", providerPostId: null });
    expect(res.json.post.targets[0].errorMessage).toContain("Validation failed: Rejected by test mode");
    // A failed post can be removed; nothing was held by the provider.
    const del = await world.call("DELETE", `/api/v1/schedule/${res.json.post.id}`, { key: acct.key });
    expect(del.json).toEqual({ id: res.json.post.id, cancelled: true, providerPostWithdrawn: false });
  });

  test("the same Idempotency-Key after an unknown outcome yields the same scheduled status (no second one)", async () => {
    const res = await schedule("Exactly once");
    const id = res.json.post.id;
    const { targets } = await postRows(world.deps, id);
    const count = mastodon.state.scheduled.size;
    // As a crash after Mastodon answered would leave it: pending again, send started, id not recorded.
    await world.store.write((tx) =>
      tx
        .update(scheduledPostTargets)
        .set({
          status: "publishing",
          heldByProvider: false,
          providerPostId: null,
          nextAttemptAt: world.clock.now(),
          leaseToken: "dead",
          leaseExpiresAt: world.clock.now(),
          sendStartedAt: world.clock.now(),
        })
        .where(eq(scheduledPostTargets.id, targets[0]!.id))
        .run(),
    );
    await runDueOnce(world.deps);
    expect(mastodon.state.scheduled.size).toBe(count);
    expect((await postRows(world.deps, id)).targets[0]!.providerPostId).toBe(res.json.post.targets[0].providerPostId);
    expect((await postRows(world.deps, id)).targets[0]!.heldByProvider).toBe(true);
  });
});

describe("cancel", () => {
  test("an unreachable instance answers 502 retryable and keeps the row; a later cancel succeeds", async () => {
    const res = await schedule("Cancel me later");
    const id = res.json.post.id;
    const scheduledId = res.json.post.targets[0].providerPostId;
    await mastodon.setMode("unreachable");
    const failed = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: acct.key });
    expect(failed.status).toBe(502);
    expect(failed.json).toMatchObject({ error: "distribution_failed", retryable: true });
    expect(failed.json.message).toContain("try again");
    const kept = await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key });
    expect(kept.status).toBe(200);
    expect(kept.json.post.status).toBe("scheduled");
    await mastodon.setMode("ok");
    const ok = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: acct.key });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ id, cancelled: true, providerPostWithdrawn: true });
    expect(mastodon.state.deletedScheduled).toContain(scheduledId);
    expect(mastodon.state.scheduled.has(scheduledId)).toBe(false);
    expect((await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key })).status).toBe(404);
  });

  test("targets already withdrawn are remembered across a failed cancel", async () => {
    const second = await startMastodonServer({ now: () => world.clock.now(), username: "other" });
    try {
      const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: second.url, token: DEFAULT_TOKEN });
      const res = await schedule("Two instances", { targets: [connectionId, view.accountId] });
      expect(res.json.post.targets.map((t: { status: string }) => t.status)).toEqual(["scheduled", "scheduled"]);
      const firstId = res.json.post.targets[0].providerPostId;
      await second.setMode("unreachable");
      const failed = await world.call("DELETE", `/api/v1/schedule/${res.json.post.id}`, { key: acct.key });
      expect(failed.status).toBe(502);
      expect(mastodon.state.deletedScheduled).toContain(firstId);
      const kept = (await world.call("GET", `/api/v1/schedule/posts/${res.json.post.id}`, { key: acct.key })).json.post;
      expect(kept.targets[0].withdrawn).toBe(true);
      expect(kept.targets[1].withdrawn).toBe(false);
      await second.setMode("ok");
      const deletesBefore = mastodon.state.requests.filter((r) => r.method === "DELETE").length;
      const ok = await world.call("DELETE", `/api/v1/schedule/${res.json.post.id}`, { key: acct.key });
      expect(ok.json).toEqual({ id: res.json.post.id, cancelled: true, providerPostWithdrawn: true });
      expect(mastodon.state.requests.filter((r) => r.method === "DELETE").length).toBe(deletesBefore); // not asked twice
      expect(second.state.deletedScheduled).toHaveLength(1);
      await world.sql("DELETE FROM connections WHERE id = ?", view.accountId);
    } finally {
      await second.stop();
    }
  });
});

describe("removing the connection", () => {
  test("withdraws the scheduled status and fails the target; unreachable refuses and keeps everything", async () => {
    const other = await startMastodonServer({ now: () => world.clock.now(), username: "leaving" });
    try {
      const view = await addConnection(world.deps, { accountId: acct.accountId, platform: "mastodon", instance: other.url, token: DEFAULT_TOKEN });
      const res = await schedule("Removed before it went out", { targets: [view.accountId] });
      const id = res.json.post.id;
      const scheduledId = res.json.post.targets[0].providerPostId;
      expect(other.state.scheduled.has(scheduledId)).toBe(true);

      await other.setMode("unreachable");
      const refused = await removeConnection(world.deps, acct.accountId, view.accountId).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: "distribution_failed", extra: { retryable: true } });
      expect((refused as AppError).message).toContain("try again");
      expect(await getConnection(world.deps, acct.accountId, view.accountId)).not.toBeNull();
      const kept = (await postRows(world.deps, id)).targets[0]!;
      expect(kept).toMatchObject({ status: "scheduled", heldByProvider: true, providerPostId: scheduledId, leaseToken: null, errorMessage: null });

      await other.setMode("ok");
      await removeConnection(world.deps, acct.accountId, view.accountId);
      expect(await getConnection(world.deps, acct.accountId, view.accountId)).toBeNull();
      expect(other.state.deletedScheduled).toContain(scheduledId);
      expect(other.state.scheduled.has(scheduledId)).toBe(false);
      const post = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key })).json.post;
      expect(post.status).toBe("failed");
      expect(post.targets[0]).toMatchObject({ status: "failed", errorMessage: REMOVED_CONNECTION_MESSAGE, withdrawn: false });
      expect(post.errorMessage).toContain(REMOVED_CONNECTION_MESSAGE);
      // Nothing left for the dispatcher or the confirmation job.
      world.clock.advance(HOUR + 2 * 60_000);
      await runDueOnce(world.deps);
      await confirmProviderHeldPosts(world.deps);
      expect((await postRows(world.deps, id)).targets[0]!.status).toBe("failed");
      expect(other.state.publishDue()).toHaveLength(0);
    } finally {
      await other.stop();
    }
  });
});

describe("after the due time", () => {
  test("the service confirms publication and the post becomes published; cancel then answers 409", async () => {
    const res = await schedule("Goes out by itself", { inMs: 2 * HOUR });
    const id = res.json.post.id;
    world.clock.advance(2 * HOUR + 30_000);
    await confirmProviderHeldPosts(world.deps); // too early: Mastodon's worker may still be at it
    expect((await postRows(world.deps, id)).targets[0]!.status).toBe("scheduled");
    world.clock.advance(60_000);
    await confirmProviderHeldPosts(world.deps); // still held by the instance: pending
    expect((await postRows(world.deps, id)).targets[0]!.status).toBe("scheduled");
    const published = mastodon.state.publishDue();
    const status = published.find((s) => s.text === "Goes out by itself");
    expect(status).toBeDefined();
    const { confirmed } = await confirmProviderHeldPosts(world.deps);
    expect(confirmed).toBeGreaterThanOrEqual(1);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key })).json.post;
    expect(post.status).toBe("published");
    expect(post.targets[0].status).toBe("published");
    // Found through GET /api/v1/accounts/:id/statuses: the public URL and the status id, not the scheduled id.
    expect(post.targets[0].publishedUrl).toBe(status!.url);
    expect(post.targets[0].providerPostId).toBe(status!.id);
    const lookup = mastodon.state.requests.find((r) => r.method === "GET" && r.path === `/api/v1/accounts/${mastodon.state.account.id}/statuses`);
    expect(lookup).toMatchObject({ status: 200, authorization: `Bearer ${DEFAULT_TOKEN}` });
    const cancel = await world.call("DELETE", `/api/v1/schedule/${id}`, { key: acct.key });
    expect(cancel.status).toBe(409);
    expect(cancel.json.error).toBe("already_published");
  });

  test("too close for Mastodon's own 5-minute minimum: the service holds it and posts directly at its time", async () => {
    const res = await schedule("Right on time", { inMs: FIVE_MIN + 10_000, image: true });
    const id = res.json.post.id;
    expect(res.json.post.targets[0]).toMatchObject({ status: "scheduled", providerPostId: null });
    world.clock.advance(FIVE_MIN + 10_000);
    await runDueOnce(world.deps);
    const post = (await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: acct.key })).json.post;
    expect(post.status).toBe("published");
    const status = mastodon.state.statuses.get(post.targets[0].providerPostId)!;
    expect(status.text).toBe("Right on time");
    expect(status.media_attachments[0]!.description).toBe("A blue rectangle on white");
    expect(post.targets[0].publishedUrl).toBe(status.url);
  });

  test("a revoked token while publishing marks the connection not ready and retries later", async () => {
    const res = await schedule("Token trouble", { inMs: FIVE_MIN + 10_000 });
    const id = res.json.post.id;
    mastodon.state.token = "rotated-away";
    world.clock.advance(FIVE_MIN + 10_000);
    await runDueOnce(world.deps);
    const target = (await postRows(world.deps, id)).targets[0]!;
    expect(target.status).toBe("scheduled");
    expect(target.attempts).toBe(1);
    const list = (await world.call("GET", "/api/v1/schedule/targets", { key: acct.key })).json.targets;
    expect(list[0].readyToPost).toBe(false);
    expect(list[0].blockedReason).toContain("access token");
    mastodon.state.token = DEFAULT_TOKEN;
    expect((await checkConnection(world.deps, connectionId)).readyToPost).toBe(true);
    world.clock.advance(30_000);
    await runDueOnce(world.deps);
    expect((await postRows(world.deps, id)).targets[0]!.status).toBe("published");
  });
});
