/**
 * Per-request state set by the pipeline (before parsing and validation) and read by handlers: the request id, the start
 * time and the authenticated key. Carried by the Request object itself, so nothing leaks between requests.
 */
import type { Server } from "bun";
import { newId } from "../lib/ids";
import type { AuthContext } from "../modules/auth/authenticate";

export class RequestState {
  auth: AuthContext | null = null;
  /** The server the request came in on, when it came over HTTP (a route that streams lifts its idle timeout). */
  server: Server<undefined> | null = null;
  readonly startedAt = performance.now();
  /** Top-level answer fields an Idempotency-Key replay must not repeat (a secret shown once), or null. */
  withheld: readonly string[] | null = null;
  private madeId: string | null = null;

  constructor(private readonly request: Request) {}

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
