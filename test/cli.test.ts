/** The CLI as a person runs it: a real process, a real data dir, --json answers. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliRun, runCli } from "./helpers/cli";

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = (...args: string[]): Promise<CliRun> => runCli(args, { env: { DATA_DIR: dataDir } });

describe("seedcast CLI", () => {
  test("account, member, keys and credits commands round-trip with --json", async () => {
    const created = await cli("account", "create", "--name", "Acme", "--email", "owner@acme.test", "--password", "hunter2hunter2", "--credits", "7", "--json");
    expect(created.code).toBe(0);
    const accountId = created.json.accountId as string;
    expect(accountId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.json.userId).toMatch(/^[0-9a-f-]{36}$/);
    expect(statSync(join(dataDir, "instance.secret")).mode & 0o777).toBe(0o600);

    const minted = await cli("keys", "mint", "--account", accountId, "--name", "ci", "--groups", "read,create", "--expires-days", "never", "--json");
    expect(minted.code).toBe(0);
    expect(minted.json.key as string).toMatch(/^svc_[0-9A-Za-z]{49}$/);

    const listed = await cli("keys", "list", "--account", accountId, "--json");
    const keys = listed.json.keys as { id: string; state: string; scopes: string[]; prefix: string }[];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ id: minted.json.id, state: "active", scopes: ["read", "create"], prefix: (minted.json.key as string).slice(0, 8) });
    expect(listed.out).not.toContain(minted.json.key as string);

    const rotated = await cli("keys", "rotate", minted.json.id as string, "--json");
    expect(rotated.code).toBe(0);
    expect(rotated.json.key).not.toBe(minted.json.key);
    expect(Date.parse(rotated.json.previousKeyGraceUntil as string)).toBeGreaterThan(Date.now() + 23 * 3600_000);

    const revoked = await cli("keys", "revoke", rotated.json.id as string, "--json");
    expect(revoked.json).toEqual({ id: rotated.json.id as string, revoked: true });

    const member = await cli("member", "add", "--account", accountId, "--email", "v@acme.test", "--password", "hunter2hunter2", "--role", "viewer", "--json");
    expect(member.code).toBe(0);
    const tooMuch = await cli("keys", "mint", "--account", accountId, "--name", "x", "--groups", "read,schedule", "--member", member.json.userId as string, "--json");
    expect(tooMuch.code).toBe(1);
    expect(tooMuch.json.error).toBe("forbidden");
    expect((await cli("member", "set-role", member.json.userId as string, "editor", "--json")).code).toBe(0);
    expect((await cli("keys", "mint", "--account", accountId, "--name", "x", "--groups", "read,schedule", "--member", member.json.userId as string, "--json")).code).toBe(0);

    const granted = await cli("credits", "grant", "--account", accountId, "--amount", "5", "--json");
    expect(granted.json).toEqual({ accountId, granted: 5, balance: 12 });
  });

  test("usage mistakes exit 2 with a message; unknown ids exit 1 with a code", async () => {
    const usage = await cli("keys", "mint", "--json");
    expect(usage.code).toBe(2);
    expect(usage.json.error).toBe("usage");
    const unknown = await cli("keys", "revoke", "00000000-0000-7000-8000-000000000000", "--json");
    expect(unknown.code).toBe(1);
    expect(unknown.json.error).toBe("not_found");
    const created = await cli("account", "create", "--name", "Conn", "--email", "conn@cli.test", "--password", "hunter2hunter2", "--json");
    const gone = await cli("connections", "remove", "00000000-0000-7000-8000-000000000000", "--account", created.json.accountId as string, "--json");
    expect(gone.code).toBe(1);
    expect(gone.json.error).toBe("not_found");
    const bad = await cli("frobnicate");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown command");
    expect((await cli("version", "--json")).json.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("invalid configuration fails fast naming the variable", async () => {
    const proc = Bun.spawn([process.execPath, "src/main.ts", "migrate"], {
      env: { ...process.env, DATA_DIR: dataDir, PORT: "not-a-port" },
      stderr: "pipe",
      stdout: "pipe",
    });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("PORT");
  });
});
