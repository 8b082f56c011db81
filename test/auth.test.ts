import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { Elysia, t } from "elysia";
import { authOf } from "../src/http/request-context";
import { parseJsonBody } from "../src/http/json-body";
import { scopePlugin } from "../src/http/scope";
import { KEY_LENGTH, generateKeySecret, isWellFormedKey } from "../src/lib/api-key-format";
import { AppError } from "../src/lib/errors";
import { removeMember, setAccountDisabled, setMemberRole } from "../src/modules/accounts/service";
import { listKeys, mintKey, revokeKey, rotateKey } from "../src/modules/auth/keys-service";
import { describeAuthMatrix, INVALID_KEY_BODY } from "./helpers/auth-matrix";
import { TEST_DIALECT, type World, createWorld } from "./helpers/world";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

let world: World;
beforeAll(async () => {
  world = await createWorld();
  // A route that needs the create group and validates a body, to prove the order 401 → 403 → 400.
  world.app.elysia.use(
    new Elysia().use(scopePlugin).post("/api/v1/__probe", ({ request, body }) => ({ keyId: authOf(request).keyId, a: body.a }), {
      parse: parseJsonBody,
      scope: "create",
      body: t.Object({ a: t.String() }),
    }),
  );
});
afterAll(() => world.close());

describeAuthMatrix("health", () => world, [
  { method: "GET", path: "/api/v1/health" },
  { method: "POST", path: "/api/v1/__probe", validBody: { a: "x" } },
  { method: "GET", path: "/api/v1/no-such-route" },
  { method: "DELETE", path: "/api/v1/schedule/00000000-0000-0000-0000-000000000000" },
]);

describe("key format", () => {
  test("secrets are svc_ + 43 base62 + 6-char CRC32 checksum and verify", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const s = generateKeySecret();
      expect(s).toMatch(/^svc_[0-9A-Za-z]{49}$/);
      expect(s.length).toBe(KEY_LENGTH);
      expect(isWellFormedKey(s)).toBe(true);
      seen.add(s);
    }
    expect(seen.size).toBe(200);
  });
  test("any single-character change is caught by the checksum", () => {
    const s = generateKeySecret();
    for (let i = 4; i < s.length; i++) {
      const c = s[i] === "a" ? "b" : "a";
      expect(isWellFormedKey(s.slice(0, i) + c + s.slice(i + 1))).toBe(false);
    }
  });
  test("only an HMAC and the display prefix are stored, never the secret", async () => {
    const acct = await world.createAccount();
    const [row] = await world.sql<{ secret_hash: string; prefix: string }>("SELECT secret_hash, prefix FROM api_keys WHERE id = ?", acct.keyId);
    expect(row?.prefix).toBe(acct.key.slice(0, 8));
    expect(row?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    const everything = JSON.stringify(await world.sql("SELECT * FROM api_keys"));
    expect(everything.includes(acct.key)).toBe(false);
    if (TEST_DIALECT === "sqlite") {
      // The file itself, WAL checkpointed into it (SQLite only).
      await world.sql("PRAGMA wal_checkpoint(FULL)");
      const file = await Bun.file(`${world.dataDir}/seedcast.db`).arrayBuffer();
      expect(Buffer.from(file).includes(Buffer.from(acct.key))).toBe(false);
    }
  });
});

