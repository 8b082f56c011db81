/**
 * A webhook receiver for tests of Seedcast's webhook connections (decisions.md §7). It verifies
 * `X-Seedcast-Signature: sha256=<hex HMAC-SHA256(raw body, secret)>` and the presence of `X-Seedcast-Timestamp`,
 * dedupes by `Idempotency-Key` (a repeat answers 200 again but is not a second effect), and answers 2xx to a
 * signed `ping`. Modes let tests make it fail, refuse or hang.
 *
 * Usable in-process (`startWebhookReceiver`) and as its own process, so a crash test can kill the server under
 * test while the receiver keeps counting:
 *   bun test/peers/webhook-receiver.ts --port N --secret S --log FILE
 * prints `listening <url>` once ready, appends every accepted delivery to FILE as one JSON line (with `repeat`
 * true for an absorbed repeat), and on start reloads the keys already in FILE so a restarted receiver still dedupes.
 */

import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Server } from "bun";

export const SIGNATURE_HEADER = "x-seedcast-signature";
export const TIMESTAMP_HEADER = "x-seedcast-timestamp";
export const IDEMPOTENCY_HEADER = "idempotency-key";
const SIGNATURE_PREFIX = "sha256=";

export type WebhookMode = "ok" | "error500" | "hang" | "reject400";

export interface WebhookReceiverOptions {
  secret: string;
  /** Default 0 (a random free port). */
  port?: number;
  /** When set, every accepted delivery is appended here as a JSON line. */
  logFile?: string;
  /** When set, a timestamp further than this from `now()` fails verification. Default: not checked. */
  maxSkewSeconds?: number;
  /** Milliseconds since the epoch, for the skew check. */
  now?: () => number;
  /**
   * What makes two deliveries "the same effect" for duplicates(), e.g. (body) => body.post.id + body.target.
   * Default: the Idempotency-Key. Answer undefined to leave a delivery out of the count.
   */
  effectIdentity?: (body: unknown, delivery: WebhookDelivery) => string | undefined;
}

/** One request as received, parsed. */
export interface WebhookDelivery {
  receivedAt: string;
  /** The body's `event` (or `type`) field, e.g. "ping". */
  event: string | null;
  /** Parsed JSON body, or null when the body was not JSON. */
  body: unknown;
  rawBody: string;
  /** Signature matches the raw body under the secret and the timestamp header is present and valid. */
  verified: boolean;
  signatureValid: boolean;
  timestamp: string | null;
  idempotencyKey: string | null;
  /** The request path (one receiver can stand for several webhooks). */
  path: string;
  /** Every request header as received (lower-case names), for verifiers written elsewhere (Standard Webhooks). */
  headers: Record<string, string>;
  /** HTTP status answered. */
  status: number;
  /** Verified and answered 2xx. */
  accepted: boolean;
  /** Accepted, but its Idempotency-Key had been accepted before: answered 200, no second effect. */
  repeat: boolean;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, accepted or not, in arrival order. */
  deliveries: WebhookDelivery[];
  /** Accepted deliveries that took effect (first of each Idempotency-Key; keyless ones each count). */
  effects(): WebhookDelivery[];
  /** Number of effect identities (default: Idempotency-Key) that took effect more than once. Should stay 0. */
  duplicates(): number;
  /** Number of Idempotency-Keys the sender delivered (and we accepted) more than once: absorbed retries. */
  repeats(): number;
  setMode(mode: WebhookMode): void;
  /** Verifies from now on under `secret` (for senders that issue the secret themselves, e.g. event webhooks). */
  setSecret(secret: string): void;
  stop(): Promise<void>;
}

/** The signature header value Seedcast must send for `rawBody` under `secret`. */
export function signWebhookBody(rawBody: string, secret: string): string {
  return `${SIGNATURE_PREFIX}${createHmac("sha256", secret).update(rawBody).digest("hex")}`;
}

