/**
 * The fake Mastodon behaves as Mastodon's documentation says, so a connector tested against it is tested against
 * the real contract: auth, instance limits, media 202-then-poll, scheduled statuses, 422s, idempotency, modes.
 */

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../src/lib/clock.ts";
import { DEFAULT_TOKEN, startMastodonServer, type MastodonServer } from "./peers/mastodon-server.ts";

const PNG_1PX = Uint8Array.from(
  atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="),
  (c) => c.charCodeAt(0),
);
const AUTH = { authorization: `Bearer ${DEFAULT_TOKEN}` };

let clock: ManualClock;
let mastodon: MastodonServer;

beforeEach(async () => {
  clock = new ManualClock("2026-11-22T10:00:00.000Z");
  mastodon = await startMastodonServer({ now: () => clock.now() });
});
afterEach(async () => {
  await mastodon.stop();
});

async function call(method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  // `any`: response bodies are asserted field by field; typing every Mastodon entity here adds nothing.
  const res = await fetch(`${mastodon.url}${path}`, { method, body: init.body, headers: { ...AUTH, ...init.headers } });
  return { status: res.status, body: await res.json() };
}

async function uploadMedia(description = "a dot"): Promise<string> {
  const form = new FormData();
  form.append("file", new Blob([PNG_1PX], { type: "image/png" }), "dot.png");
  form.append("description", description);
  const res = await call("POST", "/api/v2/media", { body: form });
  expect(res.status).toBe(202);
  return res.body.id as string;
}

function statusForm(fields: Record<string, string | string[]>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  return form;
}

describe("auth and instance", () => {
  test("a wrong or missing token answers 401 with Mastodon's body", async () => {
    for (const headers of [{ authorization: "Bearer nope" }, { authorization: "" }]) {
      const res = await fetch(`${mastodon.url}/api/v1/accounts/verify_credentials`, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "The access token is invalid" });
    }
    const ok = await call("GET", "/api/v1/accounts/verify_credentials");
    expect(ok.status).toBe(200);
    expect(ok.body.username).toBe("seedcast");
    expect(ok.body.url).toBe(`${mastodon.url}/@seedcast`);
  });

  test("/api/v2/instance reports the configured limits", async () => {
    const small = await startMastodonServer({ maxCharacters: 123 });
    try {
      const res = await fetch(`${small.url}/api/v2/instance`);
      const body = (await res.json()) as any;
      expect(body.configuration.statuses.max_characters).toBe(123);
      expect(body.configuration.statuses.max_media_attachments).toBe(4);
      expect(body.configuration.media_attachments.image_size_limit).toBe(16 * 1024 * 1024);
      expect(body.configuration.media_attachments.supported_mime_types).toContain("image/png");
    } finally {
      await small.stop();
    }
    const def = (await (await fetch(`${mastodon.url}/api/v2/instance`)).json()) as any;
    expect(def.configuration.statuses.max_characters).toBe(500);
  });
});

describe("media", () => {
  test("upload answers 202 with url null, then 206 while processing, then 200 with a url", async () => {
    const form = new FormData();
    form.append("file", new Blob([PNG_1PX], { type: "image/png" }), "dot.png");
    form.append("description", "A single red dot");
    const up = await call("POST", "/api/v2/media", { body: form });
    expect(up.status).toBe(202);
    expect(up.body.url).toBeNull();
    expect(up.body.description).toBe("A single red dot");
    expect(mastodon.state.media.get(up.body.id)?.bytes).toEqual(PNG_1PX);

    const first = await call("GET", `/api/v1/media/${up.body.id}`);
    expect(first.status).toBe(206);
    expect(first.body.url).toBeNull();
    const second = await call("GET", `/api/v1/media/${up.body.id}`);
    expect(second.status).toBe(200);
    expect(second.body.url).toStartWith(`${mastodon.url}/system/media_attachments/`);
    expect((await call("GET", "/api/v1/media/999")).status).toBe(404);
  });

  test("attaching media that is still processing is a 422", async () => {
    const id = await uploadMedia();
    const res = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "hi", "media_ids[]": id }) });
    expect(res.status).toBe(422);
    expect(res.body.error).toContain("not finished processing");
    mastodon.state.finishProcessing();
    const ok = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "hi", "media_ids[]": id }) });
    expect(ok.status).toBe(200);
    expect(ok.body.media_attachments[0].id).toBe(id);
  });
});

