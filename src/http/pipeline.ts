/**
 * The request pipeline every route passes through, in the order decisions.md §1 fixes:
 * request id → credential (401) → group (403) → body size (413) → rate limit (429) → parse/validation (400) → handler,
 * then one structured log line per request. The Authorization header is never logged.
 */
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { AppError } from "../lib/errors";
import { newId } from "../lib/ids";
import { INVALID_KEY_BODY, authenticate } from "../modules/auth/authenticate";
import { appErrorResponse, jsonResponse, validationToAppError } from "./error-response";
import { idempotencyPlugin } from "./idempotency";
import { RateLimiter } from "./rate-limit";
import { requestState, setRequestState } from "./request-context";
import { RouteTable, type RouteLike } from "./route-table";
import { assertGroup } from "./scope";

export const API_PREFIX = "/api/v1";
/** JSON bodies under /api/v1 larger than this answer 413. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** Listeners the metrics module (and tests) can attach to observe finished requests. */
export interface RequestObserver {
  (event: { method: string; route: string; status: number; durationMs: number; authFailed: boolean }): void;
}

/** Paths that carry a credential in the URL itself; they are logged with it replaced. */
function loggablePath(path: string): string {
  return path.replace(/^\/upload\/[^/]+/, "/upload/[redacted]");
}

function invalidKeyResponse(): Response {
  return new Response(INVALID_KEY_BODY, {
    status: 401,
    headers: { "content-type": "application/json", "www-authenticate": 'Bearer realm="seedcast"' },
  });
}

/** Builds the pipeline plugin. `routes` is read lazily, once the whole app is assembled. */
export function pipeline(deps: Deps, routes: () => readonly RouteLike[], observers: RequestObserver[] = []) {
  const limiter = new RateLimiter(deps.config.rateLimitPerMinute, deps.clock);
  let table: RouteTable | null = null;
  const routeTable = () => (table ??= new RouteTable(routes()));

  /** One log line and one observer event per request, however it ended. */
  const finish = (request: Request, status: number, route: string, path: string, authFailed: boolean) => {
    const state = requestState(request);
    const durationMs = state ? performance.now() - state.startedAt : 0;
    for (const observe of observers) observe({ method: request.method, route, status, durationMs, authFailed });
    deps.log.info("request", {
      reqId: state?.id,
      method: request.method,
      path: loggablePath(path),
      route,
      status,
      ms: Math.round(durationMs * 10) / 10,
      keyId: state?.auth?.keyId,
    });
  };
  /** onAfterResponse does not run for responses returned from onRequest; those are finished here. */
  const refuse = (request: Request, path: string, route: string, response: Response, authFailed = false): Response => {
    finish(request, response.status, route, path, authFailed);
    return response;
  };

  return new Elysia({ name: "seedcast.pipeline" })
    .onRequest(({ request, set }) => {
      const state = { id: request.headers.get("x-request-id")?.slice(0, 64) || newId(), startedAt: performance.now(), auth: null };
      setRequestState(request, state);
      set.headers["x-request-id"] = state.id;
      const path = new URL(request.url).pathname;
      if (path !== API_PREFIX && !path.startsWith(`${API_PREFIX}/`)) return;

      const matched = routeTable().match(request.method, path);
      const route = matched?.route ?? "unmatched";
      const auth = authenticate(deps, request.headers.get("authorization"));
      if (!auth) return refuse(request, path, route, invalidKeyResponse(), true);
      Object.assign(state, { auth });

      try {
        if (matched?.group) assertGroup(request, matched.group);
        const length = Number(request.headers.get("content-length") ?? "0");
        if (length > MAX_JSON_BYTES) {
          throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
        }
      } catch (error) {
        if (error instanceof AppError) return refuse(request, path, route, appErrorResponse(error, { "x-request-id": state.id }));
        throw error;
      }
      const wait = limiter.take(auth.keyId);
      if (wait > 0) {
        const limited = new AppError("rate_limited", `Too many requests for this key; retry in ${wait} s.`, { retryAfterSeconds: wait });
        return refuse(request, path, route, appErrorResponse(limited, { "retry-after": String(wait), "x-request-id": state.id }));
      }
    })
    // Idempotency-Key claims run after every check above (its onRequest is registered after ours) and keyed on the account.
    .use(
      idempotencyPlugin(deps, (request, response) => {
        const path = new URL(request.url).pathname;
        return refuse(request, path, routeTable().match(request.method, path)?.route ?? "unmatched", response);
      }),
    )
    .onParse({ as: "global" }, async ({ request, contentType }) => {
      // NB: a chunked body has no content-length; count what actually arrives before parsing it.
      if (!contentType?.startsWith("application/json")) return;
      const bytes = await request.arrayBuffer();
      if (bytes.byteLength > MAX_JSON_BYTES) {
        throw new AppError("payload_too_large", `Request bodies are limited to ${MAX_JSON_BYTES} bytes.`);
      }
      if (bytes.byteLength === 0) return {};
      try {
        return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
      } catch {
        throw new AppError("invalid_request", "The body is not valid JSON.", {
          details: [{ field: "body", problem: "is not valid JSON" }],
        });
      }
    })
    .onError({ as: "global" }, ({ error, code, request, path }) => {
      const id = requestState(request)?.id ?? "";
      const headers = { "x-request-id": id };
      const isApi = path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);
      if (error instanceof AppError) return appErrorResponse(error, headers);
      if (code === "VALIDATION") {
        const where = (error as { type?: string }).type;
        return appErrorResponse(validationToAppError(error, where), headers);
      }
      if (code === "PARSE") {
        // Elysia wraps what a parser throws; our parser's refusals (413, invalid JSON) travel as the cause.
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof AppError) return appErrorResponse(cause, headers);
        return appErrorResponse(new AppError("invalid_request", "The body could not be parsed."), headers);
      }
      if (code === "NOT_FOUND") {
        if (isApi) return appErrorResponse(new AppError("not_found", "No such route."), headers);
        return new Response("Not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", ...headers } });
      }
      deps.log.error("unhandled error", {
        reqId: id,
        path: loggablePath(path),
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        stack: error instanceof Error ? error.stack : undefined,
      });
      return jsonResponse(500, { error: "internal_error", message: "Something went wrong on our side; it was logged." }, headers);
    })
    .onAfterResponse({ as: "global" }, ({ request, set, route, path }) => {
      const status = typeof set.status === "number" ? set.status : Number(set.status) || 200;
      finish(request, status, route || "unmatched", path, false);
    });
}
