/**
 * `seedcast member set-password USERID`: the password comes from stdin or a prompt that does not echo, never from
 * argv. A real process on a real data dir; the stored hash is checked with argon2 afterwards.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CliRun, runCli } from "./helpers/cli";

const dataDir = mkdtempSync(join(tmpdir(), "seedcast-cli-pw-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const cli = (args: string[], stdin?: string): Promise<CliRun> => runCli(args, { env: { DATA_DIR: dataDir }, stdin });

async function passwordWorks(userId: string, password: string): Promise<boolean> {
  const db = new Database(join(dataDir, "seedcast.db"), { readonly: true });
  try {
    const row = db.query<{ h: string }, [string]>("SELECT password_hash AS h FROM users WHERE id = ?").get(userId);
    return row ? await Bun.password.verify(password, row.h) : false;
  } finally {
    db.close();
  }
}

describe("seedcast member set-password", () => {
  let userId = "";

  test("reads the new password from stdin; the old one stops working", async () => {
    const created = await cli(["account", "create", "--name", "Pw", "--email", "pw@cli.test", "--password", "first password", "--json"]);
    expect(created.code).toBe(0);
    userId = created.json.userId as string;
    expect(existsSync(join(dataDir, "seedcast.db"))).toBe(true);
    expect(await passwordWorks(userId, "first password")).toBe(true);
    const changed = await cli(["member", "set-password", userId, "--json"], "second password\n");
    expect(changed.code).toBe(0);
    expect(changed.json).toEqual({ userId, passwordChanged: true });
    expect(changed.out).not.toContain("second password");
    expect(await passwordWorks(userId, "second password")).toBe(true);
    expect(await passwordWorks(userId, "first password")).toBe(false);
  });

  test("never from argv: --password and a second argument are refused, nothing changes", async () => {
    const flag = await cli(["member", "set-password", userId, "--password", "third password", "--json"], "");
    expect(flag.code).toBe(2);
    const positional = await cli(["member", "set-password", userId, "third password", "--json"], "");
    expect(positional.code).toBe(2);
    expect(await passwordWorks(userId, "second password")).toBe(true);
  });

  test("too short, empty stdin, or an unknown user: refused with a reason", async () => {
    const short = await cli(["member", "set-password", userId, "--json"], "short\n");
    expect(short.code).toBe(1);
    expect(short.json.error).toBe("invalid_request");
    const empty = await cli(["member", "set-password", userId, "--json"], "");
    expect(empty.code).toBe(2);
    expect(String(empty.json.message ?? empty.err)).toContain("no password on stdin");
    const unknown = await cli(["member", "set-password", "00000000-0000-7000-8000-000000000000", "--json"], "a long enough one\n");
    expect(unknown.code).toBe(1);
    expect(unknown.json.error).toBe("not_found");
    expect(await passwordWorks(userId, "second password")).toBe(true);
  });

  test("at a terminal it prompts twice without echo (a real pty through util-linux `script`)", async () => {
    if (!existsSync("/usr/bin/script")) throw new Error("/usr/bin/script (util-linux) is needed for the pty test");
    const command = [process.execPath, "src/main.ts", "member", "set-password", userId].map((a) => `'${a}'`).join(" ");
    const proc = Bun.spawn(["/usr/bin/script", "-qfec", command, "/dev/null"], {
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: "silent" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    // Read the pty's output as it comes, and type each line only once its prompt is shown (echo is off by then).
    let shownSoFar = "";
    const reader = proc.stdout.getReader();
    const pump = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        shownSoFar += decoder.decode(value);
      }
    })();
    const until = async (text: string, occurrences: number) => {
      while (shownSoFar.split(text).length - 1 < occurrences) await new Promise((r) => setTimeout(r, 50));
    };
    await until("New password:", 1);
    proc.stdin.write("typed at a prompt\r");
    proc.stdin.flush();
    await until("Same password again:", 1);
    proc.stdin.write("typed at a prompt\r");
    proc.stdin.flush();
    const code = await proc.exited;
    await pump;
    const shown = shownSoFar;
    expect(code).toBe(0);
    expect(shown).toContain("New password:");
    expect(shown).toContain("Same password again:");
    expect(shown).not.toContain("typed at a prompt");
    expect(await passwordWorks(userId, "typed at a prompt")).toBe(true);
  }, 30_000);
});
