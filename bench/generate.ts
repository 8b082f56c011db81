/**
 * Issue 4 bench: POST /api/v1/creations/generate with include_visual (builtin generator) through app.handle, the
 * whole path: auth, validation, reserve, caption, card render, file write, save + capture. Prints p50/p99 in ms
 * (goal: p50 < 250 ms), cycling through every aspect ratio and media style. Sequential: it measures latency, not
 * throughput. Usage: bun bench/generate.ts [runs] [--json]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { ASPECT_RATIOS, MEDIA_STYLES } from "../src/generation/generator";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { mintKey } from "../src/modules/auth/keys-service";

const args = process.argv.slice(2);
const json = args.includes("--json");
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 40);
const WARMUP = 3;
const GOAL_P50_MS = 250;
const BASE = "http://localhost";

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] ?? Number.NaN;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-generate-"));
try {
  const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "100000" });
  const deps = await bootstrap(config, { log: silentLogger });
  const app = createApp(deps);
  const account = await createAccount(deps, {
    name: "Bench",
    email: "bench@example.test",
    password: "correct horse battery",
    credits: (RUNS + WARMUP) * config.prices.generateSocialPost,
  });
  const { key } = await mintKey(deps, { accountId: account.accountId, userId: account.userId, name: "bench", groups: ["read", "create"], expiresDays: null });
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };

  const seedRes = await app.handle(
    new Request(`${BASE}/api/v1/seeds`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        title: "Spring workshop: social media that feels human",
        content:
          "Join us on Saturday, April 12 at 10am for a hands-on workshop. We'll cover writing captions that sound like you, " +
          "planning a month of posts in an hour, and measuring what matters. Seats are limited to 25 people. Coffee is on us.",
        category: "event",
      }),
    }),
  );
  const seed = (await seedRes.json()) as { id?: string; seed?: { id: string } };
  const seedId = seed.id ?? seed.seed?.id;
  if (seedRes.status !== 201 || !seedId) throw new Error(`seed not created: ${seedRes.status}`);

  const ratios = Object.keys(ASPECT_RATIOS);
  const times: number[] = [];
  for (let i = 0; i < RUNS + WARMUP; i++) {
    const body = JSON.stringify({
      seed_id: seedId,
      include_visual: true,
      aspect_ratio: ratios[i % ratios.length],
      media_style: MEDIA_STYLES[i % MEDIA_STYLES.length],
    });
    const t0 = performance.now();
    const res = await app.handle(new Request(`${BASE}/api/v1/creations/generate`, { method: "POST", headers, body }));
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    if (res.status !== 201) throw new Error(`generate answered ${res.status}`);
    if (i >= WARMUP) times.push(ms);
  }
  times.sort((a, b) => a - b);
  const result = {
    bench: "generate social_post with image (builtin), through app.handle",
    runs: RUNS,
    p50Ms: Math.round(percentile(times, 50)),
    p99Ms: Math.round(percentile(times, 99)),
    maxMs: Math.round(times.at(-1) ?? Number.NaN),
    goalP50Ms: GOAL_P50_MS,
    rssMb: Math.round(process.memoryUsage().rss / 1e6),
  };
  if (json) {
    console.log(
      JSON.stringify({
        bench: "generate",
        figures: [
          { label: `generate with image via app.handle p50 (${RUNS} runs)`, value: result.p50Ms, unit: "ms", goal: `< ${GOAL_P50_MS}`, ok: result.p50Ms < GOAL_P50_MS },
          { label: "generate with image via app.handle p99", value: result.p99Ms, unit: "ms", goal: "", ok: null },
          { label: "bench process RSS", value: result.rssMb, unit: "MB", goal: "", ok: null },
        ],
      }),
    );
  }
  else {
    console.log(
      `${result.bench}, ${RUNS} runs: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms ` +
        `(goal p50 < ${GOAL_P50_MS} ms: ${result.p50Ms < GOAL_P50_MS ? "met" : "MISSED"}), rss ${result.rssMb} MB`,
    );
  }
  await deps.store.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
