/** /metrics exposes request, auth-failure, ingest, dispatch and credit figures in Prometheus text. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type World, createWorld } from "./helpers/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => world.close());

function value(text: string, line: RegExp): number {
  const match = text.split("\n").find((l) => line.test(l));
  return match ? Number(match.split(" ").pop()) : Number.NaN;
}

test("requests by route and status, latency, auth failures and credit totals are exported", async () => {
  const acct = await world.createAccount({ credits: 30 });
  await world.call("GET", "/api/v1/health", { key: acct.key });
  await world.call("GET", "/api/v1/health", { key: acct.key });
  await world.call("GET", "/api/v1/health", { key: "svc_nope" });
  await world.call("GET", "/api/v1/seeds/00000000-0000-7000-8000-000000000000", { key: acct.key });
  // NB: Elysia runs onAfterResponse on a later macrotask; give the recorded requests their turn before scraping.
  await Bun.sleep(20);
  const res = await world.call("GET", "/metrics");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  const text = res.text;
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/health",status="200"\}/)).toBe(2);
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/health",status="401"\}/)).toBe(1);
  expect(value(text, /^seedcast_http_requests_total\{method="GET",route="\/api\/v1\/seeds\/:id",status="404"\}/)).toBe(1);
  expect(value(text, /^seedcast_auth_failures_total /)).toBe(1);
  expect(value(text, /^seedcast_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/health"\}/)).toBe(3);
  expect(text).toContain("seedcast_dispatch_queue_depth");
  expect(text).toContain("seedcast_credits_reserved 0");
  expect(text).toContain("seedcast_ingest_refusals_total");
  expect(text).toContain("seedcast_deliveries_total");
  expect(text).toContain("seedcast_process_resident_memory_bytes");
  expect(text).not.toContain(acct.key);
});

test("METRICS_TOKEN guards the endpoint when set", async () => {
  const w = await createWorld({ env: { METRICS_TOKEN: "scrape-me" } });
  try {
    expect((await w.call("GET", "/metrics")).status).toBe(401);
    expect((await w.call("GET", "/metrics", { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await w.call("GET", "/metrics", { headers: { authorization: "Bearer scrape-me" } })).status).toBe(200);
  } finally {
    w.close();
  }
});
