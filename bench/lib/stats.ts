/** Percentiles for the benches that report lateness or latency. */

/** The p-th percentile (nearest rank) of an ascending list; 0 for an empty one. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** p50, p95, p99 and max of `values` (any order), rounded to whole milliseconds. */
export interface Spread {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** The spread of `values` (not modified). */
export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x);
  return { n: sorted.length, p50: r(percentile(sorted, 50)), p95: r(percentile(sorted, 95)), p99: r(percentile(sorted, 99)), max: r(sorted.at(-1) ?? 0) };
}

/** The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them. */
export async function loadAverage(): Promise<string> {
  return (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
}