function signatureMatches(header: string | null, rawBody: string, secret: string): boolean {
  if (header === null || !header.startsWith(SIGNATURE_PREFIX)) return false;
  const expected = Buffer.from(signWebhookBody(rawBody, secret));
  const given = Buffer.from(header.trim());
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** Accepts Unix seconds, Unix milliseconds or ISO 8601; answers milliseconds or null. */
function parseTimestamp(value: string | null): number | null {
  if (value === null || value.trim() === "") return null;
  if (/^\d+$/.test(value.trim())) {
    const n = Number(value);
    return n < 1e12 ? n * 1000 : n;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Reads a receiver's JSON-lines log (what a separate receiver process accepted). */
export function readWebhookLog(file: string): WebhookDelivery[] {
  if (!existsSync(file)) return [];
  // NB: the receiver may be appending while another process reads; a last line without its newline is not whole yet.
  const lines = readFileSync(file, "utf8").split("\n");
  lines.pop();
  return lines.filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as WebhookDelivery);
}

/** Starts the receiver on 127.0.0.1. */
export async function startWebhookReceiver(opts: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const now = opts.now ?? (() => Date.now());
  const deliveries: WebhookDelivery[] = [];
  const acceptedKeys = new Map<string, number>();
  const held = new Set<() => void>();
  let mode: WebhookMode = "ok";
  let secret = opts.secret;

  // A restarted receiver process keeps deduping what it accepted before.
  if (opts.logFile) {
    for (const d of readWebhookLog(opts.logFile)) {
      if (d.idempotencyKey !== null) acceptedKeys.set(d.idempotencyKey, (acceptedKeys.get(d.idempotencyKey) ?? 0) + 1);
    }
  }

  function hang(req: Request): Promise<Response> {
    return new Promise((resolve) => {
      const release = (): void => {
        held.delete(release);
        resolve(new Response("released", { status: 503 }));
      };
      held.add(release);
      req.signal.addEventListener("abort", release, { once: true });
    });
  }

  async function handle(req: Request): Promise<Response> {
    const rawBody = await req.text();
    let body: unknown = null;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = null;
    }
    const record = body as { event?: unknown; type?: unknown } | null;
    const eventField = record && typeof record === "object" ? (record.event ?? record.type) : undefined;
    const timestamp = req.headers.get(TIMESTAMP_HEADER);
    const timestampMs = parseTimestamp(timestamp);
    const signatureValid = signatureMatches(req.headers.get(SIGNATURE_HEADER), rawBody, secret);
    const fresh =
      timestampMs !== null && (opts.maxSkewSeconds === undefined || Math.abs(now() - timestampMs) <= opts.maxSkewSeconds * 1000);
    const delivery: WebhookDelivery = {
      receivedAt: new Date().toISOString(),
      event: typeof eventField === "string" ? eventField : null,
      body,
      rawBody,
      verified: signatureValid && fresh,
      signatureValid,
      timestamp,
      idempotencyKey: req.headers.get(IDEMPOTENCY_HEADER),
      path: new URL(req.url).pathname,
      headers: Object.fromEntries(req.headers),
      status: 0,
      accepted: false,
      repeat: false,
    };
    deliveries.push(delivery);

    if (req.method !== "POST") return answer(delivery, 405, { error: "POST only" });
    if (!delivery.verified) {
      return answer(delivery, 401, { error: signatureValid ? "missing or stale X-Seedcast-Timestamp" : "invalid signature" });
    }
    if (mode === "error500") return answer(delivery, 500, { error: "receiver failing (test mode)" });
    if (mode === "reject400") return answer(delivery, 400, { error: "receiver rejecting (test mode)" });
    if (mode === "hang") {
      const response = await hang(req);
      delivery.status = response.status;
      return response;
    }
    delivery.accepted = true;
    const key = delivery.idempotencyKey;
    if (key !== null) {
      delivery.repeat = acceptedKeys.has(key);
      acceptedKeys.set(key, (acceptedKeys.get(key) ?? 0) + 1);
    }
    const response = answer(delivery, 200, { ok: true, duplicate: delivery.repeat });
    if (opts.logFile) appendFileSync(opts.logFile, `${JSON.stringify(delivery)}\n`);
    return response;
  }

  function answer(delivery: WebhookDelivery, status: number, body: unknown): Response {
    delivery.status = status;
    return Response.json(body, { status });
  }

  const effects = (): WebhookDelivery[] => deliveries.filter((d) => d.accepted && !d.repeat);

  const server: Server<undefined> = Bun.serve({ hostname: "127.0.0.1", port: opts.port ?? 0, fetch: handle, idleTimeout: 0 });
  const port = server.port as number;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    deliveries,
    effects,
    duplicates() {
      const counts = new Map<string, number>();
      for (const d of effects()) {
        const id = opts.effectIdentity ? opts.effectIdentity(d.body, d) : (d.idempotencyKey ?? undefined);
        if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return [...counts.values()].filter((n) => n > 1).length;
    },
    repeats() {
      const keys = new Set(deliveries.filter((d) => d.accepted && d.repeat && d.idempotencyKey !== null).map((d) => d.idempotencyKey));
      return keys.size;
    },
    setMode(next) {
      mode = next;
    },
    setSecret(next) {
      secret = next;
    },
    async stop() {
      for (const release of [...held]) release();
      await server.stop(true);
    },
  };
}

/** CLI: `bun test/peers/webhook-receiver.ts --port N --secret S --log FILE`. */
async function main(argv: string[]): Promise<void> {
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const secret = arg("secret");
  const logFile = arg("log");
  if (!secret || !logFile) {
    console.error("usage: bun test/peers/webhook-receiver.ts --port N --secret S --log FILE");
    process.exit(2);
  }
  const receiver = await startWebhookReceiver({ secret, logFile, port: Number(arg("port") ?? 0) });
  console.log(`listening ${receiver.url}`);
  const shutdown = (): void => {
    void receiver.stop().then(() => process.exit(0));
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

if (import.meta.main) await main(process.argv.slice(2));
