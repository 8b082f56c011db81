/**
 * Scale-out (decisions.md §11, issue 15): real `seedcast serve` replicas, each a child process with a data dir of its
 * own, on ONE real PostgreSQL 15 database and ONE bucket of a real Ceph radosgw, addressed one by one (a load balancer
 * would spread requests over them; here the test picks the replica, which is the harder case).
 *
 * - Ten replicas started at the same moment on an empty database: the migrations are applied exactly once (one replica
 *   reports them applied, the others found them done; every tag is recorded once) and all ten become ready.
 * - A key revoked through replica 1's dashboard is refused at replica 3's very next request (replica 3 had it cached).
 * - An image uploaded through replica 2 is served by replica 1, byte for byte, with the same headers.
 * - 2,000 posts due within 20 s are delivered exactly once (0 lost, 0 duplicates) by three replicas while replica 2 is
 *   killed with SIGKILL twice mid-dispatch (and started again each time): the dispatcher claims with FOR UPDATE SKIP
 *   LOCKED and leases, and a resend after a kill carries the same Idempotency-Key (absorbed by the receiver, counted
 *   apart).
 *
 * - One key's rate limit is one bucket for the cluster, not one per replica.
 * - While PostgreSQL is down, every replica stays up and answers /readyz 503 (/livez 200); once it is back they serve
 *   again without a restart.
 *
 * The test's own process never opens the database through Seedcast's code (its tables would switch to PostgreSQL for the
 * rest of a SQLite run): setup runs in a child process (helpers/scale-out-setup.ts), and checks read through plain SQL.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Subprocess, SQL, spawn } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ChildServer, startChildServer } from "./helpers/child-server";
import type { Postgres } from "./helpers/postgres";
import type { Radosgw } from "./helpers/radosgw";
import { spawnReceiver } from "./helpers/receiver-process";
import { TEST_INSTANCE_SECRET, testPostgres, testRadosgw } from "./helpers/test-database";
import { readWebhookLog } from "./peers/webhook-receiver";
import { WEBHOOK_SECRET, solidPng } from "./publishing-fixtures";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const REPLICAS_AT_ONCE = 10;
const POSTS = 2000;
const SPREAD_MS = 20_000;
const LEASE_MS = 2000;
const FINISH_TIMEOUT_MS = 90_000;
const RATE_LIMIT = 300;

let pg: Postgres;
let s3: Radosgw;
let databaseUrl: string;
let sql: SQL;
let dir: string;
let receiver: Subprocess;
let receiverUrl: string;
let receiverLog: string;
let env: Record<string, string>;
const replicas: ChildServer[] = [];
/** Replica `i` (0-based) of the three kept running. */
const replica = (i: number): ChildServer => {
  const r = replicas[i];
  if (!r) throw new Error(`replica ${i + 1} is not running`);
  return r;
};
let starts = 0;

/** One replica: `seedcast serve` from source, its own data dir, the cluster's database and bucket. */
function startReplica(): Promise<ChildServer> {
  const n = ++starts;
  const dataDir = mkdtempSync(join(dir, `replica-${n}-`));
  return startChildServer([BUN, "src/main.ts", "serve"], {
    cwd: ROOT,
    logFile: join(dir, `replica-${n}.log`),
    timeoutMs: 60_000,
    env: { ...env, DATA_DIR: dataDir },
  });
}

