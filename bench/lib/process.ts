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

/** CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; 0 once it is gone. */
export async function cpuMs(pid: number): Promise<number> {
  try {
    const stat = await Bun.file(`/proc/${pid}/stat`).text();
    // Fields after the command (which may hold spaces): state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return 0;
  }
}

/** TCP sockets on 127.0.0.1 with `port` at either end, by state (ESTABLISHED, TIME_WAIT, …), from /proc/net/tcp. */
export async function tcpStatesOnPort(port: number): Promise<Record<string, number>> {
  const names: Record<string, string> = { "01": "ESTABLISHED", "06": "TIME_WAIT", "08": "CLOSE_WAIT", "0A": "LISTEN" };
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  const out: Record<string, number> = {};
  for (const line of (await Bun.file("/proc/net/tcp").text()).split("\n").slice(1)) {
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (!local || !remote || !state || (!local.endsWith(`:${hex}`) && !remote.endsWith(`:${hex}`))) continue;
    const name = names[state] ?? `state ${state}`;
    out[name] = (out[name] ?? 0) + 1;
  }
  return out;
}
