/**
 * Seed search at scale: 100,000 seeds in one account (the worst case: every match is the caller's), searched through
 * the service (listSeeds) and through the whole HTTP pipeline (app.handle). Prints p50/p99 per query kind.
 * Goal: search p99 < 5 ms. Run: `bun bench/seed-search.ts [count] [--json]` (ITERATIONS=n per query kind, default 400).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../src/app";
import { bootstrap } from "../src/bootstrap";
import { loadConfig } from "../src/config";
import { isSqliteStore } from "../src/db/store";
import { silentLogger } from "../src/lib/log";
import { newId } from "../src/lib/ids";
import { createAccount } from "../src/modules/accounts/service";
import { mintKey } from "../src/modules/auth/keys-service";
import { SCOPES } from "../src/auth/scopes";
import { listSeeds } from "../src/modules/seeds/service";
import { ftsMatchExpression } from "../src/modules/seeds/search-query";
import { rand, searchKinds, sentence } from "./lib/seed-corpus";

const json = process.argv.includes("--json");
const COUNT = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 100_000);
const ITERATIONS = Number(process.env.ITERATIONS ?? 400);

/** Human progress lines: on stderr with --json, so stdout carries only the result line. */
function log(line: string): void {
  if (json) console.error(line);
  else console.log(line);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-bench-"));
try {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent", RATE_LIMIT_PER_MINUTE: "100000000" });
  const deps = await bootstrap(config, { log: silentLogger });
  const store = deps.store;
  if (!isSqliteStore(store)) throw new Error("this bench runs on SQLite (bench/seed-search-pg.ts compares with PostgreSQL)");
  const app = createApp(deps);
  const { accountId, userId } = await createAccount(deps, {
    name: "Bench",
    email: "bench@example.test",
    password: "correct horse battery",
    credits: 0,
  });
  const { key } = await mintKey(deps, { accountId, userId, name: "bench", groups: SCOPES, expiresDays: null });

  const categories = ["announcement", "tip", "question", "story", "event", "behind the scenes", null];
  const started = performance.now();
  const now = Date.now();
  // Raw bulk SQL on the store's writer connection (the reader is query_only); ANALYZE bumps the schema version, so the
  // reader picks up the statistics at its next statement.
  await store.withWriter((writer) => {
    const insert = writer.prepare(
      "INSERT INTO seeds (id, account_id, title, content, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    writer.transaction(() => {
      for (let i = 0; i < COUNT; i++) {
        const paragraphs = 1 + Math.floor(rand() * 3);
        const content = Array.from({ length: paragraphs }, () => sentence(12 + Math.floor(rand() * 25))).join("\n\n");
        const category = categories[Math.floor(rand() * categories.length)] ?? null;
        insert.run(newId(), accountId, sentence(3 + Math.floor(rand() * 6)), content, category, now - (COUNT - i) * 1000, now);
      }
    })();
    writer.exec("INSERT INTO seeds_fts(seeds_fts) VALUES ('optimize')");
    writer.exec("ANALYZE");
  });
  log(`inserted ${COUNT} seeds (with FTS triggers) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const kinds = searchKinds();

  const matchCount = store.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM seeds_fts WHERE seeds_fts MATCH ?");
  for (const [kind, queries] of Object.entries(kinds)) {
    const counts = queries.filter(Boolean).map((q) => `${q}=${matchCount.get(ftsMatchExpression(q) ?? "")?.n ?? 0}`);
    if (counts.length) log(`matches, ${kind}: ${counts.join(", ")}`);
  }

  const results: [string, string, number, number, number][] = [];
  for (const [kind, queries] of Object.entries(kinds)) {
    const service: number[] = [];
    const http: number[] = [];
    let hits = 0;
    for (let i = 0; i < ITERATIONS; i++) {
      const q = queries[i % queries.length] as string;
      let t0 = performance.now();
      const page = await listSeeds(deps, accountId, { search: q || null, limit: 50 });
      service.push(performance.now() - t0);
      hits += page.seeds.length;
      t0 = performance.now();
      const res = await app.handle(
        new Request(`http://localhost/api/v1/seeds?limit=50${q ? `&search=${encodeURIComponent(q)}` : ""}`, {
          headers: { authorization: `Bearer ${key}` },
        }),
      );
      await res.arrayBuffer();
      http.push(performance.now() - t0);
      if (res.status !== 200) throw new Error(`HTTP ${res.status} for ${q}`);
    }
    service.sort((x, y) => x - y);
    http.sort((x, y) => x - y);
    results.push([kind, "service", percentile(service, 50), percentile(service, 99), hits / ITERATIONS]);
    results.push([kind, "http", percentile(http, 50), percentile(http, 99), hits / ITERATIONS]);
  }
  const all = results.filter((r) => r[1] === "service" && !r[0].startsWith("newest"));
  const worstOf = (rows: typeof all) => Math.max(...rows.map((r) => r[3]));
  const worst = worstOf(all);
  const worstContent = worstOf(all.filter((r) => !r[0].startsWith("stopword")));
  if (json) {
    // One line for bench/run: per kind the service p99 (the goal) and the HTTP p99 with the service call as ceiling.
    const figures: { label: string; value: number; unit: string; goal: string; ok: boolean | null; ceiling?: number }[] = [];
    const round = (n: number) => Number(n.toFixed(3));
    for (const [kind, path, p50, p99] of results) {
      if (path !== "service") continue;
      if (kind === "common word") figures.push({ label: `search p50, ${kind}, ${COUNT} seeds`, value: round(p50), unit: "ms", goal: "", ok: null });
      figures.push({ label: `search p99, ${kind}, ${COUNT} seeds`, value: round(p99), unit: "ms", goal: "< 5", ok: p99 < 5 });
    }
    const service = results.find((r) => r[0] === "common word" && r[1] === "service")?.[3] ?? 0;
    const http = results.find((r) => r[0] === "common word" && r[1] === "http")?.[3] ?? 0;
    figures.push({ label: "search p99, common word, via app.handle", value: round(http), unit: "ms", goal: "", ok: null, ceiling: round(service) });
    console.log(JSON.stringify({ bench: "seed-search", figures }));
  } else {
    console.log(`\nseed search over ${COUNT} seeds, ${ITERATIONS} runs per kind, limit 50 (ms):`);
    console.log("kind                         path      p50     p99    rows/page");
    for (const [kind, path, p50, p99, rows] of results) {
      console.log(`${kind.padEnd(28)} ${path.padEnd(8)} ${p50.toFixed(3).padStart(7)} ${p99.toFixed(3).padStart(7)}  ${rows.toFixed(1)}`);
    }
    console.log(`\nworst search p99 (service), every kind: ${worst.toFixed(3)} ms — goal < 5 ms: ${worst < 5 ? "met" : "NOT met"}`);
    console.log(`worst search p99 (service), without stopwords: ${worstContent.toFixed(3)} ms — goal < 5 ms: ${worstContent < 5 ? "met" : "NOT met"}`);
  }
  if (process.env.KEEP_DB) { await store.close(); log(`kept ${dataDir}`); process.exit(0); }
  await store.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
