/**
 * A real `seedcast serve` in a child process, for the tests that need one (kill -9, the compiled binary under a
 * browser). Output goes to a file, not a pipe, so a child never blocks on an unread pipe and a failure can show what
 * the child printed. Readiness is polled over HTTP; a child that exits first fails at once with its exit code and log.
 */
import { type Subprocess, spawn } from "bun";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";

export interface ChildServer {
  proc: Subprocess<"ignore", number, number>;
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Everything the child printed so far (stdout and stderr). */
  log(): string;
}

/** A port free right now on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const port = probe.port ?? 0;
  await probe.stop(true);
  return port;
}

function readLog(file: string): string {
  return existsSync(file) ? readFileSync(file, "utf8") : "";
}

/**
 * Starts `command` (a `serve` invocation) with exactly `env` plus PATH, HOME, PORT and HOST: nothing else of the
 * test runner's environment leaks into the child. Resolves once GET /readyz answers 200.
 */
export async function startChildServer(
  command: string[],
  opts: { cwd: string; env: Record<string, string>; logFile: string; port?: number; timeoutMs?: number },
): Promise<ChildServer> {
  const port = opts.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  // One append-mode descriptor for both streams, so their lines interleave instead of overwriting each other.
  const out = openSync(opts.logFile, "a");
  let proc: Subprocess<"ignore", number, number>;
  try {
    proc = spawn(command, {
      cwd: opts.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...opts.env, PORT: String(port), HOST: "127.0.0.1" },
      stdin: "ignore",
      stdout: out,
      stderr: out,
    }) as Subprocess<"ignore", number, number>;
  } finally {
    closeSync(out);
  }
  const server: ChildServer = { proc, base, log: () => readLog(opts.logFile) };
  const until = performance.now() + (opts.timeoutMs ?? 20_000);
  while (performance.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${command.join(" ")} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${server.log()}`);
    }
    try {
      const res = await fetch(`${base}/readyz`, { keepalive: false });
      await res.body?.cancel();
      if (res.ok) return server;
    } catch {
      // not listening yet
    }
    await Bun.sleep(20); // polling a child's start-up: there is no clock to move here
  }
  proc.kill("SIGKILL");
  throw new Error(`${command.join(" ")} was not ready within ${opts.timeoutMs ?? 20_000} ms:\n${server.log()}`);
}