describe("statuses", () => {
  test("an immediate status (form) answers a Status with url and HTML content", async () => {
    const res = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "Hello <world> & co" }) });
    expect(res.status).toBe(200);
    expect(res.body.url).toBe(`${mastodon.url}/@seedcast/${res.body.id}`);
    expect(res.body.uri).toContain(res.body.id);
    expect(res.body.created_at).toBe("2026-11-22T10:00:00.000Z");
    expect(res.body.content).toBe("<p>Hello &lt;world&gt; &amp; co</p>");
    expect((await call("GET", `/api/v1/statuses/${res.body.id}`)).body.id).toBe(res.body.id);
  });

  test("scheduled_at more than 5 minutes ahead answers a ScheduledStatus; publishDue turns it into a status", async () => {
    const mediaId = await uploadMedia("alt");
    mastodon.state.finishProcessing();
    const at = "2026-11-22T12:00:00.000Z";
    const res = await call("POST", "/api/v1/statuses", {
      body: JSON.stringify({ status: "Later", media_ids: [mediaId], scheduled_at: at }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scheduled_at: at, params: { text: "Later", media_ids: [mediaId] } });
    expect(res.body.media_attachments[0].id).toBe(mediaId);
    expect(res.body.url).toBeUndefined();
    expect((await call("GET", `/api/v1/scheduled_statuses/${res.body.id}`)).body.id).toBe(res.body.id);
    expect(mastodon.state.statuses.size).toBe(0);

    clock.set("2026-11-22T11:59:59.000Z");
    expect(mastodon.state.publishDue()).toHaveLength(0);
    clock.set(at);
    const [published] = mastodon.state.publishDue();
    expect(published?.text).toBe("Later");
    expect(published?.media_attachments[0]?.id).toBe(mediaId);
    expect(mastodon.state.publishedFromScheduled.get(res.body.id)).toBe(published!.id);
    expect((await call("GET", `/api/v1/scheduled_statuses/${res.body.id}`)).status).toBe(404);
    expect((await call("GET", `/api/v1/statuses/${published!.id}`)).body.url).toBe(published!.url);
  });

  test("scheduled_at within 5 minutes is a 422; in the past posts at once (as Mastodon does)", async () => {
    const soon = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "x", scheduled_at: "2026-11-22T10:04:59Z" }) });
    expect(soon.status).toBe(422);
    expect(soon.body.error).toContain("scheduled date must be in the future");
    const past = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "x", scheduled_at: "2026-11-22T09:00:00Z" }) });
    expect(past.status).toBe(200);
    expect(past.body.url).toBeString();
  });

  test("deleting a scheduled status removes it and frees its media", async () => {
    const mediaId = await uploadMedia();
    mastodon.state.finishProcessing();
    const res = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "x", "media_ids[]": mediaId, scheduled_at: "2026-11-23T10:00:00Z" }) });
    const del = await call("DELETE", `/api/v1/scheduled_statuses/${res.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({});
    expect(mastodon.state.scheduled.size).toBe(0);
    expect(mastodon.state.deletedScheduled).toEqual([res.body.id]);
    expect(mastodon.state.media.get(mediaId)?.attachedTo).toBeNull();
    expect((await call("DELETE", `/api/v1/scheduled_statuses/${res.body.id}`)).status).toBe(404);
  });

  test("text over the instance limit is a 422 naming the limit; graphemes and URLs count as Mastodon counts", async () => {
    const over = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "a".repeat(501) }) });
    expect(over.status).toBe(422);
    expect(over.body).toEqual({ error: "Validation failed: Text character limit of 500 exceeded" });
    // 500 family emoji are 500 graphemes (but 5,500 UTF-16 units): allowed.
    expect((await call("POST", "/api/v1/statuses", { body: statusForm({ status: "👨‍👩‍👧‍👦".repeat(500) }) })).status).toBe(200);
    // A 600-character URL counts as 23.
    const url = `https://example.com/${"p".repeat(580)}`;
    expect((await call("POST", "/api/v1/statuses", { body: statusForm({ status: `see ${url}` }) })).status).toBe(200);
  });

  test("the same Idempotency-Key answers the same entity and creates nothing new", async () => {
    const headers = { "idempotency-key": "target-123" };
    const body = () => statusForm({ status: "once", scheduled_at: "2026-11-23T10:00:00Z" });
    const a = await call("POST", "/api/v1/statuses", { body: body(), headers });
    const b = await call("POST", "/api/v1/statuses", { body: body(), headers });
    expect(b.body).toEqual(a.body);
    expect(mastodon.state.scheduled.size).toBe(1);
    const c = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "now" }), headers: { "idempotency-key": "k2" } });
    const d = await call("POST", "/api/v1/statuses", { body: statusForm({ status: "now" }), headers: { "idempotency-key": "k2" } });
    expect(d.body.id).toBe(c.body.id);
    expect(mastodon.state.statuses.size).toBe(1);
    // After the scheduled one is published, the key answers the published status.
    clock.set("2026-11-23T10:00:00Z");
    mastodon.state.publishDue();
    const e = await call("POST", "/api/v1/statuses", { body: body(), headers });
    expect(e.body.id).toBe(mastodon.state.publishedFromScheduled.get(a.body.id)!);
    expect(mastodon.state.statuses.size).toBe(2);
  });
});

