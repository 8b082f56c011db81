/**
 * The `scope` route option: `{ scope: "read" }` declares which group a route needs. It documents the group in
 * OpenAPI (`x-seedcast-group`) and is what the pipeline's route table enforces before the body is even parsed.
 */
import { Elysia } from "elysia";
import { AppError } from "../lib/errors";
import type { Scope } from "../auth/scopes";
import { SCOPE_LABELS } from "../auth/scopes";
import { requestState } from "./request-context";

/** `authenticated`: any valid key, whatever its groups (the health echo). */
export type RouteGroup = Scope | "authenticated";
export const GROUP_DETAIL_KEY = "x-seedcast-group";

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

/** The plugin every module `.use()`s to get the `scope` option. */
export const scopePlugin = new Elysia({ name: "seedcast.scope" }).macro({
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
