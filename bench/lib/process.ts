/** What the benches that drive child processes share: a free port, a command's output, waiting for readiness. */

/** A port nothing listens on right now (the OS picks it). */
export function freePort(): number {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port ?? 0;
  s.stop(true);
  return port;
}

/** Runs `cmd` with this process's environment plus `env`; its stdout, or throws with its stderr. */
export async function run(cmd: string[], env: Record<string, string>, cwd = "/"): Promise<string> {
  const p = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe", cwd });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed: ${await new Response(p.stderr).text()}`);
  return out;
}

/** Polls `url` until it answers 2xx, or throws after `deadlineMs`. */
export async function waitReady(url: string, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(2);
  }
  throw new Error(`${url} never became ready`);
}
