/**
 * The webhook receiver peer: verifies Seedcast's signature and timestamp, refuses bad ones, dedupes by
 * Idempotency-Key, answers a signed ping, fails on demand, and works as a separate process with a log.
 */

import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readWebhookLog, signWebhookBody, startWebhookReceiver, type WebhookReceiver } from "./peers/webhook-receiver.ts";

const SECRET = "whsec-test-secret";
let receiver: WebhookReceiver;

beforeEach(async () => {
  receiver = await startWebhookReceiver({ secret: SECRET });
});
afterEach(async () => {
  await receiver.stop();
});

/** Sends like Seedcast does: raw JSON body, signature over it, timestamp, optional idempotency key. */
async function deliver(
  url: string,
  payload: unknown,
  opts: { key?: string; secret?: string; timestamp?: string | null; tamper?: boolean; signal?: AbortSignal } = {},
): Promise<Response> {
  const raw = JSON.stringify(payload);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-seedcast-signature": signWebhookBody(raw, opts.secret ?? SECRET),
  };
  const timestamp = opts.timestamp === undefined ? String(Math.floor(Date.now() / 1000)) : opts.timestamp;
  if (timestamp !== null) headers["x-seedcast-timestamp"] = timestamp;
  if (opts.key) headers["idempotency-key"] = opts.key;
  return fetch(url, { method: "POST", headers, body: opts.tamper ? raw.replace("}", ',"x":1}') : raw, signal: opts.signal });
}

describe("verification", () => {
  test("a signed ping answers 2xx and is recorded as verified", async () => {
    const res = await deliver(receiver.url, { event: "ping" });
    expect(res.status).toBe(200);
    expect(receiver.deliveries[0]).toMatchObject({ event: "ping", verified: true, accepted: true, body: { event: "ping" } });
  });

  test("the signature is the hex HMAC-SHA256 of the raw body", () => {
    // Known answer computed independently: printf '{"a":1}' | openssl dgst -sha256 -hmac key
    expect(signWebhookBody('{"a":1}', "key")).toBe("sha256=88a67f24bbcdaed0e6c997404bb79a743baf44c6bab2f4c27328e3009d22e342");
  });

  test("a wrong secret, a tampered body, a missing signature or a missing timestamp are refused with 401", async () => {
    expect((await deliver(receiver.url, { event: "ping" }, { secret: "other" })).status).toBe(401);
    expect((await deliver(receiver.url, { event: "ping" }, { tamper: true })).status).toBe(401);
    expect((await deliver(receiver.url, { event: "ping" }, { timestamp: null })).status).toBe(401);
    expect((await fetch(receiver.url, { method: "POST", body: "{}" })).status).toBe(401);
    expect(receiver.deliveries.every((d) => !d.verified && !d.accepted)).toBe(true);
    expect(receiver.deliveries.map((d) => d.signatureValid)).toEqual([false, false, true, false]);
    expect(receiver.effects()).toHaveLength(0);
  });

  test("timestamps in seconds, milliseconds and ISO form are accepted; maxSkewSeconds refuses stale ones", async () => {
    for (const timestamp of [String(Math.floor(Date.now() / 1000)), String(Date.now()), new Date().toISOString()]) {
      expect((await deliver(receiver.url, { event: "ping" }, { timestamp })).status).toBe(200);
    }
    const strict = await startWebhookReceiver({ secret: SECRET, maxSkewSeconds: 300 });
    try {
      expect((await deliver(strict.url, { event: "ping" }, { timestamp: String(Math.floor(Date.now() / 1000) - 301) })).status).toBe(401);
      expect((await deliver(strict.url, { event: "ping" })).status).toBe(200);
    } finally {
      await strict.stop();
    }
  });
});

describe("idempotency", () => {
  test("a repeated Idempotency-Key answers 200 again but is not a second effect", async () => {
    const payload = { event: "post.publish", post: { id: "p1" } };
    expect((await deliver(receiver.url, payload, { key: "k1" })).status).toBe(200);
    const again = await deliver(receiver.url, payload, { key: "k1" });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    expect((await deliver(receiver.url, { event: "post.publish", post: { id: "p2" } }, { key: "k2" })).status).toBe(200);
    expect(receiver.effects().map((d) => d.idempotencyKey)).toEqual(["k1", "k2"]);
    expect(receiver.repeats()).toBe(1);
    expect(receiver.duplicates()).toBe(0);
  });

  test("duplicates() catches one post delivered twice under different keys when told what identifies an effect", async () => {
    const byPost = await startWebhookReceiver({
      secret: SECRET,
      effectIdentity: (body) => (body as { post?: { id?: string } } | null)?.post?.id,
    });
    try {
      await deliver(byPost.url, { event: "post.publish", post: { id: "p1" } }, { key: "a" });
      await deliver(byPost.url, { event: "post.publish", post: { id: "p1" } }, { key: "b" });
      expect(byPost.duplicates()).toBe(1);
    } finally {
      await byPost.stop();
    }
  });
});

describe("modes", () => {
  test("error500 and reject400 answer so and take no effect; hang holds until the client gives up", async () => {
    receiver.setMode("error500");
    expect((await deliver(receiver.url, { event: "x" }, { key: "m1" })).status).toBe(500);
    receiver.setMode("reject400");
    expect((await deliver(receiver.url, { event: "x" }, { key: "m1" })).status).toBe(400);
    receiver.setMode("hang");
    await expect(deliver(receiver.url, { event: "x" }, { key: "m1", signal: AbortSignal.timeout(200) })).rejects.toThrow();
    receiver.setMode("ok");
    expect((await deliver(receiver.url, { event: "x" }, { key: "m1" })).status).toBe(200);
    expect(receiver.effects()).toHaveLength(1);
    expect(receiver.repeats()).toBe(0);
  });
});

describe("separate process", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "webhook-receiver-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the CLI and answers its URL once it prints `listening <url>`. */
  async function spawnReceiver(log: string): Promise<{ proc: ReturnType<typeof Bun.spawn>; url: string }> {
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "peers/webhook-receiver.ts"), "--port", "0", "--secret", SECRET, "--log", log], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`receiver exited early: ${out}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const url = out.match(/listening (\S+)/)?.[1];
    if (!url) throw new Error(`unexpected receiver output: ${out}`);
    return { proc, url };
  }

  test("logs accepted deliveries as JSON lines and keeps deduping across its own restart", async () => {
    const log = join(dir, "deliveries.jsonl");
    const first = await spawnReceiver(log);
    expect((await deliver(first.url, { event: "ping" })).status).toBe(200);
    expect((await deliver(first.url, { event: "post.publish" }, { key: "x1" })).status).toBe(200);
    expect((await deliver(first.url, { event: "post.publish" }, { secret: "bad", key: "x2" })).status).toBe(401);
    first.proc.kill("SIGTERM");
    await first.proc.exited;

    const second = await spawnReceiver(log);
    const again = await deliver(second.url, { event: "post.publish" }, { key: "x1" });
    expect(await again.json()).toEqual({ ok: true, duplicate: true });
    second.proc.kill("SIGTERM");
    await second.proc.exited;

    const lines = readWebhookLog(log);
    expect(lines.map((l) => [l.event, l.idempotencyKey, l.repeat])).toEqual([
      ["ping", null, false],
      ["post.publish", "x1", false],
      ["post.publish", "x1", true],
    ]);
    expect(lines.every((l) => l.verified)).toBe(true);
  });
});
