/**
 * The PostgreSQL driver pick (issue 15): the same drizzle queries through `drizzle-orm/bun-sql` (Bun.sql) and
 * `drizzle-orm/postgres-js` (postgres.js), against one real PostgreSQL 15 started here (test/helpers/postgres.ts), in
 * the same run. Three workloads, each driven by CONCURRENCY callers for DURATION_MS per driver:
 *  - select: a primary-key select of an account;
 *  - insert: one credit ledger row;
 *  - transaction: reserveCredits of src/modules/credits/service.ts (one transaction: a conditional
 *    `UPDATE accounts … WHERE balance >= amount RETURNING` whose returned row is checked, then the hold and its
 *    ledger row).
 * The tables are the real ones (src/db/pg/schema, applied by src/db/pg/migrate.ts).
 * Prints req/s and p99 per driver and workload, and postgres.js ÷ Bun.sql (req/s; > 1 means postgres.js is faster).
 * Before timing, it also checks what each driver hands back for the types our PostgreSQL schema uses (jsonb,
 * bigint in number mode, boolean), and a timestamp column (none in our schema; the issue names bun-sql's open bugs).
 * Run: `bun bench/pg-driver.ts [--json]` (DURATION_MS per driver and workload, default 2000; CONCURRENCY, default 32).
 */
