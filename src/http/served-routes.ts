/**
 * The app's routes as Bun.serve `routes`, the way Elysia's own `listen()` serves them: Bun's native router finds the
 * route and its params, and each route's compiled Elysia handler (createBunRouteHandler, from Elysia's Bun adapter)
 * runs without Elysia routing the request a second time in JavaScript. The pipeline wraps every handler (pipeline.ts).
 *
 * What Bun's router is not given, the server's `fetch` (the pipeline's `handle`, Elysia's own router inside) answers
 * exactly as before, so nothing is answered differently there:
 * - HEAD, always (Bun would run the GET handler itself; Elysia answers HEAD for GET routes with the right length);
 * - methods a path has no route for, trailing slashes, and anything Bun's router does not match;
 * - wildcard routes, routes with optional params and routes whose handler is a fixed value.
 */
import type { Server } from "bun";
import type { Elysia, InternalRoute } from "elysia";
import { createBunRouteHandler } from "elysia/adapter/bun/compose";
import type { RouteLike } from "./route-table";

/** A request's handler; `server` is the Bun server it came in on (absent when a test calls the app in-process). */
export type RouteHandler = (request: Request, server?: Server<undefined>) => Response | Promise<Response>;

type ServedMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
export type ServedRoutes = Record<string, Partial<Record<ServedMethod, RouteHandler>>>;

const SERVED_METHODS: ReadonlySet<string> = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/** True when Bun's router can find `route` the way Elysia's does. */
export function servable(route: RouteLike & { handler?: unknown }): boolean {
  return SERVED_METHODS.has(route.method) && typeof route.handler === "function" && !/[*?]/.test(route.path);
}

/**
 * The route's Elysia handler, compiled when first called, as Elysia itself does: compiling all ~90 routes at start
 * added 40 ms to start-up and 10 MB to the idle process.
 */
function compiledOnFirstCall(app: Elysia, route: InternalRoute): RouteHandler {
  let compiled: RouteHandler | null = null;
  return (request) => {
    compiled ??= createBunRouteHandler(app, route) as RouteHandler;
    return compiled(request);
  };
}

/**
 * Every servable route of `app`, its compiled handler wrapped by `wrap`; HEAD of each path with a GET goes to
 * `fallback`. Where Elysia has the same method and path twice, the first wins, as in its own router.
 */
export function servedRoutes(
  app: Elysia,
  fallback: RouteHandler,
  wrap: (route: RouteLike, call: RouteHandler) => RouteHandler,
): ServedRoutes {
  const served: ServedRoutes = {};
  for (const route of app.routes as InternalRoute[]) {
    if (!servable(route)) continue;
    const method = route.method as ServedMethod;
    const path = encodeURI(route.path);
    const methods = (served[path] ??= {});
    if (methods[method]) continue;
    methods[method] = wrap(route, compiledOnFirstCall(app, route));
    if (method === "GET") methods.HEAD = fallback;
  }
  return served;
}
