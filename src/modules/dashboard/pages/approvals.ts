/**
 * The Approvals page (decisions.md §14), for owners: the posts editors scheduled while the account requires approval,
 * each with its time (in the person's zone), caption, connections, an Approve button and a Reject form with a note.
 * Editors and viewers get the forbidden page. The services are modules/schedule/approval.ts.
 */
import { type Html, html } from "../../../lib/html";
import { shortDate, zoneAbbreviation, zoneLabel, zonedParts } from "../../../lib/zoned";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import { zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import { getAccountSettings } from "../../accounts/settings";
import { approvePost, rejectPost } from "../../schedule/approval";
import { listPosts } from "../../schedule/service";
import { refusal } from "./common";

export const APPROVALS_PATH = "/dashboard/approvals";
/** The most waiting posts one page lists. */
const PAGE_SIZE = 100;

const APPROVAL_NOTICES: Record<string, string> = {
  approved: "Approved: the post goes out at its time.",
  rejected: "Rejected: the post will not go out, and its author sees your note.",
};

function ownerGate(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (account.role !== "owner") return forbiddenPage(s, "Only owners approve posts.");
  return account;
}

function noticeOf(request: Request): Notice[] {
  const key = new URL(request.url).searchParams.get("notice");
  const text = key ? APPROVAL_NOTICES[key] : undefined;
  return text ? [{ kind: "ok", text }] : [];
}

async function approvalsPage(ctx: DashboardCtx, s: SessionContext, account: Membership, notices: readonly Notice[]): Promise<Html> {
  const zone = zoneOf(s);
  const [{ posts }, { account: settings }] = await Promise.all([
    listPosts(ctx.deps, account.accountId, { status: "pending_approval", limit: PAGE_SIZE }),
    getAccountSettings(ctx.deps, account.accountId),
  ]);
  const waiting = [...posts].sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime));
  const intro = settings.approvalRequired
    ? html`<p>Editors' posts wait here until an owner approves them. A post not approved by its time fails and does not go out. Times are in ${zoneLabel(zone)} (${zoneAbbreviation(ctx.deps.clock.now(), zone)}).</p>`
    : html`<p>Approval is off: editors' posts are scheduled directly. Owners turn it on with the API (<code>PATCH /api/v1/account</code>, <code>approval_required</code>).</p>`;
  const items = waiting.map((p) => {
    const at = zonedParts(Date.parse(p.scheduledTime), zone);
    return html`<li class="card approval" id="post-${p.id}">
  <p><strong>${shortDate(at.date)}, <time datetime="${p.scheduledTime}">${at.time}</time></strong> <span class="badge status status-pending_approval"><span aria-hidden="true">⏸</span> Waiting for approval</span></p>
  <p class="post-caption caption">${p.content.caption}</p>
  <p class="muted">To ${p.targets.map((t) => t.label).join(", ")} · <a href="/dashboard/calendar/posts/${p.id}">Open the post<span class="sr-only"> of ${shortDate(at.date)}, ${at.time}</span></a></p>
  <div class="approval-actions">
    <form method="post" action="${APPROVALS_PATH}/${p.id}/approve" class="inline">
      ${csrfField(s.csrfToken)}
      <button type="submit">Approve<span class="sr-only"> the post of ${shortDate(at.date)}, ${at.time}</span></button>
    </form>
    <form method="post" action="${APPROVALS_PATH}/${p.id}/reject" class="reject-form">
      ${csrfField(s.csrfToken)}
      <label for="note-${p.id}">Note for the author (optional)</label>
      <input id="note-${p.id}" name="note" type="text" maxlength="500">
      <button type="submit" class="danger">Reject<span class="sr-only"> the post of ${shortDate(at.date)}, ${at.time}</span></button>
    </form>
  </div>
</li>`;
  });
  return page(
    s,
    { title: "Approvals", current: APPROVALS_PATH, notices },
    html`${intro}
${waiting.length === 0 ? html`<p class="card">Nothing is waiting for approval.</p>` : html`<ol class="approvals">${items}</ol>`}`,
  );
}

/** GET /dashboard/approvals */
export async function getApprovals(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = ownerGate(s);
  if (account instanceof Response) return account;
  return htmlResponse(await approvalsPage(ctx, s, account, noticeOf(request)));
}

/** POST /dashboard/approvals/:id/approve */
export async function postApprove(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = ownerGate(s);
  if (account instanceof Response) return account;
  try {
    await approvePost(ctx.deps, account, id);
    return redirect(`${APPROVALS_PATH}?notice=approved`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await approvalsPage(ctx, s, account, [notice]), status);
  }
}

/** POST /dashboard/approvals/:id/reject (note optional) */
export async function postReject(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = ownerGate(s);
  if (account instanceof Response) return account;
  try {
    await rejectPost(ctx.deps, account, id, { note: field(form, "note") });
    return redirect(`${APPROVALS_PATH}?notice=rejected`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await approvalsPage(ctx, s, account, [notice]), status);
  }
}
