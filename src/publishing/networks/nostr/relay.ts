/**
 * A small NIP-01 relay client over one WebSocket (opened through src/lib/safe-websocket.ts, so every relay address is
 * resolved once, checked and dialled by IP). It publishes signed events and waits for the relay's `OK`, and reads
 * events back with `REQ` until `EOSE`.
 *
 * NB: hand-written rather than nostr-tools' Relay: the socket must be the one the outbound rule opened, and what
 * the dispatcher does after a failure depends on how far a publish got (never connected: nothing was sent, retry;
 * sent without an `OK`: unknown, reconcile), which nostr-tools folds into one rejection.
 */
import type { Event } from "nostr-tools/core";
import type { Filter } from "nostr-tools/filter";
import type { Deps } from "../../../deps";
import { SafeFetchError } from "../../../lib/safe-fetch";
import { openSafeWebSocket } from "../../../lib/safe-websocket";
import { plainNetworkProblem } from "../../outbound";

/** How long a relay may take to answer a publish or a query. */
export const RELAY_ANSWER_TIMEOUT_MS = 10_000;
/** How long a relay may take to accept the connection. */
export const RELAY_OPEN_TIMEOUT_MS = 10_000;

/** What one relay made of one event. */
export type PublishOutcome =
  /** `OK true`, or `OK false` with a `duplicate:` message: the relay has the event. */
  | { kind: "accepted"; message: string }
  /** `OK false`: the relay's own words (NIP-01 prefixes such as `blocked:`, `rate-limited:`, `invalid:`). */
  | { kind: "refused"; message: string }
  /** The connection could not be opened: the event was certainly not sent there. */
  | { kind: "unreached"; message: string }
  /** The event was sent but no `OK` came back: the relay may or may not have it. */
  | { kind: "no_answer"; message: string };

/** A relay that could not be opened, or a query it did not finish. `sent` is true once the request left. */
export class RelayError extends Error {
  readonly sent: boolean;
  constructor(message: string, sent: boolean) {
    super(message);
    this.name = "RelayError";
    this.sent = sent;
  }
}

interface PendingPublish {
  resolve: (outcome: PublishOutcome) => void;
  timer: ReturnType<typeof setTimeout>;
}

