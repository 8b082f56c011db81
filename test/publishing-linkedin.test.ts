/**
 * LinkedIn end to end against the stand-in written from LinkedIn's documentation (test/peers/linkedin/server.ts),
 * reached through PLATFORM_ORIGIN_OVERRIDES: connect by signing in through the dashboard's routes (Allow; Cancel and a
 * refused exchange each get a sentence and store nothing), a post with 2 images (alt text each) and a first comment
 * delivered once (checked by what the stand-in received), an answer lost after LinkedIn stored the post (found by the
 * author look-up, never sent twice), a retired API version (426) explained, and thread parts refused at scheduling.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { isoAt } from "../src/lib/clock";
import { ingestImageBytes } from "../src/modules/assets/ingest";
import { runDueOnce } from "../src/publishing/dispatcher";
import { refreshExpiringTokens } from "../src/publishing/sign-in/refresh";
import { LINKEDIN_VERSION, VERSION_SUNSET } from "../src/publishing/networks/linkedin/client";
import { littleText } from "../src/publishing/networks/linkedin/connector";
import { DashboardClient } from "./helpers/dashboard-client";
import { BASE, type TestAccount, type World, createWorld } from "./helpers/world";
import { LINKEDIN_MEMBER, type LinkedInStandIn, startLinkedInStandIn } from "./peers/linkedin/server";
import { postRows, solidPng } from "./publishing-fixtures";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const CALLBACK = `${BASE}/dashboard/connections/callback/linkedin`;
let world: World;
let linkedin: LinkedInStandIn;
let acct: TestAccount;
let email = "";
let connectionId = "";

beforeAll(async () => {
  let now = () => Date.now();
  linkedin = startLinkedInStandIn({ now: () => now() });
  world = await createWorld({
    env: {
      PLATFORM_ORIGIN_OVERRIDES: `www.linkedin.com=${linkedin.origin},api.linkedin.com=${linkedin.origin}`,
      LINKEDIN_CLIENT_ID: linkedin.clientId,
      LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
    },
  });
  now = () => world.clock.now();
  acct = await world.createAccount();
  const [user] = await world.sql<{ email: string }>("SELECT email FROM users WHERE id = ?", acct.userId);
  email = user!.email;
});

afterAll(async () => {
  await world.close();
  await linkedin.stop();
});

afterEach(() => {
  // Every request Seedcast sent kept to LinkedIn's documented contract.
  expect(linkedin.violations).toEqual([]);
});

async function signedIn(): Promise<DashboardClient> {
  const b = new DashboardClient(world);
  expect((await b.login(email)).status).toBe(303);
  return b;
}

/** Presses Connect LinkedIn; follows LinkedIn's page (Allow or Cancel) back into the dashboard. */
async function connect(b: DashboardClient, allow: boolean, tamper?: (back: URL) => void) {
  const res = await b.submit("/dashboard/connections", "/dashboard/connections/connect/linkedin", {});
  expect(res.status).toBe(303);
  const authorize = new URL(res.location ?? "");
  expect(`${authorize.origin}${authorize.pathname}`).toBe(`${linkedin.origin}/oauth/v2/authorization`);
  const page = await fetch(authorize);
  expect(await page.text()).toContain("Seedcast would like to:");
  const form = new URLSearchParams(authorize.searchParams);
  form.set("decision", allow ? "allow" : "cancel");
  const answer = await fetch(`${linkedin.origin}/oauth/v2/authorization`, { method: "POST", body: form, redirect: "manual" });
  expect(answer.status).toBe(302);
  const back = new URL(answer.headers.get("location") ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
  tamper?.(back);
  return { authorize, callback: await b.get(`${back.pathname}${back.search}`) };
}

/** The LinkedIn connections (token_expires_at as a number: PostgreSQL answers bigint as text). */
const connectionRows = async () =>
  (
    await world.sql<{ id: string; label: string; ready_to_post: unknown; token_expires_at: number | string | null; meta: string }>(
      "SELECT id, label, ready_to_post, token_expires_at, meta FROM connections WHERE platform = 'linkedin'",
    )
  ).map((r) => ({ ...r, token_expires_at: r.token_expires_at === null ? null : Number(r.token_expires_at) }));

describe("connect LinkedIn by signing in", () => {
  test("Cancel on LinkedIn's page: one sentence, nothing stored", async () => {
    const b = await signedIn();
    const { callback } = await connect(b, false);
    expect(callback.status).toBe(400);
    expect(callback.text).toContain("You did not allow Seedcast on LinkedIn, so nothing was connected.");
    expect(await connectionRows()).toEqual([]);
  });

  test("a refused code exchange: LinkedIn's words in one sentence, nothing stored", async () => {
    const b = await signedIn();
    const { callback } = await connect(b, true, (back) => back.searchParams.set("code", "not-the-code"));
    expect(callback.status).toBe(400);
    expect(callback.text).toContain("LinkedIn refused to finish the sign-in (invalid_request");
    expect(await connectionRows()).toEqual([]);
  });

  test("Allow: the scopes asked for, a ready connection named after the member, its 60-day expiry kept", async () => {
    const b = await signedIn();
    const { authorize, callback } = await connect(b, true);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({ response_type: "code", client_id: linkedin.clientId, redirect_uri: CALLBACK, scope: "openid profile w_member_social" });
    expect(callback.status).toBe(303);
    const rows = await connectionRows();
    expect(rows).toHaveLength(1);
    connectionId = rows[0]!.id;
    expect(rows[0]!.label).toBe(LINKEDIN_MEMBER.name);
    expect(Boolean(rows[0]!.ready_to_post)).toBe(true);
    expect(JSON.parse(rows[0]!.meta)).toMatchObject({ providerAccountId: LINKEDIN_MEMBER.sub });
    expect(rows[0]!.token_expires_at).toBe(world.clock.now() + 60 * DAY);
    expect(linkedin.tokenRequests.at(-1)).toMatchObject({ grantType: "authorization_code", status: 200 });
  });
});

/** A post with 2 images (alt text each) and a first comment, scheduled to the LinkedIn connection. */
async function schedule(caption: string, extra: Record<string, unknown> = {}) {
  const first = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(320, 200), fileName: "first" });
  const second = await ingestImageBytes(world.deps, acct.accountId, { bytes: await solidPng(200, 320), fileName: "second" });
  const made = await world.call("POST", "/api/v1/creations", {
    key: acct.key,
    body: {
      type: "social_post",
      caption,
      images: [
        { asset_id: first.id, alt_text: "Bread on the counter, wide" },
        { asset_id: second.id, alt_text: "Bread on the counter, tall" },
      ],
      first_comment: "Order at harbour.example (link in comment)",
      ...extra,
    },
  });
  expect(made.status).toBe(201);
  return world.call("POST", "/api/v1/schedule", {
    key: acct.key,
    body: { type: "social_post", creation_id: made.json.creation.id, scheduled_time: isoAt(world.clock.now() + HOUR), targets: [connectionId] },
  });
}