/** Runs a setup step in its own process (see helpers/scale-out-setup.ts) and answers its JSON. */
async function setup<T>(...args: string[]): Promise<T> {
  const proc = spawn([BUN, "test/helpers/scale-out-setup.ts", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...env, DATA_DIR: mkdtempSync(join(dir, "setup-")) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`setup ${args[0]} failed (${code}): ${err}\n${out}`);
  return JSON.parse(out.trim().split("\n").pop() ?? "null") as T;
}

/** A cookie-keeping client of one replica's dashboard (forms with their CSRF token, redirects not followed). */
class Browser {
  private readonly cookies = new Map<string, string>();
  private last = "";
  constructor(private readonly base: string) {}
  async request(method: string, path: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
    let body: string | undefined;
    if (form) {
      body = new URLSearchParams(form).toString();
      headers["content-type"] = "application/x-www-form-urlencoded";
    }
    const res = await fetch(`${this.base}${path}`, { method, headers, body, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    this.last = await res.text();
    return res;
  }
  csrf(): string {
    const token = /name="_csrf" value="([^"]+)"/.exec(this.last)?.[1];
    if (!token) throw new Error("no CSRF field on the last page");
    return token;
  }
  async submit(page: string, form: Record<string, string>) {
    await this.request("GET", page);
    return this.request("POST", page, { _csrf: this.csrf(), ...form });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "seedcast-cluster-"));
  [pg, s3] = await Promise.all([testPostgres(), testRadosgw()]);
  databaseUrl = await pg.createDatabase();
  sql = new SQL({ url: databaseUrl, max: 2 });
  const bucket = `cluster-${process.pid}`;
  await s3.createBucket(bucket);
  receiverLog = join(dir, "receiver.jsonl");
  ({ process: receiver, url: receiverUrl } = await spawnReceiver({ port: 0, secret: WEBHOOK_SECRET, log: receiverLog }));
  env = {
    DATABASE_URL: databaseUrl,
    INSTANCE_SECRET: TEST_INSTANCE_SECRET,
    ...s3.env({ S3_BUCKET: bucket }),
    BASE_URL: "http://localhost",
    ALLOW_PRIVATE_HOSTS: "127.0.0.1",
    LOG_LEVEL: "info",
    DISPATCH_LEASE_MS: String(LEASE_MS),
    DISPATCH_CONCURRENCY: "8",
    DISPATCH_POLL_MS: "100",
    // Low enough to reach in a test: one key's bucket must hold for the whole cluster.
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
  };
}, 120_000);

