/**
 * GET /metrics in Prometheus text. With METRICS_TOKEN set it needs `Authorization: Bearer <token>`. Without one it is
 * open only while the server listens on loopback alone (HOST=127.0.0.1, ::1 or localhost); on any other HOST it is
 * closed (403), since its figures (credits captured across all accounts, request counts per route) are nobody's
 * business outside the box.
 */
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { Config } from "../../config";
import type { Deps } from "../../deps";
import { isLoopbackOnlyHost } from "../../lib/net-address";

function tokenMatches(header: string | null, token: string): boolean {
  const given = Buffer.from(header ?? "");
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** How /metrics is guarded under `config`: by its token, open (loopback only), or closed. */
export function metricsAccess(config: Pick<Config, "metricsToken" | "host">): "token" | "open" | "closed" {
  if (config.metricsToken) return "token";
  return isLoopbackOnlyHost(config.host) ? "open" : "closed";
}

const TEXT = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" };

/** The scrape endpoint. */
export function metricsModule(deps: Deps) {
  const access = metricsAccess(deps.config);
  return new Elysia().get(
    "/metrics",
    async ({ request }) => {
      if (access === "closed") {
        return new Response("metrics are closed: set METRICS_TOKEN, or listen on loopback only (HOST=127.0.0.1)\n", {
          status: 403,
          headers: TEXT,
        });
      }
      if (access === "token" && !tokenMatches(request.headers.get("authorization"), deps.config.metricsToken ?? "")) {
        return new Response("unauthorized\n", { status: 401, headers: { ...TEXT, "www-authenticate": 'Bearer realm="metrics"' } });
      }
      return new Response(await deps.metrics.registry.metrics(), {
        headers: { "content-type": deps.metrics.registry.contentType, "cache-control": "no-store" },
      });
    },
    {
      detail: {
        summary: "Prometheus metrics (no API key; needs METRICS_TOKEN unless the server listens on loopback only)",
        description: "The server's counters and histograms in the Prometheus text exposition format.",
        tags: ["operations"],
        responses: {
          200: { description: "Prometheus text exposition", content: { "text/plain": { schema: { type: "string" } } } },
          401: {
            description: "METRICS_TOKEN is set and `Authorization: Bearer <token>` did not match",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          403: {
            description: "METRICS_TOKEN is not set and the server listens beyond loopback: /metrics is closed",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
  );
}