import { SQL } from "bun";
import { and, eq, sql } from "drizzle-orm";
import { drizzle as drizzleBunSql } from "drizzle-orm/bun-sql";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { bigint, boolean, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { drizzle as drizzlePostgresJs } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { migratePostgres } from "../src/db/pg/migrate";
import { accounts, creditHolds, creditLedger } from "../src/db/pg/schema";
import { newId } from "../src/lib/ids";
import { startPostgres } from "../test/helpers/postgres";

const json = process.argv.includes("--json");
const DURATION_MS = Number(process.env.DURATION_MS ?? 2000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
/** Both pools get the same size: the comparison is of the drivers, not of their defaults. */
const POOL = 10;
const ACCOUNTS = 1000;

/** Only for the type check: the kinds of column the issue names (timestamps are not in our schema). */
const probe = pgTable("bench_probe", {
  id: text("id").primaryKey(),
  tags: jsonb("tags").$type<string[]>().notNull(),
  doc: jsonb("doc").$type<{ a: number; b: string[] }>().notNull(),
  at: bigint("at", { mode: "number" }).notNull(),
  on: boolean("on").notNull(),
  stamp: timestamp("stamp", { mode: "date", withTimezone: true }).notNull(),
  local: timestamp("local", { mode: "date" }).notNull(),
  text: timestamp("text", { mode: "string" }).notNull(),
});

type Db = PgDatabase<PgQueryResultHKT, Record<string, never>>;

const pg = await startPostgres();
const url = await pg.createDatabase("pg_driver_bench");
// The real schema (migrations-pg), so the writes below hit the same constraints, indexes and triggers as in service.
const migrator = new SQL({ url, max: 1 });
await migratePostgres(migrator);
await migrator.close();
await pg.psql(`
  CREATE TABLE bench_probe (id text PRIMARY KEY, tags jsonb NOT NULL, doc jsonb NOT NULL, at bigint NOT NULL, "on" boolean NOT NULL,
    stamp timestamptz NOT NULL, local timestamp NOT NULL, text timestamp NOT NULL);
  INSERT INTO accounts (id, name, credits_balance, created_at)
    SELECT 'acct_' || i, 'Account ' || i, 1000000000, 1795000000000 FROM generate_series(1, ${ACCOUNTS}) i;`, "pg_driver_bench");

const bunClient = new SQL({ url, max: POOL });
const postgresClient = postgres(url, { max: POOL, onnotice: () => {} });
const drivers: { name: string; db: Db }[] = [
  { name: "bun-sql", db: drizzleBunSql({ client: bunClient }) as unknown as Db },
  { name: "postgres-js", db: drizzlePostgresJs(postgresClient) as unknown as Db },
];

/** What a driver hands back for each type, compared with what was written. */
async function checkTypes(name: string, db: Db): Promise<string[]> {
  const wrote = {
    id: `probe_${name}`,
    tags: ["a", "b \"quoted\"", "émoji 🎉", "[not, an, array]"],
    doc: { a: 1, b: ["x"] },
    at: 1795000000123,
    on: true,
    stamp: new Date("2026-11-24T10:00:00.123Z"),
    local: new Date("2026-11-24T10:00:00.123Z"),
    text: "2026-11-24 10:00:00.123",
  };
  const problems: string[] = [];
  try {
    await db.insert(probe).values(wrote);
    const [read] = await db.select().from(probe).where(eq(probe.id, wrote.id));
    const stored = await pg.psql(`SELECT jsonb_typeof(tags) || ' ' || jsonb_typeof(doc) FROM bench_probe WHERE id = '${wrote.id}'`, "pg_driver_bench");
    if (stored.trim() !== "array object") problems.push(`jsonb stored as ${stored.trim()} (a JSON string, not the value)`);
    if (!read) problems.push("row not read back");
    else {
      if (JSON.stringify(read.tags) !== JSON.stringify(wrote.tags)) problems.push(`jsonb array read as ${JSON.stringify(read.tags)}`);
      if (JSON.stringify(read.doc) !== JSON.stringify(wrote.doc)) problems.push(`jsonb object read as ${JSON.stringify(read.doc)}`);
      if (read.at !== wrote.at) problems.push(`bigint read as ${typeof read.at} ${String(read.at)}`);
      if (read.on !== true) problems.push(`boolean read as ${typeof read.on} ${String(read.on)}`);
      if (!(read.stamp instanceof Date) || read.stamp.getTime() !== wrote.stamp.getTime())
        problems.push(`timestamptz read as ${Object.prototype.toString.call(read.stamp)} ${String(read.stamp)}`);
      if (!(read.local instanceof Date) || read.local.getTime() !== wrote.local.getTime())
        problems.push(`timestamp (date mode) read as ${Object.prototype.toString.call(read.local)} ${String(read.local)}`);
      if (read.text !== wrote.text) problems.push(`timestamp (string mode) read as ${Object.prototype.toString.call(read.text)} ${String(read.text)}`);
    }
  } catch (error) {
    problems.push(`failed: ${(error as Error).message}`);
  }
  return problems;
}

const pick = () => `acct_${1 + Math.floor(Math.random() * ACCOUNTS)}`;
const WORKLOADS: { name: string; run: (db: Db) => Promise<unknown> }[] = [
  { name: "select", run: (db) => db.select().from(accounts).where(eq(accounts.id, pick())) },
  {
    name: "insert",
    run: (db) =>
      db.insert(creditLedger).values({ id: newId(), accountId: pick(), kind: "grant", amount: 1, note: "bench", balanceAfter: 1, createdAt: Date.now() }),
  },
  {
    // reserveCredits of src/modules/credits/service.ts, written for an async driver.
    name: "transaction",
    run: (db) =>
      db.transaction(async (tx) => {
        const accountId = pick();
        const amount = 1;
        const updated = await tx
          .update(accounts)
          .set({ creditsBalance: sql`${accounts.creditsBalance} - ${amount}`, creditsReserved: sql`${accounts.creditsReserved} + ${amount}` })
          .where(and(eq(accounts.id, accountId), sql`${accounts.creditsBalance} >= ${amount}`))
          .returning({ balance: accounts.creditsBalance });
        const row = updated[0];
        if (!row) throw new Error("insufficient credits");
        const holdId = newId();
        const createdAt = Date.now();
        await tx.insert(creditHolds).values({ id: holdId, accountId, amount, state: "open", purpose: "bench", createdAt });
        await tx.insert(creditLedger).values({ id: newId(), accountId, kind: "reserve", amount, holdId, note: "bench", balanceAfter: row.balance, createdAt });
      }),
  },
];

interface Figures {
  rps: number;
  p99: number;
  p50: number;
  count: number;
}

async function measure(db: Db, work: (db: Db) => Promise<unknown>): Promise<Figures> {
  // A short warm-up fills the pool and the prepared-statement caches.
  await Promise.all(Array.from({ length: CONCURRENCY }, () => work(db)));
  const latencies: number[] = [];
  const start = performance.now();
  const end = start + DURATION_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await work(db);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { rps: latencies.length / elapsed, p99: at(0.99), p50: at(0.5), count: latencies.length };
}

const typeChecks: Record<string, string[]> = {};
const results: Record<string, Record<string, Figures>> = {};
try {
  for (const d of drivers) typeChecks[d.name] = await checkTypes(d.name, d.db);
  for (const w of WORKLOADS) {
    results[w.name] = {};
    // Alternating order per workload, so neither driver always runs on a warmer server.
    const order = WORKLOADS.indexOf(w) % 2 === 0 ? drivers : [...drivers].reverse();
    for (const d of order) results[w.name]![d.name] = await measure(d.db, w.run);
  }
} finally {
  await bunClient.close();
  await postgresClient.end();
  await pg.stop();
}

const figures: { label: string; value: number | string; unit: string; goal: string; ok: boolean | null; ceiling?: number }[] = [];
for (const w of WORKLOADS) {
  const bun = results[w.name]!["bun-sql"]!;
  const pjs = results[w.name]!["postgres-js"]!;
  figures.push(
    { label: `${w.name} req/s bun-sql`, value: Math.round(bun.rps), unit: "req/s", goal: "report", ok: null },
    { label: `${w.name} req/s postgres-js`, value: Math.round(pjs.rps), unit: "req/s", goal: "report", ok: null, ceiling: Math.round(bun.rps) },
    { label: `${w.name} p99 bun-sql`, value: Number(bun.p99.toFixed(2)), unit: "ms", goal: "report", ok: null },
    { label: `${w.name} p99 postgres-js`, value: Number(pjs.p99.toFixed(2)), unit: "ms", goal: "report", ok: null, ceiling: Number(bun.p99.toFixed(2)) },
  );
}
for (const d of drivers) {
  const problems = typeChecks[d.name] ?? [];
  figures.push({ label: `types ${d.name}`, value: problems.length ? problems.join("; ") : "all as declared", unit: "", goal: "all as declared", ok: problems.length === 0 });
}

if (json) {
  console.log(JSON.stringify({ bench: "pg-driver", figures }));
} else {
  console.log(`PostgreSQL drivers through drizzle: ${CONCURRENCY} concurrent callers, pool ${POOL}, ${DURATION_MS} ms per driver and workload`);
  console.log("workload     driver        req/s     p50 ms   p99 ms");
  for (const w of WORKLOADS) {
    for (const d of drivers) {
      const f = results[w.name]![d.name]!;
      console.log(`${w.name.padEnd(12)} ${d.name.padEnd(12)} ${Math.round(f.rps).toString().padStart(7)}   ${f.p50.toFixed(2).padStart(6)}   ${f.p99.toFixed(2).padStart(6)}`);
    }
    const bun = results[w.name]!["bun-sql"]!;
    const pjs = results[w.name]!["postgres-js"]!;
    console.log(`${"".padEnd(12)} postgres-js ÷ bun-sql: req/s ×${(pjs.rps / bun.rps).toFixed(2)}, p99 ×${(pjs.p99 / bun.p99).toFixed(2)}`);
  }
  for (const d of drivers) {
    const problems = typeChecks[d.name] ?? [];
    console.log(`types ${d.name}: ${problems.length ? problems.join("; ") : "jsonb, bigint (number), boolean and timestamps all as declared"}`);
  }
}
