/**
 * A fresh, isolated Seedcast for one test file: temp data dir, real SQLite file, migrated, a manual clock, and the
 * app called in-process through `app.handle` (no port, no sleep).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { bootstrap } from "../../src/bootstrap";
import { loadConfig } from "../../src/config";
import type { Deps } from "../../src/deps";
import type { Generator } from "../../src/generation/generator";
import { ManualClock } from "../../src/lib/clock";
import { type Logger, silentLogger } from "../../src/lib/log";
import { createAccount, addMember } from "../../src/modules/accounts/service";
import { mintKey } from "../../src/modules/auth/keys-service";
import type { Scope } from "../../src/auth/scopes";
import { SCOPES } from "../../src/auth/scopes";

export const BASE = "http://localhost";

export interface CallOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is (a string is not JSON-encoded again). */
  rawBody?: BodyInit;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint: tests read arbitrary JSON shapes.
  json: any;
}

export interface TestAccount {
  accountId: string;
  userId: string;
  /** A key holding all four groups, minted by the owner. */
  key: string;
  keyId: string;
  /** Mints another key for this account's owner (or `userId`). */
  mint(groups: readonly Scope[], opts?: { userId?: string; expiresDays?: number | null; name?: string }): { id: string; key: string };
  addMember(role: "owner" | "editor" | "viewer"): Promise<string>;
}

export interface World {
  deps: Deps;
  app: ReturnType<typeof createApp>;
  clock: ManualClock;
  dataDir: string;
  call(method: string, path: string, opts?: CallOptions): Promise<CallResult>;
  createAccount(opts?: { credits?: number; name?: string }): Promise<TestAccount>;
  close(): void;
}

let counter = 0;

/** Builds a world. `env` overrides configuration (DATA_DIR is always a fresh temp dir). */
export async function createWorld(
  opts: { env?: Record<string, string>; generator?: Generator; clock?: ManualClock; log?: Logger } = {},
): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), "seedcast-test-"));
  // HOST: a test world listens nowhere, like a server bound to loopback (which leaves /metrics open without a token).
  const config = loadConfig({ BASE_URL: BASE, LOG_LEVEL: "silent", HOST: "127.0.0.1", ...opts.env, DATA_DIR: dataDir });
  const clock = opts.clock ?? new ManualClock();
  const deps = bootstrap(config, { clock, log: opts.log ?? silentLogger, ...(opts.generator ? { generator: opts.generator } : {}) });
  const app = createApp(deps);

  const call = async (method: string, path: string, o: CallOptions = {}): Promise<CallResult> => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key) headers.authorization = `Bearer ${o.key}`;
    let body: BodyInit | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await app.handle(new Request(`${BASE}${path}`, { method, headers, body }));
    const text = await response.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.status, headers: response.headers, text, json };
  };

  const world: World = {
    deps,
    app,
    clock,
    dataDir,
    call,
    async createAccount(o = {}) {
      counter += 1;
      const created = await createAccount(deps, {
        name: o.name ?? `Account ${counter}`,
        email: `owner${counter}-${crypto.randomUUID().slice(0, 8)}@example.test`,
        password: "correct horse battery",
        credits: o.credits ?? 100,
      });
      const mint: TestAccount["mint"] = (groups, m = {}) =>
        mintKey(deps, {
          accountId: created.accountId,
          userId: m.userId ?? created.userId,
          name: m.name ?? "test key",
          groups,
          expiresDays: m.expiresDays === undefined ? 90 : m.expiresDays,
        });
      const full = mint(SCOPES);
      return {
        ...created,
        key: full.key,
        keyId: full.id,
        mint,
        addMember: async (role) =>
          (
            await addMember(deps, {
              accountId: created.accountId,
              email: `member${counter}-${crypto.randomUUID().slice(0, 8)}@example.test`,
              password: "correct horse battery",
              role,
            })
          ).userId,
      };
    },
    close() {
      deps.sqlite.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}
