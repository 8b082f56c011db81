/**
 * The table behind bench/run: runs every bench script with --json, one after another (they measure timings, so never
 * in parallel), and prints bench | figure | value | goal | ok | × ceiling. A figure's ratio to its ceiling is
 * value ÷ ceiling, where the ceiling was measured in the same run: given by the bench itself (health: a bare
 * Bun.serve; seed search over HTTP: the service call alone) or paired here (generate through the API: the builtin
 * generator alone). BENCH_QUICK=0 runs the full lengths. Writes each bench's raw output to BENCH_LOG_DIR (a temp dir).
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const QUICK = process.env.BENCH_QUICK !== "0";
const LOG_DIR = process.env.BENCH_LOG_DIR ?? mkdtempSync(join(tmpdir(), "seedcast-bench-logs-"));

interface Figure {
  label: string;
  value: number | string;
  unit: string;
  goal: string;
  ok: boolean | null;
  /** The same quantity's ceiling, measured in the same run. */
  ceiling?: number;
}
interface BenchResult {
  bench: string;
  figures: Figure[];
}

/** Each bench: its script, its arguments and extra environment, quick and full. */
const BENCHES: { name: string; args: [string[], string[]]; env: [Record<string, string>, Record<string, string>] }[] = [
  { name: "health", args: [["bench/health.ts"], ["bench/health.ts"]], env: [{ BENCH_DURATION: "3s" }, {}] },
  { name: "generate-image", args: [["bench/generate-image.ts", "15"], ["bench/generate-image.ts"]], env: [{}, {}] },
  { name: "generate", args: [["bench/generate.ts", "15"], ["bench/generate.ts"]], env: [{}, {}] },
  { name: "seed-search", args: [["bench/seed-search.ts", "20000"], ["bench/seed-search.ts"]], env: [{ ITERATIONS: "100" }, {}] },
  { name: "seed-search-pg", args: [["bench/seed-search-pg.ts", "20000"], ["bench/seed-search-pg.ts"]], env: [{ ITERATIONS: "100" }, {}] },
  { name: "ingest-memory", args: [["bench/ingest-memory.ts", "5"], ["bench/ingest-memory.ts"]], env: [{}, {}] },
  // Issue 22: 10,000 posts due within 10 s, on SQLite and on PostgreSQL (1 replica), quick or not.
  {
    name: "dispatch",
    args: [
      ["bench/dispatch.ts", "--posts", "10000", "--window-ms", "10000"],
      ["bench/dispatch.ts", "--posts", "10000", "--window-ms", "10000"],
    ],
    env: [{}, {}],
  },
  {
    name: "dispatch-pg",
    args: [
      ["bench/dispatch.ts", "--posts", "10000", "--window-ms", "10000", "--postgres"],
      ["bench/dispatch.ts", "--posts", "10000", "--window-ms", "10000", "--postgres"],
    ],
    env: [{}, {}],
  },
  // Issue 24: 1,000 posts, each with 4 images and a 3-part thread, due within 10 s.
  {
    name: "dispatch-thread",
    args: [
      ["bench/dispatch.ts", "--posts", "1000", "--window-ms", "10000", "--thread"],
      ["bench/dispatch.ts", "--posts", "1000", "--window-ms", "10000", "--thread"],
    ],
    env: [{}, {}],
  },
  {
    name: "webhook-events",
    args: [["bench/webhook-events.ts", "--posts", "1000", "--window-ms", "10000", "--rounds", "2"], ["bench/webhook-events.ts", "--rounds", "5"]],
    env: [{}, {}],
  },
  { name: "soak", args: [["bench/soak.ts"], ["bench/soak.ts"]], env: [{ SOAK_MINUTES: "1", SOAK_WARMUP_MINUTES: "0" }, {}] },
  { name: "scale-out", args: [["bench/scale-out.ts", "--posts", "600"], ["bench/scale-out.ts"]], env: [{ BENCH_DURATION: "3s" }, {}] },
];

/** Scripts in bench/ that are not benchmarks themselves (the two ceiling servers; leak-probe: a diagnostic that prints counts, no figures). */
const NOT_BENCHES = new Set(["run.ts", "bare-server.ts", "mcp-sdk-floor.ts", "leak-probe.ts"]);
// Every other bench script runs too, with its own defaults, so a new bench is never silently left out.
for (const file of readdirSync(join(ROOT, "bench")).filter((f) => f.endsWith(".ts") && !NOT_BENCHES.has(f)).sort()) {
  const name = file.replace(/\.ts$/, "");
  if (!BENCHES.some((b) => b.name === name)) BENCHES.push({ name, args: [[`bench/${file}`], [`bench/${file}`]], env: [{}, {}] });
}

/** The last stdout line that parses as a bench result. */
function lastResult(stdout: string): BenchResult | null {
  for (const line of stdout.trim().split("\n").reverse()) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = JSON.parse(line) as BenchResult;
      if (Array.isArray(parsed.figures)) return parsed;
    } catch {
      /* a human line that happens to start with a brace */
    }
  }
  return null;
}

const results: BenchResult[] = [];
for (const b of BENCHES) {
  const i = QUICK ? 0 : 1;
  const started = performance.now();
  process.stderr.write(`bench: ${b.name} ...`);
  const p = Bun.spawn([process.execPath, ...b.args[i], "--json"], { cwd: ROOT, env: { ...process.env, ...b.env[i] }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  const code = await p.exited;
  writeFileSync(join(LOG_DIR, `${b.name}.log`), `${stdout}\n--- stderr ---\n${stderr}`);
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  const result = lastResult(stdout);
  const noJson = code === 0 ? `ran, printed no --json result line (see ${LOG_DIR}/${b.name}.log)` : `did not finish (exit ${code}; see ${LOG_DIR}/${b.name}.log)`;
  results.push(result ?? { bench: b.name, figures: [{ label: noJson, value: "", unit: "", goal: "", ok: code === 0 ? null : false }] });
}

// generate through the whole API against the builtin generator alone: the API's ceiling for the same work.
const byLabel = (bench: string, prefix: string) => results.find((r) => r.bench === bench)?.figures.find((f) => f.label.startsWith(prefix));
const apiP50 = byLabel("generate", "generate with image via app.handle p50");
const genP50 = byLabel("generate-image", "builtin caption+card p50");
if (apiP50 && genP50 && typeof genP50.value === "number") apiP50.ceiling = genP50.value;

const rows: string[][] = [["bench", "figure", "value", "goal", "ok", "× ceiling"]];
for (const r of results) {
  for (const f of r.figures) {
    const ratio = f.ceiling && typeof f.value === "number" ? `${(f.value / f.ceiling).toFixed(2)} (of ${f.ceiling})` : "";
    rows.push([r.bench, f.label, `${f.value}${f.unit ? ` ${f.unit}` : ""}`, f.goal, f.ok === null ? "" : f.ok ? "ok" : "MISSED", ratio]);
  }
}
const widths = rows[0]!.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length)));
const line = (row: string[]) => `| ${row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(" | ")} |`;
console.log(`\nSeedcast benchmarks (${QUICK ? "quick; BENCH_QUICK=0 for full lengths" : "full"}), ${new Date().toISOString()}`);
console.log(line(rows[0]!));
console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const row of rows.slice(1)) console.log(line(row));
const missed = results.flatMap((r) => r.figures.filter((f) => f.ok === false).map((f) => `${r.bench}: ${f.label}`));
console.log(missed.length ? `\n${missed.length} goal(s) missed:\n  ${missed.join("\n  ")}` : "\nevery goal met");
console.log(`raw output: ${LOG_DIR}`);
