/** GET /api/v1/health (any valid key) and the supervisor probes /livez and /readyz (no key). */
import { Elysia, t } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { scopePlugin } from "../../http/scope";

const readiness = t.Object(
  { ok: t.Boolean(), database: t.Boolean({ description: "The database answered" }), accepting: t.Boolean({ description: "Not draining for shutdown" }) },
  { title: "Readiness" },
);

/** Health echo and probes. `isReady` turns false while the server drains on shutdown. */
export function healthModule(deps: Deps, isReady: () => boolean) {
  return new Elysia()
    .use(scopePlugin)
    .get(
      "/api/v1/health",
      ({ request }) => {
        const auth = authOf(request);
        return { ok: true, keyId: auth.keyId, scopes: auth.scopes };
      },
      {
        scope: "authenticated",
        response: t.Object(
          {
            ok: t.Literal(true),
            keyId: t.String({ format: "uuid", description: "The calling key" }),
            scopes: t.Array(t.Union([t.Literal("read"), t.Literal("create"), t.Literal("schedule"), t.Literal("voice")]), { description: "Its effective groups" }),
          },
          { title: "HealthEcho" },
        ),
        detail: { summary: "Echo the calling key and its effective groups", tags: ["health"] },
      },
    )
    .get("/livez", () => ({ ok: true as const }), {
      response: t.Object({ ok: t.Literal(true) }, { title: "Live" }),
      detail: { summary: "Liveness probe (no key)", description: "200 while the process answers at all; for a supervisor's liveness check.", tags: ["health"] },
    })
    .get(
      "/readyz",
      async ({ set }) => {
        const dbOk = await deps.store.ping();
        const ready = dbOk && isReady();
        set.status = ready ? 200 : 503;
        return { ok: ready, database: dbOk, accepting: isReady() };
      },
      {
        response: { 200: readiness, 503: readiness },
        detail: {
          summary: "Readiness probe (no key): database reachable and not draining; 503 while not",
          description: "For a load balancer: 503 while the database cannot be reached or the server is shutting down, so no new request is sent here.",
          tags: ["health"],
        },
      },
    );
}
