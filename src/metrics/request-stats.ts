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

/** `outer → inner → value`, without building a combined key string per request. */
function nested<K1, K2, V>(maps: Map<K1, Map<K2, V>>, a: K1, b: K2, make: () => V): V {
  let inner = maps.get(a);
  if (!inner) {
    inner = new Map();
    maps.set(a, inner);
  }
  let value = inner.get(b);
  if (value === undefined) {
    value = make();
    inner.set(b, value);
  }
  return value;
}

export class RequestStats {
  /** route → method → status → count */
  private readonly counts = new Map<string, Map<string, Map<number, CountEntry>>>();
  /** route → method → latency */
  private readonly latency = new Map<string, Map<string, LatencyEntry>>();
  /** The entries in the order they first appeared, which is the order prom-client prints label sets in. */
  private readonly countOrder: CountEntry[] = [];
  private readonly latencyOrder: LatencyEntry[] = [];

  constructor(
    private readonly names: { requests: string; duration: string },
    private readonly bounds: readonly number[],
  ) {}

  /** Records one finished request. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const byStatus = nested(this.counts, route, method, () => new Map<number, CountEntry>());
    const count = byStatus.get(status);
    if (count) count.n++;
    else {
      const created = { method, route, status, n: 1 };
      byStatus.set(status, created);
      this.countOrder.push(created);
    }

    const entry = nested(this.latency, route, method, () => {
      const created = { method, route, perBucket: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
      this.latencyOrder.push(created);
      return created;
    });
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
        values: this.countOrder.map((c) => ({ labels: { method: c.method, route: c.route, status: String(c.status) }, value: c.n })),
      }),
      reset: () => {
        this.counts.clear();
        this.countOrder.length = 0;
      },
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
        values: this.latencyOrder.flatMap((e) => this.histogramSamples(e)),
      }),
      reset: () => {
        this.latency.clear();
        this.latencyOrder.length = 0;
      },
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
