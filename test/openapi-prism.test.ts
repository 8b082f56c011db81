/**
 * Stoplight Prism (`@stoplight/prism-cli`, a tool nobody here wrote) as a validating proxy in front of a served Seedcast
 * (real HTTP on 127.0.0.1, the document the server serves): every request of a whole API flow goes through Prism, which
 * checks the request and the answer against the document and reports each violation in its `sl-violations` header and
 * its log. The flow: keys and their groups, seeds, generate, assets (ingest from an HTTPS source, upload links and their
 * page, media), schedule, reschedule, cancel, publishing, credits, event webhooks, and the refusals a valid request can
 * meet (401, 402, 403, 404, 409, 410, 429, semantic 400s). 0 violations.
 *
 * Controls, so a silent Prism cannot pass: a request the document refuses is reported (request validation), and a
 * second Prism over a document whose Seed.title is an integer reports the server's answer (response validation).
 *
 * Prism runs under the machine's Node (>= 18.20.1 for Prism 5.14; `node --version`); no network beyond loopback.
 * One exchange bypasses it: an image upload, whose binary multipart body Prism's proxy corrupts (see that step).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isoAt } from "../src/lib/clock";
import { configureIngestFetch } from "../src/modules/assets/ingest";
import { addConnection } from "../src/modules/connections/service";
import { runDueOnce } from "../src/publishing/dispatcher";
import { runDueEventsOnce } from "../src/publishing/event-delivery";
import { type Served, serveApp } from "./helpers/openapi-contract";
import { type TestCa, type TestHttpsServer, createTestCa, startHttpsServer } from "./helpers/test-ca";
import { type TestAccount, type World, createWorld } from "./helpers/world";
import { type WebhookReceiver, startWebhookReceiver } from "./peers/webhook-receiver";
import { FIVE_MIN, WEBHOOK_SECRET, solidPng } from "./publishing-fixtures";

const ROOT = join(import.meta.dir, "..");
const PRISM = join(ROOT, "node_modules/@stoplight/prism-cli/dist/index.js");
const RANDOM_ID = "01934b7e-0000-7000-8000-000000000000";
/** Requests a minute per key here: low enough that one key meets its 429 within the flow. */
const RATE_LIMIT = 30;

interface Prism {
  base: string;
  log: () => string;
  /** Requests sent through it so far (each logs one `[HTTP SERVER]` line). */
  sent: number;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound and released). */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/** Starts `prism proxy` for `docFile` in front of `upstream`; resolves once it listens. */