describe("health echo", () => {
  test("answers the key id and its effective groups; identity hints are ignored", async () => {
    const a = await world.createAccount();
    const b = await world.createAccount();
    const readOnly = await a.mint(["read"]);
    const res = await world.call("GET", "/api/v1/health", {
      key: readOnly.key,
      headers: { "x-user-id": b.userId, "x-account-id": b.accountId, "x-scopes": "create" },
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ ok: true, keyId: readOnly.id, scopes: ["read"] });
    expect(res.headers.get("x-request-id")).toBeNull(); // only error answers carry it (request-log.test.ts)
  });

  test("the Authorization header name is matched case-insensitively on the wire", async () => {
    const a = await world.createAccount();
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => world.app.handle(req) });
    try {
      for (const name of ["Authorization", "authorization", "AUTHORIZATION", "aUtHoRiZaTiOn"]) {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = connect(server.port ?? 0, "127.0.0.1", () => {
            socket.write(`GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n${name}: Bearer ${a.key}\r\nConnection: close\r\n\r\n`);
          });
          let data = "";
          socket.on("data", (d) => (data += d.toString()));
          socket.on("end", () => resolve(data));
          socket.on("error", reject);
        });
        expect(raw.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
        expect(raw).toContain(`"keyId":"${a.keyId}"`);
      }
    } finally {
      await server.stop(true);
    }
  });
});

describe("rotation and expiry on the clock", () => {
  test("outgoing key works at 23:59:59 after rotation and answers 401 at 24:00:01; the replacement throughout", async () => {
    const a = await world.createAccount();
    const old = await a.mint(["read", "create"], { expiresDays: 365 });
    const rotated = await rotateKey(world.deps, old.id);
    const t0 = world.clock.now();
    expect(rotated.previousKeyGraceUntil).toBe(new Date(t0 + DAY).toISOString());
    const health = async (key: string) => (await world.call("GET", "/api/v1/health", { key })).status;
    expect(await health(old.key)).toBe(200);
    expect(await health(rotated.key)).toBe(200);
    world.clock.set(t0 + DAY - 1000);
    expect(await health(old.key)).toBe(200);
    expect(await health(rotated.key)).toBe(200);
    world.clock.set(t0 + DAY + 1000);
    const res = await world.call("GET", "/api/v1/health", { key: old.key });
    expect(res.status).toBe(401);
    expect(res.text).toBe(INVALID_KEY_BODY);
    expect(await health(rotated.key)).toBe(200);
    const replacement = (await world.call("GET", "/api/v1/health", { key: rotated.key })).json;
    expect(replacement.scopes).toEqual(["read", "create"]);
    const views = await listKeys(world.deps, a.accountId);
    expect(views.find((k) => k.id === old.id)?.state).toBe("retired");
    expect(views.find((k) => k.id === rotated.id)?.state).toBe("active");
    expect(views.find((k) => k.id === rotated.id)?.expiresDays).toBe(365);
  });

  test("a key in grace cannot be rotated again; revocation is immediate", async () => {
    const a = await world.createAccount();
    const k = await a.mint(["read"]);
    await rotateKey(world.deps, k.id);
    await expect(rotateKey(world.deps, k.id)).rejects.toThrow(AppError);
    const other = await a.mint(["read"]);
    expect((await world.call("GET", "/api/v1/health", { key: other.key })).status).toBe(200);
    await revokeKey(world.deps, other.id);
    expect((await world.call("GET", "/api/v1/health", { key: other.key })).text).toBe(INVALID_KEY_BODY);
  });

  test("a 30-day key works until its expiry instant and not after; never-expiring keys keep working", async () => {
    const a = await world.createAccount();
    const start = world.clock.now();
    const k = await a.mint(["read"], { expiresDays: 30 });
    const forever = await a.mint(["read"], { expiresDays: null });
    world.clock.set(start + 30 * DAY - 1000);
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).status).toBe(200);
    world.clock.set(start + 30 * DAY);
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).status).toBe(401);
    world.clock.set(start + 3650 * DAY);
    expect((await world.call("GET", "/api/v1/health", { key: forever.key })).status).toBe(200);
  });

  test("a revocation, role change or disable made by another process (the CLI) applies on the very next request", async () => {
    const a = await world.createAccount();
    const editor = await a.addMember("editor");
    const k = await a.mint(["read", "create"], { userId: editor });
    const health = () => world.call("GET", "/api/v1/health", { key: k.key });
    expect((await health()).json.scopes).toEqual(["read", "create"]);
    // world.sql is another connection than the store's (the CLI's, as far as the server can tell).
    const cli = (text: string, ...params: unknown[]) => world.sql(text, ...params);
    await cli("UPDATE members SET role = 'viewer' WHERE user_id = ?", editor);
    expect((await health()).json.scopes).toEqual(["read"]);
    await cli("UPDATE accounts SET disabled_at = 1 WHERE id = ?", a.accountId);
    expect((await health()).status).toBe(401);
    await cli("UPDATE accounts SET disabled_at = NULL WHERE id = ?", a.accountId);
    expect((await health()).status).toBe(200);
    await cli("UPDATE api_keys SET revoked_at = 1 WHERE id = ?", k.id);
    expect((await health()).text).toBe(INVALID_KEY_BODY);
  });

  // The child process writes the SQLite file directly.
  test.skipIf(TEST_DIALECT !== "sqlite")("a revocation made by a separate process applies on the very next request, with no query per request", async () => {
    const a = await world.createAccount();
    const k = await a.mint(["read"]);
    const health = () => world.call("GET", "/api/v1/health", { key: k.key });
    for (let i = 0; i < 3; i++) expect((await health()).status).toBe(200);
    const script = `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(`${world.dataDir}/seedcast.db`)});
      db.exec("PRAGMA busy_timeout = 5000"); db.query("UPDATE api_keys SET revoked_at = 1 WHERE id = ?").run(${JSON.stringify(k.id)}); db.close();`;
    const cli = Bun.spawn([process.execPath, "-e", script], { stdout: "inherit", stderr: "inherit" });
    expect(await cli.exited).toBe(0);
    expect((await health()).text).toBe(INVALID_KEY_BODY);
  });

  test("lastUsedAt is recorded", async () => {
    const a = await world.createAccount();
    expect((await listKeys(world.deps, a.accountId))[0]?.lastUsedAt).toBeNull();
    await world.call("GET", "/api/v1/health", { key: a.key });
    // Written off the read path, in its own write the request does not await. On SQLite that write is queued on the one
    // writer; on PostgreSQL it runs on its own pooled connection and may commit after any write of ours. So look again
    // until it shows (or 5 s pass, which fails the test).
    const usedAt = new Date(world.clock.now()).toISOString();
    let seen: string | null | undefined = null;
    for (const giveUp = performance.now() + 5_000; performance.now() < giveUp; await Bun.sleep(20)) {
      seen = (await listKeys(world.deps, a.accountId))[0]?.lastUsedAt;
      if (seen !== null) break;
    }
    expect(seen).toBe(usedAt);
  });
});

