/**
 * GET /api/v1/account (read) and PATCH /api/v1/account (schedule group, an owner): the account's time zone and its
 * approval flag (decisions.md §14).
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { accountSettingsBody, accountSettingsResponse } from "./model";
import { getAccountSettings, updateAccountSettings } from "./settings";

const TAGS = ["account"];

/** Mounts the account settings routes. */
export function accountSettingsModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    .get("/api/v1/account", ({ request }) => getAccountSettings(deps, authOf(request).accountId), {
      scope: "read",
      response: accountSettingsResponse,
      detail: { summary: "The account's settings: its time zone and whether editors' posts need approval", tags: TAGS },
    })
    .patch(
      "/api/v1/account",
      ({ request, body }) => {
        const auth = authOf(request);
        return updateAccountSettings(deps, auth, {
          ...(body.time_zone !== undefined ? { timeZone: body.time_zone } : {}),
          ...(body.approval_required !== undefined ? { approvalRequired: body.approval_required } : {}),
        });
      },
      {
        parse: parseJsonBody,
        scope: "schedule",
        errors: ["forbidden"],
        body: accountSettingsBody,
        response: accountSettingsResponse,
        detail: {
          summary: "Change the account's time zone and/or approval setting (owners)",
          description:
            "time_zone is an IANA name (Europe/Berlin); posting slots and repeats follow it. Needs a key or grant of an owner: otherwise 403 forbidden with requiredRole owner, nothing changed.",
          tags: TAGS,
        },
      },
    );
}