describe("publishing to LinkedIn", () => {
  test("2 images with their alt text as one multi-image post, then the first comment; once", async () => {
    const res = await schedule("Fresh loaves (sourdough) at 7_am *today*");
    expect(res.status).toBe(200);
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    await runDueOnce(world.deps);
    expect(linkedin.posts).toHaveLength(1);
    const post = linkedin.posts[0]!;
    expect(post.commentary).toBe(littleText("Fresh loaves (sourdough) at 7_am *today*"));
    expect(post.commentary).toBe("Fresh loaves \\(sourdough\\) at 7\\_am \\*today\\*");
    expect(post.images.map((i) => i.altText)).toEqual(["Bread on the counter, wide", "Bread on the counter, tall"]);
    expect(post.images.every((i) => i.bytes > 0 && i.contentType === "image/png")).toBe(true);
    expect(post.linkedinVersion).toBe(LINKEDIN_VERSION);
    expect(linkedin.comments).toEqual([expect.objectContaining({ object: post.id, text: "Order at harbour.example (link in comment)", actor: `urn:li:person:${LINKEDIN_MEMBER.sub}` })]);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: post.id, publishedUrl: `https://www.linkedin.com/feed/update/${post.id}/` });
  });

  test("the answer to the post is lost after LinkedIn stored it: the author look-up finds it, nothing is sent twice", async () => {
    const res = await schedule("Rye on Fridays");
    expect(res.status).toBe(200);
    const before = linkedin.posts.length;
    linkedin.mode.storeThenCut = 1;
    world.clock.advance(HOUR + 1000);
    for (let i = 0; i < 4; i++) {
      await runDueOnce(world.deps);
      world.clock.advance(10 * 60 * 1000);
    }
    expect(linkedin.posts.length - before).toBe(1);
    const stored = linkedin.posts.at(-1)!;
    expect(linkedin.comments.filter((c) => c.object === stored.id)).toHaveLength(1);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]).toMatchObject({ status: "published", providerPostId: stored.id });
  });

  test("a retired API version (426): the target fails with the sentence saying Seedcast must be upgraded; nothing posted", async () => {
    const res = await schedule("Closed on Monday");
    linkedin.mode.sunsetVersions.add(LINKEDIN_VERSION);
    const before = linkedin.posts.length;
    world.clock.advance(HOUR + 1000);
    await runDueOnce(world.deps);
    linkedin.mode.sunsetVersions.clear();
    expect(linkedin.posts.length).toBe(before);
    const { targets } = await postRows(world.deps, res.json.post.id);
    expect(targets[0]!.status).toBe("failed");
    expect(targets[0]!.errorMessage).toContain(VERSION_SUNSET);
  });

  test("thread parts: LinkedIn has none, refused at scheduling (409), nothing scheduled", async () => {
    const res = await schedule("A thread", { thread: [{ caption: "Part two" }] });
    expect(res.status).toBe(409);
    expect(res.json).toMatchObject({ error: "not_schedulable", problems: [{ platform: "linkedin", field: "thread" }] });
    expect(res.json.message).toContain("LinkedIn (Ada Harbour) has no threads");
  });
});