describe("roles cap keys at every request", () => {
  test("a key with all groups minted by an editor who becomes a viewer can only read", async () => {
    const a = await world.createAccount();
    const editor = await a.addMember("editor");
    const k = await a.mint(["read", "create", "schedule", "voice"], { userId: editor });
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).json.scopes).toEqual(["read", "create", "schedule", "voice"]);
    expect((await world.call("POST", "/api/v1/__probe", { key: k.key, body: { a: "x" } })).status).toBe(200);
    await setMemberRole(world.deps, editor, "viewer");
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).json.scopes).toEqual(["read"]);
    const refused = await world.call("POST", "/api/v1/__probe", { key: k.key, body: { a: "x" } });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ error: "forbidden", requiredGroup: "create" });
    await setMemberRole(world.deps, editor, "editor");
    expect((await world.call("POST", "/api/v1/__probe", { key: k.key, body: { a: "x" } })).status).toBe(200);
  });

  test("a viewer cannot mint a key beyond read", async () => {
    const a = await world.createAccount();
    const viewer = await a.addMember("viewer");
    await expect(mintKey(world.deps, { accountId: a.accountId, userId: viewer, name: "v", groups: ["read", "create"], expiresDays: 90 })).rejects.toThrow(
      /cannot grant create/,
    );
    expect((await mintKey(world.deps, { accountId: a.accountId, userId: viewer, name: "v", groups: ["read"], expiresDays: 90 })).key).toStartWith("svc_");
  });

  test("a removed member's keys and a disabled account's keys answer 401", async () => {
    const a = await world.createAccount();
    const editor = await a.addMember("editor");
    const k = await a.mint(["read"], { userId: editor });
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).status).toBe(200);
    await removeMember(world.deps, a.accountId, editor);
    expect((await world.call("GET", "/api/v1/health", { key: k.key })).text).toBe(INVALID_KEY_BODY);
    expect((await world.call("GET", "/api/v1/health", { key: a.key })).status).toBe(200);
    await setAccountDisabled(world.deps, a.accountId, true);
    expect((await world.call("GET", "/api/v1/health", { key: a.key })).text).toBe(INVALID_KEY_BODY);
  });

  test("key names are 1 to 80 characters after trimming", async () => {
    const a = await world.createAccount();
    expect((await a.mint(["read"], { name: "x".repeat(80) })).key).toStartWith("svc_");
    await expect(a.mint(["read"], { name: "x".repeat(81) })).rejects.toThrow(/name/);
    await expect(a.mint(["read"], { name: "   " })).rejects.toThrow(/name/);
    await expect(a.mint([] as never[])).rejects.toThrow(/group/);
  });
});

