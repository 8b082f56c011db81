/**
 * `Location` on 201 answers (decisions.md §10): a route that creates something declares, with the `created` option,
 * the path of what it created (`/api/v1/seeds/{id}`) and where the answer's body holds the id (`id`,
 * `creation.id`). The pipeline sets the header on the route's 201 answers, first answers and Idempotency-Key replays
 * alike (a replay is rebuilt from the stored body), and the OpenAPI document lists it on the 201.
 */
import type { RouteLike } from "./route-table";

/** Where the `created` option leaves its declaration (removed from the served document). */
export const LOCATION_DETAIL_KEY = "x-seedcast-location";

export interface CreatedLocation {
  /** The created resource's path, `{id}` standing for its id: `/api/v1/seeds/{id}`. */
  path: string;
  /** Dotted path of the id in the 201 body: `id`, `creation.id`. */
  idAt: string;
}

/** The `created` declaration of a route, or null. */
export function declaredLocation(route: RouteLike): CreatedLocation | null {
  const detail = (route.hooks as { detail?: Record<string, unknown> } | undefined)?.detail;
  const found = detail?.[LOCATION_DETAIL_KEY] as CreatedLocation | undefined;
  return found && typeof found.path === "string" && typeof found.idAt === "string" ? found : null;
}

/** The Location of a 201 body under `declared`, or null when the body holds no id string there. */
export function locationOf(declared: CreatedLocation, body: unknown): string | null {
  let node: unknown = body;
  for (const key of declared.idAt.split(".")) {
    node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
  }
  return typeof node === "string" && node !== "" ? declared.path.replace("{id}", encodeURIComponent(node)) : null;
}
