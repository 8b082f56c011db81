/**
 * The per-request metrics (requests by method, route and status; latency by method and route), counted in plain maps.
 * Every request passes through here, and prom-client's labelled instruments hash their label object on every call,
 * which was a measurable share of a request's cost. These two families are registered in the prom-client registry as
 * collectors that build their samples at scrape time, in prom-client's own sample format, so the /metrics text is
 * what prom-client itself would print for a Counter and a Histogram.
 */

type Labels = Record<string, string | number>;

interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What a prom-client Registry needs of a metric (`registerMetric`, `metrics()`). */
export interface Collector {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; values: Sample[]; aggregator: "sum" }>;
  reset(): void;
}

interface CountEntry {
  method: string;
  route: string;
  status: number;
  n: number;
}

interface LatencyEntry {
  method: string;
  route: string;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  perBucket: number[];
  sum: number;
  count: number;
}

export class RequestStats {
  private readonly counts = new Map<string, CountEntry>();
  private readonly latency = new Map<string, LatencyEntry>();

  constructor(
    private readonly names: { requests: string; duration: string },
    private readonly bounds: readonly number[],
  ) {}

  /** Records one finished request. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${route}`;
    const countKey = `${key} ${status}`;
    const count = this.counts.get(countKey);
    if (count) count.n++;
    else this.counts.set(countKey, { method, route, status, n: 1 });

    let entry = this.latency.get(key);
    if (!entry) {
      entry = { method, route, perBucket: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.latency.set(key, entry);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    entry.perBucket[i] = (entry.perBucket[i] as number) + 1;
    entry.sum += seconds;
    entry.count++;
  }

  /** The two families, for `registry.registerMetric`. */
  collectors(help: { requests: string; duration: string }): Collector[] {
    const requests: Collector = {
      name: this.names.requests,
      help: help.requests,
      type: "counter",
      aggregator: "sum",
      get: async () => ({
        name: requests.name,
        help: requests.help,
        type: "counter",
        aggregator: "sum",
        values: [...this.counts.values()].map((c) => ({ labels: { method: c.method, route: c.route, status: String(c.status) }, value: c.n })),
      }),
      reset: () => this.counts.clear(),
    };
    const duration: Collector = {
      name: this.names.duration,
      help: help.duration,
      type: "histogram",
      aggregator: "sum",
      get: async () => ({
        name: duration.name,
        help: duration.help,
        type: "histogram",
        aggregator: "sum",
        values: [...this.latency.values()].flatMap((e) => this.histogramSamples(e)),
      }),
      reset: () => this.latency.clear(),
    };
    return [requests, duration];
  }

  private histogramSamples(e: LatencyEntry): Sample[] {
    const labels = { method: e.method, route: e.route };
    const bucket = `${this.names.duration}_bucket`;
    let cumulative = 0;
    const samples: Sample[] = this.bounds.map((le, i) => {
      cumulative += e.perBucket[i] as number;
      return { labels: { le, ...labels }, value: cumulative, metricName: bucket };
    });
    samples.push(
      { labels: { le: "+Inf", ...labels }, value: e.count, metricName: bucket },
      { labels, value: e.sum, metricName: `${this.names.duration}_sum` },
      { labels, value: e.count, metricName: `${this.names.duration}_count` },
    );
    return samples;
  }
}
