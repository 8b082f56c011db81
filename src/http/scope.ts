/**
 * The route options every API route declares:
 * - `scope: "read"`: which group a route needs. It documents the group in OpenAPI (`x-seedcast-group`, and the 401
 *   and 403 answers) and is what the pipeline's route table enforces before the body is even parsed.
 * - `errors: ["not_found", "asset_in_use"]`: the refusals the route's own work can answer with. The OpenAPI document
 *   (modules/docs) turns them into responses with the envelope's schema and an example; what every route of a kind
 *   answers (401, 403, 429, 400 for a schema, 413 and 415 for a body, the Idempotency-Key refusals of a POST) is
 *   added there from the route's shape, so a route names only what is its own.
 * - `created: { path: "/api/v1/seeds/{id}", idAt: "id" }`: the Location of the route's 201 answers (location.ts).
 */
import { Elysia } from "elysia";
import { AppError, type ErrorCode } from "../lib/errors";
import type { Scope } from "../auth/scopes";
import { SCOPE_LABELS } from "../auth/scopes";
import { type CreatedLocation, LOCATION_DETAIL_KEY } from "./location";
import { requestState } from "./request-context";

/** `authenticated`: any valid key, whatever its groups (the health echo). */
export type RouteGroup = Scope | "authenticated";
export const GROUP_DETAIL_KEY = "x-seedcast-group";
/** Where the `errors` option leaves its codes for the document (removed from the served document). */
export const ERRORS_DETAIL_KEY = "x-seedcast-errors";

/** Throws 403 forbidden unless the request's key holds `group`. */
export function assertGroup(request: Request, group: RouteGroup): void {
  if (group === "authenticated") return;
  const auth = requestState(request)?.auth;
  if (!auth || !auth.scopes.includes(group)) {
    throw new AppError("forbidden", `This key lacks the ${SCOPE_LABELS[group]} group (${group}).`, {
      requiredGroup: group,
    });
  }
}

/** The plugin every module `.use()`s to get the `scope` and `errors` options. */
export const scopePlugin = new Elysia({ name: "seedcast.scope" })
  // NB: the named form; the object form does not typecheck for a macro answering only `detail` in Elysia 1.4.
  .macro("errors", (codes: readonly ErrorCode[]) => ({ detail: { [ERRORS_DETAIL_KEY]: [...codes] } }))
  .macro("created", (location: CreatedLocation) => ({ detail: { [LOCATION_DETAIL_KEY]: location } }))
  .macro({
  scope: (group: RouteGroup) => ({
    detail: {
      [GROUP_DETAIL_KEY]: group,
      security: [{ apiKey: [] }],
      description: group === "authenticated" ? "Any valid key." : `Needs the ${SCOPE_LABELS[group]} group (\`${group}\`).`,
    },
    beforeHandle({ request }: { request: Request }) {
      assertGroup(request, group);
    },
  }),
});
