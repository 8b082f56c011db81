/**
 * Idempotency-Key (decisions.md §1) through the real pipeline, with a generate-like metered route defined here
 * (reserve → async work → capture in the saving transaction, release on failure) and with POST /api/v1/seeds.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia, status, t } from "elysia";
import { authOf } from "../src/http/request-context";
import { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_RETENTION_MS, beginIdempotent, tidyIdempotencyKeys } from "../src/http/idempotency";
import { scopePlugin } from "../src/http/scope";
import { AppError } from "../src/lib/errors";
import { newId } from "../src/lib/ids";
import { readStreamCapped } from "../src/lib/read-capped";
import { captureHold, creditSummary, releaseHold, reserveCredits } from "../src/modules/credits/service";
import { describeAuthMatrix } from "./helpers/auth-matrix";
import { type World, createWorld } from "./helpers/world";

const METERED = "/api/v1/__metered";
const PRICE = 5;

let world: World;
/** Gates that hold a metered request in flight until the test opens them, by body.topic. */
const gates = new Map<string, Promise<void>>();
/** How many times the metered handler actually ran, by topic. */
const runs = new Map<string, number>();
/** Topics whose next run fails with 502 (then succeeds). */
const failOnce = new Set<string>();

function gate(topic: string): () => void {
  let open = () => {};
  gates.set(topic, new Promise<void>((resolve) => (open = resolve)));
  return open;
}

beforeAll(async () => {
  world = await createWorld();
  const deps = world.deps;
  world.app.elysia.use(
    new Elysia().use(scopePlugin).post(
      METERED,
      async ({ request, body, set }) => {
        const { accountId } = authOf(request);
        runs.set(body.topic, (runs.get(body.topic) ?? 0) + 1);
        const hold = await reserveCredits(deps, accountId, PRICE, "test:metered");
        try {
          await (gates.get(body.topic) ?? Promise.resolve());
          await Bun.sleep(0); // a real await between reserve and capture, as a model call would have
          if (failOnce.delete(body.topic)) {
            throw new AppError("generation_failed", "The generator failed.", { retryable: true });
          }
          const id = newId();
          const charged = await deps.store.write(() => captureHold(deps, hold));
          set.status = 201;
          return { id, topic: body.topic, creditsCharged: charged };
        } finally {
          await releaseHold(deps, hold);
        }
      },
      { scope: "create", body: t.Object({ topic: t.String({ minLength: 1 }), n: t.Optional(t.Integer()) }) },
    ),
  );
  // Answers through Elysia's status() helper and as plain text: stored and replayed the same way.
  world.app.elysia.use(
    new Elysia()
      .use(scopePlugin)
      .post("/api/v1/__status", () => status(202, { id: newId() }), { scope: "create" })
      .post("/api/v1/__text", () => `text ${newId()}`, { scope: "create" }),
  );
});
afterAll(() => world.close());

describeAuthMatrix("idempotency", () => world, [{ method: "POST", path: METERED, validBody: { topic: "x" } }]);

