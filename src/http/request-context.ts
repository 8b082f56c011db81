/**
 * Per-request state set by the pipeline (before parsing and validation) and read by handlers: the request id, the start
 * time and the authenticated key. Carried by the Request object itself, so nothing leaks between requests.
 */
import { newId } from "../lib/ids";
import type { AuthContext } from "../auth/authenticate";
import type { RateState } from "./rate-limit-state";

/** What the server knows of a request's connection (Bun's `Server`). */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
  /** Sets this request's idle timeout in seconds (0: none), for a route that streams (Bun's `server.timeout`). */
  timeout?(request: Request, seconds: number): void;
}

export class RequestState {
  auth: AuthContext | null = null;
  readonly startedAt = performance.now();
  /** Top-level answer fields an Idempotency-Key replay must not repeat (a secret shown once), or null. */
  withheld: readonly string[] | null = null;
  /** The key's rate-limit bucket as this request left it (an /api/v1 request with a valid key), for RateLimit. */
  rate: RateState | null = null;
  private madeId: string | null = null;
  private peer: string | null | undefined = undefined;

  constructor(
    private readonly request: Request,
    /** The server the request came in on, when it came over HTTP (a route that streams lifts its idle timeout). */
    readonly server: PeerSource | null = null,
  ) {}

  /**
   * The address of the socket the request came in on (never a forwarded header a client could write), or null when
   * the request did not come through a server (tests calling the app in-process). Read on first use.
   */
  get peerAddress(): string | null {
    if (this.peer === undefined) this.peer = this.server?.requestIP(this.request)?.address ?? null;
    return this.peer;
  }

  /**
   * The request id: the client's `x-request-id` (at most 64 characters) or a new UUIDv7. Made on first use (the log
   * line, an error answer), so a request nobody asks about costs no id.
   */
  get id(): string {
    this.madeId ??= this.request.headers.get("x-request-id")?.slice(0, 64) || newId();
    return this.madeId;
  }
}

/**
 * Where a request's state lives: a symbol-keyed property of the Request itself. NB: not a WeakMap; a WeakMap entry per
 * request cost the server about a microsecond a request (the collector's weak-map work), a property costs nothing.
 */
const STATE = Symbol("seedcast.request-state");
type WithState = Request & { [STATE]?: RequestState };

/** Records the state of a request that just arrived. */
export function setRequestState(request: Request, state: RequestState): void {
  (request as WithState)[STATE] = state;
}

/** The state of a request, if the pipeline saw it. */
export function requestState(request: Request): RequestState | undefined {
  return (request as WithState)[STATE];
}

/**
 * The authenticated key of an /api/v1 request. NB: the pipeline refuses unauthenticated /api/v1 requests before any
 * handler runs, so a missing context here is a wiring bug, not a client error.
 */
export function authOf(request: Request): AuthContext {
  const auth = requestState(request)?.auth;
  if (!auth) throw new Error("authOf called on a request the auth pipeline did not authenticate");
  return auth;
}
