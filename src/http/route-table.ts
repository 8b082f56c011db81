/**
 * Maps method + path to the group a route declared, so the pipeline can refuse with 403 in onRequest, before
 * Elysia parses or validates the body (decisions.md §1: credential → group → validation).
 */
import { GROUP_DETAIL_KEY, type RouteGroup } from "./scope";

interface RouteEntry {
  method: string;
  path: string;
  pattern: RegExp;
  params: number;
  group: RouteGroup | null;
}

export interface RouteLike {
  method: string;
  path: string;
  hooks?: unknown;
}

/** The group a route declared through the `scope` option, or null. */
export function declaredGroup(route: RouteLike): RouteGroup | null {
  const detail = (route.hooks as { detail?: Record<string, unknown> } | undefined)?.detail;
  const group = detail?.[GROUP_DETAIL_KEY];
  return typeof group === "string" ? (group as RouteGroup) : null;
}

function compile(path: string): { pattern: RegExp; params: number } {
  let params = 0;
  const source = path
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) {
        params += 1;
        return "[^/]+";
      }
      if (segment === "*") {
        params += 100;
        return ".*";
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return { pattern: new RegExp(`^${source}/?$`), params };
}

export interface RouteMatch {
  route: string;
  group: RouteGroup | null;
}

/** A lookup of declared groups, most specific route first. */
export class RouteTable {
  private readonly entries: RouteEntry[];
  /**
   * Routes without parameters, by `METHOD path`, with their place in `entries`: most requests are answered from here
   * without a pattern. Those routes sort first, so the earliest exact hit is what the scan would find.
   */
  private readonly exact = new Map<string, { match: RouteMatch; order: number }>();

  constructor(routes: readonly RouteLike[]) {
    this.entries = routes
      .map((r) => ({ method: r.method.toUpperCase(), path: r.path, ...compile(r.path), group: declaredGroup(r) }))
      .sort((a, b) => a.params - b.params);
    this.entries.forEach((entry, order) => {
      if (entry.params > 0) return;
      const found = { match: { route: entry.path, group: entry.group }, order };
      // The pattern also accepts one trailing slash.
      for (const path of entry.path.endsWith("/") ? [entry.path] : [entry.path, `${entry.path}/`]) {
        const key = `${entry.method} ${path}`;
        if (!this.exact.has(key)) this.exact.set(key, found);
      }
    });
  }

  /** The matched route's pattern and declared group (null when it declares none); undefined when nothing matches. */
  match(method: string, path: string): RouteMatch | undefined {
    const m = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    const own = this.exact.get(`${m} ${path}`);
    const any = this.exact.get(`ALL ${path}`);
    const exact = own && any ? (own.order < any.order ? own : any) : (own ?? any);
    if (exact) return exact.match;
    for (const entry of this.entries) {
      if ((entry.method === m || entry.method === "ALL") && entry.pattern.test(path)) {
        return { route: entry.path, group: entry.group };
      }
    }
    return undefined;
  }
}
