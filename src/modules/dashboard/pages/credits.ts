/** Credits: balance, reserved and the ledger of the current account; the instance admin grants credits here too. */
import { isoAt } from "../../../lib/clock";
import { grantCredits } from "../../credits/grant";
import { type LedgerEntry, creditSummary, listLedger } from "../../credits/service";
import { creationCaptions } from "../../creations/service";
import { zoneOf } from "../../../web/preferences";
import { zonedParts } from "../../../lib/zoned";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/credits";
const LEDGER_PAGE = 50;

/** One line per action, in words: a generate is its reserve plus its capture (or release), shown once. */
interface ActionLine {
  when: Html;
  what: Html;
  change: number;
  balanceAfter: number;
}

const PART_WORDS: Record<string, string> = { caption: "the caption", image: "the image", both: "the caption and image" };

/** The creation a ledger note names (`creation:<id>`), if any. */
function creationOf(note: string): string | undefined {
  return /creation:([0-9a-f-]{36})/.exec(note)?.[1];
}

function postLink(captions: ReadonlyMap<string, string>, note: string): Html {
  const id = creationOf(note);
  if (!id) return html`a post`;
  const caption = captions.get(id);
  if (caption === undefined) return html`a post since deleted`;
  const words = caption.replace(/\s+/g, " ").trim();
  const short = [...words].length > 50 ? `${[...words].slice(0, 50).join("")}…` : words;
  return html`<a href="/dashboard/creations/${id}">“${short}”</a>`;
}

function describeAction(captions: ReadonlyMap<string, string>, purpose: string, note: string, outcome: "captured" | "released" | "open"): Html {
  const regenerate = /^regenerate:(\w+)/.exec(purpose);
  const doing = purpose.startsWith("generate:") ? "Generating a post" : regenerate ? `Regenerating ${PART_WORDS[regenerate[1] ?? ""] ?? "a post"}` : purpose;
  if (outcome === "open") return html`${doing}: in progress, credits held`;
  if (outcome === "released") return html`${doing} did not finish; the credits held came back`;
  if (purpose.startsWith("generate:")) return html`Generated ${postLink(captions, note)}`;
  if (regenerate) return html`Regenerated ${PART_WORDS[regenerate[1] ?? ""] ?? "a post"} of ${postLink(captions, note)}`;
  return html`${purpose}`;
}

function actionLines(captions: ReadonlyMap<string, string>, entries: readonly LedgerEntry[], zone: string): ActionLine[] {
  const byHold = new Map<string, LedgerEntry[]>();
  for (const e of entries) if (e.holdId) byHold.set(e.holdId, [...(byHold.get(e.holdId) ?? []), e]);
  const lines: ActionLine[] = [];
  const done = new Set<string>();
  const when = (ms: number) => {
    const p = zonedParts(ms, zone);
    return html`<time datetime="${isoAt(ms)}">${p.date} ${p.time}</time>`;
  };
  for (const e of entries) {
    if (!e.holdId) {
      lines.push({ when: when(e.createdAt), what: html`Credits granted${e.note ? html` (${e.note})` : ""}`, change: e.amount, balanceAfter: e.balanceAfter });
      continue;
    }
    if (done.has(e.holdId)) continue;
    done.add(e.holdId);
    const group = byHold.get(e.holdId) ?? [e];
    const reserve = group.find((g) => g.kind === "reserve");
    const settled = group.find((g) => g.kind === "capture" || g.kind === "release");
    const outcome = settled?.kind === "capture" ? "captured" : settled?.kind === "release" ? "released" : "open";
    const purpose = (reserve ?? settled ?? e).note.split(" ")[0] ?? "";
    const latest = group.reduce((a, b) => (b.createdAt > a.createdAt ? b : a));
    lines.push({
      when: when(latest.createdAt),
      what: describeAction(captions, purpose, settled?.note ?? "", outcome),
      change: outcome === "released" ? 0 : -(reserve?.amount ?? settled?.amount ?? 0),
      balanceAfter: latest.balanceAfter,
    });
  }
  return lines;
}

async function creditsPage(ctx: DashboardCtx, s: SessionContext, accountId: string, cursor: string | null, notices: Notice[]): Promise<Html> {
  const summary = await creditSummary(ctx.deps, accountId);
  let ledger: Awaited<ReturnType<typeof listLedger>>;
  try {
    ledger = await listLedger(ctx.deps, accountId, { limit: LEDGER_PAGE, cursor });
  } catch {
    ledger = await listLedger(ctx.deps, accountId, { limit: LEDGER_PAGE, cursor: null });
  }
  const captions = await creationCaptions(ctx.deps, accountId, ledger.entries.map((e) => creationOf(e.note) ?? ""));
  return page(
    s,
    { title: "Credits", current: CURRENT, notices },
    html`<div class="stats">
  <div class="stat"><div class="value" id="balance">${summary.balance}</div><div class="label">Available</div></div>
  <div class="stat"><div class="value" id="reserved">${summary.reserved}</div><div class="label">Reserved by work in progress</div></div>
</div>
<section class="card" aria-labelledby="ledger-title">
  <h2 id="ledger-title">What the credits went to</h2>
  ${
    ledger.entries.length === 0
      ? html`<p class="muted">No movements yet.</p>`
      : html`<ul class="plain ledger">${actionLines(captions, ledger.entries, zoneOf(s)).map(
          (line) => html`<li><span class="when">${line.when}</span> <span class="what">${line.what}</span> <span class="amount${line.change < 0 ? " spent" : line.change > 0 ? " added" : ""}">${line.change === 0 ? "no charge" : `${line.change > 0 ? "+" : "−"}${Math.abs(line.change)} credit${Math.abs(line.change) === 1 ? "" : "s"}`}</span> <span class="muted">· ${line.balanceAfter} left</span></li>`,
        )}</ul>`
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
export async function getCredits(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const cursor = new URL(request.url).searchParams.get("cursor");
  return htmlResponse(await creditsPage(ctx, s, account.accountId, cursor, noticeFrom(request)));
}

/** Parses a positive whole amount from a form field; NaN when it is not one (the service refuses it). */
export function parseAmount(value: string): number {
  return /^\d{1,9}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
}

/** POST /dashboard/credits/grant (instance admin): grants to the account being viewed. */
export async function postGrant(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!s.isAdmin) return forbiddenPage(s, "Only the instance administrator grants credits.");
  try {
    await grantCredits(ctx.deps, account.accountId, parseAmount(field(form, "amount")), field(form, "note").slice(0, 200) || "granted in the dashboard");
    return redirect(`${CURRENT}?notice=granted`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await creditsPage(ctx, s, account.accountId, null, [notice]), status);
  }
}
