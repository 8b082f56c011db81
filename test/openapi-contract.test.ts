/**
 * The OpenAPI document is the API's whole truth (decisions.md §10), checked by an independent validator: Ajv
 * (JSON Schema 2020-12) over every exchange this file records against a served Seedcast (real HTTP on 127.0.0.1,
 * real peers: an HTTPS image source with a throwaway CA, a webhook receiver).
 *
 * The document's operations are iterated: every /api/v1 operation gets the refusals every operation of its kind can
 * answer (401, 403, 400, 413, 429, the Idempotency-Key 409 and 422) driven from what the document says about it; the
 * scenarios below drive each success and each route's own errors. The last test fails when an answer is not
 * documented or does not match its schema, and when a documented status was never produced, so a new route
 * without scenarios for its documented answers fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../src/app";
import { MAX_JSON_BYTES } from "../src/http/json-body";
import { MAX_CSV_BYTES } from "../src/http/csv-body";
import { claimIdempotencyKey, requestFingerprint } from "../src/http/idempotency";
import { GenerationError, type Generator } from "../src/generation/generator";
import { createBuiltinGenerator } from "../src/generation/builtin";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { configureFeedFetch } from "../src/modules/feeds/fetch";
import { addConnection } from "../src/modules/connections/service";
import { SCOPES, type Scope } from "../src/auth/scopes";
import { runDueOnce } from "../src/publishing/dispatcher";
import { isoAt } from "../src/lib/clock";
import { type Answer, ContractRecorder, type Served, serveApp } from "./helpers/openapi-contract";
import { type TestCa, type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { FIVE_MIN, WEBHOOK_SECRET, leaveDeadWorker, makeCreation, postRows, solidPng } from "./publishing-fixtures";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { DEFAULT_TOKEN, startMastodonServer } from "./peers/mastodon-server";
import { FormBrowser, ownerWithAccount, reachConsent } from "./helpers/oauth";
import { grantFor, registerTestClient, toolsCall } from "./helpers/mcp";

const RANDOM_ID = "01934b7e-0000-7000-8000-000000000000";
const METRICS_TOKEN = "metrics-token-for-the-contract-test";

/** The builtin generator, failing on demand (502 generation_failed). */
let failGeneration = false;
function flakyGenerator(): Generator {
  const inner = createBuiltinGenerator();
  const gate = () => {
    if (failGeneration) throw new GenerationError("the model is down (test)");
  };
  return {
    name: "contract-test",
    writeCaption: async (req, signal) => (gate(), inner.writeCaption(req, signal)),
    renderImage: async (req, signal) => (gate(), inner.renderImage(req, signal)),
    describeImage: async (req, signal) => (gate(), inner.describeImage(req, signal)),
  };
}

let world: World;
let limited: World;
let guarded: World;
let server: Served;
let limitedServer: Served;
let guardedServer: Served;
let closed: World;
let closedServer: Served;
let drainingServer: Served;
let recorder: ContractRecorder;
let ca: TestCa;
let source: TestHttpsServer;
let receiver: WebhookReceiver;
let acct: TestAccount;
let png: Uint8Array<ArrayBuffer>;

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost" }, generator: flakyGenerator() });
  limited = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: "1" } });
  guarded = await createWorld({ env: { METRICS_TOKEN } });
  server = serveApp(world.app);
  limitedServer = serveApp(limited.app);
  guardedServer = serveApp(guarded.app);
  // Listening beyond loopback without METRICS_TOKEN: /metrics is closed (issue 14, finding 10).
  closed = await createWorld({ env: { HOST: "0.0.0.0" } });
  closedServer = serveApp(closed.app);
  drainingServer = serveApp(createApp(world.deps, { isReady: () => false }));
  png = new Uint8Array(await solidPng(40, 30));
  ca = createTestCa();
  source = startHttpsServer(
    (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/image.png") return new Response(png, { headers: { "content-type": "image/png" } });
      // A blog's JSON Feed (test/fixtures/feeds/) for the feed routes.
      if (path === "/feed.json") return new Response(Bun.file(`${import.meta.dir}/fixtures/feeds/json-feed.json`), { headers: { "content-type": "application/feed+json" } });
      if (path === "/page.html") return new Response("<!doctype html><title>Not a feed</title>", { headers: { "content-type": "text/html" } });
      return new Response("nothing here", { status: 404 });
    },
    { ca },
  );
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  configureFeedFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  acct = await world.createAccount({ credits: 1000 });
  const doc = await (await fetch(`${server.base}/openapi.json`)).json();
  recorder = new ContractRecorder(doc);
});

afterAll(async () => {
  await Promise.all([server.stop(), limitedServer.stop(), guardedServer.stop(), closedServer.stop(), drainingServer.stop(), source.stop(), receiver.stop()]);
  await world.close();
  await limited.close();
  await guarded.close();
  await closed.close();
  ca.dispose();
});

const send = (op: string, o: Parameters<ContractRecorder["send"]>[2] = {}) => recorder.send(server, op, o);
const apiOps = () => recorder.operations().filter((op) => op.split(" ")[1]!.startsWith("/api/v1"));
/** Every path parameter of `op` set to an id nobody owns. */
function randomParams(op: string): Record<string, string> {
  return Object.fromEntries([...op.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1]!, RANDOM_ID]));
}
const takesCsv = (op: string) => "text/csv" in (recorder.operation(op).requestBody?.content ?? {});
const documents = (op: string, status: number) => String(status) in (recorder.operation(op).responses ?? {});
function expectStatus(answer: Answer, status: number, op: string): void {
  if (answer.status !== status) throw new Error(`${op}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 300)}`);
}

