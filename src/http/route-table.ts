/**
 * Maps method + path to the group a route declared, so the pipeline can refuse with 403 before Elysia parses or
 * validates the body (decisions.md §1: credential → group → validation). Used for requests Bun's router did not find
 * (served-routes.ts): those routes carry their group themselves.
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
   * Routes without parameters, by method then path (trailing slash too, as the patterns accept it), where the earliest
   * entry of the ordered scan wins, an `ALL` route included: most requests are answered here without a pattern. Those
   * routes sort first, so an exact hit is what the scan would find.
   */
  private readonly exact = new Map<string, Map<string, RouteMatch>>();

  constructor(routes: readonly RouteLike[]) {
    this.entries = routes
      .map((r) => ({ method: r.method.toUpperCase(), path: r.path, ...compile(r.path), group: declaredGroup(r) }))
      .sort((a, b) => a.params - b.params);
    const methods = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", ...this.entries.map((e) => e.method)]);
    methods.delete("ALL");
    for (const method of methods) {
      const byPath = new Map<string, RouteMatch>();
      for (const entry of this.entries) {
        if (entry.params > 0 || (entry.method !== method && entry.method !== "ALL")) continue;
        const found = { route: entry.path, group: entry.group };
        for (const path of entry.path.endsWith("/") ? [entry.path] : [entry.path, `${entry.path}/`]) {
          if (!byPath.has(path)) byPath.set(path, found);
        }
      }
      this.exact.set(method, byPath);
    }
  }

  /**
   * For a path some route without a wildcard serves (a known path), that route's pattern and every method the path is
   * served with (HEAD where GET is), sorted: the `Allow` of a 405. Null for a path only a wildcard or nothing serves.
   */
  allowed(path: string): { route: string; methods: string[] } | null {
    const known = this.entries.find((e) => e.params < 100 && e.pattern.test(path));
    if (!known) return null;
    const methods = new Set(this.entries.filter((e) => e.method !== "ALL" && e.pattern.test(path)).map((e) => e.method));
    if (methods.has("GET")) methods.add("HEAD");
    return { route: known.path, methods: [...methods].sort() };
  }

  /** The matched route's pattern and declared group (null when it declares none); undefined when nothing matches. */
  match(method: string, path: string): RouteMatch | undefined {
    const upper = method.toUpperCase();
    const m = upper === "HEAD" ? "GET" : upper;
    const exact = this.exact.get(m)?.get(path);
    if (exact) return exact;
    for (const entry of this.entries) {
      if ((entry.method === m || entry.method === "ALL") && entry.pattern.test(path)) {
        return { route: entry.path, group: entry.group };
      }
    }
    return undefined;
  }
}
