/**
 * The request pipeline every request passes through, in the order decisions.md §1 fixes:
 * request id → credential (401) → group (403) → body size (413) → rate limit (429) → Idempotency-Key claim →
 * parse/validation (400, inside the app) → handler, then one structured log line and one metrics event per request,
 * however it ended. The Authorization header is never logged.
 *
 * Around every answer (decisions.md §10): a known path asked with a method it does not serve answers 405
 * `method_not_allowed` with `Allow` (under /api/v1 once the key is valid, like a 404); every /api/v1 answer to a valid
 * key carries `RateLimit-Policy` and `RateLimit` (rate-limit-state.ts); a 201 carries the `Location` its route
 * declares (location.ts).
 *
 * It wraps the Elysia app rather than living in its hooks: the checks are plain calls before the app runs (synchronous
 * unless the credential has to be looked up in the database) and the log line is written once its response exists. (As Elysia hooks they made every route asynchronous and
 * scheduled an after-response task per request, which cost more than all the checks together.) The app itself keeps
 * the body parsers (json-body.ts), the error envelope (envelope.ts) and each route's `scope` check, which repeats the
 * group check here.
 *
 * The server reaches it two ways: through each route's own handler when Bun's router found the route
 * (served-routes.ts), or through `handle` for everything else, routed here and again by Elysia's router.
 */
import { CSV_BODY_ROUTES, MAX_CSV_BYTES } from "./csv-body";
import type { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../lib/errors";
import type { RequestObserver } from "../metrics/registry";
import { type AuthContext, INVALID_KEY_BODY, authenticate } from "../auth/authenticate";
import { corsPolicy } from "./cors";
import { MAX_JSON_BYTES } from "./json-body";
import { appErrorResponse, jsonResponse } from "./error-response";
import { beginIdempotent, carriesIdempotencyKey, releaseIdempotencyKey, settleIdempotent } from "./idempotency";
import { type CreatedLocation, declaredLocation, locationOf } from "./location";
import { isApiPath, loggablePath, requestPath } from "./paths";
import { createRateLimiter } from "./rate-limit";
import { type RateState, rateLimitHeaders } from "./rate-limit-state";
import { type PeerSource, RequestState, setRequestState } from "./request-context";
import { RouteTable, declaredGroup, type RouteLike } from "./route-table";
import { type RouteHandler, type ServedRoutes, servedRoutes } from "./served-routes";
import { type RouteGroup, assertGroup } from "./scope";

/** The app as the server and the tests call it: the pipeline around the Elysia app. */
export interface PipelinedApp {
  /**
   * Answers any request (the server's fallback, and how tests call the app in-process). `server` is the Bun server it
   * came through, whose `requestIP` gives the peer address; absent in-process.
   */
  handle(request: Request, server?: PeerSource): Response | Promise<Response>;
  /**
   * Bun.serve `routes`: each route through the same pipeline, found by Bun's native router instead of being routed in
   * JavaScript twice (served-routes.ts). Build it once the app has all its routes.
   */
  servedRoutes(): ServedRoutes;
  /** The Elysia app's routes (the route inventory, the docs). */
  readonly routes: readonly RouteLike[];
  /** The Elysia app inside (tests mount probe routes on it before the first request). */
  readonly elysia: Elysia;
}

function invalidKeyResponse(): Response {
  return new Response(INVALID_KEY_BODY, {
    status: 401,
    headers: { "content-type": "application/json", "www-authenticate": 'Bearer realm="seedcast"' },
  });
}

/** `response` carrying `headers`; rebuilt when its headers are immutable (a redirect made by Response.redirect). */
function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    for (const [name, value] of Object.entries(headers)) copy.headers.set(name, value);
    return copy;
  }
}

/** The 405 of a known path asked with another method: the envelope under /api/v1, plain text elsewhere. */
function methodNotAllowed(request: Request, methods: readonly string[], api: boolean): Response {
  const allow = methods.join(", ");
  if (!api) return new Response("Method not allowed", { status: 405, headers: { "content-type": "text/plain; charset=utf-8", allow } });
  const refusal = new AppError("method_not_allowed", `${request.method} is not served at this path; it serves ${allow}.`, { allowed: [...methods] });
  return appErrorResponse(refusal, { allow });
}

/** `response` (a 201) with the Location `declared` makes of its JSON body; as it was when the body names no id. */
async function withLocation(response: Response, declared: CreatedLocation): Promise<Response> {
  let body: unknown = null;
  try {
    body = await response.clone().json();
  } catch {
    return response;
  }
  const location = locationOf(declared, body);
  return location === null ? response : withHeaders(response, { location });
}

