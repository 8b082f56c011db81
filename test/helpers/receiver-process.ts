/**
 * The webhook receiver (test/peers/webhook-receiver.ts) in its own process, so it keeps counting while servers under
 * test are killed (crash-safety, scale-out) and as the soak and the leak probe run it:
 * answers once it prints its address, and keeps its stdout drained so the pipe never fills.
 */
import { type Subprocess, spawn } from "bun";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

export async function spawnReceiver(options: { port: number; secret: string; log: string }): Promise<{ process: Subprocess<"ignore", "pipe", "inherit">; url: string }> {
  const receiver = spawn([process.execPath, "test/peers/webhook-receiver.ts", "--port", String(options.port), "--secret", options.secret, "--log", options.log], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = receiver.stdout.getReader();
  let head = "";
  while (!head.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("receiver exited before listening");
    head += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  void (async () => {
    for await (const _ of receiver.stdout) {
      // keep the pipe flowing
    }
  })().catch(() => {});
  return { process: receiver, url: head.trim().replace(/^listening /, "") };
}