describe("LinkedIn's 60-day sign-in (no refresh token), the clock moved", () => {
  test("the target carries expiresAt; the card says when it ends; from 7 days before, the connections page and the overview warn", async () => {
    const [row] = await connectionRows();
    const ends = row!.token_expires_at!;
    const targets = await world.call("GET", "/api/v1/schedule/targets", { key: acct.key });
    expect(targets.status).toBe(200);
    expect(targets.json.targets).toEqual([expect.objectContaining({ accountId: connectionId, platform: "linkedin", expiresAt: new Date(ends).toISOString() })]);
    const b = await signedIn();
    expect((await b.get("/dashboard/connections")).text).toContain("This sign-in ends");
    expect((await b.get("/dashboard")).text).not.toContain("Sign-ins ending soon");

    world.clock.set(ends - 6 * DAY);
    // Nothing can renew it: the daily job leaves it as it is, still ready, and asks LinkedIn nothing.
    const asked = linkedin.tokenRequests.length;
    await refreshExpiringTokens(world.deps);
    expect(linkedin.tokenRequests.length).toBe(asked);
    expect(Boolean((await connectionRows())[0]!.ready_to_post)).toBe(true);
    const later = await signedIn();
    const connections = (await later.get("/dashboard/connections")).text;
    expect(connections).toContain("ends soon");
    expect(connections).toContain("reconnect before then, or posts due after it will fail");
    const overview = (await later.get("/dashboard")).text;
    expect(overview).toContain("Sign-ins ending soon");
    expect(overview).toContain(LINKEDIN_MEMBER.name);
  });
});
