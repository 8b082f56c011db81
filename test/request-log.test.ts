/**
 * One structured log line per request, however it ended, with its request id; the credential never in it. Error
 * answers carry the request id; a client's own X-Request-Id is used as the id.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createLogger } from "../src/lib/log";
import { type TestAccount, type World, createWorld } from "./helpers/world";

let world: World;
let account: TestAccount;
const lines: string[] = [];
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  world = await createWorld({ log: createLogger("info", (line) => lines.push(line)) });
  account = await world.createAccount();
});
afterAll(async () => {
  await world.close();
});
beforeEach(() => {
  lines.length = 0;
});

const requestLines = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");

describe("the request log", () => {
  test("a success: one line with a fresh UUIDv7 id, method, route, status and key id; no header added to the answer", async () => {
    const res = await world.call("GET", "/api/v1/health", { key: account.key });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBeNull();
    const logged = requestLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: "info", method: "GET", path: "/api/v1/health", route: "/api/v1/health", status: 200, keyId: account.keyId });
    expect(logged[0]?.reqId).toMatch(UUID_V7);
    expect(typeof logged[0]?.ms).toBe("number");
    expect(lines.join("\n")).not.toContain(account.key);
  });

  test("a refusal: one line with the status, the id on the answer too, the presented token nowhere", async () => {
    const wrong = `${account.key.slice(0, -1)}${account.key.endsWith("A") ? "B" : "A"}`;
    const res = await world.call("GET", "/api/v1/health", { key: wrong });
    expect(res.status).toBe(401);
    const logged = requestLines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ status: 401, route: "/api/v1/health" });
    expect(res.headers.get("x-request-id")).toBe(logged[0]?.reqId as string);
    expect(lines.join("\n")).not.toContain(wrong);
    expect(lines.join("\n")).not.toContain(account.key);
  });

  test("a client's X-Request-Id (at most 64 characters) is the id, in the log and on an error answer", async () => {
    const mine = `trace-${"x".repeat(80)}`;
    const ok = await world.call("GET", "/api/v1/health", { key: account.key, headers: { "x-request-id": "trace-ok-1" } });
    const missing = await world.call("GET", "/api/v1/seeds/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", { key: account.key, headers: { "x-request-id": mine } });
    expect(ok.status).toBe(200);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toBe(mine.slice(0, 64));
    expect(requestLines().map((l) => l.reqId)).toEqual(["trace-ok-1", mine.slice(0, 64)]);
  });

  test("pages and unknown paths are logged too; an upload link's token is not", async () => {
    await world.call("GET", "/livez");
    await world.call("GET", "/no/such/page");
    await world.call("GET", "/upload/tok_this_is_secret_123");
    const logged = requestLines();
    expect(logged.map((l) => [l.path, l.status])).toEqual([
      ["/livez", 200],
      ["/no/such/page", 404],
      ["/upload/[redacted]", logged[2]?.status],
    ]);
    expect(lines.join("\n")).not.toContain("tok_this_is_secret_123");
  });
});
