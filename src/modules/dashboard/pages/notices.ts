/**
 * Notices (decisions.md §15): what went wrong or needs someone, for the signed-in person in the account they look at,
 * newest first, whether or not it was also emailed. Email choices are on "Your settings".
 */
import type { MailStatus } from "../../../db/schema/notices";
import { isoAt } from "../../../lib/clock";
import { type Html, html, timeTag } from "../../../lib/html";
import { type NoticeView, noticesFor } from "../../notices/service";
import type { DashboardCtx } from "../../../web/guard";
import { htmlResponse } from "../../../web/http";
import { page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { zoneOf } from "../../../web/preferences";

export const NOTICES_PATH = "/dashboard/notices";

function mailWords(status: MailStatus, lastError: string | null): string {
  switch (status) {
    case "sent":
      return "Emailed to you.";
    case "pending":
      return lastError ? `Email not delivered yet; trying again (${lastError}).` : "Email on its way.";
    case "off":
      return "Not emailed: you turned these emails off.";
    case "failed":
      return `The email could not be delivered${lastError ? ` (${lastError})` : ""}.`;
    default:
      return "Not emailed: this Seedcast sends no email.";
  }
}

function noticeItem(s: SessionContext, n: NoticeView): Html {
  return html`<li class="card">
  <p>${n.path ? html`<a href="${n.path}">${n.title}</a>` : n.title}</p>
  <p class="hint">${timeTag(isoAt(n.createdAt), "—", zoneOf(s))} · ${mailWords(n.mailStatus, n.lastError)}</p>
</li>`;
}

/** GET /dashboard/notices */
export async function getNotices(ctx: DashboardCtx, s: SessionContext): Promise<Response> {
  const list = await noticesFor(ctx.deps, s.userId, s.account?.accountId ?? null);
  return htmlResponse(
    page(
      s,
      { title: "Notices", current: NOTICES_PATH },
      html`<p class="muted">Failed posts, connections that need attention and other things that need you${s.account ? html` in ${s.account.accountName}` : ""}, newest first. Choose which ones are also emailed to you in <a href="/dashboard/account#emails-title">Your settings</a>.</p>
${list.length === 0 ? html`<p class="card">Nothing yet. When something needs you, it shows here.</p>` : html`<ul class="plain">${list.map((n) => noticeItem(s, n))}</ul>`}`,
    ),
  );
}
