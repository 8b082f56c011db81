/**
 * Your account (the person's own settings): the time zone every dashboard time is shown and read in. The page script
 * sets it from the browser the first time (POST .../time-zone with `x-requested-with: fetch`); the form changes it.
 */
import { type FieldErrors, FormState } from "../fields";
import type { DashboardCtx } from "../guard";
import { type Html, html } from "../html";
import { type Form, field, htmlResponse, redirect } from "../http";
import { type Notice, csrfField, page } from "../layout";
import { isTimeZone, saveTimeZone, storedTimeZone, timeZones, zoneOf } from "../preferences";
import type { SessionContext } from "../session";
import { zonedParts } from "../zoned";
import { noticeFrom } from "./common";

export const ACCOUNT_PATH = "/dashboard/account";

function accountPage(ctx: DashboardCtx, s: SessionContext, notices: Notice[], errors: FieldErrors = {}, typed?: string): Html {
  const zone = typed ?? zoneOf(s);
  const f = new FormState(errors);
  const now = zonedParts(ctx.deps.clock.now(), zoneOf(s));
  return page(
    s,
    { title: "Your settings", current: ACCOUNT_PATH, notices },
    html`<p class="muted">Signed in as ${s.email}.</p>
<form method="post" action="${ACCOUNT_PATH}/time-zone" class="card form-card" aria-labelledby="tz-title">
  <h2 id="tz-title">Time zone</h2>
  ${csrfField(s.csrfToken)}
  ${f.select({
    name: "timeZone",
    label: "Show and enter times in",
    value: zone,
    options: timeZones().map((z) => [z, z.replace(/_/g, " ")] as const),
    hint: `It is ${now.date} ${now.time} there now.${storedTimeZone(ctx.deps, s.userId) ? "" : " Not chosen yet: taken from your browser when script runs, UTC until then."}`,
  })}
  <button type="submit">Save time zone</button>
</form>`,
  );
}

/** GET /dashboard/account */
export function getAccount(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  return htmlResponse(accountPage(ctx, s, noticeFrom(request)));
}

/** POST /dashboard/account/time-zone (the form, or the page script's first-visit call). */
export function postTimeZone(ctx: DashboardCtx, s: SessionContext, form: Form | undefined, request: Request): Response {
  const scripted = request.headers.get("x-requested-with") === "fetch";
  const zone = field(form, "timeZone").trim();
  if (!isTimeZone(zone)) {
    if (scripted) return new Response("unknown time zone", { status: 400, headers: { "cache-control": "no-store" } });
    return htmlResponse(accountPage(ctx, s, [], { timeZone: "Choose a time zone from the list." }, zone), 400);
  }
  saveTimeZone(ctx.deps, s.userId, zone);
  if (scripted) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  return redirect(`${ACCOUNT_PATH}?notice=zone-saved`);
}
