/**
 * Calendar: the account's posts by day or by week (UTC), upcoming, published and failed, each with its targets'
 * states and errors; cancel a post that has not gone out (owners and editors, the roles that may hold Scheduling).
 */
import type { PostStatus } from "../../../db/schema/scheduled-posts";
import { ROLE_SCOPES } from "../../auth/scopes";
import { findCreationRow } from "../../creations/service";
import { type PostApi, cancelPost, getPost, listPosts } from "../../schedule/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../guard";
import { type Html, html, timeTag } from "../html";
import { htmlResponse, redirect } from "../http";
import { type Notice, confirmPage, csrfField, page } from "../layout";
import type { Membership, SessionContext } from "../session";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/calendar";
const DAY_MS = 24 * 60 * 60 * 1000;
/** The most posts one calendar view lists. */
const VIEW_LIMIT = 200;
const VIEWS = ["week", "day"] as const;
type View = (typeof VIEWS)[number];
const FILTERS: Record<string, { label: string; status?: PostStatus }> = {
  all: { label: "All" },
  scheduled: { label: "Upcoming", status: "scheduled" },
  published: { label: "Published", status: "published" },
  failed: { label: "Failed", status: "failed" },
  partially_failed: { label: "Partly failed", status: "partially_failed" },
};
const STATUS_LABELS: Record<string, string> = {
  scheduled: "scheduled",
  publishing: "publishing",
  published: "published",
  partially_failed: "partly failed",
  failed: "failed",
};

function canCancel(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Monday 00:00 UTC of the week holding `ms`. */
function startOfWeek(ms: number): number {
  const day = startOfDay(ms);
  const weekday = (new Date(day).getUTCDay() + 6) % 7;
  return day - weekday * DAY_MS;
}

function dayKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function dayHeading(ms: number): string {
  return new Date(ms).toLocaleDateString("en-GB", { weekday: "long", day: "numeric", month: "long", year: "numeric", timeZone: "UTC" });
}

const EXCERPT = 90;

/** The creation's caption, shortened, so a person recognises the post. */
function captionOf(ctx: DashboardCtx, accountId: string, creationId: string): string {
  const caption = (findCreationRow(ctx.deps, accountId, creationId)?.caption ?? "").replace(/\s+/g, " ").trim();
  const chars = [...caption];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join("")}…` : caption;
}

function shortDay(ms: number): string {
  return new Date(ms).toLocaleDateString("en-GB", { weekday: "short", day: "numeric", month: "short", timeZone: "UTC" });
}

function postBlock(ctx: DashboardCtx, s: SessionContext, accountId: string, p: PostApi): Html {
  const pending = p.status === "scheduled" || p.status === "publishing" || p.status === "partially_failed" || p.status === "failed";
  return html`<article class="post" id="post-${p.id}" aria-label="Post at ${p.scheduledTime.slice(11, 16)} UTC">
  <p><strong>${p.scheduledTime.slice(11, 16)} UTC</strong> <span class="badge state-${p.status}">${STATUS_LABELS[p.status] ?? p.status}</span>
</p>
  <p class="post-caption"><a href="/dashboard/creations/${p.creationId}">${captionOf(ctx, accountId, p.creationId) || "(creation)"}</a></p>
  ${p.errorMessage ? html`<p class="notice notice-error">${p.errorMessage}</p>` : ""}
  <ul class="targets">${p.targets.map(
    (t) => html`<li><span class="badge state-${t.status}">${t.status}</span> ${t.platform} · ${t.label}${
      t.publishedUrl ? html` · <a href="${t.publishedUrl}">view</a>` : ""
    }${t.errorMessage ? html`<br><span class="error-text">${t.errorMessage}</span>` : ""}</li>`,
  )}</ul>
  ${canCancel(s) && pending && p.status !== "published" ? html`<a class="button small danger" href="${CURRENT}/${p.id}/cancel">Cancel post<span class="sr-only"> at ${p.scheduledTime}</span></a>` : ""}
</article>`;
}

function calendarPage(ctx: DashboardCtx, s: SessionContext, account: Membership, request: Request, notices: Notice[]): Html {
  const params = new URL(request.url).searchParams;
  const view: View = params.get("view") === "day" ? "day" : "week";
  const filterKey = params.get("status") && FILTERS[params.get("status") ?? ""] ? (params.get("status") as string) : "all";
  const filter = FILTERS[filterKey] ?? { label: "All" };
  const date = calendarDate(params.get("date"));
  const anchor = typeof date === "number" ? date : ctx.deps.clock.now();
  const from = view === "week" ? startOfWeek(anchor) : startOfDay(anchor);
  const span = view === "week" ? 7 * DAY_MS : DAY_MS;
  const to = from + span;
  const { posts, nextCursor } = listPosts(ctx.deps, account.accountId, {
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    status: filter.status,
    limit: VIEW_LIMIT,
  });
  const byDay = new Map<string, PostApi[]>();
  for (const p of [...posts].sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime))) {
    const key = p.scheduledTime.slice(0, 10);
    byDay.set(key, [...(byDay.get(key) ?? []), p]);
  }
  const link = (changes: Record<string, string>) => {
    const q = new URLSearchParams({ view, date: dayKey(from), status: filterKey, ...changes });
    return `${CURRENT}?${q.toString()}`;
  };
  const days: number[] = [];
  for (let d = from; d < to; d += DAY_MS) days.push(d);
  const title = view === "week" ? `Week of ${dayHeading(from)}` : dayHeading(from);
  return page(
    s,
    { title: "Calendar", current: CURRENT, notices },
    html`<nav class="tabs" aria-label="Calendar view">
  ${VIEWS.map((v) => html`<a href="${link({ view: v })}"${v === view ? html` aria-current="page"` : ""}>${v === "week" ? "Week" : "Day"}</a>`)}
  <span aria-hidden="true">·</span>
  ${Object.entries(FILTERS).map(([key, f]) => html`<a href="${link({ status: key })}"${key === filterKey ? html` aria-current="page"` : ""}>${f.label}</a>`)}
</nav>
<div class="actions cal-nav">
  <a class="button small secondary" href="${link({ date: dayKey(from - span) })}">← Previous ${view}</a>
  <a class="button small secondary" href="${link({ date: dayKey(ctx.deps.clock.now()) })}">Today</a>
  <a class="button small secondary" href="${link({ date: dayKey(to) })}">Next ${view} →</a>
</div>
<h2>${title} <span class="muted">(times in UTC)</span></h2>
<div class="${view === "week" ? "week" : "single-day"}">
${days.map((d) => {
  const list = byDay.get(dayKey(d)) ?? [];
  const today = dayKey(d) === dayKey(ctx.deps.clock.now());
  return html`<section class="day${list.length === 0 ? " empty" : ""}${today ? " today" : ""}" aria-label="${dayHeading(d)}">
  <h3>${view === "week" ? shortDay(d) : dayHeading(d)}${today ? html` <span class="badge">today</span>` : ""}</h3>
  ${list.length === 0 ? html`<p class="muted">Nothing.</p>` : list.map((p) => postBlock(ctx, s, account.accountId, p))}
</section>`;
})}
</div>
${nextCursor ? html`<p class="hint">Showing the first ${VIEW_LIMIT} posts of this ${view}; switch to the day view to see all.</p>` : ""}`,
  );
}

/** The days a calendar can show: year 1970 to 9999 (a week's end and the next-week link stay valid dates). */
const FIRST_DAY = Date.UTC(1970, 0, 1);
const LAST_DAY = Date.UTC(9999, 11, 24);

/**
 * The `date` parameter as the start of its UTC day: null when absent or empty (today), "invalid" for anything that is
 * not a real calendar day written YYYY-MM-DD within the range above. NB: Date.parse takes expanded years such as
 * +275760-09-13, whose week ends past the largest Date, where toISOString throws a RangeError (a 500, issue 14).
 */
function calendarDate(value: string | null): number | null | "invalid" {
  if (value === null || value === "") return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return "invalid";
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 2026-02-30 over into March: only a day that reads back the same is one.
  if (Number.isNaN(ms) || ms < FIRST_DAY || ms > LAST_DAY || new Date(ms).toISOString().slice(0, 10) !== value) return "invalid";
  return ms;
}

/** GET /dashboard/calendar[?view=week|day&date=YYYY-MM-DD&status=] */
export function getCalendar(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const date = new URL(request.url).searchParams.get("date");
  if (calendarDate(date) === "invalid") {
    // The calendar of today, saying why, with a 400: the address asked for a day that does not exist here.
    const url = new URL(request.url);
    url.searchParams.delete("date");
    const notice: Notice = { kind: "error", text: "That date is not a day between 1970 and 9999 written YYYY-MM-DD; showing today instead." };
    return htmlResponse(calendarPage(ctx, s, account, new Request(url), [notice]), 400);
  }
  return htmlResponse(calendarPage(ctx, s, account, request, noticeFrom(request)));
}

function canceller(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canCancel(s)) return forbiddenPage(s, "Only owners and editors cancel posts.");
  return account;
}

function findPostOrNull(ctx: DashboardCtx, accountId: string, id: string): PostApi | null {
  try {
    return getPost(ctx.deps, accountId, id).post;
  } catch {
    return null;
  }
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such post in this account.</p>`), 404);
}

