/**
 * A one-time secret (a minted or rotated key, an upload link) is kept in the database between the POST that makes it
 * and the GET that shows it (src/modules/dashboard/reveal.ts), so with several replicas behind a load balancer the GET
 * shows it on whichever replica it reaches: here a second app over a second store on the same database (SQLite file,
 * or PostgreSQL with SEEDCAST_TEST_DATABASE=postgres), and a real `seedcast serve` child process (no shared memory).
 * Exactly once, even when two replicas take it at the same time; never to another session; not after ten minutes; gone
 * with the session; and the row holds neither the token nor the secret.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createApp } from "../src/app";
import { DB_FILE_NAME } from "../src/db/client";
import type { Store } from "../src/db/store";
import { openSqliteStore } from "../src/db/store";
import { createAccount } from "../src/modules/accounts/service";
import { listKeys } from "../src/modules/auth/keys-service";
import { REVEAL_TTL_MS } from "../src/modules/dashboard/reveal";
import { JOB_IDS, systemJobs } from "../src/system-jobs";
import { type ChildServer, startChildServer } from "./helpers/child-server";
import { DashboardClient, PASSWORD } from "./helpers/dashboard-client";
import { BASE, type World, createWorld } from "./helpers/world";

let world: World;
/** The same world seen through a second replica: its own store (connections) and its own app (process memory). */
let replica: World;
let secondStore: Store;
let accountId: string;

const EMAIL = "owner@reveal.test";
const OTHER_EMAIL = "other@reveal.test";

async function openSecondStore(): Promise<Store> {
  if (world.dialect === "postgres") {
    const { openPgStore } = await import("../src/db/pg/store");
    const url = world.env().DATABASE_URL;
    if (!url) throw new Error("no DATABASE_URL in the PostgreSQL world");
    return openPgStore(url, { max: 4 });
  }
  return openSqliteStore(join(world.dataDir, DB_FILE_NAME));
}

function secretOf(html: string): string | undefined {
  return /value="(svc_[0-9A-Za-z]+)"/.exec(html)?.[1];
}

async function signedIn(on: World, email = EMAIL): Promise<DashboardClient> {
  const client = new DashboardClient(on);
  const res = await client.login(email, PASSWORD);
  expect(res.status).toBe(303);
  return client;
}

/** The same browser (cookies) talking to the other replica. */
function onReplica(client: DashboardClient, target: World): DashboardClient {
  const moved = new DashboardClient(target);
  for (const [k, v] of client.cookies) moved.cookies.set(k, v);
  return moved;
}

async function mint(client: DashboardClient, name: string): Promise<string> {
  const posted = await client.submit("/dashboard/keys", "/dashboard/keys", { name, groups: "read", expires: "30" });
  expect(posted.status).toBe(303);
  expect(posted.location).toMatch(/^\/dashboard\/keys\?shown=[A-Za-z0-9_-]{43}$/);
  return posted.location ?? "";
}

