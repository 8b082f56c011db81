/** GET /metrics in Prometheus text. Public unless METRICS_TOKEN is set, then it needs `Authorization: Bearer <token>`. */
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Deps } from "../../deps";

function tokenMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(header ?? "");
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The scrape endpoint. */
export function metricsModule(deps: Deps) {
  return new Elysia().get(
    "/metrics",
    async ({ request }) => {
      const token = deps.config.metricsToken;
      if (token && !tokenMatches(request.headers.get("authorization"), token)) {
        return new Response("unauthorized\n", { status: 401, headers: { "content-type": "text/plain; charset=utf-8" } });
      }
      return new Response(await deps.metrics.registry.metrics(), {
        headers: { "content-type": deps.metrics.registry.contentType, "cache-control": "no-store" },
      });
    },
    {
      detail: {
        summary: "Prometheus metrics (no API key; METRICS_TOKEN guards it when set)",
        tags: ["operations"],
        responses: {
          200: { description: "Prometheus text exposition", content: { "text/plain": { schema: { type: "string" } } } },
          401: {
            description: "METRICS_TOKEN is set and `Authorization: Bearer <token>` did not match",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
  );
}