/** GET /dashboard/calendar/:id/cancel: the confirmation step. */
export function getCancel(ctx: DashboardCtx, s: SessionContext, id: string): Response {
  const account = canceller(s);
  if (account instanceof Response) return account;
  const post = findPostOrNull(ctx, account.accountId, id);
  if (!post) return missing(s);
  return htmlResponse(
    confirmPage(s, {
      title: "Cancel post",
      current: CURRENT,
      question: html`Cancel the post scheduled for ${timeTag(post.scheduledTime)} to ${post.targets.map((t) => t.label).join(", ")}? It is withdrawn from every provider that holds it, then removed from the calendar.`,
      action: `${CURRENT}/${post.id}/cancel`,
      confirmLabel: "Cancel post",
      cancelHref: `${CURRENT}?date=${post.scheduledTime.slice(0, 10)}`,
    }),
  );
}

/** POST /dashboard/calendar/:id/cancel */
export async function postCancel(ctx: DashboardCtx, s: SessionContext, id: string, request: Request): Promise<Response> {
  const account = canceller(s);
  if (account instanceof Response) return account;
  const post = findPostOrNull(ctx, account.accountId, id);
  if (!post) return missing(s);
  try {
    await cancelPost(ctx.deps, account.accountId, id);
    return redirect(`${CURRENT}?date=${post.scheduledTime.slice(0, 10)}&notice=cancelled`);
  } catch (error) {
    const { notice, status } = refusal(error);
    const url = new URL(request.url);
    url.search = `?date=${post.scheduledTime.slice(0, 10)}`;
    return htmlResponse(calendarPage(ctx, s, account, new Request(url), [notice]), status);
  }
}

