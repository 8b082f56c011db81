/**
 * Publish loops against one Nostr relay, for telling the relay's own time from Seedcast's: notes paced over a window
 * (note i due at start + i × window / n, each sent at its time without waiting for the one before, as the dispatcher
 * does), each with a fresh key's signature, timed in three steps: signing, the relay's `OK` (sent → `OK`), and
 * lateness (`OK` − due). Two clients: nostr-tools' own `Relay` (the ceiling: nobody's code but the relay's and the
 * reference library's) and Seedcast's path (signNotes + the pooled RelayConnection of src/publishing/networks/nostr).
 */
import type { Event } from "nostr-tools/core";
import { finalizeEvent, generateSecretKey, getPublicKey } from "nostr-tools/pure";
import { Relay } from "nostr-tools/relay";
import type { Config } from "../../src/config";
import { signNotes } from "../../src/publishing/networks/nostr/notes";
import { RELAY_ANSWER_TIMEOUT_MS, withRelay } from "../../src/publishing/networks/nostr/relay";
import { type Spread, spreadOf } from "./stats";

/** What one loop measured. */
export interface PublishLoop {
  client: "nostr-tools" | "seedcast";
  sent: number;
  accepted: number;
  signMs: Spread;
  okMs: Spread;
  latenessMs: Spread;
}

/** Sends one note through a client: answers whether the relay accepted it. */
type Send = (event: Event) => Promise<boolean>;

/** Sleeps until `at` (ms since the epoch). */
async function until(at: number): Promise<void> {
  const wait = at - Date.now();
  if (wait > 0) await Bun.sleep(wait);
}

async function paced(client: PublishLoop["client"], n: number, windowMs: number, start: number, sign: (dueMs: number, i: number) => Event, send: Send): Promise<PublishLoop> {
  const signMs: number[] = [];
  const okMs: number[] = [];
  const lateness: number[] = [];
  let accepted = 0;
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const due = start + Math.floor((i * windowMs) / n);
    await until(due);
    const t0 = performance.now();
    const event = sign(due, i);
    const t1 = performance.now();
    signMs.push(t1 - t0);
    inFlight.push(
      send(event).then((ok) => {
        okMs.push(performance.now() - t1);
        lateness.push(Date.now() - due);
        if (ok) accepted++;
      }),
    );
  }
  await Promise.all(inFlight);
  return { client, sent: n, accepted, signMs: spreadOf(signMs), okMs: spreadOf(okMs), latenessMs: spreadOf(lateness) };
}

/** nostr-tools' Relay, one connection, each note signed with nostr-tools' finalizeEvent at its due time. */
export async function bareLoop(url: string, n: number, windowMs: number, start: number, tag: string): Promise<PublishLoop> {
  const secret = generateSecretKey();
  const relay = await Relay.connect(url);
  // nostr-tools gives up on an OK after 4.4 s by default; wait as long as Seedcast does, so both count the same notes.
  relay.publishTimeout = RELAY_ANSWER_TIMEOUT_MS;
  try {
    return await paced(
      "nostr-tools",
      n,
      windowMs,
      start,
      (due, i) => finalizeEvent({ kind: 1, created_at: Math.floor(due / 1000), tags: [], content: `${tag} ${i}` }, secret),
      (event) => relay.publish(event).then(
        () => true,
        () => false,
      ),
    );
  } finally {
    relay.close();
  }
}

/** Seedcast's own path without the dispatcher: signNotes (one part) and publish over the pooled RelayConnection. */
export async function seedcastLoop(config: Config, url: string, n: number, windowMs: number, start: number, tag: string): Promise<PublishLoop> {
  const secret = generateSecretKey();
  const pubkey = getPublicKey(secret);
  const deps = { config };
  return paced(
    "seedcast",
    n,
    windowMs,
    start,
    (due, i) => (signNotes(secret, pubkey, due, [{ caption: `${tag} ${i}`, images: [] }], url)[0] as { event: Event }).event,
    (event) => withRelay(deps, url, (c) => c.publish(event)).then(
      (o) => o.kind === "accepted",
      () => false,
    ),
  );
}
