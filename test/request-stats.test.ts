/**
 * The hand-counted request metrics print exactly what prom-client's own Counter and Histogram print for the same
 * observations, including bucket edges (a value equal to a bound falls in that bucket).
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { Counter, Histogram, Registry } from "prom-client";
import { RequestStats } from "../src/metrics/request-stats";

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const HELP = { requests: "Requests.", duration: "Duration." };
const NAMES = { requests: "t_requests_total", duration: "t_duration_seconds" };

type Observation = [method: string, route: string, status: number, seconds: number];

async function printedByPromClient(observations: Observation[]): Promise<string> {
  const registry = new Registry();
  const requests = new Counter({ name: NAMES.requests, help: HELP.requests, labelNames: ["method", "route", "status"], registers: [registry] });
  const duration = new Histogram({ name: NAMES.duration, help: HELP.duration, labelNames: ["method", "route"], buckets: BOUNDS, registers: [registry] });
  for (const [method, route, status, seconds] of observations) {
    requests.inc({ method, route, status: String(status) });
    duration.observe({ method, route }, seconds);
  }
  return registry.metrics();
}

async function printedByRequestStats(observations: Observation[]): Promise<string> {
  const registry = new Registry();
  const stats = new RequestStats(NAMES, BOUNDS);
  for (const c of stats.collectors(HELP)) registry.registerMetric(c as unknown as Parameters<Registry["registerMetric"]>[0]);
  for (const [method, route, status, seconds] of observations) stats.observe(method, route, status, seconds);
  return registry.metrics();
}

test("bounds, zero, huge values and several label sets print as prom-client prints them", async () => {
  const observations: Observation[] = [
    ...BOUNDS.map((b): Observation => ["GET", "/api/v1/health", 200, b]),
    ["GET", "/api/v1/health", 401, 0],
    ["POST", "/api/v1/seeds", 201, 0.0031],
    ["POST", "/api/v1/seeds", 422, 99],
    ["GET", "/media/*", 304, 0.00001],
  ];
  expect(await printedByRequestStats(observations)).toBe(await printedByPromClient(observations));
});

test("no observations: both print the empty families", async () => {
  expect(await printedByRequestStats([])).toBe(await printedByPromClient([]));
});

test("any sequence of observations prints the same (property)", async () => {
  const observation = fc.tuple(
    fc.constantFrom("GET", "POST", "DELETE"),
    fc.constantFrom("/api/v1/health", "/api/v1/seeds/:id", "unmatched"),
    fc.constantFrom(200, 201, 400, 401, 404, 500),
    fc.oneof(fc.constantFrom(...BOUNDS), fc.double({ min: 0, max: 20, noNaN: true })),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
      expect(await printedByRequestStats(observations)).toBe(await printedByPromClient(observations));
    }),
    { numRuns: 200 },
  );
});