async function startPrism(docFile: string, upstream: string, dir: string): Promise<Prism> {
  const port = freePort();
  let output = "";
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(["node", PRISM, "proxy", docFile, upstream, "--host", "127.0.0.1", "--port", String(port)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, NO_COLOR: "1", FORCE_COLOR: "0" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  const started = Date.now();
  while (!output.includes("Prism is listening")) {
    if (proc.exitCode !== null) throw new Error(`prism exited ${proc.exitCode}:\n${output}`);
    if (Date.now() - started > 60_000) throw new Error(`prism did not start within 60 s:\n${output}`);
    await Bun.sleep(100);
  }
  return {
    base: `http://127.0.0.1:${port}`,
    log: () => output,
    sent: 0,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}

/**
 * Prism's log as far as everything sent through `p` so far: one more request (GET /livez), then the output read until
 * that request's line is in. Prism handles the requests here one at a time and logs in order, so every line an earlier
 * exchange made (its violations come after its answer) is in by then.
 */
async function settledLog(p: Prism): Promise<string> {
  await fetch(`${p.base}/livez`);
  p.sent++;
  const started = Date.now();
  while ((p.log().match(/\[HTTP SERVER\]/g) ?? []).length < p.sent) {
    if (Date.now() - started > 30_000) throw new Error(`prism logged fewer requests than were sent (${p.sent}):\n${p.log().slice(-2000)}`);
    await Bun.sleep(20);
  }
  return p.log();
}

/** One exchange through Prism, with what Prism said of it. */
interface Seen {
  what: string;
  status: number;
  violations: unknown[];
  json: // biome-ignore lint: answers of any shape.
  any;
  headers: Headers;
}

let world: World;
let server: Served;
let prism: Prism;
let dir = "";
let ca: TestCa;
let source: TestHttpsServer;
let receiver: WebhookReceiver;
let png: Uint8Array<ArrayBuffer>;
const seen: Seen[] = [];

beforeAll(async () => {
  world = await createWorld({ env: { ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost", RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) } });
  server = serveApp(world.app);
  dir = mkdtempSync(join(tmpdir(), "seedcast-prism-"));
  writeFileSync(join(dir, "openapi.json"), await (await fetch(`${server.base}/openapi.json`)).text());
  png = new Uint8Array(await solidPng(40, 30));
  ca = createTestCa();
  source = startHttpsServer(
    (request) => (new URL(request.url).pathname === "/image.png" ? new Response(png, { headers: { "content-type": "image/png" } }) : new Response("no", { status: 404 })),
    { ca },
  );
  configureIngestFetch(world.deps, { extraCa: ca.caPem, resolver: async () => ["127.0.0.1"] });
  receiver = await startWebhookReceiver({ secret: WEBHOOK_SECRET });
  prism = await startPrism(join(dir, "openapi.json"), server.base, dir);
}, 90_000);

afterAll(async () => {
  await prism?.stop();
  await Promise.all([server.stop(), source.stop(), receiver.stop()]);
  await world.close();
  ca.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends through `via` (default: the Prism of the flow) and records Prism's verdict. */
async function call(
  what: string,
  method: string,
  path: string,
  o: { key?: string; json?: unknown; body?: BodyInit; headers?: Record<string, string>; via?: Prism } = {},
): Promise<Seen> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.key) headers.authorization = `Bearer ${o.key}`;
  let body = o.body;
  if (o.json !== undefined) {
    body = JSON.stringify(o.json);
    headers["content-type"] = "application/json";
  }
  const via = o.via ?? prism;
  via.sent++;
  const res = await fetch(`${via.base}${path}`, { method, headers, body, redirect: "manual" });
  const text = method === "HEAD" ? "" : await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  const header = res.headers.get("sl-violations");
  const exchange: Seen = { what, status: res.status, violations: header ? (JSON.parse(header) as unknown[]) : [], json, headers: res.headers };
  if (!o.via) seen.push(exchange);
  return exchange;
}

/** `call`, insisting on the status. */
async function expectCall(status: number, ...args: Parameters<typeof call>): Promise<Seen> {
  const answer = await call(...args);
  if (answer.status !== status) throw new Error(`${args[0]}: expected ${status}, got ${answer.status}: ${JSON.stringify(answer.json).slice(0, 300)}`);
  return answer;
}

const tokenOf = (uploadUrl: string) => new URL(uploadUrl).pathname;
const later = (ms = FIVE_MIN + 60_000) => isoAt(world.clock.now() + ms);
const imageForm = (bytes: Uint8Array<ArrayBuffer>, name = "photo.png", type = "image/png") => {
  const data = new FormData();
  data.append("file", new File([bytes], name, { type }));
  return data;
};

describe("a whole API flow through Prism's validating proxy", () => {
  let a: TestAccount;
  let assetId = "";
  let seedId = "";
  let creationId = "";

  test("keys and groups; assets: ingest, upload links (chosen lifetimes), their page, media; refusals", async () => {
    a = await world.createAccount({ credits: 100 });
    await expectCall(200, "health: the key echo", "GET", "/api/v1/health", { key: a.key });
    await expectCall(401, "a key that does not exist", "GET", "/api/v1/credits", { key: "svc_thisKeyDoesNotExist000000000000000000000000000000" });
    const reader = (await a.mint(["read"])).key;
    const forbidden = await expectCall(403, "a read key cannot create", "POST", "/api/v1/seeds", { key: reader, json: { title: "t", content: "c" } });
    expect(forbidden.json.requiredGroup).toBe("create");

    const ingested = await expectCall(201, "ingest-url", "POST", "/api/v1/assets/ingest-url", { key: a.key, json: { url: `${source.url}/image.png`, label: "launch" } });
    assetId = ingested.json.asset.id;
    expect(ingested.headers.get("location")).toBe(`/api/v1/assets/${assetId}`);
    await expectCall(400, "ingest from http (refused by the outbound rule)", "POST", "/api/v1/assets/ingest-url", { key: a.key, json: { url: "http://127.0.0.1/x.png" } });
    await expectCall(200, "list assets", "GET", "/api/v1/assets?limit=5", { key: a.key });

    const link = await expectCall(201, "upload-link (default lifetime)", "POST", "/api/v1/assets/upload-link", { key: a.key });
    const week = await expectCall(201, "upload-link for 7 days", "POST", "/api/v1/assets/upload-link", { key: a.key, json: { expires_in_seconds: 604_800 } });
    expect(week.json.expiresInSeconds).toBe(604_800);
    await expectCall(200, "upload-link status", "GET", `/api/v1/assets/upload-links/${link.json.id}`, { key: a.key });
    await expectCall(404, "upload-link status of nobody's id", "GET", `/api/v1/assets/upload-links/${RANDOM_ID}`, { key: a.key });
    await expectCall(200, "the upload page", "GET", tokenOf(link.json.uploadUrl));
    // NB: an image's bytes go to the server directly: Prism's proxy re-encodes a binary multipart body as text, which
    // corrupts it (stoplightio/prism#1321, "Passthrough Binary Request/Response Bodies"). test/openapi-contract.test.ts
    // checks that answer against the document with Ajv.
    const direct = await fetch(`${server.base}${tokenOf(link.json.uploadUrl)}`, { method: "POST", body: imageForm(new Uint8Array(await solidPng(20, 20))), headers: { accept: "application/json" } });
    expect(direct.status).toBe(201);
    const uploaded = { json: (await direct.json()) as { asset: { id: string } }, headers: direct.headers };
    expect(uploaded.headers.get("location")).toBe(`/api/v1/assets/${uploaded.json.asset.id}`);
    await expectCall(410, "the used link", "POST", tokenOf(link.json.uploadUrl), { body: imageForm(png), headers: { accept: "application/json" } });
    await expectCall(400, "not an image", "POST", tokenOf(week.json.uploadUrl), { body: imageForm(new TextEncoder().encode("text"), "a.txt", "text/plain"), headers: { accept: "application/json" } });

    const file = new URL(ingested.json.asset.url).pathname;
    const media = await expectCall(200, "media", "GET", file);
    await expectCall(200, "media HEAD", "HEAD", file);
    await expectCall(304, "media not modified", "GET", file, { headers: { "if-none-match": media.headers.get("etag") ?? "" } });
    await expectCall(200, "delete the uploaded asset", "DELETE", `/api/v1/assets/${uploaded.json.asset.id}`, { key: a.key });
  });

  test("seeds; generate, regenerate, edit; credits and the ledger; 402 and 404", async () => {
    const seed = await expectCall(201, "seed", "POST", "/api/v1/seeds", { key: a.key, json: { title: "Launch", content: "We launch on Monday at 9.", image_asset_id: assetId } });
    seedId = seed.json.id;
    expect(seed.headers.get("location")).toBe(`/api/v1/seeds/${seedId}`);
    await expectCall(200, "list seeds", "GET", "/api/v1/seeds?search=launch", { key: a.key });
    await expectCall(200, "get the seed", "GET", `/api/v1/seeds/${seedId}`, { key: a.key });
    await expectCall(200, "patch the seed", "PATCH", `/api/v1/seeds/${seedId}`, { key: a.key, json: { category: "news" } });
    await expectCall(404, "a seed nobody has", "GET", `/api/v1/seeds/${RANDOM_ID}`, { key: a.key });
    await expectCall(409, "the asset is in use", "DELETE", `/api/v1/assets/${assetId}`, { key: a.key });

    const made = await expectCall(201, "generate", "POST", "/api/v1/creations/generate", { key: a.key, json: { seed_id: seedId } });
    creationId = made.json.creation.id;
    expect(made.headers.get("location")).toBe(`/api/v1/creations/${creationId}`);
    await expectCall(200, "regenerate the caption", "POST", "/api/v1/creations/regenerate", { key: a.key, json: { creation_id: creationId, parts: "caption" } });
    await expectCall(200, "edit by hand", "PATCH", `/api/v1/creations/${creationId}`, { key: a.key, json: { caption: "We launch on Monday at 9. Come by!" } });
    await expectCall(200, "get the creation", "GET", `/api/v1/creations/${creationId}`, { key: a.key });
    await expectCall(200, "list creations", "GET", `/api/v1/creations?seed_id=${seedId}&limit=10`, { key: a.key });
    await expectCall(200, "the preview page", "GET", `/c/${creationId}`);
    const poor = await world.createAccount({ credits: 0 });
    const poorSeed = await expectCall(201, "a poor account's seed", "POST", "/api/v1/seeds", { key: poor.key, json: { title: "Poor", content: "No credits" } });
    const refused = await expectCall(402, "generate without credits", "POST", "/api/v1/creations/generate", { key: poor.key, json: { seed_id: poorSeed.json.id } });
    expect(refused.json.error).toBe("insufficient_credits");
    await expectCall(200, "credits", "GET", "/api/v1/credits", { key: a.key });
    await expectCall(200, "the ledger", "GET", "/api/v1/credits/ledger?limit=5", { key: a.key });
    await expectCall(200, "voice", "GET", "/api/v1/voice", { key: a.key });
    await expectCall(200, "set the voice", "PUT", "/api/v1/voice", { key: a.key, json: { emoji: "some", hashtags: ["launch"] } });
  });

  test("event webhooks; schedule, reschedule, cancel, publish; 400 too soon, 404, 409 already published; events delivered", async () => {
    const hooks = (await a.mint(["schedule", "read"])).key;
    const hook = await expectCall(201, "register an event webhook", "POST", "/api/v1/webhooks", { key: hooks, json: { url: `${receiver.url}/events`, events: ["post.published", "post.cancelled"] } });
    expect(hook.headers.get("location")).toBe(`/api/v1/webhooks/${hook.json.webhook.id}`);
    receiver.setSecret(hook.json.secret);
    await expectCall(400, "an http webhook URL", "POST", "/api/v1/webhooks", { key: hooks, json: { url: "http://example.com/events", events: ["post.failed"] } });
    await expectCall(200, "list webhooks", "GET", "/api/v1/webhooks", { key: hooks });

    const sched = (await a.mint(["schedule", "read"])).key;
    await addConnection(world.deps, { accountId: a.accountId, platform: "webhook", url: `${receiver.url}/posts`, secret: hook.json.secret });
    const targets = await expectCall(200, "targets", "GET", "/api/v1/schedule/targets", { key: sched });
    expect(targets.json.targets.map((t: { platform: string }) => t.platform)).toEqual(["webhook"]);
    const body = (at = later()) => ({ type: "social_post", creation_id: creationId, scheduled_time: at, targets: ["webhook"] });
    await expectCall(400, "too soon", "POST", "/api/v1/schedule", { key: sched, json: body(later(60_000)) });
    const first = await expectCall(200, "schedule", "POST", "/api/v1/schedule", { key: sched, json: body() });
    const second = await expectCall(200, "schedule another", "POST", "/api/v1/schedule", { key: sched, json: body(later(2 * FIVE_MIN)) });
    await expectCall(200, "reschedule", "PATCH", `/api/v1/schedule/${second.json.post.id}`, { key: sched, json: { scheduled_time: later(60 * 60_000) } });
    await expectCall(200, "list posts", "GET", `/api/v1/schedule/posts?status=scheduled`, { key: sched });
    await expectCall(200, "get a post", "GET", `/api/v1/schedule/posts/${first.json.post.id}`, { key: sched });
    await expectCall(404, "a post nobody has", "GET", `/api/v1/schedule/posts/${RANDOM_ID}`, { key: sched });
    const cancelled = await expectCall(200, "cancel", "DELETE", `/api/v1/schedule/${second.json.post.id}`, { key: sched });
    expect(cancelled.json.cancelled).toBe(true);
    world.clock.advance(FIVE_MIN + 60_000);
    await runDueOnce(world.deps);
    const published = await expectCall(200, "the published post", "GET", `/api/v1/schedule/posts/${first.json.post.id}`, { key: sched });
    expect(published.json.post.status).toBe("published");
    await expectCall(409, "cancel a published post", "DELETE", `/api/v1/schedule/${first.json.post.id}`, { key: sched });
    await expectCall(409, "reschedule a published post", "PATCH", `/api/v1/schedule/${first.json.post.id}`, { key: sched, json: { scheduled_time: later() } });
    await runDueEventsOnce(world.deps);
    const events = receiver.deliveries.filter((d) => d.path === "/events").map((d) => d.event);
    expect(events.sort()).toEqual(["post.cancelled", "post.published"]);
    await expectCall(200, "delete the webhook", "DELETE", `/api/v1/webhooks/${hook.json.webhook.id}`, { key: hooks });
    await expectCall(404, "delete it again", "DELETE", `/api/v1/webhooks/${hook.json.webhook.id}`, { key: hooks });
  });

  test("429 with Retry-After once a key has spent its minute", async () => {
    const key = (await a.mint(["read"])).key;
    let last: Seen | null = null;
    for (let i = 0; i <= RATE_LIMIT && last?.status !== 429; i++) last = await call(`credits #${i + 1}`, "GET", "/api/v1/credits", { key });
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last?.headers.get("ratelimit")).toMatch(/^"key";r=0;t=\d+$/);
  });

  test("Prism reported 0 violations over the whole flow, in its headers and in its log", async () => {
    expect(seen.length).toBeGreaterThan(60);
    expect(seen.filter((s) => s.violations.length > 0).map((s) => `${s.what}: ${JSON.stringify(s.violations)}`)).toEqual([]);
    const log = await settledLog(prism);
    expect(log.split("\n").filter((line) => line.includes("Violation"))).toEqual([]);
    // Every exchange went through the proxy to the server (Prism forwarded it and logged the upstream answer).
    expect((log.match(/The upstream call to /g) ?? []).length).toBe(prism.sent);
  });
});

describe("controls: Prism does report what breaks the document", () => {
  test("a request the document refuses (a seed title that is a number) is reported as a request violation", async () => {
    const a = await world.createAccount();
    const bad = await call("control: bad request", "POST", "/api/v1/seeds", { key: a.key, json: { title: 5, content: "c" }, via: prism });
    expect(bad.status).toBe(400);
    expect(bad.violations).toContainEqual(expect.objectContaining({ location: ["request", "body", "title"], severity: "Error" }));
    expect(await settledLog(prism)).toContain("Violation: request.body.title");
  });

  test("an answer off the document (Seed.title made an integer there) is reported as a response violation", async () => {
    const doc = JSON.parse(await Bun.file(join(dir, "openapi.json")).text());
    doc.components.schemas.Seed.properties.title = { type: "integer" };
    writeFileSync(join(dir, "tampered.json"), JSON.stringify(doc));
    const strict = await startPrism(join(dir, "tampered.json"), server.base, dir);
    try {
      const a = await world.createAccount();
      const created = await call("control: seed", "POST", "/api/v1/seeds", { key: a.key, json: { title: "t", content: "c" } });
      const answer = await call("control: bad answer", "GET", `/api/v1/seeds/${created.json.id}`, { key: a.key, via: strict });
      expect(answer.status).toBe(200);
      expect(answer.violations).toContainEqual(expect.objectContaining({ location: ["response", "body", "title"], severity: "Error" }));
      expect(await settledLog(strict)).toContain("Violation: response.body.title");
    } finally {
      await strict.stop();
    }
  }, 90_000);
});
