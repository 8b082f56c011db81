/**
 * The dispatcher's tuning is part of the validated configuration (Config.dispatch), with the documented defaults; so is
 * the token refresh job's pool (TOKEN_REFRESH_CONCURRENCY).
 */
import { describe, expect, test } from "bun:test";
import { ConfigError, DISPATCH_DEFAULTS, TOKEN_REFRESH_CONCURRENCY_DEFAULT, loadConfig } from "../src/config";
import { DEFAULT_CONCURRENCY, DEFAULT_LEASE_MS, DEFAULT_POLL_MS } from "../src/publishing/dispatcher";

const BASE = { DATA_DIR: "/tmp/seedcast-config-test", BASE_URL: "http://localhost" };

describe("DISPATCH_* variables", () => {
  test("unset: the defaults (128 in flight, 120 s lease, 500 ms poll), the same the dispatcher uses", () => {
    expect(loadConfig(BASE).dispatch).toEqual({ concurrency: 128, leaseMs: 120_000, pollMs: 500 });
    expect(DISPATCH_DEFAULTS).toEqual({ concurrency: DEFAULT_CONCURRENCY, leaseMs: DEFAULT_LEASE_MS, pollMs: DEFAULT_POLL_MS });
    expect(loadConfig({ ...BASE, DISPATCH_CONCURRENCY: " ", DISPATCH_POLL_MS: "" }).dispatch.concurrency).toBe(128);
  });

  test("set: read into config.dispatch", () => {
    const config = loadConfig({ ...BASE, DISPATCH_CONCURRENCY: "8", DISPATCH_LEASE_MS: "1500", DISPATCH_POLL_MS: "100" });
    expect(config.dispatch).toEqual({ concurrency: 8, leaseMs: 1500, pollMs: 100 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test.each([
    ["DISPATCH_CONCURRENCY", "0"],
    ["DISPATCH_CONCURRENCY", "many"],
    ["DISPATCH_CONCURRENCY", "2.5"],
    ["DISPATCH_LEASE_MS", "999"],
    ["DISPATCH_LEASE_MS", "3600001"],
    ["DISPATCH_POLL_MS", "5"],
    ["DISPATCH_POLL_MS", "-1"],
  ])("%s=%s stops at start with a message naming the variable", (name, raw) => {
    expect(() => loadConfig({ ...BASE, [name]: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, [name]: raw })).toThrow(`${name} must be a whole number`);
  });
});

describe("TOKEN_REFRESH_CONCURRENCY", () => {
  test("unset: 8 refreshes at once; set: read into config.tokenRefreshConcurrency", () => {
    expect(loadConfig(BASE).tokenRefreshConcurrency).toBe(8);
    expect(TOKEN_REFRESH_CONCURRENCY_DEFAULT).toBe(8);
    expect(loadConfig({ ...BASE, TOKEN_REFRESH_CONCURRENCY: "1" }).tokenRefreshConcurrency).toBe(1);
    expect(loadConfig({ ...BASE, TOKEN_REFRESH_CONCURRENCY: "100" }).tokenRefreshConcurrency).toBe(100);
  });

  test.each(["0", "101", "eight", "2.5"])("TOKEN_REFRESH_CONCURRENCY=%s stops at start with a message naming the variable", (raw) => {
    expect(() => loadConfig({ ...BASE, TOKEN_REFRESH_CONCURRENCY: raw })).toThrow("TOKEN_REFRESH_CONCURRENCY must be a whole number");
  });
});
