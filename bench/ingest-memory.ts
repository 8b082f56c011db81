/**
 * Memory cost of ingesting a cap-sized image through safeFetch: serves a 10 MiB body over local HTTPS
 * (test CA) and fetches it repeatedly, printing RSS growth against the cap. Goal: peak growth < 3× the cap,
 * and no growth across iterations (no leak).
 * Run: `bun bench/ingest-memory.ts [iterations] [--chunked] [--gc]` (--chunked: no Content-Length;
 * --gc: full collection between ingests). The peer runs in a child process.
 */
import { safeFetch } from "../src/lib/safe-fetch.ts";
import { startHttpsServer } from "../test/helpers/test-ca.ts";

const MIB = 1024 * 1024;
const CAP = 10 * MIB;
const ITERATIONS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? "20");
const SAMPLE_MS = 5;

const SERVE_FLAG = "--serve";

/** The peer runs in a child process so its send buffers do not count against the client's RSS. */
function serve(): void {
  const payload = crypto.getRandomValues(new Uint8Array(CAP));
  const chunked = process.argv.includes("--chunked");
  const server = startHttpsServer(() =>
    chunked
      ? // No Content-Length: the cap is enforced while streaming, as against a hostile server.
        new Response(
          new ReadableStream({
            start(controller) {
              for (let at = 0; at < payload.length; at += 256 * 1024) controller.enqueue(payload.subarray(at, at + 256 * 1024));
              controller.close();
            },
          }),
        )
      : new Response(payload),
  );
  console.log(JSON.stringify({ url: server.url, caPem: server.caPem }));
}

if (process.argv.includes(SERVE_FLAG)) {
  serve();
} else {
  await measure();
}

async function measure(): Promise<void> {
const chunked = process.argv.includes("--chunked");
const collectEach = process.argv.includes("--gc");
const peer = Bun.spawn([process.execPath, import.meta.path, SERVE_FLAG, ...(chunked ? ["--chunked"] : [])], { stdout: "pipe" });
const reader = peer.stdout.getReader();
const { value } = await reader.read();
const server = JSON.parse(new TextDecoder().decode(value)) as { url: string; caPem: string };

const options = {
  allowPrivateHosts: new Set(["localhost"]),
  resolver: async () => ["127.0.0.1"],
  extraCa: server.caPem,
  maxBytes: CAP,
  timeoutMs: 30_000,
};

const rss = (): number => process.memoryUsage.rss();
// One warm-up fetch so TLS, JIT and allocator pools are in the baseline.
await safeFetch(`${server.url}/image`, options);
Bun.gc(true);
const baseline = rss();
let peak = baseline;
const sampler = setInterval(() => {
  peak = Math.max(peak, rss());
  // --gc: collect between ingests, separating what one ingest holds from garbage the GC has not reached yet.
  if (collectEach) Bun.gc(true);
}, SAMPLE_MS);

const started = performance.now();
for (let i = 0; i < ITERATIONS; i++) {
  const res = await safeFetch(`${server.url}/image`, options);
  if (res.body.byteLength !== CAP) throw new Error(`short body: ${res.body.byteLength}`);
  peak = Math.max(peak, rss());
  // --gc: collect between ingests, separating what one ingest holds from garbage the GC has not reached yet.
  if (collectEach) Bun.gc(true);
}
const elapsed = performance.now() - started;
clearInterval(sampler);
Bun.gc(true);
const after = rss();
peer.kill();

const growth = peak - baseline;
console.log(`iterations           ${ITERATIONS} × ${CAP / MIB} MiB${chunked ? " chunked" : " with Content-Length"}, ${(elapsed / ITERATIONS).toFixed(1)} ms each${collectEach ? ", GC between" : ""}`);
console.log(`baseline RSS         ${(baseline / MIB).toFixed(1)} MiB`);
console.log(`peak RSS growth      ${(growth / MIB).toFixed(1)} MiB = ${(growth / CAP).toFixed(2)}× the cap (goal < 3×)`);
console.log(`RSS after, GC'd      ${((after - baseline) / MIB).toFixed(1)} MiB over baseline (leak check)`);
if (process.argv.includes("--json")) {
  console.log(
    JSON.stringify({
      bench: "ingest-memory",
      figures: [
        { label: `peak RSS growth per 10 MiB ingest (${ITERATIONS}×)`, value: Number((growth / CAP).toFixed(2)), unit: "× cap", goal: "< 3", ok: growth < 3 * CAP },
        { label: "RSS after, GC'd, over baseline", value: Number(((after - baseline) / MIB).toFixed(1)), unit: "MiB", goal: "", ok: null },
        { label: "time per ingest", value: Number((elapsed / ITERATIONS).toFixed(1)), unit: "ms", goal: "", ok: null },
      ],
    }),
  );
}
process.exitCode = growth < 3 * CAP ? 0 : 1;
}