describe("limits and edits", () => {
  test("scheduled statuses are limited per day (25 by default) like the real server", async () => {
    const small = await startMastodonServer({ now: () => clock.now(), scheduledDailyLimit: 2 });
    try {
      const post = (at: string) =>
        fetch(`${small.url}/api/v1/statuses`, { method: "POST", headers: AUTH, body: statusForm({ status: "x", scheduled_at: at }) });
      expect((await post("2026-11-23T08:00:00Z")).status).toBe(200);
      expect((await post("2026-11-23T09:00:00Z")).status).toBe(200);
      const third = await post("2026-11-23T10:00:00Z");
      expect(third.status).toBe(422);
      expect(((await third.json()) as { error: string }).error).toContain("limit of 2 scheduled posts for today");
      expect((await post("2026-11-24T10:00:00Z")).status).toBe(200);
    } finally {
      await small.stop();
    }
  });

  test("PUT /api/v1/media/:id updates the description; a revoked token is a 401", async () => {
    const id = await uploadMedia("old");
    mastodon.state.finishProcessing();
    const res = await call("PUT", `/api/v1/media/${id}`, { body: JSON.stringify({ description: "new alt" }), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(200);
    expect(res.body.description).toBe("new alt");
    mastodon.state.token = "rotated";
    expect((await call("GET", "/api/v1/accounts/verify_credentials")).status).toBe(401);
  });
});

describe("modes", () => {
  test("error500, reject422 and unreachable, then back to ok on the same port", async () => {
    await mastodon.setMode("error500");
    expect((await call("GET", "/api/v1/accounts/verify_credentials")).status).toBe(500);
    await mastodon.setMode("reject422");
    expect((await call("POST", "/api/v1/statuses", { body: statusForm({ status: "x" }) })).status).toBe(422);
    expect((await call("GET", "/api/v1/accounts/verify_credentials")).status).toBe(200);
    await mastodon.setMode("unreachable");
    await expect(fetch(`${mastodon.url}/api/v1/accounts/verify_credentials`, { headers: AUTH })).rejects.toThrow();
    await mastodon.setMode("ok");
    expect((await call("GET", "/api/v1/accounts/verify_credentials")).status).toBe(200);
    expect(mastodon.state.statuses.size).toBe(0);
    expect(mastodon.state.requests.map((r) => r.status)).toEqual([500, 422, 200, 200]);
  });
});

describe("sign-in (docs.joinmastodon.org/methods/apps and /methods/oauth) and NodeInfo", () => {
  const REDIRECT = "http://127.0.0.1:9/callback";

  async function registerApp(): Promise<{ client_id: string; client_secret: string }> {
    const res = await call("POST", "/api/v1/apps", {
      body: JSON.stringify({ client_name: "Test", redirect_uris: REDIRECT, scopes: "read:accounts write:statuses" }),
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: "Test", redirect_uris: [REDIRECT], scopes: ["read:accounts", "write:statuses"] });
    return res.body;
  }

  async function authorize(app: { client_id: string }, challenge: string | null): Promise<string> {
    const q = new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT, scope: "read:accounts", state: "s1" });
    if (challenge) {
      q.set("code_challenge", challenge);
      q.set("code_challenge_method", "S256");
    }
    expect((await fetch(`${mastodon.url}/oauth/authorize?${q}`)).status).toBe(200);
    const res = await fetch(`${mastodon.url}/oauth/authorize`, { method: "POST", body: q, redirect: "manual" });
    const back = new URL(res.headers.get("location") ?? "");
    expect(back.searchParams.get("state")).toBe("s1");
    return back.searchParams.get("code") ?? "";
  }

  async function token(app: { client_id: string; client_secret: string }, code: string, verifier?: string) {
    const form = new URLSearchParams({ grant_type: "authorization_code", code, client_id: app.client_id, client_secret: app.client_secret, redirect_uri: REDIRECT });
    if (verifier !== undefined) form.set("code_verifier", verifier);
    const res = await fetch(`${mastodon.url}/oauth/token`, { method: "POST", body: form });
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  }

  const verifier = "v".repeat(43);
  const challenge = new Bun.CryptoHasher("sha256").update(verifier).digest("base64url");

  test("an app without redirect_uris is refused; an unknown client_id gets no redirect", async () => {
    const res = await call("POST", "/api/v1/apps", { body: JSON.stringify({ client_name: "x" }), headers: { "content-type": "application/json" } });
    expect(res.status).toBe(422);
    const page = await fetch(`${mastodon.url}/oauth/authorize?response_type=code&client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}`, { redirect: "manual" });
    expect(page.status).toBe(401);
  });

  test("PKCE: the right verifier gets a token that works; a wrong or missing one is refused; a code works once", async () => {
    const app = await registerApp();
    const wrong = await token(app, await authorize(app, challenge), "w".repeat(43));
    expect(wrong).toEqual({ status: 400, body: { error: "invalid_grant", error_description: expect.any(String) } });
    const missing = await token(app, await authorize(app, challenge));
    expect(missing.body.error).toBe("invalid_request");
    const code = await authorize(app, challenge);
    const ok = await token(app, code, verifier);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ token_type: "Bearer", scope: "read:accounts" });
    const me = await fetch(`${mastodon.url}/api/v1/accounts/verify_credentials`, { headers: { authorization: `Bearer ${ok.body.access_token}` } });
    expect(me.status).toBe(200);
    expect((await token(app, code, verifier)).body.error).toBe("invalid_grant");
  });

  test("Deny redirects with access_denied and the state; a wrong client secret is invalid_client", async () => {
    const app = await registerApp();
    const q = new URLSearchParams({ response_type: "code", client_id: app.client_id, redirect_uri: REDIRECT, scope: "read:accounts", state: "s2", _method: "delete" });
    const res = await fetch(`${mastodon.url}/oauth/authorize`, { method: "POST", body: q, redirect: "manual" });
    const back = new URL(res.headers.get("location") ?? "");
    expect([back.searchParams.get("error"), back.searchParams.get("state")]).toEqual(["access_denied", "s2"]);
    const bad = await token({ ...app, client_secret: "wrong" }, await authorize(app, null));
    expect(bad.status).toBe(401);
    expect(bad.body.error).toBe("invalid_client");
  });

  test("NodeInfo names the software; the 4.3 metadata offers S256; GoToSocial 0.19 has no metadata", async () => {
    const index = (await call("GET", "/.well-known/nodeinfo")).body;
    const doc = await fetch(index.links[0].href).then((r) => r.json());
    expect(doc.software).toEqual({ name: "mastodon", version: "4.3.0" });
    expect((await call("GET", "/.well-known/oauth-authorization-server")).body.code_challenge_methods_supported).toEqual(["S256"]);
    const gts = await startMastodonServer({ now: () => clock.now(), software: { name: "gotosocial", version: "0.19.1" } });
    try {
      expect((await fetch(`${gts.url}/.well-known/oauth-authorization-server`)).status).toBe(404);
      expect(((await fetch(`${gts.url}/nodeinfo/2.0`).then((r) => r.json())) as { software: unknown }).software).toEqual({ name: "gotosocial", version: "0.19.1" });
    } finally {
      await gts.stop();
    }
  });

  test("repeatedIdempotencyKey500: the first POST posts, the repeat answers 500 and posts nothing", async () => {
    const server = await startMastodonServer({ now: () => clock.now(), repeatedIdempotencyKey500: true });
    try {
      const send = () =>
        fetch(`${server.url}/api/v1/statuses`, { method: "POST", headers: { ...AUTH, "content-type": "application/json", "idempotency-key": "k1" }, body: JSON.stringify({ status: "once" }) });
      expect((await send()).status).toBe(200);
      expect((await send()).status).toBe(500);
      expect(server.state.statuses.size).toBe(1);
    } finally {
      await server.stop();
    }
  });
});