describe("pipeline order and envelopes", () => {
  test("group (403) is checked before validation (400), validation before the handler", async () => {
    const a = await world.createAccount();
    const readOnly = await a.mint(["read"]);
    const forbidden = await world.call("POST", "/api/v1/__probe", { key: readOnly.key, rawBody: "{broken", headers: { "content-type": "application/json" } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json).toMatchObject({ error: "forbidden", requiredGroup: "create" });
    expect(typeof forbidden.json.message).toBe("string");
    const invalid = await world.call("POST", "/api/v1/__probe", { key: a.key, body: { a: 5 } });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error).toBe("invalid_request");
    expect(invalid.json.details[0].field).toBe("a");
    expect(invalid.text).not.toContain(a.key);
    const malformed = await world.call("POST", "/api/v1/__probe", { key: a.key, rawBody: "{broken", headers: { "content-type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error).toBe("invalid_request");
  });

  test("unknown routes under /api/v1 answer 404 not_found for a valid key", async () => {
    const a = await world.createAccount();
    const res = await world.call("GET", "/api/v1/nothing/here", { key: a.key });
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: "not_found" });
  });

  test("JSON bodies over 1 MiB answer 413, with or without Content-Length", async () => {
    const a = await world.createAccount();
    const big = JSON.stringify({ a: "x".repeat(1024 * 1024) });
    const res = await world.call("POST", "/api/v1/__probe", { key: a.key, rawBody: big, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(413);
    expect(res.json.error).toBe("payload_too_large");
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const chunked = await world.app.handle(
      new Request("http://localhost/api/v1/__probe", {
        method: "POST",
        headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json" },
        body: stream,
      }),
    );
    expect(chunked.status).toBe(413);
  });
});

describe("rate limit", () => {
  test("per key: the request past the limit answers 429 with Retry-After; another key is unaffected", async () => {
    const w = await createWorld({ env: { RATE_LIMIT_PER_MINUTE: "5" } });
    try {
      const a = await w.createAccount();
      const b = await w.createAccount();
      for (let i = 0; i < 5; i++) expect((await w.call("GET", "/api/v1/health", { key: a.key })).status).toBe(200);
      const limited = await w.call("GET", "/api/v1/health", { key: a.key });
      expect(limited.status).toBe(429);
      expect(limited.json.error).toBe("rate_limited");
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await w.call("GET", "/api/v1/health", { key: b.key })).status).toBe(200);
      w.clock.advance(60_000);
      expect((await w.call("GET", "/api/v1/health", { key: a.key })).status).toBe(200);
    } finally {
      await w.close();
    }
  });
});

test("the database enforces the credit checks", async () => {
  await expect(world.sql("UPDATE accounts SET credits_balance = -1")).rejects.toThrow(/CHECK|check constraint/);
});
