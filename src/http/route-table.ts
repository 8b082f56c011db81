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

/** A lookup of declared groups, most specific route first. */
export class RouteTable {
  private readonly entries: RouteEntry[];

  constructor(routes: readonly RouteLike[]) {
    this.entries = routes
      .map((r) => ({ method: r.method.toUpperCase(), path: r.path, ...compile(r.path), group: declaredGroup(r) }))
      .sort((a, b) => a.params - b.params);
  }

  /** The matched route's pattern and declared group (null when it declares none); undefined when nothing matches. */
  match(method: string, path: string): { route: string; group: RouteGroup | null } | undefined {
    const m = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    for (const entry of this.entries) {
      if ((entry.method === m || entry.method === "ALL") && entry.pattern.test(path)) {
        return { route: entry.path, group: entry.group };
      }
    }
    return undefined;
  }
}
