/**
 * The instance secret and DATABASE_URL as a person meets them: `seedcast secret new`, INSTANCE_SECRET, the refusals at
 * start (each names the variable and never echoes a secret), and backups of an instance whose secret is in the
 * environment. Every check runs the real CLI or server in a child process (`bun src/main.ts ...`).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const scratch = mkdtempSync(join(tmpdir(), "seedcast-secret-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let dirs = 0;
/** A fresh, not yet existing data dir under the scratch folder. */
function newDataDir(): string {
  dirs += 1;
  return join(scratch, `data-${dirs}`);
}

interface Run {
  code: number;
  out: string;
  err: string;
  json: Record<string, unknown>;
}

/** Runs the CLI with the runner's environment minus the variables under test, plus `env`. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !["DATABASE_URL", "INSTANCE_SECRET", "DATA_DIR", "MEDIA_STORE", "BACKUP_CRON"].includes(k)) base[k] = v;
  }
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    env: { ...base, LOG_LEVEL: "silent", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(out);
  } catch {
    json = {};
  }
  return { code, out, err, json };
}

describe("seedcast secret new", () => {
  test("prints one line of base64 that decodes to 32 random bytes, a different one each call", async () => {
    const a = await cli({}, "secret", "new");
    const b = await cli({}, "secret", "new");
    expect(a.code).toBe(0);
    expect(a.err).toBe("");
    expect(a.out).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    expect(Buffer.from(a.out.trim(), "base64")).toHaveLength(32);
    expect(b.out).not.toBe(a.out);

    const j = await cli({}, "secret", "new", "--json");
    expect(j.code).toBe(0);
    expect(Object.keys(j.json)).toEqual(["instanceSecret"]);
    expect(Buffer.from(j.json.instanceSecret as string, "base64")).toHaveLength(32);
    expect(j.json.instanceSecret).not.toBe(a.out.trim());
  });

  test("needs no valid configuration (it is how a missing INSTANCE_SECRET is made), and opens no data dir", async () => {
    const dataDir = newDataDir();
    const run = await cli({ DATA_DIR: dataDir, DATABASE_URL: "postgres://app:pw@db.internal/seedcast", PORT: "not-a-port" }, "secret", "new");
    expect(run.code).toBe(0);
    expect(Buffer.from(run.out.trim(), "base64")).toHaveLength(32);
    expect(await Bun.file(dataDir).exists()).toBe(false);
  });

  test("anything but `secret new` is a usage error (exit 2) naming the command", async () => {
    for (const args of [["secret"], ["secret", "old"], ["secret", "new", "extra"], ["secret", "new", "--bytes", "64"]]) {
      const run = await cli({}, ...args, "--json");
      expect({ args, code: run.code, error: run.json.error }).toEqual({ args, code: 2, error: "usage" });
    }
    const help = await cli({}, "help");
    expect(help.out).toContain("secret new");
  });
});