describe("refusals every operation of a kind answers, driven from the document", () => {
  test("401 without a key, 403 with a key lacking the operation's group", async () => {
    for (const op of apiOps()) {
      expectStatus(await send(op, { params: randomParams(op) }), 401, op);
      const group = recorder.operation(op)["x-seedcast-group"] as string;
      if (group === "authenticated") continue;
      const key = (await acct.mint(SCOPES.filter((s) => s !== group) as Scope[])).key;
      expectStatus(await send(op, { params: randomParams(op), key, ...(op.startsWith("get") ? {} : { json: {} }) }), 403, op);
    }
  });

  test("429 with Retry-After on the second call of a key limited to one a minute", async () => {
    const other = await limited.createAccount();
    for (const op of apiOps()) {
      const key = (await other.mint([...SCOPES])).key;
      const body = op.startsWith("get") ? {} : { json: {} };
      await recorder.send(limitedServer, op, { params: randomParams(op), key, ...body });
      const answer = await recorder.send(limitedServer, op, { params: randomParams(op), key, ...body });
      expectStatus(answer, 429, op);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    }
  });

  test("413 for a body over 1 MiB where a body is taken", async () => {
    for (const op of apiOps().filter((o) => documents(o, 413))) {
      // The CSV import (the one text/csv body) has its own, larger cap.
      if (takesCsv(op)) {
        const raw = "x".repeat(MAX_CSV_BYTES + 1);
        expectStatus(await send(op, { params: randomParams(op), key: acct.key, raw, headers: { "content-type": "text/csv" } }), 413, op);
        continue;
      }
      const raw = JSON.stringify({ padding: "x".repeat(MAX_JSON_BYTES) });
      expectStatus(await send(op, { params: randomParams(op), key: acct.key, raw, headers: { "content-type": "application/json" } }), 413, op);
    }
  });

  test("415 for a body that is not JSON where a body is taken", async () => {
    for (const op of apiOps().filter((o) => documents(o, 415))) {
      const answer = await send(op, { params: randomParams(op), key: acct.key, raw: "title=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
      expectStatus(answer, 415, op);
      expect(answer.json.error).toBe("unsupported_media_type");
    }
  });

  test("400 for input the operation's schemas refuse (or an Idempotency-Key over 255 characters)", async () => {
    for (const op of apiOps().filter((o) => documents(o, 400))) {
      const spec = recorder.operation(op);
      const params = randomParams(op);
      let answer: Answer;
      if (takesCsv(op)) {
        answer = await send(op, { params, key: acct.key, raw: "caption,targets\r\n\u0000,x\r\n", headers: { "content-type": "text/csv" } });
      } else if (spec.requestBody) {
        answer = await send(op, { params, key: acct.key, json: "not an object" });
      } else if (op.startsWith("post")) {
        answer = await send(op, { params, key: acct.key, json: {}, headers: { "idempotency-key": "k".repeat(300) } });
      } else if ((spec.parameters ?? []).some((p: { name: string; in: string }) => p.in === "query" && p.name === "limit")) {
        answer = await send(op, { params, key: acct.key, query: "limit=0" });
      } else if ((spec.parameters ?? []).some((p: { name: string; in: string }) => p.in === "query" && p.name === "from")) {
        answer = await send(op, { params, key: acct.key, query: "from=yesterday" });
      } else {
        const param = (spec.parameters ?? []).find((p: { in: string; schema?: { maxLength?: number } }) => p.in === "path" && p.schema?.maxLength);
        if (!param) throw new Error(`${op}: documents 400 but nothing here can make one`);
        answer = await send(op, { params: { ...params, [param.name]: "x".repeat(param.schema.maxLength + 1) }, key: acct.key });
      }
      expectStatus(answer, 400, op);
      expect(answer.json.details.length).toBeGreaterThan(0);
    }
  });

  test("431 from the HTTP server for header fields over its limit, on every operation", async () => {
    for (const op of recorder.operations()) {
      const params = Object.fromEntries([...op.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1]!, RANDOM_ID]));
      expectStatus(await send(op, { params, headers: { "x-padding": "x".repeat(20_000) } }), 431, op);
    }
  });

  test("POST: 422 for a key reused with another body, 409 while the first is still running", async () => {
    for (const op of apiOps().filter((o) => o.startsWith("post "))) {
      const params = randomParams(op);
      const key = `reuse-${op}`;
      await send(op, { params, key: acct.key, json: { first: 1 }, headers: { "idempotency-key": key } });
      expectStatus(await send(op, { params, key: acct.key, json: { second: 2 }, headers: { "idempotency-key": key } }), 422, op);

      const path = op.split(" ")[1]!.replace(/\{[^}]+\}/g, RANDOM_ID);
      const body = JSON.stringify({ running: true });
      const inFlight = `in-flight-${op}`;
      await claimIdempotencyKey(world.deps, { accountId: acct.accountId, route: `POST ${path}`, key: inFlight }, requestFingerprint("", new TextEncoder().encode(body)));
      expectStatus(await send(op, { params, key: acct.key, raw: body, headers: { "content-type": "application/json", "idempotency-key": inFlight } }), 409, op);
    }
  });
});

