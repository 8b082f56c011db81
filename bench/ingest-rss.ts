/**
 * Memory of the whole ingest path (`ingestFromUrl`: safe fetch under the cap → type and dimensions from the header →
 * SHA-256 → atomic write to storage → row), for a real PNG just under the 10 MiB cap served over local HTTPS with a
 * throwaway CA. bench/ingest-memory.ts measures the fetch alone; this adds everything after it.
 * Goal (issue 3): one ingest grows RSS by less than 3× the cap, and nothing is retained across ingests. Also shown:
 * back-to-back ingests with no forced collection, i.e. how much garbage the collector lets pile up (not retained).
 * Run: `bun bench/ingest-rss.ts [iterations] [--chunked]` (--chunked: no Content-Length). The peer is a child process.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { ManualClock } from "../src/lib/clock";
import { silentLogger } from "../src/lib/log";
import { createAccount } from "../src/modules/accounts/service";
import { configureIngestFetch, ingestFromUrl } from "../src/modules/assets/ingest";
import { deleteAsset } from "../src/modules/assets/service";
import { startHttpsServer } from "../test/helpers/test-ca";

const MIB = 1024 * 1024;
const CAP = 10 * MIB;
const SERVE_FLAG = "--serve";
const SAMPLE_MS = 5;
// 1860 × 1870 RGB, stored uncompressed: 10,434,600 pixel bytes + filters + framing, just under 10 MiB.
const WIDTH = 1860;
const HEIGHT = 1870;

async function serve(): Promise<void> {
  const sharp = (await import("sharp")).default;
  const raw = crypto.getRandomValues(new Uint8Array(WIDTH * HEIGHT * 3));
  const png = new Uint8Array(await sharp(raw, { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer());
  const chunked = process.argv.includes("--chunked");
  const server = startHttpsServer(() =>
    chunked
      ? new Response(
          new ReadableStream({
            start(controller) {
              for (let at = 0; at < png.length; at += 256 * 1024) controller.enqueue(png.subarray(at, at + 256 * 1024));
              controller.close();
            },
          }),
        )
      : new Response(png),
  );
  console.log(JSON.stringify({ url: server.url, caPem: server.caPem, size: png.byteLength }));
}

async function measure(): Promise<void> {
  const iterations = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? "20");
  const chunked = process.argv.includes("--chunked");
  const peer = Bun.spawn([process.execPath, import.meta.path, SERVE_FLAG, ...(chunked ? ["--chunked"] : [])], { stdout: "pipe" });
  const { value } = await peer.stdout.getReader().read();
  const source = JSON.parse(new TextDecoder().decode(value)) as { url: string; caPem: string; size: number };

  const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-ingest-"));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent", ALLOW_PRIVATE_HOSTS: "localhost", BASE_URL: "http://localhost" });
  const deps = await bootstrap(config, { clock: new ManualClock(), log: silentLogger });
  configureIngestFetch(deps, { extraCa: source.caPem, resolver: async () => ["127.0.0.1"], timeoutMs: 30_000 });
  const { accountId } = await createAccount(deps, { name: "bench", email: "bench@example.test", password: "correct horse battery", credits: 0 });

  const ingestOnce = async (): Promise<void> => {
    const asset = await ingestFromUrl(deps, accountId, { url: `${source.url}/photo.png`, label: "bench" });
    if (asset.sizeBytes !== source.size) throw new Error(`stored ${asset.sizeBytes} of ${source.size} bytes`);
    await deleteAsset(deps, accountId, asset.id);
  };

  const rss = (): number => process.memoryUsage.rss();
  await ingestOnce(); // warm-up: TLS, JIT, allocator pools and file-type's lazy imports are in the baseline
  Bun.gc(true);
  const baseline = rss();

  // 1. One ingest at a time: a full collection first, then the peak RSS while that one ingest runs.
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss());
  }, SAMPLE_MS);
  const perIngest: number[] = [];
  for (let i = 0; i < iterations; i++) {
    Bun.gc(true);
    const before = rss();
    peak = before;
    await ingestOnce();
    peak = Math.max(peak, rss());
    perIngest.push(peak - before);
  }

  // 2. Back to back with no forced collection: what the collector lets pile up, then what is left after one.
  Bun.gc(true);
  const burstBase = rss();
  peak = burstBase;
  const started = performance.now();
  for (let i = 0; i < iterations; i++) await ingestOnce();
  const elapsed = performance.now() - started;
  peak = Math.max(peak, rss());
  clearInterval(sampler);
  const burstPeak = peak;
  Bun.gc(true);
  const settled = rss();
  peer.kill();
  await deps.store.close();
  rmSync(dataDir, { recursive: true, force: true });

  const worst = Math.max(...perIngest);
  const median = [...perIngest].sort((a, b) => a - b)[Math.floor(perIngest.length / 2)] ?? 0;
  const ratio = worst / CAP;
  const leak = settled - baseline;
  const result = {
    bench: "ingest-rss",
    mode: chunked ? "chunked (no Content-Length)" : "Content-Length",
    imageBytes: source.size,
    capBytes: CAP,
    iterations,
    baselineMiB: +(baseline / MIB).toFixed(1),
    perIngestPeakGrowthMiB: { median: +(median / MIB).toFixed(1), worst: +(worst / MIB).toFixed(1) },
    perIngestWorstOverCap: +ratio.toFixed(2),
    backToBackPeakGrowthMiB: +((burstPeak - burstBase) / MIB).toFixed(1),
    settledAfterGcGrowthMiB: +(leak / MIB).toFixed(1),
    msPerIngest: +(elapsed / iterations).toFixed(1),
    goal: "one ingest grows RSS by < 3× the cap; after a collection RSS is back within 2× the cap of the baseline",
    pass: ratio < 3 && leak < 2 * CAP,
  };
  if (process.argv.includes("--json")) {
    // One line in the shape bench/run reads.
    console.log(
      JSON.stringify({
        bench: "ingest-rss",
        figures: [
          { label: `whole ingest path, peak RSS growth per ingest (worst of ${iterations}, ${result.mode})`, value: result.perIngestWorstOverCap, unit: "× cap", goal: "< 3", ok: ratio < 3 },
          { label: "back-to-back peak RSS growth", value: result.backToBackPeakGrowthMiB, unit: "MiB", goal: "", ok: null },
          { label: "RSS over baseline after a collection", value: result.settledAfterGcGrowthMiB, unit: "MiB", goal: "< 2 × cap", ok: leak < 2 * CAP },
          { label: "time per ingest", value: result.msPerIngest, unit: "ms", goal: "", ok: null },
        ],
      }),
    );
  } else {
    console.log(JSON.stringify(result, null, 2));
  }
  if (!result.pass) process.exitCode = 1;
}

if (process.argv.includes(SERVE_FLAG)) await serve();
else await measure();
