/**
 * The Prometheus instruments (prom-client). Request metrics come from the pipeline's observer; modules record their
 * own events through `deps.metrics`; queue depth and credit totals are read from the database at scrape time, so
 * they are right even after a restart.
 */
import { and, count, eq, inArray, sql, sum } from "drizzle-orm";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Store } from "../db/store";
import { accounts, creditLedger, scheduledPostTargets } from "../db/tables";
import type { Clock } from "../lib/clock";
import { RequestStats } from "./request-stats";

/** Listeners the request pipeline calls with each finished request (the metrics below, and tests). */
export interface RequestObserver {
  (event: { method: string; route: string; status: number; durationMs: number; authFailed: boolean }): void;
}

export interface Metrics {
  registry: Registry;
  /** Feed the pipeline's finished requests into the request metrics. */
  observeRequest: RequestObserver;
  ingestRefusals: Counter<"reason">;
  deliveries: Counter<"platform" | "outcome">;
  dispatchLateness: Histogram<"platform">;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LATENESS_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];

/** The statuses of a target the dispatcher still holds (waiting for its time, or being sent). */
const PENDING = ["scheduled", "publishing"] as const;

/** Builds a fresh registry (one per app: tests build many). */
export function createMetrics(store: Pick<Store, "db">, clock: Clock): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "seedcast_" });

  // The per-request families are counted outside prom-client (the hot path); see request-stats.ts.
  const requestStats = new RequestStats({ requests: "seedcast_http_requests_total", duration: "seedcast_http_request_duration_seconds" }, LATENCY_BUCKETS);
  for (const collector of requestStats.collectors({
    requests: "HTTP requests by method, route pattern and status.",
    duration: "Time from arrival to response, by method and route pattern.",
  })) {
    registry.registerMetric(collector as unknown as Parameters<Registry["registerMetric"]>[0]);
  }
  const authFailures = new Counter({
    name: "seedcast_auth_failures_total",
    help: "API requests refused with 401 Invalid API key.",
    registers: [registry],
  });
  const ingestRefusals = new Counter({
    name: "seedcast_ingest_refusals_total",
    help: "Image ingests and uploads refused, by reason code.",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "seedcast_deliveries_total",
    help: "Delivery attempts by platform and outcome (published, retry, failed, withdrawn).",
    labelNames: ["platform", "outcome"] as const,
    registers: [registry],
  });
  const dispatchLateness = new Histogram({
    name: "seedcast_dispatch_lateness_seconds",
    help: "How long after its scheduled time a target this service sent itself was published (provider-held posts are not timed).",
    labelNames: ["platform"] as const,
    buckets: LATENESS_BUCKETS,
    registers: [registry],
  });
  // The gauges below are read from the database at scrape time (async collect: prom-client awaits it), through drizzle
  // so that they run on both backends; aggregates are mapped to numbers (PostgreSQL answers bigint sums as strings).
  new Gauge({
    name: "seedcast_dispatch_queue_depth",
    help: "Targets the dispatcher holds that are due now and not yet delivered.",
    registers: [registry],
    async collect() {
      const t = scheduledPostTargets;
      const row = await store.db
        .select({ n: count() })
        .from(t)
        .where(and(inArray(t.status, PENDING), eq(t.heldByProvider, false), sql`coalesce(${t.nextAttemptAt}, 0) <= ${clock.now()}`))
        .get();
      this.set(row?.n ?? 0);
    },
  });
  new Gauge({
    name: "seedcast_dispatch_scheduled_targets",
    help: "Targets waiting for their time, whoever holds them.",
    registers: [registry],
    async collect() {
      const t = scheduledPostTargets;
      const row = await store.db.select({ n: count() }).from(t).where(inArray(t.status, PENDING)).get();
      this.set(row?.n ?? 0);
    },
  });
  new Gauge({
    name: "seedcast_credits_reserved",
    help: "Credits held by open reservations, all accounts.",
    registers: [registry],
    async collect() {
      const row = await store.db.select({ n: sum(accounts.creditsReserved).mapWith(Number) }).from(accounts).get();
      this.set(row?.n ?? 0);
    },
  });
  new Gauge({
    name: "seedcast_credits_captured_total",
    help: "Credits captured since the instance began, all accounts (from the ledger).",
    registers: [registry],
    async collect() {
      const row = await store.db
        .select({ n: sum(creditLedger.amount).mapWith(Number) })
        .from(creditLedger)
        .where(eq(creditLedger.kind, "capture"))
        .get();
      this.set(row?.n ?? 0);
    },
  });

  return {
    registry,
    ingestRefusals,
    deliveries,
    dispatchLateness,
    observeRequest(event) {
      requestStats.observe(event.method, event.route, event.status, event.durationMs / 1000);
      if (event.authFailed) authFailures.inc();
    },
  };
}
