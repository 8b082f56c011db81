/**
 * The CLI as a person runs it: `bun src/main.ts ARGS` in a child process, from the repository root, with the test
 * runner's environment minus the variables that choose the instance (so a suite run with DATABASE_URL or
 * INSTANCE_SECRET exported does not leak them into a test that did not ask for them), plus `env`.
 */
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
/** Variables a test sets itself when it means them. */
const INSTANCE_VARIABLES = ["DATABASE_URL", "INSTANCE_SECRET", "DATA_DIR", "MEDIA_STORE", "BACKUP_CRON"];

export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** stdout parsed as JSON, or {} when it is not JSON. */
  json: Record<string, unknown>;
}

export async function runCli(args: string[], { env = {}, stdin }: { env?: Record<string, string>; stdin?: string } = {}): Promise<CliRun> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !INSTANCE_VARIABLES.includes(k)) base[k] = v;
  const proc = Bun.spawn([process.execPath, "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...base, LOG_LEVEL: "silent", ...env },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
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
