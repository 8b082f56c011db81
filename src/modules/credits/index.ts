/** GET /api/v1/credits (read) → {balance, reserved}; GET /api/v1/credits/ledger (read) → the movements, newest first. */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { scopePlugin } from "../../http/scope";
import { DEFAULT_LIMIT, creditSummarySchema, ledgerPageSchema, ledgerQuerySchema } from "./model";
import { creditSummary, ledgerView } from "./service";

/** The credits routes. */
export function creditsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/credits", ({ request }) => creditSummary(deps, authOf(request).accountId), {
      scope: "read",
      response: creditSummarySchema,
      detail: { summary: "The account's spendable and reserved credits", tags: ["credits"] },
    })
    .get(
      "/api/v1/credits/ledger",
      ({ request, query }) =>
        ledgerView(deps, authOf(request).accountId, { limit: query.limit ?? DEFAULT_LIMIT, cursor: query.cursor ?? null }),
      {
        scope: "read",
        query: ledgerQuerySchema,
        response: ledgerPageSchema,
        detail: { summary: "Credit movements (grant, reserve, capture, release), newest first", tags: ["credits"] },
      },
    );
}
