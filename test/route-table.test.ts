/**
 * The route table's exact-path shortcut answers exactly what the ordered pattern scan answers, for every route of the
 * real app and for paths near them (parameters filled, trailing slashes, other methods, HEAD, unknown paths).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { RouteTable, declaredGroup } from "../src/http/route-table";
import { type World, createWorld } from "./helpers/world";

let world: World;
beforeAll(async () => {
  world = await createWorld();
});
afterAll(async () => {
  await world.close();
});

/** The reference: every route's pattern tried in order, fewest parameters first (what the table did before). */
function scan(routes: readonly { method: string; path: string; hooks?: unknown }[], method: string, path: string) {
  const m = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
  const entries = routes
    .map((r) => {
      let params = 0;
      const source = r.path
        .split("/")
        .map((s) => (s.startsWith(":") ? (params++, "[^/]+") : s === "*" ? ((params += 100), ".*") : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/");
      return { method: r.method.toUpperCase(), route: r.path, pattern: new RegExp(`^${source}/?$`), params, group: declaredGroup(r) };
    })
    .sort((a, b) => a.params - b.params);
  const hit = entries.find((e) => (e.method === m || e.method === "ALL") && e.pattern.test(path));
  return hit ? { route: hit.route, group: hit.group } : undefined;
}

test("every route, its neighbours and random paths match as the ordered scan matches them", () => {
  const routes = world.app.routes;
  const table = new RouteTable(routes);
  const concrete = (pattern: string, fill: string) => pattern.replace(/:[^/]+/g, fill).replace(/\*$/, `${fill}/x`);
  const methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
  const paths = routes.flatMap((r) => {
    const p = concrete(r.path, "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
    return [p, `${p}/`, `${p}//`, `${p}/extra`, p.toUpperCase(), p.slice(0, -1)];
  });
  for (const path of [...paths, "/", "", "/api/v1", "/api/v1/", "/nope"]) {
    for (const method of methods) expect(table.match(method, path)).toEqual(scan(routes, method, path));
  }
  fc.assert(
    fc.property(fc.constantFrom(...methods), fc.constantFrom(...routes.map((r) => r.path)), fc.webPath(), (method, route, tail) => {
      for (const path of [tail, concrete(route, tail.split("/")[1] || "x"), `${route}${tail}`]) {
        expect(table.match(method, path)).toEqual(scan(routes, method, path));
      }
    }),
    { numRuns: 500 },
  );
});
