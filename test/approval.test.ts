/**
 * Issue 27, approval (decisions.md §14), end to end with an editor's key, an owner's key and the dashboard: with the
 * account's approvalRequired on, an editor's post waits as pending_approval and the dispatcher never claims it; the
 * owner approves (it publishes to the webhook peer once the clock reaches its time) or rejects it (failed, "Rejected:
 * <note>"); a post not approved by its time fails with "Not approved before its time." and never publishes. Roles
 * are read at every request. The events are recorded for event webhooks. Real webhook receiver on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { members, notices, webhookEvents } from "../src/db/tables";
import { addMember } from "../src/modules/accounts/service";
import { addConnection } from "../src/modules/connections/service";
import { expireUnapproved, NOT_APPROVED_IN_TIME } from "../src/modules/schedule/approval";
import { runDueOnce } from "../src/publishing/dispatcher";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { connectV2, grantFor, refusalOf, registerTestClient, serveWorld } from "./helpers/mcp";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { makeCreation, WEBHOOK_SECRET } from "./publishing-fixtures";

const MINUTE = 60_000;
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

describeAuthMatrix("approval", () => world, [
  { method: "GET", path: "/api/v1/schedule/approvals" },
  { method: "POST", path: "/api/v1/schedule/0190a0a0-0000-7000-8000-000000000000/approve" },
  { method: "POST", path: "/api/v1/schedule/0190a0a0-0000-7000-8000-000000000000/reject", validBody: { note: "no" } },
]);

interface Team {
  a: TestAccount;
  hook: string;
  path: string;
  editorKey: string;
  editorId: string;
  editorEmail: string;
  ownerKey: string;
}

let teamCounter = 0;

/** An account with approval on, a webhook connection, an editor (with a key and a password) and the owner's key. */
async function team(): Promise<Team> {
  const a = await world.createAccount();
  const path = `/approval-${++teamCounter}`;
  const hook = (await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}${path}`, secret: WEBHOOK_SECRET })).accountId;
  const editorEmail = `editor-${teamCounter}-${crypto.randomUUID().slice(0, 6)}@example.test`;
  const { userId: editorId } = await addMember(world.deps, { accountId: a.accountId, email: editorEmail, password: PASSWORD, role: "editor" });
  const editorKey = (await a.mint(["read", "create", "schedule"], { userId: editorId })).key;
  const on = await world.call("PATCH", "/api/v1/account", { key: a.key, body: { approval_required: true } });
  expect(on.status).toBe(200);
  const events = await world.call("POST", "/api/v1/webhooks", {
    key: a.key,
    body: { url: `${receiver.url}/events-${teamCounter}`, events: ["post.needs_approval", "post.approved", "post.rejected", "post.failed", "post.published"] },
  });
  expect(events.status).toBe(201);
  return { a, hook, path, editorKey, editorId, editorEmail, ownerKey: a.key };
}

async function schedule(t: Team, key: string, at: number, caption = "Needs an owner's yes") {
  const creation = await makeCreation(world.deps, t.a.accountId, { caption });
  return world.call("POST", "/api/v1/schedule", {
    key,
    body: { type: "social_post", creation_id: creation.id, scheduled_time: new Date(at).toISOString(), targets: [t.hook] },
  });
}

/** The posts the webhook peer received on `t`'s connection (its connect-time ping not counted). */
function delivered(t: Team): number {
  return receiver.effects().filter((d) => d.path === t.path && d.event === "post.publish").length;
}

async function eventTypes(t: Team): Promise<string[]> {
  const rows = await world.store.db.select({ type: webhookEvents.type, createdAt: webhookEvents.createdAt }).from(webhookEvents).where(eq(webhookEvents.accountId, t.a.accountId)).all();
  return rows.map((r) => r.type);
}

async function post(t: Team, id: string) {
  const res = await world.call("GET", `/api/v1/schedule/posts/${id}`, { key: t.ownerKey });
  expect(res.status).toBe(200);
  return res.json.post;
}

describe("an editor's post waits for an owner", () => {
  test("editor's key → pending_approval, never claimed; the owner approves → it publishes at its time", async () => {
    const t = await team();
    const at = world.clock.now() + 30 * MINUTE;
    const res = await schedule(t, t.editorKey, at);
    expect(res.status).toBe(200);
    expect(res.json.post.status).toBe("pending_approval");
    expect(res.json.post.targets.map((x: { status: string }) => x.status)).toEqual(["pending_approval"]);
    const id = res.json.post.id as string;

    // Listed for the owner (and readable by the editor); the owners got a notice.
    const list = await world.call("GET", "/api/v1/schedule/approvals", { key: t.editorKey });
    expect(list.status).toBe(200);
    expect(list.json.posts.map((p: { id: string }) => p.id)).toEqual([id]);
    const ownerNotices = await world.store.db.select().from(notices).where(eq(notices.accountId, t.a.accountId)).all();
    expect(ownerNotices.filter((n) => n.kind === "post_awaiting_approval").map((n) => n.userId)).toEqual([t.a.userId]);

    // The editor cannot approve: 403 forbidden, requiredRole owner, nothing changed.
    const refused = await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.editorKey });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: "forbidden", requiredRole: "owner" });
    expect((await post(t, id)).status).toBe("pending_approval");

    // Not approved yet: nothing goes out even well before its time (the dispatcher finds nothing to claim).
    world.clock.set(at - 10 * MINUTE);
    expect(await runDueOnce(world.deps)).toBe(0);
    expect(delivered(t)).toBe(0);

    const approved = await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.ownerKey });
    expect(approved.status).toBe(200);
    expect(approved.json.post.status).toBe("scheduled");
    expect(approved.json.post.targets[0].status).toBe("scheduled");
    const again = await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.ownerKey });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ error: "not_pending_approval", status: "scheduled" });

    world.clock.set(at + 1000);
    expect(await runDueOnce(world.deps)).toBe(1);
    expect((await post(t, id)).status).toBe("published");
    expect(delivered(t)).toBe(1);
    expect(await eventTypes(t)).toEqual(expect.arrayContaining(["post.needs_approval", "post.approved", "post.published"]));
  });

  test("the owner rejects with a note → failed, \"Rejected: <note>\", never published; the editor is told", async () => {
    const t = await team();
    const at = world.clock.now() + 20 * MINUTE;
    const id = (await schedule(t, t.editorKey, at)).json.post.id as string;
    const tooLong = await world.call("POST", `/api/v1/schedule/${id}/reject`, { key: t.ownerKey, body: { note: "x".repeat(501) } });
    expect(tooLong.status).toBe(400);
    expect((await post(t, id)).status).toBe("pending_approval");
    const byEditor = await world.call("POST", `/api/v1/schedule/${id}/reject`, { key: t.editorKey, body: { note: "mine" } });
    expect(byEditor.status).toBe(403);
    expect(byEditor.json.requiredRole).toBe("owner");

    const rejected = await world.call("POST", `/api/v1/schedule/${id}/reject`, { key: t.ownerKey, body: { note: "  Wrong product name  " } });
    expect(rejected.status).toBe(200);
    expect(rejected.json.post).toMatchObject({ status: "failed", errorMessage: "Rejected: Wrong product name" });
    expect(rejected.json.post.targets[0].status).toBe("failed");
    const approveLate = await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.ownerKey });
    expect(approveLate.status).toBe(409);
    expect(approveLate.json).toMatchObject({ error: "not_pending_approval", status: "failed" });

    world.clock.set(at + 1000);
    await runDueOnce(world.deps);
    expect(delivered(t)).toBe(0);
    expect((await post(t, id)).status).toBe("failed");
    expect(await eventTypes(t)).toContain("post.rejected");
    const editorNotices = await world.store.db.select().from(notices).where(eq(notices.userId, t.editorId)).all();
    expect(editorNotices.some((n) => n.kind === "post_failed" && n.title.includes("Rejected: Wrong product name"))).toBe(true);

    // Without a note.
    const other = (await schedule(t, t.editorKey, world.clock.now() + 20 * MINUTE)).json.post.id as string;
    const plain = await world.call("POST", `/api/v1/schedule/${other}/reject`, { key: t.ownerKey });
    expect(plain.status).toBe(200);
    expect(plain.json.post.errorMessage).toBe("Rejected: no note given.");
  });

  test("not approved by its time → failed with the sentence, never published; approving afterwards is refused", async () => {
    const t = await team();
    const at = world.clock.now() + 10 * MINUTE;
    const id = (await schedule(t, t.editorKey, at)).json.post.id as string;
    const second = (await schedule(t, t.editorKey, at + MINUTE, "Second")).json.post.id as string;
    world.clock.set(at + 1000);
    expect(await runDueOnce(world.deps)).toBe(0);
    expect(await expireUnapproved(world.deps)).toBeGreaterThanOrEqual(1);
    const failed = await post(t, id);
    expect(failed).toMatchObject({ status: "failed", errorMessage: NOT_APPROVED_IN_TIME });
    expect(failed.errorMessage).toBe("Not approved before its time.");
    expect(failed.targets[0].status).toBe("failed");
    // The second one's time has not come: still waiting.
    expect((await post(t, second)).status).toBe("pending_approval");
    // An approve after its time (before the job ran) fails it first and is refused.
    world.clock.set(at + 2 * MINUTE);
    const late = await world.call("POST", `/api/v1/schedule/${second}/approve`, { key: t.ownerKey });
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ error: "not_pending_approval", status: "failed" });
    expect((await post(t, second)).errorMessage).toBe(NOT_APPROVED_IN_TIME);
    await runDueOnce(world.deps);
    expect(delivered(t)).toBe(0);
    expect((await eventTypes(t)).filter((x) => x === "post.failed").length).toBe(2);
  });

  test("owners' posts go as before; with approval off an editor's post is scheduled at once", async () => {
    const t = await team();
    const mine = await schedule(t, t.ownerKey, world.clock.now() + 15 * MINUTE);
    expect(mine.json.post.status).toBe("scheduled");
    await world.call("PATCH", "/api/v1/account", { key: t.ownerKey, body: { approval_required: false } });
    const editors = await schedule(t, t.editorKey, world.clock.now() + 15 * MINUTE);
    expect(editors.json.post.status).toBe("scheduled");
  });

  test("roles are read at every request: an editor promoted to owner approves with the same key; a demoted owner cannot", async () => {
    const t = await team();
    const id = (await schedule(t, t.editorKey, world.clock.now() + 30 * MINUTE)).json.post.id as string;
    await world.store.write(async (tx) => {
      await tx.update(members).set({ role: "owner" }).where(eq(members.userId, t.editorId)).run();
    });
    // Now an owner: the same key's posts no longer wait, and it may approve.
    expect((await schedule(t, t.editorKey, world.clock.now() + 30 * MINUTE)).json.post.status).toBe("scheduled");
    const ok = await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.editorKey });
    expect(ok.status).toBe(200);
    await world.store.write(async (tx) => {
      await tx.update(members).set({ role: "editor" }).where(eq(members.userId, t.editorId)).run();
    });
    const waiting = (await schedule(t, t.editorKey, world.clock.now() + 30 * MINUTE)).json.post.id as string;
    const no = await world.call("POST", `/api/v1/schedule/${waiting}/reject`, { key: t.editorKey });
    expect(no.status).toBe(403);
  });

  test("a waiting post moved to another time keeps waiting; cancelled, it is gone; another account's post is 404", async () => {
    const t = await team();
    const id = (await schedule(t, t.editorKey, world.clock.now() + 30 * MINUTE)).json.post.id as string;
    const to = new Date(world.clock.now() + 90 * MINUTE).toISOString();
    const moved = await world.call("PATCH", `/api/v1/schedule/${id}`, { key: t.editorKey, body: { scheduled_time: to } });
    expect(moved.status).toBe(200);
    expect(moved.json.post.status).toBe("pending_approval");
    expect(moved.json.post.targets.map((x: { status: string }) => x.status)).toEqual(["pending_approval"]);
    expect(Date.parse(moved.json.post.scheduledTime)).toBe(Date.parse(to));
    const stranger = await world.createAccount();
    expect((await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: stranger.key })).status).toBe(404);
    expect((await world.call("DELETE", `/api/v1/schedule/${id}`, { key: t.editorKey })).status).toBe(200);
    expect((await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.ownerKey })).status).toBe(404);
  });

  test("an editor who changes what an approved post sends sends it back for approval; a move in time or an owner's edit does not", async () => {
    const t = await team();
    const id = (await schedule(t, t.editorKey, world.clock.now() + 30 * MINUTE)).json.post.id as string;
    expect((await world.call("POST", `/api/v1/schedule/${id}/approve`, { key: t.ownerKey })).status).toBe(200);
    const later = new Date(world.clock.now() + 45 * MINUTE).toISOString();
    const moved = await world.call("PATCH", `/api/v1/schedule/${id}`, { key: t.editorKey, body: { scheduled_time: later } });
    expect(moved.json.post.status).toBe("scheduled");
    const byOwner = await world.call("PATCH", `/api/v1/schedule/${id}`, { key: t.ownerKey, body: { content: { caption: "Owner's words" } } });
    expect(byOwner.json.post.status).toBe("scheduled");
    const edited = await world.call("PATCH", `/api/v1/schedule/${id}`, { key: t.editorKey, body: { content: { caption: "Something else entirely" } } });
    expect(edited.status).toBe(200);
    expect(edited.json.post.status).toBe("pending_approval");
    expect(edited.json.post.targets.map((x: { status: string }) => x.status)).toEqual(["pending_approval"]);
    world.clock.set(Date.parse(later) + 1000);
    await runDueOnce(world.deps);
    expect(delivered(t)).toBe(0);
    expect((await eventTypes(t)).filter((x) => x === "post.needs_approval").length).toBe(2);
  });
});

describe("repeats", () => {
  test("an editor's series: a cancelled waiting occurrence is skipped and the next waits too; a rejected one ends the series", async () => {
    const t = await team();
    const creation = await makeCreation(world.deps, t.a.accountId, { caption: "Every day" });
    const at = new Date(Math.ceil((world.clock.now() + 60 * MINUTE) / MINUTE) * MINUTE).toISOString();
    const first = await world.call("POST", "/api/v1/schedule", {
      key: t.editorKey,
      body: { type: "social_post", creation_id: creation.id, scheduled_time: at, targets: [t.hook], repeat: { every: "day", count: 5 } },
    });
    expect(first.status).toBe(200);
    expect(first.json.post.status).toBe("pending_approval");
    const seriesId = first.json.post.seriesId as string;
    const ofSeries = async () =>
      ((await world.call("GET", "/api/v1/schedule/posts?limit=200", { key: t.ownerKey })).json.posts as { id: string; seriesId: string; status: string; scheduledTime: string }[])
        .filter((p) => p.seriesId === seriesId)
        .sort((x, y) => x.scheduledTime.localeCompare(y.scheduledTime));
    expect((await world.call("DELETE", `/api/v1/schedule/${first.json.post.id}`, { key: t.editorKey })).status).toBe(200);
    const [next] = await ofSeries();
    expect(next).toMatchObject({ status: "pending_approval" });
    expect(Date.parse(next!.scheduledTime) - Date.parse(at)).toBe(24 * 60 * MINUTE);
    const rejected = await world.call("POST", `/api/v1/schedule/${next!.id}/reject`, { key: t.ownerKey, body: { note: "Stop this one" } });
    expect(rejected.status).toBe(200);
    // Ended: nothing new was scheduled, and the series can no longer be ended (nothing pending; the call still answers).
    expect((await ofSeries()).map((p) => p.status)).toEqual(["failed"]);
    world.clock.set(Date.parse(next!.scheduledTime) + 2 * 24 * 60 * MINUTE);
    await runDueOnce(world.deps);
    await expireUnapproved(world.deps);
    expect((await ofSeries()).map((p) => p.status)).toEqual(["failed"]);
    expect(delivered(t)).toBe(0);
  });
});

describe("the dashboard", () => {
  test("an editor schedules in the dashboard → waiting; the owner's Approvals page approves and rejects with a note", async () => {
    const t = await team();
    const editor = new DashboardClient(world);
    expect((await editor.login(t.editorEmail)).status).toBe(303);
    const creation = await makeCreation(world.deps, t.a.accountId, { caption: "From the editor's dashboard" });
    const at = new Date(world.clock.now() + 2 * 60 * MINUTE);
    const date = at.toISOString().slice(0, 10);
    const time = at.toISOString().slice(11, 16);
    const scheduled = await editor.submit(`/dashboard/creations/${creation.id}`, `/dashboard/creations/${creation.id}/schedule`, { date, time, targets: [t.hook] });
    expect(scheduled.status).toBe(303);
    const id = /#post-([0-9a-f-]+)/.exec(scheduled.location ?? "")?.[1] ?? "";
    expect((await post(t, id)).status).toBe("pending_approval");
    const page = await editor.get(`/dashboard/calendar/posts/${id}`);
    expect(page.text).toContain("Waiting for approval");
    // The editor sees no Approvals page.
    expect((await editor.get("/dashboard/approvals")).status).toBe(403);

    const owner = new DashboardClient(world);
    const ownerEmail = `owner-${crypto.randomUUID().slice(0, 6)}@example.test`;
    await addMember(world.deps, { accountId: t.a.accountId, email: ownerEmail, password: PASSWORD, role: "owner" });
    expect((await owner.login(ownerEmail)).status).toBe(303);
    const list = await owner.get("/dashboard/approvals");
    expect(list.status).toBe(200);
    expect(list.text).toContain("From the editor&#39;s dashboard");
    const approved = await owner.submit("/dashboard/approvals", `/dashboard/approvals/${id}/approve`, {});
    expect(approved.status).toBe(303);
    expect((await post(t, id)).status).toBe("scheduled");

    const second = (await schedule(t, t.editorKey, world.clock.now() + 60 * MINUTE, "Second try")).json.post.id as string;
    const rejected = await owner.submit("/dashboard/approvals", `/dashboard/approvals/${second}/reject`, { note: "Not this week" });
    expect(rejected.status).toBe(303);
    expect((await post(t, second))).toMatchObject({ status: "failed", errorMessage: "Rejected: Not this week" });
    // The overview lists what waits for the owner.
    const third = (await schedule(t, t.editorKey, world.clock.now() + 60 * MINUTE, "Third")).json.post.id as string;
    expect(third).toBeTruthy();
    const overview = await owner.get("/dashboard");
    expect(overview.text).toContain("waiting for your approval");
  });
});

describe("MCP (the official SDK's client over HTTP, OAuth grants of an editor and an owner)", () => {
  test("an editor's schedule_post waits; list_approvals; approve_post and reject_post refused to the editor, done by the owner", async () => {
    const served = serveWorld(world);
    try {
      const t = await team();
      const clientId = await registerTestClient(world);
      const editor = await connectV2(`${served.base}/mcp`, (await grantFor(world, clientId, t.a.accountId, t.editorId, ["read", "create", "schedule"])).accessToken);
      const owner = await connectV2(`${served.base}/mcp`, (await grantFor(world, clientId, t.a.accountId, t.a.userId, ["read", "schedule"])).accessToken);
      try {
        const at = new Date(world.clock.now() + 40 * MINUTE).toISOString();
        const ids: string[] = [];
        for (const caption of ["First by MCP", "Second by MCP"]) {
          const creation = await makeCreation(world.deps, t.a.accountId, { caption });
          const res = await editor.callTool("schedule_post", { creation_id: creation.id, scheduled_time: at, targets: [t.hook] });
          expect(res.isError).toBeFalsy();
          const post = (res.structuredContent as { post: { id: string; status: string } }).post;
          expect(post.status).toBe("pending_approval");
          ids.push(post.id);
        }
        const listed = await owner.callTool("list_approvals", {});
        expect(new Set((listed.structuredContent as { posts: { id: string }[] }).posts.map((p) => p.id))).toEqual(new Set(ids));
        const refused = await editor.callTool("approve_post", { id: ids[0] });
        expect(refusalOf(editor, refused)).toMatchObject({ error: "forbidden", requiredRole: "owner" });
        const refusedReject = await editor.callTool("reject_post", { id: ids[0], note: "mine" });
        expect(refusalOf(editor, refusedReject)).toMatchObject({ error: "forbidden", requiredRole: "owner" });

        const approved = await owner.callTool("approve_post", { id: ids[0] });
        expect((approved.structuredContent as { post: { status: string } }).post.status).toBe("scheduled");
        const rejected = await owner.callTool("reject_post", { id: ids[1], note: "Too late in the day" });
        expect((rejected.structuredContent as { post: { status: string; errorMessage: string } }).post).toMatchObject({
          status: "failed",
          errorMessage: "Rejected: Too late in the day",
        });
        const twice = await owner.callTool("reject_post", { id: ids[1] });
        expect(refusalOf(owner, twice)).toMatchObject({ error: "not_pending_approval", status: "failed" });
        expect((await owner.callTool("list_approvals", {})).structuredContent).toEqual({ posts: [], nextCursor: null });

        world.clock.set(Date.parse(at) + 1000);
        await runDueOnce(world.deps);
        expect(delivered(t)).toBe(1);
      } finally {
        await editor.close();
        await owner.close();
      }
    } finally {
      await served.stop();
    }
  });
});