/** Wraps `app` in the pipeline. The route table is built from `app.routes` at the first request it routes itself. */
export function withPipeline(deps: Deps, app: Elysia, observers: RequestObserver[] = []): PipelinedApp {
  const limiter = createRateLimiter(deps, "key", deps.config.rateLimitPerMinute);
  let table: RouteTable | null = null;
  /** The `created` declarations by `METHOD path pattern`, read from the routes at the first 201. */
  let locations: Map<string, CreatedLocation> | null = null;
  const declaredFor = (method: string, route: string): CreatedLocation | undefined => {
    if (!locations) {
      locations = new Map();
      for (const r of app.routes as readonly RouteLike[]) {
        const declared = declaredLocation(r);
        if (declared) locations.set(`${r.method.toUpperCase()} ${r.path}`, declared);
      }
    }
    return locations.get(`${method} ${route}`);
  };
  const logRequests = deps.log.enabled("info");
  /** Null unless CORS_ORIGINS is set: then no request pays for a CORS look-up. */
  const cors = corsPolicy(deps.config);

  /**
   * The refusal of an /api/v1 request by the checks before the handler, or null when it may go on. A promise only when
   * the credential had to be looked up in the database (authenticate answers a cached key synchronously).
   */
  const admit = (request: Request, state: RequestState, group: RouteGroup | null): Response | null | Promise<Response | null> => {
    const auth = authenticate(deps, request.headers.get("authorization"));
    return auth instanceof Promise ? auth.then((found) => check(request, state, group, found)) : check(request, state, group, auth);
  };

  /** The checks after the credential: group, body size, rate limit (a promise when the bucket is in the database). */
  const check = (request: Request, state: RequestState, group: RouteGroup | null, auth: AuthContext | null): Response | null | Promise<Response | null> => {
    if (!auth) return invalidKeyResponse();
    state.auth = auth;
    try {
      if (group) assertGroup(request, group);
      const length = Number(request.headers.get("content-length") ?? "0");
      const cap = length > MAX_JSON_BYTES && CSV_BODY_ROUTES.has(`${request.method} ${requestPath(request.url)}`) ? MAX_CSV_BYTES : MAX_JSON_BYTES;
      if (length > cap) {
        throw new AppError("payload_too_large", `Request bodies are limited to ${cap} bytes.`);
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // Refused before the take: the answer still reports the key's bucket, untouched.
      const refusal = appErrorResponse(error, { "x-request-id": state.id });
      const peeked = limiter.peek(auth.keyId);
      return peeked instanceof Promise ? peeked.then((rate) => ((state.rate = rate), refusal)) : ((state.rate = peeked), refusal);
    }
    const taken = limiter.takeState(auth.keyId);
    return taken instanceof Promise ? taken.then((rate) => limited(state, rate)) : limited(state, taken);
  };

  /** The 429 when the bucket had no token, else null. */
  const limited = (state: RequestState, rate: RateState): Response | null => {
    state.rate = rate;
    const wait = rate.wait;
    if (wait <= 0) return null;
    const refusal = new AppError("rate_limited", `Too many requests for this key; retry in ${wait} s.`, { retryAfterSeconds: wait });
    return appErrorResponse(refusal, { "retry-after": String(wait), "x-request-id": state.id });
  };

  /** One log line and one observer event per request, however it ended. */
  const finish = (request: Request, state: RequestState, status: number, route: string, path: string | null, authFailed: boolean) => {
    const durationMs = performance.now() - state.startedAt;
    for (const observe of observers) observe({ method: request.method, route, status, durationMs, authFailed });
    if (!logRequests) return;
    deps.log.info("request", {
      reqId: state.id,
      method: request.method,
      path: loggablePath(path ?? requestPath(request.url)),
      route,
      status,
      ms: Math.round(durationMs * 10) / 10,
      keyId: state.auth?.keyId,
    });
  };

  /** A 500 for what nothing else caught, logged with the request id. */
  const failure = (request: Request, state: RequestState, path: string | null, error: unknown): Response => {
    deps.log.error("unhandled error", {
      reqId: state.id,
      path: loggablePath(path ?? requestPath(request.url)),
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      stack: error instanceof Error ? error.stack : undefined,
    });
    return jsonResponse(500, { error: "internal_error", message: "Something went wrong on our side; it was logged." });
  };

  /** A POST carrying Idempotency-Key: claimed before the handler, settled (or released) with its answer. */
  const runIdempotent = async (request: Request, state: RequestState, path: string, call: RouteHandler): Promise<Response> => {
    const begun = await beginIdempotent(deps, request, state.auth?.accountId ?? "", path, state.id);
    if (begun === null || begun instanceof Response) return begun ?? (await call(request));
    try {
      const response = await call(request);
      await settleIdempotent(deps, begun, response, state.withheld);
      return response;
    } catch (error) {
      await releaseIdempotencyKey(deps, begun.scope, begun.lease);
      throw error;
    }
  };

  /**
   * One request through the pipeline to `call`, once it is known which route it is for: `route` (the pattern, the
   * metrics label), the `group` it declared and whether it is under /api/v1. `path` is the request's path when the
   * caller already read it; otherwise it is read off the URL only if something needs it (a log line, a claim).
   *
   * NB: not an async function, on purpose. Most requests need no await before the app, and the extra promise and
   * microtask per request showed in the throughput; only the app's own promise is chained (and the credential's
   * lookup, when authenticate had to go to the database).
   */
  const run = (
    request: Request,
    route: string,
    group: RouteGroup | null,
    api: boolean,
    path: string | null,
    call: RouteHandler,
    server: PeerSource | undefined,
  ): Response | Promise<Response> => {
    const state = new RequestState(request, server ?? null);
    setRequestState(request, state);
    let authFailed = false;

    const done = (answer: Response): Response | Promise<Response> => {
      // Error answers carry the request id (the envelope and the refusals above set it; this covers the rest).
      // Success answers do not: adding a header to every response cost a tenth of the throughput. A client that wants
      // to find a successful request in the log sends its own X-Request-Id, which the log line records.
      // NB: the RateLimit fields are the exception, on every /api/v1 answer to a valid key: decisions.md §10 asks for them.
      let response = answer.status >= 400 && !answer.headers.has("x-request-id") ? withHeaders(answer, { "x-request-id": state.id }) : answer;
      if (api && state.rate) response = withHeaders(response, rateLimitHeaders(limiter.perMinute, state.rate));
      if (cors?.covers(route, api)) response = cors.decorate(request, response);
      if (response.status === 201 && !response.headers.has("location")) {
        const declared = declaredFor(request.method, route);
        if (declared) return withLocation(response, declared).then((located) => settled(located));
      }
      return settled(response);
    };
    /** The answer as it goes out, logged. */
    const settled = (response: Response): Response => {
      finish(request, state, response.status, route, path, authFailed);
      return response;
    };
    const failed = (error: unknown): Response | Promise<Response> => done(failure(request, state, path, error));

    /** The request once admitted (or refused): the handler, or the refusal. */
    const proceed = (refusal: Response | null): Response | Promise<Response> => {
      let pending: Response | Promise<Response>;
      if (api) {
        authFailed = refusal !== null && state.auth === null;
        if (refusal) return done(refusal);
        pending = carriesIdempotencyKey(request)
          ? runIdempotent(request, state, path ?? requestPath(request.url), call)
          : call(request);
      } else {
        pending = call(request);
      }
      return pending instanceof Promise ? pending.then(done, failed) : done(pending);
    };

    try {
      const refusal = api ? admit(request, state, group) : null;
      if (refusal instanceof Promise) {
        return refusal.then((answer) => {
          try {
            return proceed(answer);
          } catch (error) {
            return failed(error);
          }
        }, failed);
      }
      return proceed(refusal);
    } catch (error) {
      return failed(error);
    }
  };

  /** Any request: routed by the route table here and by Elysia's router inside app.fetch. */
  const handle = (request: Request, server?: PeerSource): Response | Promise<Response> => {
    const path = requestPath(request.url);
    table ??= new RouteTable(app.routes);
    // A CORS preflight is answered without a key (cors.ts); the pipeline's checks are for the request that follows.
    if (cors?.isPreflight(request) && cors.covers(path, isApiPath(path))) {
      return run(request, "preflight", null, false, path, (preflight) => cors.preflight(preflight), server);
    }
    const matched = table.match(request.method, path);
    const api = isApiPath(path);
    if (!matched) {
      const allowed = table.allowed(path);
      if (allowed) return run(request, allowed.route, null, api, path, (r) => methodNotAllowed(r, allowed.methods, api), server);
    }
    // app.fetch is the compiled handler itself (app.handle only wraps it in one more promise).
    return run(request, matched?.route ?? "unmatched", matched?.group ?? null, api, path, app.fetch, server);
  };

  return {
    handle,
    servedRoutes: () =>
      servedRoutes(app, handle, (route, call) => {
        const group = declaredGroup(route);
        const api = isApiPath(route.path);
        return (request, server) => run(request, route.path, group, api, null, call, server);
      }),
    get routes() {
      return app.routes as readonly RouteLike[];
    },
    elysia: app,
  };
}