async function rows(table: string, accountId: string): Promise<number> {
  const [row] = await world.sql<{ n: number | string }>(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`, accountId);
  return Number(row?.n ?? 0);
}

const idem = (key: string) => ({ "idempotency-key": key });

describe("Idempotency-Key on a metered route", () => {
  test("same key + same body replays the first answer exactly and charges once", async () => {
    const a = await world.createAccount({ credits: 20 });
    const first = await world.call("POST", METERED, { key: a.key, body: { topic: "replay", n: 1 }, headers: idem("k-1") });
    expect(first.status).toBe(201);
    expect(first.json.creditsCharged).toBe(PRICE);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const ledgerRows = await rows("credit_ledger", a.accountId);
    // Key order in the JSON does not make it a different request.
    const again = await world.call("POST", METERED, {
      key: a.key,
      rawBody: '{"n":1,"topic":"replay"}',
      headers: { ...idem("k-1"), "content-type": "application/json" },
    });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(runs.get("replay")).toBe(1);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 20 - PRICE, reserved: 0 });
    expect(await rows("credit_ledger", a.accountId)).toBe(ledgerRows);
  });

  test("same key + different body → 422 idempotency_key_reused, nothing run or charged", async () => {
    const a = await world.createAccount({ credits: 20 });
    await world.call("POST", METERED, { key: a.key, body: { topic: "diff-a" }, headers: idem("k-2") });
    const before = await rows("credit_ledger", a.accountId);
    const res = await world.call("POST", METERED, { key: a.key, body: { topic: "diff-b" }, headers: idem("k-2") });
    expect(res.status).toBe(422);
    expect(res.json.error).toBe("idempotency_key_reused");
    expect(runs.get("diff-b")).toBeUndefined();
    expect(await rows("credit_ledger", a.accountId)).toBe(before);
    expect((await creditSummary(world.deps, a.accountId)).balance).toBe(20 - PRICE);
  });

  test("a repeat while the first is running → 409 idempotency_in_flight; afterwards it replays", async () => {
    const a = await world.createAccount({ credits: 20 });
    const open = gate("slow");
    const firstP = world.call("POST", METERED, { key: a.key, body: { topic: "slow" }, headers: idem("k-3") });
    // Let the first request reach its gate (it reserved credits and waits).
    while ((runs.get("slow") ?? 0) === 0) await Bun.sleep(1);
    const second = await world.call("POST", METERED, { key: a.key, body: { topic: "slow" }, headers: idem("k-3") });
    expect(second.status).toBe(409);
    expect(second.json.error).toBe("idempotency_in_flight");
    open();
    const first = await firstP;
    expect(first.status).toBe(201);
    const third = await world.call("POST", METERED, { key: a.key, body: { topic: "slow" }, headers: idem("k-3") });
    expect(third.text).toBe(first.text);
    expect(runs.get("slow")).toBe(1);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 20 - PRICE, reserved: 0 });
  });

  test("20 simultaneous retries of one key: the work runs once, charged once", async () => {
    const a = await world.createAccount({ credits: 100 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => world.call("POST", METERED, { key: a.key, body: { topic: "storm" }, headers: idem("k-storm") })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const bodies = new Set(answers.filter((r) => r.status === 201).map((r) => r.text));
    expect(bodies.size).toBe(1);
    expect(runs.get("storm")).toBe(1);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 100 - PRICE, reserved: 0 });
  });

  test("a 502 is not stored: a retry with the same key runs again and is charged once", async () => {
    const a = await world.createAccount({ credits: 20 });
    failOnce.add("flaky");
    const failed = await world.call("POST", METERED, { key: a.key, body: { topic: "flaky" }, headers: idem("k-5") });
    expect(failed.status).toBe(502);
    expect(failed.json).toMatchObject({ error: "generation_failed", retryable: true });
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 20, reserved: 0 });
    expect(await rows("idempotency_keys", a.accountId)).toBe(0);
    const retried = await world.call("POST", METERED, { key: a.key, body: { topic: "flaky" }, headers: idem("k-5") });
    expect(retried.status).toBe(201);
    expect(runs.get("flaky")).toBe(2);
    const replay = await world.call("POST", METERED, { key: a.key, body: { topic: "flaky" }, headers: idem("k-5") });
    expect(replay.text).toBe(retried.text);
    expect(await creditSummary(world.deps, a.accountId)).toEqual({ balance: 20 - PRICE, reserved: 0 });
  });

  test("a 4xx answer is stored and replayed (402 insufficient_credits)", async () => {
    const a = await world.createAccount({ credits: 0 });
    const poor = await world.call("POST", METERED, { key: a.key, body: { topic: "poor" }, headers: idem("k-6") });
    expect(poor.status).toBe(402);
    expect(poor.json).toMatchObject({ error: "insufficient_credits", required: PRICE, available: 0 });
    const again = await world.call("POST", METERED, { key: a.key, body: { topic: "poor" }, headers: idem("k-6") });
    expect(again.status).toBe(402);
    expect(again.text).toBe(poor.text);
    expect(runs.get("poor")).toBe(1);
  });

  test("validation failures (400) are replayed too, and a key of a refused (403) request is not consumed", async () => {
    const a = await world.createAccount({ credits: 20 });
    const bad = await world.call("POST", METERED, { key: a.key, body: { topic: "" }, headers: idem("k-7") });
    expect(bad.status).toBe(400);
    const badAgain = await world.call("POST", METERED, { key: a.key, body: { topic: "" }, headers: idem("k-7") });
    expect(badAgain.text).toBe(bad.text);
    const readOnly = (await a.mint(["read"])).key;
    const refused = await world.call("POST", METERED, { key: readOnly, body: { topic: "ro" }, headers: idem("k-8") });
    expect(refused.status).toBe(403);
    expect(Number((await world.sql("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'k-8'"))[0]?.n)).toBe(0);
    const allowed = await world.call("POST", METERED, { key: a.key, body: { topic: "ro" }, headers: idem("k-8") });
    expect(allowed.status).toBe(201);
  });

  test("keys over 255 characters → 400 invalid_request, nothing run; 255 is accepted; empty → 400", async () => {
    const a = await world.createAccount({ credits: 20 });
    const long = await world.call("POST", METERED, { key: a.key, body: { topic: "long" }, headers: idem("x".repeat(256)) });
    expect(long.status).toBe(400);
    expect(long.json.error).toBe("invalid_request");
    expect(runs.get("long")).toBeUndefined();
    const empty = await world.call("POST", METERED, { key: a.key, body: { topic: "long" }, headers: idem(" ") });
    expect(empty.status).toBe(400);
    const max = await world.call("POST", METERED, { key: a.key, body: { topic: "long" }, headers: idem("y".repeat(255)) });
    expect(max.status).toBe(201);
    expect((await creditSummary(world.deps, a.accountId)).balance).toBe(20 - PRICE);
  });

  test("keys are scoped per account and per route", async () => {
    const a = await world.createAccount({ credits: 20 });
    const b = await world.createAccount({ credits: 20 });
    const ra = await world.call("POST", METERED, { key: a.key, body: { topic: "scoped" }, headers: idem("shared") });
    const rb = await world.call("POST", METERED, { key: b.key, body: { topic: "scoped" }, headers: idem("shared") });
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(rb.json.id).not.toBe(ra.json.id);
    expect((await creditSummary(world.deps, b.accountId)).balance).toBe(20 - PRICE);
    // Same key, another route: independent (a seed is created, not a 422).
    const seed = await world.call("POST", "/api/v1/seeds", { key: a.key, body: { title: "t", content: "c" }, headers: idem("shared") });
    expect(seed.status).toBe(201);
  });

  test("after 24 hours the key is free again; the tidy job removes old answers", async () => {
    const a = await world.createAccount({ credits: 20 });
    const first = await world.call("POST", METERED, { key: a.key, body: { topic: "old" }, headers: idem("k-old") });
    world.clock.advance(IDEMPOTENCY_RETENTION_MS - 1);
    const replay = await world.call("POST", METERED, { key: a.key, body: { topic: "old" }, headers: idem("k-old") });
    expect(replay.text).toBe(first.text);
    world.clock.advance(2);
    const fresh = await world.call("POST", METERED, { key: a.key, body: { topic: "old" }, headers: idem("k-old") });
    expect(fresh.status).toBe(201);
    expect(fresh.json.id).not.toBe(first.json.id);
    expect((await creditSummary(world.deps, a.accountId)).balance).toBe(20 - 2 * PRICE);
    world.clock.advance(IDEMPOTENCY_RETENTION_MS + 1);
    expect(await tidyIdempotencyKeys(world.deps)).toBeGreaterThanOrEqual(1);
    expect(await rows("idempotency_keys", a.accountId)).toBe(0);
  });

  test("a claim abandoned by a crash blocks the key only until its lease ends", async () => {
    const a = await world.createAccount({ credits: 20 });
    await world.sql(
      "INSERT INTO idempotency_keys (account_id, route, key, fingerprint, state, lease, lease_until, created_at) VALUES (?, ?, ?, 'x', 'in_flight', 'dead', ?, ?)",
      a.accountId,
      `POST ${METERED}`,
      "k-crash",
      world.clock.now() + IDEMPOTENCY_LEASE_MS,
      world.clock.now(),
    );
    const blocked = await world.call("POST", METERED, { key: a.key, body: { topic: "crash" }, headers: idem("k-crash") });
    // The dead claim's fingerprint differs from this body, but the claim is live: refused, nothing run.
    expect([409, 422]).toContain(blocked.status);
    expect(runs.get("crash")).toBeUndefined();
    world.clock.advance(IDEMPOTENCY_LEASE_MS);
    const taken = await world.call("POST", METERED, { key: a.key, body: { topic: "crash" }, headers: idem("k-crash") });
    expect(taken.status).toBe(201);
  });

  test("without the header every POST runs", async () => {
    const a = await world.createAccount({ credits: 20 });
    await world.call("POST", METERED, { key: a.key, body: { topic: "plain" } });
    await world.call("POST", METERED, { key: a.key, body: { topic: "plain" } });
    expect(runs.get("plain")).toBe(2);
    expect((await creditSummary(world.deps, a.accountId)).balance).toBe(20 - 2 * PRICE);
  });
});

describe("answer shapes", () => {
  test("status(202, body) and text answers replay with their status, type and bytes", async () => {
    const a = await world.createAccount();
    for (const path of ["/api/v1/__status", "/api/v1/__text"]) {
      const first = await world.call("POST", path, { key: a.key, headers: idem(`shape-${path}`) });
      const again = await world.call("POST", path, { key: a.key, headers: idem(`shape-${path}`) });
      expect(again.status).toBe(first.status);
      expect(again.text).toBe(first.text);
      expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    }
    expect((await world.call("POST", "/api/v1/__status", { key: a.key, headers: idem("s2") })).status).toBe(202);
  });
});

describe("Idempotency-Key on POST /api/v1/seeds", () => {
  test("a retried create stores one seed and answers the same seed", async () => {
    const a = await world.createAccount();
    const body = { title: "Launch day", content: "We launch on Monday." };
    const first = await world.call("POST", "/api/v1/seeds", { key: a.key, body, headers: idem("seed-1") });
    expect(first.status).toBe(201);
    const again = await world.call("POST", "/api/v1/seeds", { key: a.key, body, headers: idem("seed-1") });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(await rows("seeds", a.accountId)).toBe(1);
    const changed = await world.call("POST", "/api/v1/seeds", {
      key: a.key,
      body: { ...body, title: "Other" },
      headers: idem("seed-1"),
    });
    expect(changed.status).toBe(422);
    expect(await rows("seeds", a.accountId)).toBe(1);
  });
});

describe("the claim leaves the body to the route", () => {
  test("a request off a real socket that awaited before its claim (a credential looked up in the database) keeps its body", async () => {
    const a = await world.createAccount();
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      routes: {
        "/claim": {
          POST: async (request) => {
            await Bun.sleep(1); // what an async credential lookup does to the request
            const begun = await beginIdempotent(world.deps, request, a.accountId, "/claim", "req-1");
            // Read as the routes' JSON parser reads it (json-body.ts): through the request's own stream.
            const body = new TextDecoder().decode((await readStreamCapped(request.body, 1024)) ?? new Uint8Array());
            return Response.json({ claimed: begun !== null && !(begun instanceof Response), body });
          },
        },
      },
    });
    try {
      const sent = JSON.stringify({ title: "kept" });
      const res = await fetch(`http://127.0.0.1:${server.port}/claim`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": "socket-1" },
        body: sent,
      });
      expect(await res.json()).toEqual({ claimed: true, body: sent });
    } finally {
      await server.stop(true);
    }
  });
});
