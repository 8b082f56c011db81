/**
 * Reads a secret (a password) for the CLI without it ever being an argument (argv is visible to every user of the
 * machine in `ps` and lands in shell history): at a terminal, a prompt that does not echo, asked twice; otherwise the
 * first line of stdin (`printf '%s\n' "$PW" | seedcast member set-password USERID`).
 */
import { UsageError } from "./args";

/** The whole of stdin, as text. */
async function readStdin(): Promise<string> {
  return await new Response(Bun.stdin.stream()).text();
}

/** One line typed at the terminal with echo off (raw mode); Ctrl-C or Ctrl-D abort. */
function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding("utf8");
    let value = "";
    const done = (error: Error | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener("data", onData);
      process.stderr.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done(null);
        if (ch === "\u0003" || ch === "\u0004") return done(new UsageError("cancelled; the password was not changed"));
        if (ch === "\u007f" || ch === "\b") value = [...value].slice(0, -1).join("");
        else if (ch >= " ") value += ch;
      }
    };
    stdin.on("data", onData);
  });
}

/** The secret, from a hidden prompt (asked twice, must match) or from stdin's first line. */
export async function readSecretInput(prompt: string, confirmPrompt: string): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden(prompt);
    const second = await promptHidden(confirmPrompt);
    if (first !== second) throw new UsageError("the two passwords differ; nothing was changed");
    return first;
  }
  const text = await readStdin();
  const line = text.split(/\r?\n/)[0] ?? "";
  if (line === "") throw new UsageError("no password on stdin: pipe it in, or run this at a terminal to be asked for it");
  return line;
}