describe("each operation's success and its own errors", () => {
  test("health, probes and metrics", async () => {
    expectStatus(await send("get /api/v1/health", { key: (await acct.mint(["voice"])).key }), 200, "health");
    expectStatus(await send("get /livez"), 200, "livez");
    expectStatus(await send("get /readyz"), 200, "readyz");
    expectStatus(await recorder.send(drainingServer, "get /readyz"), 503, "readyz draining");
    expectStatus(await send("get /metrics"), 200, "metrics");
    expectStatus(await recorder.send(guardedServer, "get /metrics"), 401, "metrics with METRICS_TOKEN");
    expectStatus(await recorder.send(closedServer, "get /metrics"), 403, "metrics closed beyond loopback");
  });

  let assetId = "";
  let assetFile = "";
  test("the image library: ingest, list, upload links and their page, media, delete", async () => {
    const ingested = await send("post /api/v1/assets/ingest-url", { key: acct.key, json: { url: `${source.url}/image.png` } });
    expectStatus(ingested, 201, "ingest");
    assetId = ingested.json.asset.id;
    assetFile = new URL(ingested.json.asset.url).pathname.split("/").pop()!;
    expectStatus(await send("post /api/v1/assets/ingest-url", { key: acct.key, json: { url: `http://127.0.0.1/x.png` } }), 400, "ingest http");
    expectStatus(await send("get /api/v1/assets", { key: acct.key, query: "limit=5" }), 200, "list assets");

    const link = await send("post /api/v1/assets/upload-link", { key: acct.key });
    expectStatus(link, 201, "upload-link");
    expectStatus(await send("post /api/v1/assets/upload-link", { key: acct.key, json: { expires_in_seconds: 604800 } }), 201, "upload-link for 7 days");
    expectStatus(await send("post /api/v1/assets/upload-link", { key: acct.key, json: { expires_in_seconds: 299 } }), 400, "upload-link too short");
    const linkId = link.json.id;
    const token = new URL(link.json.uploadUrl).pathname.split("/").pop()!;
    expectStatus(await send("get /api/v1/assets/upload-links/{id}", { key: acct.key, params: { id: linkId } }), 200, "link status");
    expectStatus(await send("get /api/v1/assets/upload-links/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "link status 404");

    const form = (bytes: Uint8Array<ArrayBuffer>, name = "photo.png", type = "image/png") => {
      const data = new FormData();
      data.append("file", new File([bytes], name, { type }));
      return data;
    };
    const json = { accept: "application/json" };
    expectStatus(await send("get /upload/{token}", { params: { token } }), 200, "upload page");
    expectStatus(await send("post /upload/{token}", { params: { token }, raw: form(new TextEncoder().encode("not an image"), "a.txt", "text/plain"), headers: json }), 400, "upload not an image");
    expectStatus(await send("post /upload/{token}", { params: { token }, raw: form(png), headers: json }), 201, "upload");
    expectStatus(await send("post /upload/{token}", { params: { token }, raw: form(png), headers: json }), 410, "upload used");
    expectStatus(await send("get /upload/{token}", { params: { token } }), 410, "upload page used");
    expectStatus(await send("get /upload/{token}", { params: { token: "no-such-token" } }), 404, "upload page unknown");
    expectStatus(await send("post /upload/{token}", { params: { token: "no-such-token" }, raw: form(png), headers: json }), 404, "upload unknown");
    const second = await send("post /api/v1/assets/upload-link", { key: acct.key });
    const token2 = new URL(second.json.uploadUrl).pathname.split("/").pop()!;
    expectStatus(await send("post /upload/{token}", { params: { token: token2 }, raw: form(png) }), 200, "upload from the page");

    for (const method of ["get", "head"]) {
      const op = `${method} /media/{file}`;
      const first = await send(op, { params: { file: assetFile } });
      expectStatus(first, 200, op);
      if (method === "get") {
        expectStatus(await send(op, { params: { file: assetFile }, headers: { range: "bytes=0-9" } }), 206, op);
        expectStatus(await send(op, { params: { file: assetFile }, headers: { range: "bytes=999999-" } }), 416, op);
      }
      expectStatus(await send(op, { params: { file: assetFile }, headers: { "if-none-match": first.headers.get("etag") ?? "" } }), 304, op);
      expectStatus(await send(op, { params: { file: `${RANDOM_ID}.png` } }), 404, op);
    }
  });

  let seedId = "";
  test("seeds", async () => {
    const created = await send("post /api/v1/seeds", { key: acct.key, json: { title: "Launch", content: "We launch on Monday.", image_asset_id: assetId } });
    expectStatus(created, 201, "seed");
    seedId = created.json.id;
    expectStatus(await send("post /api/v1/seeds", { key: acct.key, json: { title: "x", content: "y", image_asset_id: RANDOM_ID } }), 404, "seed unknown asset");
    expectStatus(await send("get /api/v1/seeds", { key: acct.key, query: "search=launch" }), 200, "seeds");
    expectStatus(await send("get /api/v1/seeds/{id}", { key: acct.key, params: { id: seedId } }), 200, "seed");
    expectStatus(await send("get /api/v1/seeds/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "seed 404");
    expectStatus(await send("patch /api/v1/seeds/{id}", { key: acct.key, params: { id: seedId }, json: { category: null } }), 200, "patch seed");
    expectStatus(await send("patch /api/v1/seeds/{id}", { key: acct.key, params: { id: RANDOM_ID }, json: { title: "t" } }), 404, "patch 404");
    const gone = await send("post /api/v1/seeds", { key: acct.key, json: { title: "Gone", content: "soon" } });
    expectStatus(await send("delete /api/v1/seeds/{id}", { key: acct.key, params: { id: gone.json.id } }), 200, "delete seed");
    expectStatus(await send("delete /api/v1/seeds/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "delete seed 404");
    // The asset is in use by the seed.
    expectStatus(await send("delete /api/v1/assets/{id}", { key: acct.key, params: { id: assetId } }), 409, "asset in use");
    expectStatus(await send("delete /api/v1/assets/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "asset 404");
    const spare = await send("post /api/v1/assets/ingest-url", { key: acct.key, json: { url: `${source.url}/image.png`, label: "spare" } });
    // The same source is stored once; a fresh upload gives a second, unused asset.
    const link = await send("post /api/v1/assets/upload-link", { key: acct.key });
    const data = new FormData();
    data.append("file", new File([new Uint8Array(await solidPng(20, 20))], "spare.png", { type: "image/png" }));
    const uploaded = await send("post /upload/{token}", {
      params: { token: new URL(link.json.uploadUrl).pathname.split("/").pop()! },
      raw: data,
      headers: { accept: "application/json" },
    });
    expect(spare.status).toBe(201);
    expectStatus(await send("delete /api/v1/assets/{id}", { key: acct.key, params: { id: uploaded.json.asset.id } }), 200, "delete asset");
  });

  test("voice and credits", async () => {
    expectStatus(await send("get /api/v1/voice", { key: acct.key }), 200, "voice");
    expectStatus(await send("put /api/v1/voice", { key: acct.key, json: { emoji: "none", hashtags: ["launch"] } }), 200, "put voice");
    const refused = await send("put /api/v1/voice", { key: acct.key, json: { emoji: "lots of them" } });
    expect(refused.json.message).toBe("emoji: must be one of none, some, lots");
    expectStatus(await send("get /api/v1/credits", { key: acct.key }), 200, "credits");
    expectStatus(await send("get /api/v1/credits/ledger", { key: acct.key, query: "limit=2" }), 200, "ledger");
  });

  let creationId = "";
  test("creations: generate, regenerate, list, get, the preview page; 402, 404, 502", async () => {
    const made = await send("post /api/v1/creations/generate", { key: acct.key, json: { seed_id: seedId } });
    expectStatus(made, 201, "generate");
    creationId = made.json.creation.id;
    expectStatus(await send("post /api/v1/creations/generate", { key: acct.key, json: { seed_id: RANDOM_ID } }), 404, "generate 404");
    const poor = await world.createAccount({ credits: 0 });
    const poorSeed = await send("post /api/v1/seeds", { key: poor.key, json: { title: "Poor", content: "no credits" } });
    expectStatus(await send("post /api/v1/creations/generate", { key: poor.key, json: { seed_id: poorSeed.json.id } }), 402, "generate 402");
    failGeneration = true;
    try {
      expectStatus(await send("post /api/v1/creations/generate", { key: acct.key, json: { seed_id: seedId } }), 502, "generate 502");
      expectStatus(await send("post /api/v1/creations/regenerate", { key: acct.key, json: { creation_id: creationId, parts: "caption" } }), 502, "regenerate 502");
    } finally {
      failGeneration = false;
    }
    expectStatus(await send("post /api/v1/creations/regenerate", { key: acct.key, json: { creation_id: creationId, parts: "caption" } }), 200, "regenerate");
    expectStatus(await send("post /api/v1/creations/regenerate", { key: acct.key, json: { creation_id: RANDOM_ID } }), 404, "regenerate 404");
    const poorCreation = await makeCreation(world.deps, poor.accountId, { caption: "cheap" });
    expectStatus(await send("post /api/v1/creations/regenerate", { key: poor.key, json: { creation_id: poorCreation.id } }), 402, "regenerate 402");
    expectStatus(await send("get /api/v1/creations", { key: acct.key, query: `seed_id=${seedId}&limit=10` }), 200, "creations");
    expectStatus(await send("get /api/v1/creations/{id}", { key: acct.key, params: { id: creationId } }), 200, "creation");
    expectStatus(await send("get /api/v1/creations/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "creation 404");
    expectStatus(await send("get /c/{id}", { params: { id: creationId } }), 200, "preview");
    expectStatus(await send("get /c/{id}", { params: { id: RANDOM_ID } }), 404, "preview 404");
    expectStatus(await send("get /c/{id}", { params: { id: "x".repeat(65) } }), 400, "preview id over 64 characters");
  });

  test("scheduling: targets, schedule, list, get, cancel; 400, 404, 409, 502", async () => {
    const later = () => isoAt(world.clock.now() + FIVE_MIN + 60_000);
    await addConnection(world.deps, { accountId: acct.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    expectStatus(await send("get /api/v1/schedule/targets", { key: acct.key }), 200, "targets");
    const body = (creation: string, targets = ["webhook"], at = later()) => ({ type: "social_post", creation_id: creation, scheduled_time: at, targets });
    const scheduled = await send("post /api/v1/schedule", { key: acct.key, json: body(creationId) });
    expectStatus(scheduled, 200, "schedule");
    const postId = scheduled.json.post.id;
    expectStatus(await send("post /api/v1/schedule", { key: acct.key, json: body(creationId, ["webhook"], isoAt(world.clock.now() + 60_000)) }), 400, "too soon");
    expectStatus(await send("post /api/v1/schedule", { key: acct.key, json: body(RANDOM_ID) }), 404, "schedule 404");
    const empty = await makeCreation(world.deps, acct.accountId, { caption: "" });
    expectStatus(await send("post /api/v1/schedule", { key: acct.key, json: body(empty.id) }), 409, "not schedulable");
    const blockedAccount = await world.createAccount();
    await addConnection(world.deps, { accountId: blockedAccount.accountId, platform: "webhook", url: `${receiver.url}/x`, secret: "another-secret-0123456789" });
    const blockedCreation = await makeCreation(world.deps, blockedAccount.accountId, { caption: "blocked" });
    const notReady = await send("post /api/v1/schedule", { key: blockedAccount.key, json: body(blockedCreation.id) });
    expectStatus(notReady, 409, "target not ready");
    expect(notReady.json.error).toBe("target_not_ready");

    expectStatus(await send("get /api/v1/schedule/posts", { key: acct.key, query: "status=scheduled&limit=10" }), 200, "posts");
    expectStatus(await send("get /api/v1/schedule/posts/{id}", { key: acct.key, params: { id: postId } }), 200, "post");
    expectStatus(await send("get /api/v1/schedule/posts/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "post 404");

    // Cancel before it is due; a second post is published and then refused; a third has an unknown outcome (502).
    expectStatus(await send("delete /api/v1/schedule/{id}", { key: acct.key, params: { id: postId } }), 200, "cancel");
    expectStatus(await send("delete /api/v1/schedule/{id}", { key: acct.key, params: { id: RANDOM_ID } }), 404, "cancel 404");
    const published = await send("post /api/v1/schedule", { key: acct.key, json: body(creationId) });
    const unknown = await send("post /api/v1/schedule", { key: acct.key, json: body(creationId) });
    world.clock.advance(FIVE_MIN + 60_000);
    const target = (await postRows(world.deps, unknown.json.post.id)).targets[0]!;
    await leaveDeadWorker(world, target.id, world.clock.now() + 600_000);
    await runDueOnce(world.deps);
    await world.sql("UPDATE scheduled_post_targets SET lease_expires_at = ? WHERE id = ?", world.clock.now() - 1, target.id);
    expectStatus(await send("delete /api/v1/schedule/{id}", { key: acct.key, params: { id: published.json.post.id } }), 409, "already published");
    expectStatus(await send("delete /api/v1/schedule/{id}", { key: acct.key, params: { id: unknown.json.post.id } }), 502, "unknown outcome");
  });
});

describe("edits, reschedule and event webhooks", () => {
  const later = (ms = FIVE_MIN + 60_000) => isoAt(world.clock.now() + ms);
  const scheduleBody = (creation: string, targets: string[], at = later()) => ({ type: "social_post", creation_id: creation, scheduled_time: at, targets });

  test("creations: edit by hand, delete; 404 and 409 creation_in_use", async () => {
    const a = await world.createAccount();
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    const c = await makeCreation(world.deps, a.accountId, { caption: "first words" });
    expectStatus(await send("patch /api/v1/creations/{id}", { key: a.key, params: { id: c.id }, json: { caption: "better words" } }), 200, "edit");
    expectStatus(await send("patch /api/v1/creations/{id}", { key: a.key, params: { id: RANDOM_ID }, json: { caption: "x" } }), 404, "edit 404");
    expectStatus(await send("get /api/v1/creations/{id}/versions", { key: a.key, params: { id: c.id } }), 200, "versions");
    expectStatus(await send("get /api/v1/creations/{id}/versions", { key: a.key, params: { id: RANDOM_ID } }), 404, "versions 404");
    await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(c.id, ["webhook"]) });
    expectStatus(await send("delete /api/v1/creations/{id}", { key: a.key, params: { id: c.id } }), 409, "creation in use");
    const pictured = await makeCreation(world.deps, a.accountId, { caption: "with a picture", image: await solidPng() });
    const byHand = {
      type: "social_post",
      caption: "Written by hand",
      images: [{ asset_id: pictured.imageAssetId, alt_text: "A blue card" }],
      thread: [{ caption: "Second part", images: [{ asset_id: pictured.imageAssetId }] }],
      first_comment: "https://seedcast.example/more",
      variants: { bluesky: { caption: "Short", thread: [], first_comment: "" } },
    };
    const written = await send("post /api/v1/creations", { key: a.key, json: byHand });
    expectStatus(written, 201, "write by hand");
    expectStatus(
      await send("post /api/v1/creations", { key: a.key, json: { ...byHand, images: [{ asset_id: RANDOM_ID }] } }),
      404,
      "write by hand, unknown asset",
    );
    expectStatus(
      await send("patch /api/v1/creations/{id}", { key: a.key, params: { id: written.json.creation.id }, json: { images: null, thread: null, first_comment: null, variants: null } }),
      200,
      "remove images, thread, first comment, versions",
    );
    const free = await makeCreation(world.deps, a.accountId, { caption: "free" });
    expectStatus(await send("delete /api/v1/creations/{id}", { key: a.key, params: { id: free.id } }), 200, "delete creation");
    expectStatus(await send("delete /api/v1/creations/{id}", { key: a.key, params: { id: RANDOM_ID } }), 404, "delete creation 404");
  });

  test("resolve an unconfirmed target: 200, 404, 409 not_unconfirmed", async () => {
    const a = await world.createAccount();
    const hook = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    const c = await makeCreation(world.deps, a.accountId, { caption: "did it go out?" });
    const post = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(c.id, ["webhook"]) })).json.post;
    // A webhook target never turns unconfirmed by itself (its receiver absorbs a resend): set as Telegram's would be.
    await world.sql("UPDATE scheduled_post_targets SET status = 'unconfirmed', next_attempt_at = NULL, error_message = 'Telegram did not confirm' WHERE post_id = ?", post.id);
    await world.sql("UPDATE scheduled_posts SET status = 'unconfirmed' WHERE id = ?", post.id);
    const params = { id: post.id, accountId: hook.accountId };
    const resolved = await send("post /api/v1/schedule/{id}/targets/{accountId}/resolve", { key: a.key, params, json: { outcome: "posted", published_url: "https://t.me/news/12" } });
    expectStatus(resolved, 200, "resolve");
    expect(resolved.json.post).toMatchObject({ status: "published", targets: [{ status: "published", publishedUrl: "https://t.me/news/12" }] });
    expectStatus(await send("post /api/v1/schedule/{id}/targets/{accountId}/resolve", { key: a.key, params, json: { outcome: "send_again" } }), 409, "already answered");
    expectStatus(
      await send("post /api/v1/schedule/{id}/targets/{accountId}/resolve", { key: a.key, params: { id: RANDOM_ID, accountId: hook.accountId }, json: { outcome: "posted" } }),
      404,
      "resolve 404",
    );
  });

  test("reschedule: 200, 400 too soon, 404, 409 (already published, publishing, target not ready, not schedulable), 502", async () => {
    const a = await world.createAccount();
    const hook = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    const c = await makeCreation(world.deps, a.accountId, { caption: "moving" });
    const post = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(c.id, ["webhook"]) })).json.post;
    const op = "patch /api/v1/schedule/{id}";
    expectStatus(await send(op, { key: a.key, params: { id: post.id }, json: { scheduled_time: later(2 * 60 * 60_000) } }), 200, "reschedule");
    expectStatus(await send(op, { key: a.key, params: { id: post.id }, json: { scheduled_time: later(60_000) } }), 400, "reschedule too soon");
    expectStatus(await send(op, { key: a.key, params: { id: RANDOM_ID }, json: { scheduled_time: later() } }), 404, "reschedule 404");

    const blocked = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/x`, secret: "another-secret-0123456789" });
    const notReady = await send(op, { key: a.key, params: { id: post.id }, json: { targets: [blocked.accountId] } });
    expectStatus(notReady, 409, "reschedule to a blocked target");
    expect(notReady.json.error).toBe("target_not_ready");
    const mastodon = await startMastodonServer({ now: () => world.clock.now(), maxCharacters: 10 });
    try {
      const m = await addConnection(world.deps, { accountId: a.accountId, platform: "mastodon", instance: mastodon.url, token: DEFAULT_TOKEN });
      const long = await makeCreation(world.deps, a.accountId, { caption: "far too long for ten characters" });
      const longPost = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(long.id, [hook.accountId]) })).json.post;
      const tooLong = await send(op, { key: a.key, params: { id: longPost.id }, json: { targets: [m.accountId] } });
      expectStatus(tooLong, 409, "reschedule not schedulable");
      expect(tooLong.json.error).toBe("not_schedulable");

      const held = await makeCreation(world.deps, a.accountId, { caption: "held" });
      const heldPost = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(held.id, [m.accountId], later(60 * 60_000)) })).json.post;
      await mastodon.setMode("unreachable");
      const unreachable = await send(op, { key: a.key, params: { id: heldPost.id }, json: { scheduled_time: later(2 * 60 * 60_000) } });
      expectStatus(unreachable, 502, "reschedule with the instance unreachable");
      await mastodon.setMode("ok");
    } finally {
      await mastodon.stop();
    }

    // Publishing now: 409 not_reschedulable; published: 409 already_published.
    const busy = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(c.id, [hook.accountId]) })).json.post;
    await world.sql("UPDATE scheduled_post_targets SET status = 'publishing', lease_token = 'busy', lease_expires_at = ? WHERE post_id = ?", world.clock.now() + 600_000, busy.id);
    const publishing = await send(op, { key: a.key, params: { id: busy.id }, json: { scheduled_time: later(3 * 60 * 60_000) } });
    expectStatus(publishing, 409, "reschedule while publishing");
    expect(publishing.json.error).toBe("not_reschedulable");
    const soon = (await send("post /api/v1/schedule", { key: a.key, json: scheduleBody(c.id, [hook.accountId]) })).json.post;
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    const done = await send(op, { key: a.key, params: { id: soon.id }, json: { scheduled_time: later() } });
    expectStatus(done, 409, "reschedule after publishing");
    expect(done.json.error).toBe("already_published");
  });

  test("event webhooks: register, list, delete; 400 for an http URL, 409 past the limit, 404", async () => {
    const a = await world.createAccount();
    const created = await send("post /api/v1/webhooks", { key: a.key, json: { url: `${receiver.url}/events`, events: ["post.published"] } });
    expectStatus(created, 201, "webhook");
    expect(created.json.secret).toEqual(expect.any(String));
    expectStatus(await send("post /api/v1/webhooks", { key: a.key, json: { url: "http://example.com/events", events: ["post.failed"] } }), 400, "webhook http");
    expectStatus(await send("get /api/v1/webhooks", { key: a.key }), 200, "webhooks");
    expectStatus(await send("delete /api/v1/webhooks/{id}", { key: a.key, params: { id: created.json.webhook.id } }), 200, "delete webhook");
    expectStatus(await send("delete /api/v1/webhooks/{id}", { key: a.key, params: { id: RANDOM_ID } }), 404, "delete webhook 404");
    let answer: Answer | null = null;
    for (let i = 0; i < 30 && answer?.status !== 409; i++) {
      answer = await send("post /api/v1/webhooks", { key: a.key, json: { url: `${receiver.url}/many-${i}`, events: ["credits.low"] } });
    }
    expect(answer?.json.error).toBe("too_many_webhooks");
  });

  test("feeds: follow, list, get, read now, delete; 400 not_a_feed and a private host, 409 feed_exists and feed_busy, 404", async () => {
    const a = await world.createAccount();
    const followed = await send("post /api/v1/feeds", { key: a.key, json: { url: `${source.url}/feed.json`, mode: "seed" } });
    expectStatus(followed, 201, "follow");
    const id = followed.json.feed.id as string;
    expectStatus(await send("post /api/v1/feeds", { key: a.key, json: { url: `${source.url}/feed.json`, mode: "seed" } }), 409, "feed_exists");
    expectStatus(await send("post /api/v1/feeds", { key: a.key, json: { url: `${source.url}/page.html`, mode: "seed" } }), 400, "not_a_feed");
    expectStatus(await send("post /api/v1/feeds", { key: a.key, json: { url: "https://intranet.example/feed.xml", mode: "seed" } }), 400, "private host");
    expectStatus(await send("get /api/v1/feeds", { key: a.key }), 200, "feeds");
    expectStatus(await send("get /api/v1/feeds/{id}", { key: a.key, params: { id } }), 200, "feed");
    expectStatus(await send("get /api/v1/feeds/{id}", { key: a.key, params: { id: RANDOM_ID } }), 404, "feed 404");
    expectStatus(await send("post /api/v1/feeds/{id}/poll", { key: a.key, params: { id } }), 200, "read now");
    // Another read holds the feed (its claim runs for minutes): this one is told so.
    await world.sql("UPDATE feeds SET poll_lease_until = ? WHERE id = ?", world.clock.now() + 60_000, id);
    expectStatus(await send("post /api/v1/feeds/{id}/poll", { key: a.key, params: { id } }), 409, "feed_busy");
    expectStatus(await send("post /api/v1/feeds/{id}/poll", { key: a.key, params: { id: RANDOM_ID } }), 404, "read now 404");
    expectStatus(await send("delete /api/v1/feeds/{id}", { key: a.key, params: { id } }), 200, "delete feed");
    expectStatus(await send("delete /api/v1/feeds/{id}", { key: a.key, params: { id } }), 404, "delete feed 404");
  });
});

/** PKCE S256: a verifier and its challenge. */
async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge: Buffer.from(digest).toString("base64url") };
}
const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

describe("the account's settings, posting slots, the queue and repeats (issue 27)", () => {
  const later = (ms = FIVE_MIN + 60_000) => isoAt(world.clock.now() + ms);

  test("account: get, change (an owner), 403 for an editor; slots: get, put, 400 unknown target; queue: 409 no_free_slot", async () => {
    const a = await world.createAccount();
    const hook = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: WEBHOOK_SECRET });
    expectStatus(await send("get /api/v1/account", { key: a.key }), 200, "account");
    expectStatus(await send("patch /api/v1/account", { key: a.key, json: { time_zone: "Europe/Berlin", approval_required: false } }), 200, "account change");
    const editor = await a.addMember("editor");
    const editorKey = (await a.mint(["read", "schedule"], { userId: editor })).key;
    const refused = await send("patch /api/v1/account", { key: editorKey, json: { time_zone: "UTC" } });
    expectStatus(refused, 403, "account change by an editor");
    expect(refused.json.requiredRole).toBe("owner");
    expectStatus(await send("get /api/v1/schedule/slots", { key: a.key }), 200, "slots");
    const slots = { timeZone: "Europe/Berlin", slots: [{ days: ["mon", "thu"], time: "09:30", targets: [hook.accountId] }] };
    expectStatus(await send("put /api/v1/schedule/slots", { key: a.key, json: slots }), 200, "slots put");
    const unknown = await send("put /api/v1/schedule/slots", { key: a.key, json: { ...slots, slots: [{ ...slots.slots[0], targets: [RANDOM_ID] }] } });
    expectStatus(unknown, 400, "slots put unknown target");
    expect(unknown.json.error).toBe("unknown_target");
    expectStatus(await send("put /api/v1/schedule/slots", { key: editorKey, json: { ...slots, timeZone: "UTC" } }), 403, "slots zone by an editor");
    const c = await makeCreation(world.deps, a.accountId, { caption: "queued" });
    const queued = await send("post /api/v1/schedule", { key: a.key, json: { type: "social_post", creation_id: c.id, queue: true, targets: ["webhook"] } });
    expectStatus(queued, 200, "queue");
    expect(queued.json.post.queued).toBe(true);
    await send("put /api/v1/schedule/slots", { key: a.key, json: { ...slots, slots: [] } });
    const full = await send("post /api/v1/schedule", { key: a.key, json: { type: "social_post", creation_id: c.id, queue: true, targets: ["webhook"] } });
    expectStatus(full, 409, "queue without a slot");
    expect(full.json.error).toBe("no_free_slot");
  });

  test("bulk: import (200, 400 invalid_rows) and export as CSV (200, 400 for a bad bound)", async () => {
    const a = await world.createAccount();
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/bulk`, secret: WEBHOOK_SECRET });
    const header = "caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment";
    const csv = `${header}\r\nFrom a file,,,${later()},,webhook,Hello\r\n`;
    const op = "post /api/v1/schedule/import";
    const done = await send(op, { key: a.key, raw: csv, headers: { "content-type": "text/csv" } });
    expectStatus(done, 200, "import");
    expect(done.json.imported).toBe(1);
    const bad = await send(op, { key: a.key, raw: `${header}\r\nNo time,,,,,webhook,\r\n`, headers: { "content-type": "text/csv" } });
    expectStatus(bad, 400, "import with a bad row");
    expect(bad.json.rows).toEqual([{ row: 1, field: "scheduled_time", problem: "required unless queue is true" }]);
    const exported = await send("get /api/v1/schedule/posts.csv", { key: a.key });
    expectStatus(exported, 200, "export");
    expect(exported.text.split("\r\n")[0]).toBe(`${header},id,status,published_urls`);
    expectStatus(await send("get /api/v1/schedule/posts.csv", { key: a.key, query: "from=yesterday" }), 400, "export with a bad bound");
  });

  test("approval: an editor's post waits; list, approve (200), reject (200), 403 for an editor, 404, 409 not waiting", async () => {
    const a = await world.createAccount();
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/approval`, secret: WEBHOOK_SECRET });
    expectStatus(await send("patch /api/v1/account", { key: a.key, json: { approval_required: true } }), 200, "approval on");
    const editor = await a.addMember("editor");
    const editorKey = (await a.mint(["read", "schedule"], { userId: editor })).key;
    const c = await makeCreation(world.deps, a.accountId, { caption: "needs a yes" });
    const waiting = async () =>
      (await send("post /api/v1/schedule", { key: editorKey, json: { type: "social_post", creation_id: c.id, scheduled_time: later(), targets: ["webhook"] } })).json.post;
    const one = await waiting();
    expect(one.status).toBe("pending_approval");
    expectStatus(await send("get /api/v1/schedule/approvals", { key: editorKey }), 200, "approvals");
    const approve = "post /api/v1/schedule/{id}/approve";
    const reject = "post /api/v1/schedule/{id}/reject";
    expectStatus(await send(approve, { key: editorKey, params: { id: one.id } }), 403, "approve by an editor");
    expectStatus(await send(approve, { key: a.key, params: { id: one.id } }), 200, "approve");
    expectStatus(await send(approve, { key: a.key, params: { id: one.id } }), 409, "approve twice");
    expectStatus(await send(approve, { key: a.key, params: { id: RANDOM_ID } }), 404, "approve 404");
    const two = await waiting();
    expectStatus(await send(reject, { key: editorKey, params: { id: two.id }, json: { note: "no" } }), 403, "reject by an editor");
    expectStatus(await send(reject, { key: a.key, params: { id: two.id }, json: { note: "Not this one" } }), 200, "reject");
    expectStatus(await send(reject, { key: a.key, params: { id: two.id }, json: {} }), 409, "reject twice");
    expectStatus(await send(reject, { key: a.key, params: { id: RANDOM_ID } }), 404, "reject 404");
  });

  test("series: end one (200), 404, 409 when an occurrence already went out somewhere, 502 when its outcome is unknown", async () => {
    const a = await world.createAccount();
    const one = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/one`, secret: WEBHOOK_SECRET });
    const two = await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/two`, secret: WEBHOOK_SECRET });
    const c = await makeCreation(world.deps, a.accountId, { caption: "again and again" });
    const repeating = (targets: string[]) => ({ type: "social_post", creation_id: c.id, scheduled_time: later(), targets, repeat: { every: "week", count: 4 } });
    const op = "delete /api/v1/schedule/series/{id}";
    const first = (await send("post /api/v1/schedule", { key: a.key, json: repeating([one.accountId]) })).json.post;
    expect(first.seriesId).toBeString();
    expectStatus(await send(op, { key: a.key, params: { id: first.seriesId } }), 200, "end series");
    expectStatus(await send(op, { key: a.key, params: { id: RANDOM_ID } }), 404, "end series 404");

    const partly = (await send("post /api/v1/schedule", { key: a.key, json: repeating([one.accountId, two.accountId]) })).json.post;
    await world.sql("UPDATE scheduled_post_targets SET status = 'published' WHERE post_id = ? AND connection_id = ?", partly.id, one.accountId);
    expectStatus(await send(op, { key: a.key, params: { id: partly.seriesId } }), 409, "end series with an occurrence out");

    const unknown = (await send("post /api/v1/schedule", { key: a.key, json: repeating([one.accountId]) })).json.post;
    world.clock.advance(FIVE_MIN + 60_000);
    const target = (await postRows(world.deps, unknown.id)).targets[0]!;
    await leaveDeadWorker(world, target.id, world.clock.now() + 600_000);
    await world.sql("UPDATE scheduled_posts SET status = 'publishing' WHERE id = ?", unknown.id);
    await world.sql("UPDATE scheduled_post_targets SET lease_expires_at = ? WHERE id = ?", world.clock.now() - 1, target.id);
    expectStatus(await send(op, { key: a.key, params: { id: unknown.seriesId } }), 502, "end series, outcome unknown");
  });
});

describe("the OAuth authorization server", () => {
  test("metadata, registration, authorization (login, consent), token, revocation; their refusals", async () => {
    for (const op of ["get /.well-known/oauth-authorization-server", "get /.well-known/oauth-protected-resource", "get /.well-known/oauth-protected-resource/mcp"]) {
      expectStatus(await send(op), 200, op);
    }
    const redirect = "http://127.0.0.1:9/callback";
    const registered = await send("post /oauth/register", { json: { client_name: "Contract test", redirect_uris: [redirect], token_endpoint_auth_method: "none" } });
    expectStatus(registered, 201, "register");
    const clientId = registered.json.client_id as string;
    expectStatus(await send("post /oauth/register", { json: { client_name: "Bad", redirect_uris: ["http://example.com/cb"] } }), 400, "register http");
    let limitedAnswer: Answer | null = null;
    for (let i = 0; i < 40 && limitedAnswer?.status !== 429; i++) {
      limitedAnswer = await recorder.send(guardedServer, "post /oauth/register", { json: { client_name: `n${i}`, redirect_uris: [redirect], token_endpoint_auth_method: "none" } });
    }
    expect(limitedAnswer?.status).toBe(429);

    const { verifier, challenge } = await pkce();
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirect, code_challenge: challenge, code_challenge_method: "S256", state: "s1" });
    expectStatus(await send("get /oauth/authorize", { query: query.toString() }), 303, "authorize without a session");
    const unknown = new URLSearchParams(query);
    unknown.set("client_id", "no-such-client");
    expectStatus(await send("get /oauth/authorize", { query: unknown.toString() }), 400, "authorize unknown client");
    // Metadata documents are fetched under a per-address limit (here: on a private address, refused after the fetch's turn).
    let fetchLimited: Answer | null = null;
    for (let i = 0; i < 40 && fetchLimited?.status !== 429; i++) {
      const documentQuery = new URLSearchParams(query);
      documentQuery.set("client_id", `https://10.0.0.7/client-${i}.json`);
      fetchLimited = await recorder.send(guardedServer, "get /oauth/authorize", { query: documentQuery.toString() });
    }
    expect(fetchLimited?.status).toBe(429);
    const person = await ownerWithAccount(world);
    const browser = new FormBrowser(server.base);
    const { consent } = await reachConsent(browser, `${server.base}/oauth/authorize?${query}`, person);
    const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    expectStatus(await send("get /oauth/authorize", { query: query.toString(), headers: { cookie } }), 200, "consent page");
    const allowed = await browser.submit(consent, { button: ["decision", "allow"] });
    const code = new URL(allowed.headers.get("location") ?? "", server.base).searchParams.get("code") ?? "";
    expect(code).not.toBe("");

    const exchange = { grant_type: "authorization_code", code, redirect_uri: redirect, client_id: clientId, code_verifier: verifier };
    const tokens = await send("post /oauth/token", form(exchange));
    expectStatus(tokens, 200, "token");
    expectStatus(await send("post /oauth/token", form(exchange)), 400, "token: code used twice");
    expectStatus(await send("post /oauth/token", form({ ...exchange, client_id: "no-such-client" })), 401, "token: unknown client");
    expectStatus(await send("post /oauth/revoke", form({ client_id: clientId })), 400, "revoke without a token");
    expectStatus(await send("post /oauth/revoke", form({ token: tokens.json.refresh_token, client_id: "no-such-client" })), 401, "revoke: unknown client");
    expectStatus(await send("post /oauth/revoke", form({ token: tokens.json.refresh_token, client_id: clientId })), 200, "revoke");
  });
});

describe("the MCP endpoint", () => {
  test("a tool call, and each refusal: 400, 401, 403 (scope, origin), 406, 413, 429", async () => {
    const op = "post /mcp";
    const a = await world.createAccount();
    const token = (await grantFor(world, await registerTestClient(world), a.accountId, a.userId, ["read"])).accessToken;
    const headers = { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream" };
    const ok = await send(op, { json: toolsCall("get_credits"), headers });
    expectStatus(ok, 200, "tools/call");
    expect(ok.text).toContain('"balance":');
    expectStatus(await send(op, { raw: "{not json", headers: { ...headers, "content-type": "application/json" } }), 400, "not JSON-RPC");
    expectStatus(await send(op, { json: { jsonrpc: "2.0", method: "notifications/initialized" }, headers }), 202, "a notification");
    expectStatus(await send(op, { json: toolsCall("get_credits"), headers: { accept: headers.accept } }), 401, "no token");
    expectStatus(await send(op, { json: toolsCall("get_credits"), headers: { ...headers, authorization: `Bearer ${acct.key}` } }), 401, "an API key");
    expectStatus(await send(op, { json: toolsCall("create_seed", { title: "t", content: "c" }), headers }), 403, "insufficient scope");
    expectStatus(await send(op, { json: toolsCall("get_credits"), headers: { ...headers, origin: "https://elsewhere.example" } }), 403, "another origin");
    expectStatus(await send(op, { json: toolsCall("get_credits"), headers: { ...headers, accept: "text/plain" } }), 406, "not acceptable");
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { padding: "x".repeat(MAX_JSON_BYTES) } });
    expectStatus(await send(op, { raw: big, headers: { ...headers, "content-type": "application/json" } }), 413, "too large");
    const b = await limited.createAccount();
    const limitedToken = (await grantFor(limited, await registerTestClient(limited), b.accountId, b.userId, ["read"])).accessToken;
    const limitedHeaders = { ...headers, authorization: `Bearer ${limitedToken}` };
    await recorder.send(limitedServer, op, { json: toolsCall("get_credits"), headers: limitedHeaders });
    expectStatus(await recorder.send(limitedServer, op, { json: toolsCall("get_credits"), headers: limitedHeaders }), 429, "rate limited");
  });
});

describe("the document against what the server answered", () => {
  test("every example in the document validates against its schema", () => {
    expect(recorder.exampleProblems()).toEqual([]);
  });

  test("the checker reports what it should: an undocumented status, a body off its schema, a status never produced", () => {
    const doc = structuredClone(recorder.doc);
    delete doc.paths["/api/v1/seeds/{id}"].get.responses["404"];
    doc.components.schemas.Seed.properties.title = { type: "integer" };
    doc.paths["/livez"].get.responses["418"] = { description: "never" };
    const strict = new ContractRecorder(doc);
    strict.exchanges.push(...recorder.exchanges);
    const problems = strict.problems();
    expect(problems.some((p) => p.startsWith("get /api/v1/seeds/{id} → 404: status not documented"))).toBe(true);
    expect(problems.some((p) => p.startsWith("get /api/v1/seeds/{id} → 200: body does not match"))).toBe(true);
    expect(strict.unexercised()).toContain("get /livez → 418");
  });

  test("0 undocumented statuses, 0 body mismatches, every documented status exercised", () => {
    expect(recorder.exchanges.length).toBeGreaterThan(200);
    expect(recorder.problems()).toEqual([]);
    expect(recorder.unexercised()).toEqual([]);
  });
});