interface PendingQuery {
  events: Event[];
  resolve: (events: Event[]) => void;
  reject: (error: RelayError) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Words for a failure to open, without the address a name resolved to. */
function openProblem(error: unknown): string {
  if (error instanceof SafeFetchError) {
    if (error.reason === "fetch_failed") return plainNetworkProblem(error) ?? error.message;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** One open connection to one relay. */
export class RelayConnection {
  readonly url: string;
  private readonly ws: WebSocket;
  private readonly publishes = new Map<string, PendingPublish>();
  private readonly queries = new Map<string, PendingQuery>();
  private closed = false;
  private serial = 0;

  private constructor(url: string, ws: WebSocket) {
    this.url = url;
    this.ws = ws;
    ws.onmessage = (message) => this.onMessage(message.data);
    ws.onclose = () => this.onGone("the relay closed the connection");
    ws.onerror = () => this.onGone("the connection to the relay failed");
  }

  /** Opens a connection under the outbound rule. Throws RelayError (sent: false) with words a person understands. */
  static async open(deps: Pick<Deps, "config">, url: string, timeoutMs = RELAY_OPEN_TIMEOUT_MS): Promise<RelayConnection> {
    try {
      const ws = await openSafeWebSocket(url, { allowPrivateHosts: deps.config.allowPrivateHosts, timeoutMs });
      return new RelayConnection(url, ws);
    } catch (error) {
      throw new RelayError(openProblem(error), false);
    }
  }

  /** Sends `event` and waits for the relay's `OK` (or the time limit). Never throws. */
  publish(event: Event, timeoutMs = RELAY_ANSWER_TIMEOUT_MS): Promise<PublishOutcome> {
    if (this.closed) return Promise.resolve({ kind: "unreached", message: "the connection to the relay was lost before sending" });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.publishes.delete(event.id);
        resolve({ kind: "no_answer", message: `no answer within ${Math.round(timeoutMs / 1000)} s` });
      }, timeoutMs);
      this.publishes.set(event.id, { resolve, timer });
      try {
        this.ws.send(JSON.stringify(["EVENT", event]));
      } catch {
        clearTimeout(timer);
        this.publishes.delete(event.id);
        resolve({ kind: "unreached", message: "the connection to the relay was lost before sending" });
      }
    });
  }

  /** Reads the stored events matching `filter` (up to `EOSE`). Throws RelayError when the relay does not finish. */
  query(filter: Filter, timeoutMs = RELAY_ANSWER_TIMEOUT_MS): Promise<Event[]> {
    if (this.closed) return Promise.reject(new RelayError("the connection to the relay was lost", false));
    const id = `seedcast-${++this.serial}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.queries.delete(id);
        reject(new RelayError(`the relay did not finish answering within ${Math.round(timeoutMs / 1000)} s`, true));
      }, timeoutMs);
      this.queries.set(id, { events: [], resolve, reject, timer });
      this.ws.send(JSON.stringify(["REQ", id, filter]));
    });
  }

  /** True once the connection is gone (closed by either side or failed). */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes the connection; pending work ends as if the relay had gone. */
  close(): void {
    this.onGone("the connection was closed");
    try {
      this.ws.close();
    } catch {
      // already closing
    }
  }

  private onMessage(data: unknown): void {
    let message: unknown;
    try {
      message = JSON.parse(typeof data === "string" ? data : new TextDecoder().decode(data as ArrayBuffer));
    } catch {
      return; // not NIP-01; ignored like any relay's noise
    }
    if (!Array.isArray(message)) return;
    const [type, a, b, c] = message as unknown[];
    if (type === "OK" && typeof a === "string") {
      const pending = this.publishes.get(a);
      if (!pending) return;
      clearTimeout(pending.timer);
      this.publishes.delete(a);
      const words = typeof c === "string" ? c : "";
      const accepted = b === true || words.startsWith("duplicate:");
      pending.resolve({ kind: accepted ? "accepted" : "refused", message: words });
    } else if (typeof a === "string" && this.queries.has(a)) {
      const query = this.queries.get(a) as PendingQuery;
      if (type === "EVENT" && b && typeof b === "object") {
        query.events.push(b as Event);
      } else if (type === "EOSE") {
        this.finishQuery(a);
        query.resolve(query.events);
        try {
          this.ws.send(JSON.stringify(["CLOSE", a]));
        } catch {
          // the answer is complete either way
        }
      } else if (type === "CLOSED") {
        this.finishQuery(a);
        query.reject(new RelayError(`the relay refused the query: ${typeof b === "string" && b !== "" ? b : "no reason given"}`, true));
      }
    }
  }

  private finishQuery(id: string): void {
    const query = this.queries.get(id);
    if (query) clearTimeout(query.timer);
    this.queries.delete(id);
  }

  private onGone(why: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, pending] of this.publishes) {
      clearTimeout(pending.timer);
      pending.resolve({ kind: "no_answer", message: `${why} before it answered` });
      this.publishes.delete(id);
    }
    for (const [id, query] of this.queries) {
      clearTimeout(query.timer);
      query.reject(new RelayError(`${why} before it answered`, true));
      this.queries.delete(id);
    }
  }
}

/** How long an unused relay connection stays open for the next delivery. */
export const RELAY_IDLE_MS = 30_000;

interface Pooled {
  connection: Promise<RelayConnection>;
  idle: ReturnType<typeof setTimeout> | null;
  users: number;
}

/** Open connections per configuration (one per world in tests), then per relay URL. */
const pools = new WeakMap<object, Map<string, Pooled>>();

/**
 * Runs `use` with an open connection to `url`, shared by the deliveries of this process and kept open for
 * RELAY_IDLE_MS after the last one (issue 22's lesson for HTTP: a handshake per post cost more than the post). A
 * connection that was lost is opened anew (resolved and checked again) on the next use. Throws RelayError when the
 * relay cannot be opened.
 */
export async function withRelay<T>(deps: Pick<Deps, "config">, url: string, use: (connection: RelayConnection) => Promise<T>): Promise<T> {
  let pool = pools.get(deps.config);
  if (!pool) {
    pool = new Map();
    pools.set(deps.config, pool);
  }
  let entry = pool.get(url);
  if (entry) {
    const live = await entry.connection.catch(() => null);
    if (live === null || live.isClosed) {
      if (pool.get(url) === entry) pool.delete(url);
      entry = undefined;
    }
  }
  if (!entry) {
    const opened = RelayConnection.open(deps, url);
    entry = { connection: opened, idle: null, users: 0 };
    pool.set(url, entry);
    opened.catch(() => {
      if (pool.get(url) === entry) pool.delete(url);
    });
  }
  const current = entry;
  if (current.idle) clearTimeout(current.idle);
  current.idle = null;
  current.users++;
  try {
    return await use(await current.connection);
  } finally {
    current.users--;
    if (current.users === 0 && pool.get(url) === current) {
      current.idle = setTimeout(() => {
        if (pool.get(url) === current && current.users === 0) pool.delete(url);
        void current.connection.then((c) => c.close()).catch(() => {});
      }, RELAY_IDLE_MS);
      // An idle relay connection never keeps the process alive.
      (current.idle as { unref?: () => void }).unref?.();
    }
  }
}