afterAll(async () => {
  for (const r of replicas) r.proc.kill("SIGKILL");
  receiver?.kill("SIGTERM");
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("replicas on one PostgreSQL and one bucket", () => {
  test(
    `${REPLICAS_AT_ONCE} replicas started at once on an empty database apply the migrations once, and all become ready`,
    async () => {
      const started = await Promise.all(Array.from({ length: REPLICAS_AT_ONCE }, () => startReplica()));
      replicas.push(...started);
      const tags = await sql`SELECT tag, count(*)::int AS n FROM __seedcast_migrations GROUP BY tag`;
      expect(tags.length).toBeGreaterThan(0);
      expect(tags.every((t: { n: number }) => t.n === 1)).toBe(true);
      // Each replica logs how many migrations its start applied: one applied them all, nine found them done.
      const applied = started.map((r) => {
        const ready = r.log().split("\n").find((l) => l.includes('"ready"'));
        return Number((JSON.parse(ready ?? "{}") as { migrationsApplied?: number }).migrationsApplied ?? Number.NaN);
      });
      expect(applied.filter((n) => n > 0)).toEqual([tags.length]);
      expect(applied.filter((n) => n === 0).length).toBe(REPLICAS_AT_ONCE - 1);
      for (const r of started) expect((await fetch(`${r.base}/readyz`)).status).toBe(200);
      // Keep three.
      for (const r of replicas.splice(3)) {
        r.proc.kill("SIGTERM");
        await r.proc.exited;
      }
      expect(replicas.length).toBe(3);
    },
    180_000,
  );

  test("a key revoked through replica 1 is refused at replica 3's next request", async () => {
    const [r1, r3] = [replica(0), replica(2)];
    const who = await setup<{ email: string; password: string; keyId: string; key: string }>("account", receiverUrl);
    const credits = () => fetch(`${r3.base}/api/v1/credits`, { headers: { authorization: `Bearer ${who.key}` } });
    expect((await credits()).status).toBe(200);
    expect((await credits()).status).toBe(200); // now served from replica 3's key cache

    const browser = new Browser(r1.base);
    await browser.request("GET", "/login");
    const login = await browser.request("POST", "/login", { _csrf: browser.csrf(), email: who.email, password: who.password });
    expect(login.status).toBe(303);
    const revoked = await browser.submit(`/dashboard/keys/${who.keyId}/revoke`, {});
    expect(revoked.status).toBe(303);

    const refused = await credits();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("Invalid API key");
  });

  test("an image uploaded through replica 2 is served by replica 1, byte for byte", async () => {
    const [r1, r2] = [replica(0), replica(1)];
    const who = await setup<{ key: string }>("account", receiverUrl);
    const auth = { authorization: `Bearer ${who.key}` };
    const link = (await (await fetch(`${r2.base}/api/v1/assets/upload-link`, { method: "POST", headers: auth })).json()) as { uploadUrl: string };
    const png = new Uint8Array(await solidPng(40, 30));
    const form = new FormData();
    form.append("file", new File([png], "square.png", { type: "image/png" }));
    const uploaded = await fetch(`${r2.base}${new URL(link.uploadUrl).pathname}`, { method: "POST", body: form, headers: { accept: "application/json" } });
    expect(uploaded.status).toBeLessThan(300);

    const list = (await (await fetch(`${r1.base}/api/v1/assets`, { headers: auth })).json()) as { assets: { url: string; mimeType?: string }[] };
    expect(list.assets.length).toBe(1);
    const url = new URL(list.assets[0]?.url ?? "");
    const [at1, at2] = await Promise.all([fetch(`${r1.base}${url.pathname}`), fetch(`${r2.base}${url.pathname}`)]);
    expect(at1.status).toBe(200);
    expect(new Uint8Array(await at1.arrayBuffer())).toEqual(png);
    expect(at1.headers.get("content-type")).toBe("image/png");
    expect(at1.headers.get("content-type")).toBe(at2.headers.get("content-type"));
    expect(at1.headers.get("etag")).toBe(at2.headers.get("etag"));
    await at2.arrayBuffer();
  });

  test(
    `${POSTS} posts due within ${SPREAD_MS / 1000} s: delivered exactly once while replica 2 is killed with SIGKILL twice mid-dispatch`,
    async () => {
      const who = await setup<{ accountId: string; connectionId: string; creationId: string }>("account", receiverUrl);
      const firstDueAt = Date.now() + 4000;
      const { targetIds } = await setup<{ targetIds: string[] }>(
        "posts",
        who.accountId,
        who.connectionId,
        who.creationId,
        String(POSTS),
        String(firstDueAt),
        String(SPREAD_MS),
      );
      expect(targetIds.length).toBe(POSTS);
      const delivered = () => readWebhookLog(receiverLog).filter((d) => d.event === "post.publish" && !d.repeat).length;

      /** The deliveries replica 2 itself made so far (its own /metrics counts that process only). */
      const victimDeliveries = async () => {
        const text = await (await fetch(`${replica(1).base}/metrics`)).text();
        return text
          .split("\n")
          .filter((l) => l.startsWith("seedcast_deliveries_total{"))
          .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
      };
      const kills: { at: number; deliveredBefore: number; byVictimInLastSecond: number }[] = [];
      for (const killAt of [firstDueAt + 5000, firstDueAt + 12_000]) {
        await Bun.sleep(Math.max(0, killAt - 1000 - Date.now()));
        const before = await victimDeliveries();
        await Bun.sleep(Math.max(0, killAt - Date.now()));
        const byVictimInLastSecond = (await victimDeliveries()) - before;
        const victim = replica(1);
        kills.push({ at: Date.now() - firstDueAt, deliveredBefore: delivered(), byVictimInLastSecond });
        victim.proc.kill("SIGKILL");
        await victim.proc.exited;
        replicas[1] = await startReplica();
      }

      const deadline = Date.now() + FINISH_TIMEOUT_MS;
      let states: Record<string, number> = {};
      while (Date.now() < deadline) {
        const rows = await sql`SELECT status, count(*)::int AS n FROM scheduled_post_targets WHERE account_id = ${who.accountId} GROUP BY status`;
        states = Object.fromEntries(rows.map((r: { status: string; n: number }) => [r.status, r.n]));
        if ((states.published ?? 0) === POSTS) break;
        await Bun.sleep(250);
      }
      const byReplica = await sql`SELECT count(*)::int AS n FROM scheduled_post_targets WHERE account_id = ${who.accountId} AND attempts > 0`;

      const log = readWebhookLog(receiverLog).filter((d) => d.event === "post.publish" && d.verified);
      const wanted = new Set(targetIds);
      const effects = new Map<string, number>();
      for (const d of log) if (!d.repeat && wanted.has(d.idempotencyKey ?? "")) effects.set(d.idempotencyKey ?? "", (effects.get(d.idempotencyKey ?? "") ?? 0) + 1);
      const lost = targetIds.filter((id) => !effects.has(id)).length;
      const twice = [...effects.values()].filter((n) => n > 1).length;
      console.log(JSON.stringify({ posts: POSTS, delivered: effects.size, lost, twice, absorbedRepeats: log.filter((d) => d.repeat).length, kills, retried: byReplica[0]?.n }));

      expect(states).toEqual({ published: POSTS });
      expect(lost).toBe(0);
      expect(twice).toBe(0);
      expect(effects.size).toBe(POSTS);
      // Both kills landed while deliveries were going on, and replica 2 itself was delivering in the second before.
      for (const k of kills) {
        expect(k.deliveredBefore).toBeGreaterThan(0);
        expect(k.deliveredBefore).toBeLessThan(POSTS);
        expect(k.byVictimInLastSecond).toBeGreaterThan(0);
      }
    },
    240_000,
  );

  test(`one key's rate limit holds for the whole cluster: ${RATE_LIMIT * 1.5} requests spread over three replicas get ${RATE_LIMIT} through`, async () => {
    const who = await setup<{ key: string }>("account", receiverUrl);
    const auth = { authorization: `Bearer ${who.key}` };
    const started = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT * 1.5; i += 3) {
      const answers = await Promise.all(replicas.map((r) => fetch(`${r.base}/api/v1/credits`, { headers: auth })));
      for (const a of answers) {
        statuses.push(a.status);
        await a.arrayBuffer();
      }
    }
    const elapsedMinutes = (Date.now() - started) / 60_000;
    const ok = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    // The burst, plus what refilled while the requests went out (RATE_LIMIT a minute), never the burst per replica.
    expect(ok).toBeGreaterThanOrEqual(RATE_LIMIT);
    expect(ok).toBeLessThanOrEqual(RATE_LIMIT + Math.ceil(RATE_LIMIT * elapsedMinutes) + 1);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  });

  // Last: it stops the database the replicas share.
  test(
    "while PostgreSQL is down every replica stays up with /readyz 503 (/livez 200); once it is back they serve again, without a restart",
    async () => {
      const who = await setup<{ key: string }>("account", receiverUrl);
      const auth = { authorization: `Bearer ${who.key}` };
      for (const r of replicas) expect((await fetch(`${r.base}/api/v1/credits`, { headers: auth })).status).toBe(200);
      await pg.pause();
      try {
        // Long enough for every dispatcher loop to have polled the missing database several times.
        await Bun.sleep(3000);
        for (const r of replicas) {
          expect(r.proc.exitCode, r.log().split("\n").slice(-20).join("\n")).toBeNull();
          expect((await fetch(`${r.base}/readyz`)).status).toBe(503);
          expect((await fetch(`${r.base}/livez`)).status).toBe(200);
        }
      } finally {
        await pg.restart();
      }
      for (const r of replicas) {
        let status = 0;
        for (let i = 0; i < 100 && status !== 200; i++) {
          status = (await fetch(`${r.base}/readyz`)).status;
          if (status !== 200) await Bun.sleep(100);
        }
        expect(status).toBe(200);
        expect(r.proc.exitCode).toBeNull();
        expect((await fetch(`${r.base}/api/v1/credits`, { headers: auth })).status).toBe(200);
      }
    },
    120_000,
  );
});
