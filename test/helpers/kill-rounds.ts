/**
 * The kill loop of the crash tests (kill -9 during delivery). Each round starts the server, waits until the network
 * has received something new (dispatch is under way: a kill before the first send proves nothing), lets it run a
 * random 0–`maxDelayMs` more, and kills it with SIGKILL. Rounds stop early when everything is out (nothing is left to
 * crash into).
 *
 * Waiting for progress instead of sleeping a fixed time, and spreading the due times over what the rounds will take
 * on this machine (dueSpread), keep the test meaningful on a loaded machine: with fixed sleeps and a fixed spread, a
 * slow start-up meant most kills landed before dispatch or after everything was out, and the floor on kills during
 * dispatch failed although nothing was wrong.
 */
import type { Database } from "bun:sqlite";
import { expect } from "bun:test";
import { join, resolve } from "node:path";
import { bootstrap } from "../../src/bootstrap";
import type { Config } from "../../src/config";
import { isSqliteStore } from "../../src/db/store";
import { silentLogger } from "../../src/lib/log";
import { type ChildServer, startChildServer } from "./child-server";

const ROOT = resolve(import.meta.dir, "../..");

/** The dispatcher settings of every crash test's server: a short lease and poll, 8 deliveries at once, its log kept. */
export function crashDispatchEnv(leaseMs: number): Record<string, string> {
  return { LOG_LEVEL: "info", DISPATCH_LEASE_MS: String(leaseMs), DISPATCH_CONCURRENCY: "8", DISPATCH_POLL_MS: "100" };
}

let starts = 0;
/** Starts `seedcast serve` from source on `dataDir`'s database with `env` (its log in `dataDir`, one file a start). */
export function startServe(dataDir: string, env: Record<string, string>, port?: number): Promise<ChildServer> {
  const logFile = join(dataDir, `server-${++starts}.log`);
  return startChildServer([process.execPath, "src/main.ts", "serve"], { cwd: ROOT, logFile, timeoutMs: 20_000, env, ...(port ? { port } : {}) });
}

/** How many times each text was received. */
export function countOf(texts: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of texts) out.set(t, (out.get(t) ?? 0) + 1);
  return out;
}

/**
 * After the kills: starts the server once more and lets it deliver until no target is scheduled or publishing (or
 * `timeoutMs`), stops it (it must exit 0), and answers the SQLite database opened beside it for the test's reads.
 */
export async function deliverTheRest(start: () => Promise<ChildServer>, config: Config, timeoutMs: number): Promise<{ sqlite: Database; close(): Promise<void> }> {
  const final = await start();
  const watch = await bootstrap(config, { log: silentLogger });
  if (!isSqliteStore(watch.store)) throw new Error("SQLite only");
  const sqlite = watch.store.sqlite;
  const pending = sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM scheduled_post_targets WHERE status IN ('scheduled', 'publishing')");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && pending.get()!.n > 0) await Bun.sleep(200);
  final.proc.kill("SIGTERM");
  expect(await final.proc.exited, final.log()).toBe(0);
  return { sqlite, close: () => watch.store.close() };
}

export interface KillRounds {
  rounds: number;
  /** Starts the server (the test's own startChildServer call). */
  start: () => Promise<ChildServer>;
  /** What the network(s) received so far (messages, records, parts), read from the peers, never from our database. */
  progress: () => number | Promise<number>;
  /** What they receive when every post is out. */
  total: number;
  /** Longest extra run after the first new send of a round (default 700 ms). */
  maxDelayMs?: number;
  /** Longest wait for a first new send before killing anyway (default 10 s: due times may still be ahead). */
  waitMs?: number;
}

/** Runs the rounds; answers how many kills there were and how many landed during dispatch (some but not all out). */
export async function killDuringDispatch(opts: KillRounds): Promise<{ kills: number; killsDuringDispatch: number }> {
  const { rounds, start, progress, total, maxDelayMs = 700, waitMs = 10_000 } = opts;
  let kills = 0;
  let killsDuringDispatch = 0;
  for (let i = 0; i < rounds && (await progress()) < total; i++) {
    const server = await start();
    const before = await progress();
    const deadline = Date.now() + waitMs;
    while ((await progress()) === before && Date.now() < deadline) await Bun.sleep(10);
    await Bun.sleep(Math.floor(Math.random() * maxDelayMs));
    const at = await progress();
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    kills++;
    if (at > 0 && at < total) killsDuringDispatch++;
  }
  return { kills, killsDuringDispatch };
}

/**
 * How long to spread the posts' due times so that `rounds` rounds still find posts to deliver: one start of the
 * server is timed (and killed; run it before the posts exist), and each round is reckoned at twice that (a restart
 * after a kill also recovers leases, and a loaded machine's start-ups vary) plus the longest extra run. Never less
 * than `atLeastMs` (the spread a quiet machine needs), never more than 90 s (the rounds take about half of it; the
 * tests' final waits of a minute cover the rest).
 */
export async function dueSpread(opts: { rounds: number; start: () => Promise<ChildServer>; atLeastMs: number; maxDelayMs?: number }): Promise<number> {
  const began = Date.now();
  const server = await opts.start();
  const startMs = Date.now() - began;
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  return Math.min(90_000, Math.max(opts.atLeastMs, opts.rounds * (2 * startMs + (opts.maxDelayMs ?? 700))));
}
