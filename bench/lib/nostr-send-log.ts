/**
 * Preloaded into the bench's `seedcast serve` (`bun --preload bench/lib/nostr-send-log.ts src/main.ts serve`), never
 * part of Seedcast: dates every Nostr `EVENT` frame the moment the server hands it to its WebSocket, so the bench can
 * split a note's lateness into Seedcast's part (due → sent) and the relay's (sent → stored and broadcast). Writes one
 * JSON line per note, `{"content":…,"sentAt":ms}`, to the file in NOSTR_SEND_LOG, flushed every second and at exit.
 */
import { appendFileSync } from "node:fs";

const file = process.env.NOSTR_SEND_LOG;
if (file) {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    appendFileSync(file, pending.join(""));
    pending = [];
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: WebSocket, data: Parameters<WebSocket["send"]>[0]) {
    const sentAt = Date.now();
    if (typeof data === "string" && data.startsWith('["EVENT",')) {
      const event = (JSON.parse(data) as [string, { content: string }])[1];
      pending.push(`${JSON.stringify({ content: event.content, sentAt })}\n`);
    }
    return send.call(this, data);
  };
  (setInterval(flush, 1_000) as { unref?: () => void }).unref?.();
  process.on("exit", flush);
}