describe("one-time secrets across replicas", () => {
  beforeAll(async () => {
    world = await createWorld();
    const created = await createAccount(world.deps, { name: "Reveal", email: EMAIL, password: PASSWORD, credits: 10 });
    accountId = created.accountId;
    await createAccount(world.deps, { name: "Other", email: OTHER_EMAIL, password: PASSWORD, credits: 10 });
    secondStore = await openSecondStore();
    const deps = { ...world.deps, store: secondStore };
    replica = { ...world, deps, store: secondStore, app: createApp(deps) };
  });
  afterAll(async () => {
    await secondStore?.close();
    await world?.close();
  });

  test("a key minted on one replica is shown by the other, once", async () => {
    const a = await signedIn(world);
    const location = await mint(a, "across");
    const b = onReplica(a, replica);
    const shown = await b.get(location);
    expect(shown.status).toBe(200);
    const secret = secretOf(shown.text) ?? "";
    expect(secret).toMatch(/^svc_/);
    expect((await world.call("GET", "/api/v1/health", { key: secret })).status).toBe(200);
    // Neither replica shows it again, and a reload mints nothing.
    const keys = (await listKeys(world.deps, accountId)).length;
    for (const again of [await a.get(location), await b.get(location)]) {
      expect(again.status).toBe(200);
      expect(again.text).not.toContain(secret);
      expect(again.text).toContain("is not shown again");
    }
    expect((await listKeys(world.deps, accountId)).length).toBe(keys);
    expect(await world.sql("SELECT token_hash FROM secret_reveals")).toEqual([]);
  });

  test("a rotation and an upload link made on the second replica are shown by the first", async () => {
    const b = await signedIn(replica);
    await mint(b, "to rotate");
    const key = (await listKeys(world.deps, accountId)).find((k) => k.name === "to rotate");
    await b.get(`/dashboard/keys/${key?.id}/rotate`);
    const rotated = await b.request("POST", `/dashboard/keys/${key?.id}/rotate`, { _csrf: b.csrf() });
    expect(rotated.status).toBe(303);
    const a = onReplica(b, world);
    const page = await a.get(rotated.location ?? "");
    expect(secretOf(page.text)).toMatch(/^svc_/);
    expect(page.text).toContain("keeps working until");

    const link = await b.submit("/dashboard/library", "/dashboard/library/upload-link", {});
    expect(link.status).toBe(303);
    expect(link.location).toMatch(/^\/dashboard\/library\?link=[A-Za-z0-9_-]{43}$/);
    const library = await a.get(link.location ?? "");
    expect(library.text).toContain("Upload link made");
    expect(library.text).toMatch(/value="http:\/\/localhost\/upload\/[A-Za-z0-9_-]{43}"/);
    expect((await b.get(link.location ?? "")).text).toContain("was shown once and is not shown again");
  });

  test("two replicas taking one token at the same time show it exactly once", async () => {
    const a = await signedIn(world);
    for (let round = 0; round < 5; round++) {
      const location = await mint(a, `race ${round}`);
      const b = onReplica(a, replica);
      const pages = await Promise.all([a.get(location), b.get(location), a.get(location), b.get(location)]);
      const shown = pages.map((p) => secretOf(p.text)).filter((s): s is string => s !== undefined);
      expect(shown.length).toBe(1);
      expect(pages.filter((p) => p.text.includes("is not shown again")).length).toBe(3);
    }
  });

  test("another session never sees it, and does not spend it", async () => {
    const a = await signedIn(world);
    const location = await mint(a, "mine");
    for (const other of [await signedIn(replica, OTHER_EMAIL), await signedIn(replica, EMAIL)]) {
      const page = await other.get(location);
      expect(secretOf(page.text)).toBeUndefined();
    }
    // The session that minted it still gets it.
    expect(secretOf((await onReplica(a, replica).get(location)).text)).toMatch(/^svc_/);
  });

  test("the row holds an HMAC of the token and the sealed value, neither in clear", async () => {
    await world.sql("DELETE FROM secret_reveals"); // what earlier tests left untaken
    const a = await signedIn(world);
    const location = await mint(a, "plainly named");
    const token = location.slice(location.indexOf("=") + 1);
    const rows = await world.sql<{ token_hash: string; session_id: string; sealed: string; expires_at: number | string }>(
      "SELECT token_hash, session_id, sealed, expires_at FROM secret_reveals",
    );
    expect(rows.length).toBe(1);
    const row = rows[0];
    if (!row) throw new Error("no row");
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_hash).not.toContain(token);
    expect(row.token_hash).not.toBe(new Bun.CryptoHasher("sha256").update(token).digest("hex"));
    expect(row.sealed).toMatch(/^v1\./);
    expect(Number(row.expires_at)).toBe(world.clock.now() + REVEAL_TTL_MS);
    const sessions = await world.sql<{ id: string }>("SELECT id FROM sessions WHERE id = ?", row.session_id);
    expect(sessions.length).toBe(1);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain("svc_");
    expect(dump).not.toContain("plainly named"); // the title is sealed too
    const secret = secretOf((await a.get(location)).text) ?? "";
    expect(secret).toMatch(/^svc_/);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(secret.slice(4, 20));
  });

  test("after ten minutes it is gone, and the tidy job deletes what was never taken", async () => {
    await world.sql("DELETE FROM secret_reveals"); // what earlier tests left untaken
    const a = await signedIn(world);
    const late = await mint(a, "too late");
    const justInTime = await mint(a, "just in time");
    const kept = await mint(a, "kept");
    world.clock.advance(REVEAL_TTL_MS - 1);
    expect(secretOf((await onReplica(a, replica).get(justInTime)).text)).toMatch(/^svc_/);
    world.clock.advance(1);
    const page = await onReplica(a, replica).get(late);
    expect(secretOf(page.text)).toBeUndefined();
    expect(page.text).toContain("is not shown again");
    // The job (run once cluster-wide) deletes what expired, and only that.
    const job = systemJobs.find((j) => j.id === JOB_IDS.secretRevealsTidy);
    if (!job) throw new Error("no tidy job");
    expect((await world.sql("SELECT token_hash FROM secret_reveals")).length).toBe(2);
    await job.run(world.deps);
    expect(await world.sql("SELECT token_hash FROM secret_reveals")).toEqual([]);
    expect(secretOf((await a.get(kept)).text)).toBeUndefined();
    const fresh = await mint(a, "fresh");
    await job.run(world.deps);
    expect((await world.sql("SELECT token_hash FROM secret_reveals")).length).toBe(1);
    // A stash also drops its session's expired rows on its way, and only its session's.
    const elsewhere = await signedIn(world);
    await mint(elsewhere, "another session's");
    world.clock.advance(REVEAL_TTL_MS);
    const newest = await mint(a, "newest");
    expect((await world.sql("SELECT token_hash FROM secret_reveals")).length).toBe(2);
    await job.run(world.deps);
    expect((await world.sql("SELECT token_hash FROM secret_reveals")).length).toBe(1);
    expect(secretOf((await a.get(fresh)).text)).toBeUndefined();
    expect(secretOf((await a.get(newest)).text)).toMatch(/^svc_/);
  });

  test("a real second process (seedcast serve on the same database) shows what this one stashed, once", async () => {
    // The two apps above share this process; this replica shares nothing with it but the database. Its clock is real.
    world.clock.set(Date.now());
    const scratch = mkdtempSync(join(tmpdir(), "seedcast-reveal-replica-"));
    let child: ChildServer | undefined;
    try {
      child = await startChildServer([process.execPath, "src/main.ts", "serve"], {
        cwd: resolve(import.meta.dir, ".."),
        logFile: join(scratch, "replica.log"),
        timeoutMs: 60_000,
        // SQLite: the same data dir (file and instance.secret); PostgreSQL: the same database and secret, a scratch dir.
        env: { ...world.env(), ...(world.dialect === "postgres" ? { DATA_DIR: scratch } : {}), BASE_URL: BASE, LOG_LEVEL: "info" },
      });
      const a = await signedIn(world);
      const location = await mint(a, "other process");
      const cookie = [...a.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
      const there = await fetch(`${child.base}${location}`, { headers: { cookie }, redirect: "manual" });
      const text = await there.text();
      expect(there.status).toBe(200);
      const secret = secretOf(text) ?? "";
      expect(secret).toMatch(/^svc_/);
      const back = await a.get(location);
      expect(back.text).not.toContain(secret);
      expect(back.text).toContain("is not shown again");
      expect(child.log()).not.toContain(secret);
      expect(child.log()).not.toContain(location.slice(location.indexOf("=") + 1));
    } finally {
      child?.proc.kill();
      await child?.proc.exited;
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  test("signing out drops the session's pending reveals", async () => {
    await world.sql("DELETE FROM secret_reveals"); // what earlier tests left untaken
    const a = await signedIn(world);
    await mint(a, "left behind");
    expect((await world.sql("SELECT token_hash FROM secret_reveals")).length).toBe(1);
    await a.get("/dashboard");
    const out = await a.request("POST", "/logout", { _csrf: a.csrf() });
    expect(out.status).toBe(303);
    expect(await world.sql("SELECT token_hash FROM secret_reveals")).toEqual([]);
  });
});
