/** Credits: balance, reserved and the ledger of the current account; the instance admin grants credits here too. */
import { isoAt } from "../../../lib/clock";
import { grantCredits } from "../../credits/grant";
import { creditSummary, listLedger } from "../../credits/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../guard";
import { html, timeTag } from "../html";
import { type Form, field, htmlResponse, redirect } from "../http";
import { type Notice, csrfField, page } from "../layout";
import type { SessionContext } from "../session";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/credits";
const LEDGER_PAGE = 50;

const KIND_LABELS: Record<string, string> = {
  grant: "Granted",
  reserve: "Reserved",
  capture: "Charged",
  // NB: a reserve lowers the available balance at once; the capture then only settles what was held.
  release: "Released",
};

function creditsPage(ctx: DashboardCtx, s: SessionContext, accountId: string, cursor: string | null, notices: Notice[]) {
  const summary = creditSummary(ctx.deps, accountId);
  let ledger: ReturnType<typeof listLedger>;
  try {
    ledger = listLedger(ctx.deps, accountId, { limit: LEDGER_PAGE, cursor });
  } catch {
    ledger = listLedger(ctx.deps, accountId, { limit: LEDGER_PAGE, cursor: null });
  }
  return page(
    s,
    { title: "Credits", current: CURRENT, notices },
    html`<div class="stats">
  <div class="stat"><div class="value" id="balance">${summary.balance}</div><div class="label">Available</div></div>
  <div class="stat"><div class="value" id="reserved">${summary.reserved}</div><div class="label">Reserved by work in progress</div></div>
</div>
<section class="card" aria-labelledby="ledger-title">
  <h2 id="ledger-title">Ledger</h2>
  ${
    ledger.entries.length === 0
      ? html`<p class="muted">No movements yet.</p>`
      : html`<div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">When</th><th scope="col">Movement</th><th scope="col">Change</th><th scope="col">Available after</th><th scope="col">Note</th></tr></thead>
  <tbody>${ledger.entries.map(
    (e) => html`<tr><td data-label="When">${timeTag(isoAt(e.createdAt))}</td><td data-label="Movement">${KIND_LABELS[e.kind] ?? e.kind}</td>
    <td data-label="Change">${
      e.kind === "capture"
        ? html`${e.amount} <span class="muted">(held earlier)</span>`
        : html`${e.kind === "reserve" ? "−" : "+"}${e.amount}`
    }</td>
    <td data-label="Available after">${e.balanceAfter}</td><td data-label="Note">${e.note}</td></tr>`,
  )}</tbody></table></div>`
  }
  ${ledger.nextCursor ? html`<p><a href="${CURRENT}?cursor=${encodeURIComponent(ledger.nextCursor)}">Older movements</a></p>` : ""}
</section>
${
  s.isAdmin
    ? html`<form method="post" action="/dashboard/credits/grant" class="card form-card" aria-labelledby="grant-title">
  <h2 id="grant-title">Grant credits</h2>
  ${csrfField(s.csrfToken)}
  <div class="row"><label for="amount">Amount</label><input id="amount" name="amount" type="number" min="1" step="1" required></div>
  <div class="row"><label for="note">Note</label><input id="note" name="note" type="text" maxlength="200"></div>
  <button type="submit">Grant</button>
</form>`
    : ""
}`,
  );
}

/** GET /dashboard/credits */
export function getCredits(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const cursor = new URL(request.url).searchParams.get("cursor");
  return htmlResponse(creditsPage(ctx, s, account.accountId, cursor, noticeFrom(request)));
}

/** Parses a positive whole amount from a form field; NaN when it is not one (the service refuses it). */
export function parseAmount(value: string): number {
  return /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
}

/** POST /dashboard/credits/grant (instance admin): grants to the account being viewed. */
export function postGrant(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!s.isAdmin) return forbiddenPage(s, "Only the instance administrator grants credits.");
  try {
    grantCredits(ctx.deps, account.accountId, parseAmount(field(form, "amount")), field(form, "note").slice(0, 200) || "granted in the dashboard");
    return redirect(`${CURRENT}?notice=granted`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(creditsPage(ctx, s, account.accountId, null, [notice]), status);
  }
}
