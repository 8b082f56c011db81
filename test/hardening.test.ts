/**
 * Issue 14, "Hardening": one describe per finding of the outside probe, each reproducing the attack it names.
 * Every test here failed before its fix (checked by reverting the fix once).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type World, createWorld } from "./helpers/world";

const scratch = mkdtempSync(join(tmpdir(), "seedcast-hardening-"));
let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(() => {
  world.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs the CLI (`bun src/main.ts ...`) under `umask 022`, the common default. */
async function cli(dataDir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn(["sh", "-c", 'umask 022 && exec "$0" src/main.ts "$@"', process.execPath, ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

describe("finding 2: seedcast backup FILE is readable by its owner only", () => {
  test("under umask 022 the archive holding instance.secret is written 0600", async () => {
    const dataDir = join(scratch, "backup-mode");
    const created = await cli(dataDir, "account", "create", "--name", "M", "--email", "m@mode.test", "--password", "password123");
    expect(created.code).toBe(0);
    const archive = join(scratch, "mode.tar.gz");
    const backup = await cli(dataDir, "backup", archive);
    expect(backup.code).toBe(0);
    expect((statSync(archive).mode & 0o777).toString(8)).toBe("600");
    // The scheduled job writes through the same function: its archives too.
    const { rotateBackups } = await import("../src/modules/backup/service");
    const previous = process.umask(0o022);
    try {
      const dir = join(scratch, "rotated");
      const file = await rotateBackups(world.deps, dir, 3);
      expect((statSync(file).mode & 0o777).toString(8)).toBe("600");
      expect((statSync(dir).mode & 0o077).toString(8)).toBe("0");
    } finally {
      process.umask(previous);
    }
  });
});
