/**
 * Issue 24 bench: POST /api/v1/schedule of a post with 10 images and a 24-part thread (each part with an image of its
 * own, Bluesky given a version with 4 images) to a webhook and a Bluesky target, through app.handle: the checks of
 * every target against what it will send (counting rules, image facts), the snapshot and the lock of every asset.
 * Prints p50/p99 in ms (goal: p50 < 50 ms) and, as its ceiling, the same call for a post with one image in the same
 * run, alternating, so the ratio is the cost of the content alone. Sequential: latency, not throughput.
 * Usage: bun bench/schedule-thread.ts [runs] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import sharp from "sharp";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { connections } from "../src/db/tables";
import { isoAt } from "../src/lib/clock";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { ingestImageBytes } from "../src/modules/assets/service";
import { mintKey } from "../src/modules/auth/keys-service";
import { addConnection } from "../src/modules/connections/service";
import { startWebhookReceiver } from "../test/peers/webhook-receiver";

const args = process.argv.slice(2);
const json = args.includes("--json");
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 60);
const WARMUP = 5;
const GOAL_P50_MS = 50;
const BASE = "http://localhost";
const SECRET = "whsec-bench-0123456789abcdef";
const HOUR = 60 * 60 * 1000;

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-schedule-thread-"));
const receiver = await startWebhookReceiver({ secret: SECRET });
try {
  const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "100000", ALLOW_PRIVATE_HOSTS: "127.0.0.1" });
  const deps = await bootstrap(config, { log: silentLogger });
  const app = createApp(deps);
  const account = await createAccount(deps, { name: "Bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });
  const { key } = await mintKey(deps, { accountId: account.accountId, userId: account.userId, name: "bench", groups: ["read", "create", "schedule"], expiresDays: null });
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = async (path: string, body: unknown) => {
    const res = await app.handle(new Request(`${BASE}${path}`, { method: "POST", headers, body: JSON.stringify(body) }));
    const text = await res.text();
    return { status: res.status, json: JSON.parse(text) as Record<string, { id: string }> };
  };

  const hook = await addConnection(deps, { accountId: account.accountId, platform: "webhook", url: `${receiver.url}/hook`, secret: SECRET });
  if (!hook.readyToPost) throw new Error(`webhook not ready: ${hook.blockedReason}`);
  // Scheduling never talks to Bluesky (the dispatcher does, later): a connection marked ready is what the check reads.
  const bsky = await addConnection(deps, { accountId: account.accountId, platform: "bluesky", handle: "bench.example.com", appPassword: "abcd-efgh-ijkl-mnop", service: "https://127.0.0.1:9" });
  await deps.store.write((tx) => tx.update(connections).set({ readyToPost: true, blockedReason: null }).where(eq(connections.id, bsky.accountId)).run());

  const assetIds: string[] = [];
  for (let i = 0; i < 34; i++) {
    const png = new Uint8Array(await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: i * 7, g: 120, b: 200 } } }).png().toBuffer());
    assetIds.push((await ingestImageBytes(deps, account.accountId, { bytes: png, fileName: `bench-${i}` })).id);
  }
  const image = (id: string, i: number) => ({ asset_id: id, alt_text: `Picture ${i + 1}` });
  const heavy = await call("/api/v1/creations", {
    caption: "Ten pictures and a long thread",
    images: assetIds.slice(0, 10).map(image),
    thread: Array.from({ length: 24 }, (_, i) => ({ caption: `Part ${i + 2}: what we did on day ${i + 1}, with a picture.`, images: [image(assetIds[10 + i]!, i)] })),
    first_comment: "Everything: https://example.com/gallery",
    variants: { bluesky: { images: assetIds.slice(0, 4).map(image) } },
  });
  const light = await call("/api/v1/creations", { caption: "One picture", images: [image(assetIds[0]!, 0)] });
  if (heavy.status !== 201 || light.status !== 201) throw new Error(`creations not written: ${heavy.status} ${light.status}`);

  const schedule = async (creationId: string): Promise<number> => {
    const body = { type: "social_post", creation_id: creationId, scheduled_time: isoAt(Date.now() + HOUR), targets: [hook.accountId, bsky.accountId] };
    const t0 = performance.now();
    const res = await call("/api/v1/schedule", body);
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`schedule answered ${res.status}: ${JSON.stringify(res.json)}`);
    return ms;
  };
  const heavyTimes: number[] = [];
  const lightTimes: number[] = [];
  for (let i = 0; i < RUNS + WARMUP; i++) {
    // Alternating, so both see the same machine and the same growing tables.
    const h = await schedule(heavy.json.creation!.id);
    const l = await schedule(light.json.creation!.id);
    if (i >= WARMUP) {
      heavyTimes.push(h);
      lightTimes.push(l);
    }
  }
  heavyTimes.sort((a, b) => a - b);
  lightTimes.sort((a, b) => a - b);
  const heavyP50 = Math.round(percentile(heavyTimes, 50) * 10) / 10;
  const heavyP99 = Math.round(percentile(heavyTimes, 99) * 10) / 10;
  const lightP50 = Math.round(percentile(lightTimes, 50) * 10) / 10;
  const ratio = Math.round((heavyP50 / lightP50) * 100) / 100;
  const rssMb = Math.round(process.memoryUsage().rss / 1e6);
  if (json) {
    console.log(
      JSON.stringify({
        bench: "schedule-thread",
        figures: [
          { label: `schedule 10 images + 24 parts p50 (${RUNS} runs, 2 targets)`, value: heavyP50, unit: "ms", goal: `< ${GOAL_P50_MS}`, ok: heavyP50 < GOAL_P50_MS, ceiling: lightP50 },
          { label: "schedule 10 images + 24 parts p99", value: heavyP99, unit: "ms", goal: "", ok: null },
          { label: "schedule one image p50 (same run)", value: lightP50, unit: "ms", goal: "", ok: null },
          { label: "bench process RSS", value: rssMb, unit: "MB", goal: "", ok: null },
        ],
      }),
    );
  } else {
    console.log(
      `POST /schedule, ${RUNS} runs each, alternating, 2 targets (webhook, Bluesky): 10 images + 24 parts p50 ${heavyP50} ms, p99 ${heavyP99} ms ` +
        `(goal p50 < ${GOAL_P50_MS} ms: ${heavyP50 < GOAL_P50_MS ? "met" : "MISSED"}); one image p50 ${lightP50} ms; ratio ${ratio}×; rss ${rssMb} MB`,
    );
  }
  await deps.store.close();
} finally {
  await receiver.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
