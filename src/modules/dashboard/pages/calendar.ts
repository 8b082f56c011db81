/**
 * Calendar: the account's posts by month, week or day, every time in the person's own time zone; each post with its
 * image, a badge for its status and its targets' states (a failed target shows the platform's reason). Owners and
 * editors (the roles that may hold Scheduling) reschedule, by dragging a post to another day in the month and week
 * views (the page script) or with the date and time fields on the post's page (no script), retry a failed post, and
 * cancel one that has not gone out.
 */
import { platformName } from "../../../db/schema/connections";
import type { PostStatus } from "../../../db/schema/scheduled-posts";
import { isoAt } from "../../../lib/clock";
import { AppError } from "../../../lib/errors";
import { ROLE_SCOPES } from "../../../auth/scopes";
import { creationCaptions, findCreationRow } from "../../creations/service";
import { listConnections } from "../../connections/service";
import type { ConnectionRow } from "../../../store/connections";
import { MIN_LEAD_MS, type PostApi, cancelPost, getPost, listPosts, reschedulePost } from "../../schedule/service";
import { resolveUnconfirmedTarget } from "../../schedule/resolve";
import { scheduleRequest } from "../../schedule/request";
import { type FieldErrors, FormState } from "../fields";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import { postThumbnails } from "../post-media";
import { type PendingRetry, pendingRetries } from "../../../publishing/retries";
import { zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import {
  DATE_RE,
  FIRST_DATE,
  LAST_DATE,
  addDays,
  addMonths,
  firstOfMonth,
  longDate,
  mondayOf,
  monthTitle,
  shortDate,
  zoneAbbreviation,
  zoneLabel,
  zoneNameOver,
  zonedParts,
  zonedDateValid,
  zonedToUtc,
} from "../../../lib/zoned";
import { noticeFrom, refusal } from "./common";
import { EXPORT_PATH, IMPORT_PAGE_PATH } from "./import";
import { postContentView } from "../post-content-view";

const CURRENT = "/dashboard/calendar";
/** The most posts one calendar view lists. */
const VIEW_LIMIT = 500;
const VIEWS = ["month", "week", "day"] as const;
type View = (typeof VIEWS)[number];
const VIEW_LABELS: Record<View, string> = { month: "Month", week: "Week", day: "Day" };
const FILTERS: Record<string, { label: string; status?: PostStatus }> = {
  all: { label: "All" },
  scheduled: { label: "Upcoming", status: "scheduled" },
  published: { label: "Published", status: "published" },
  failed: { label: "Failed", status: "failed" },
  partially_failed: { label: "Partly failed", status: "partially_failed" },
  unconfirmed: { label: "Not confirmed", status: "unconfirmed" },
};
/** Each status its own colour, symbol and word, so none relies on colour alone. */
const STATUS: Record<string, { label: string; symbol: string }> = {
  scheduled: { label: "Scheduled", symbol: "◷" },
  publishing: { label: "Publishing", symbol: "↻" },
  published: { label: "Published", symbol: "✓" },
  partially_failed: { label: "Partly failed", symbol: "◐" },
  failed: { label: "Failed", symbol: "✕" },
  unconfirmed: { label: "Not confirmed", symbol: "?" },
  pending_approval: { label: "Waiting for approval", symbol: "⏸" },
};
/** The post page's heading, by the post's status. */
const POST_TITLES: Record<string, string> = {
  scheduled: "Scheduled post",
  publishing: "Post going out",
  published: "Published post",
  partially_failed: "Partly published post",
  failed: "Failed post",
  unconfirmed: "Post to check",
  pending_approval: "Post waiting for approval",
};
const TARGET_LABELS: Record<string, string> = {
  scheduled: "waiting",
  publishing: "sending",
  published: "posted",
  failed: "failed",
  withdrawn: "withdrawn",
  unconfirmed: "not confirmed",
  pending_approval: "waiting for approval",
};
const EXCERPT = 80;

function canSchedule(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

function statusBadge(status: string): Html {
  const st = STATUS[status] ?? { label: status, symbol: "•" };
  return html`<span class="badge status status-${status}"><span aria-hidden="true">${st.symbol}</span> ${st.label}</span>`;
}

/** A creation's caption, shortened, so a person recognises the post. */
function captionOf(text: string | undefined, max = EXCERPT): string {
  const caption = (text ?? "").replace(/\s+/g, " ").trim();
  const chars = [...caption];
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : caption;
}

/** What each failed target's platform answered, once per distinct reason. */
function failureReasons(p: PostApi): string[] {
  const out = new Set<string>();
  for (const t of p.targets) if (t.status === "failed" && t.errorMessage) out.add(`${t.label}: ${t.errorMessage}`);
  return [...out];
}

/** A waiting post's note: it goes out only once an owner approves it; owners get the Approvals page's buttons. */
function waitingNote(s: SessionContext, p: PostApi): Html {
  const owner = s.account?.role === "owner";
  return html`<div class="notice notice-warn"><p><strong>Waiting for approval.</strong> It goes out only once an owner approves it; if nobody does by its time, it fails.</p>
  ${
    owner
      ? html`<div class="approval-actions"><form method="post" action="/dashboard/approvals/${p.id}/approve" class="inline">${csrfField(s.csrfToken)}<button type="submit">Approve</button></form>
  <a href="/dashboard/approvals#post-${p.id}">Reject with a note on the Approvals page</a></div>`
      : ""
  }</div>`;
}

function movable(p: PostApi): boolean {
  const waiting = p.status === "pending_approval";
  return (p.status === "scheduled" || waiting) && p.targets.every((t) => t.status === (waiting ? "pending_approval" : "scheduled"));
}

interface ViewCtx {
  ctx: DashboardCtx;
  s: SessionContext;
  accountId: string;
  zone: string;
  thumbs: Map<string, string>;
  /** Creation id → caption, for the posts shown. */
  captions: Map<string, string>;
  /** Post id → its targets waiting to be tried again. */
  retries: Map<string, PendingRetry[]>;
  back: string;
}

/** "Trying again at 09:42 (attempt 2 of 5)", the time in the person's zone (with the day when it is not today). */
function retryLine(r: PendingRetry, zone: string, now: number): string {
  const at = zonedParts(r.nextAttemptAt, zone);
  const day = at.date === zonedParts(now, zone).date ? "" : ` on ${shortDate(at.date)}`;
  return `Trying again${day} at ${at.time} (attempt ${r.attempt} of ${r.of})`;
}

/** The mark of a repeating post (decisions.md §14: the calendar marks series) and of a queued one. */
function seriesMark(p: PostApi): Html {
  return html`${p.seriesId ? html` <span class="badge repeats"><span aria-hidden="true">↻</span> repeats</span>` : ""}${p.queued ? html` <span class="badge">queued</span>` : ""}`;
}

/** A post in a month or week cell: thumbnail, time, status, caption; draggable when it can move. */
function chip(v: ViewCtx, p: PostApi): Html {
  const at = zonedParts(Date.parse(p.scheduledTime), v.zone);
  const thumb = v.thumbs.get(p.id);
  const drag = canSchedule(v.s) && movable(p);
  return html`<article class="chip status-border-${p.status}" id="post-${p.id}"${drag ? html` draggable="true" data-reschedule="${CURRENT}/posts/${p.id}/reschedule" data-time="${at.time}"` : ""}>
  ${thumb ? html`<img src="${thumb}" alt="" width="40" height="40" loading="lazy">` : ""}
  <div class="chip-body"><p class="chip-head"><time datetime="${p.scheduledTime}">${at.time}</time> ${statusBadge(p.status)}${seriesMark(p)}</p>
  <p class="chip-caption"><a href="${CURRENT}/posts/${p.id}">${captionOf(v.captions.get(p.creationId), 60) || "(post)"}</a></p>
  ${(v.retries.get(p.id) ?? []).map((r) => html`<p class="chip-retry">${retryLine(r, v.zone, v.ctx.deps.clock.now())}</p>`)}
  ${failureReasons(p).map((r) => html`<p class="chip-error">${r}</p>`)}
  ${failureReasons(p).length > 0 && canSchedule(v.s) ? html`<p><a href="${CURRENT}/posts/${p.id}">Retry or reschedule</a></p>` : ""}</div>
</article>`;
}

/** A post in the day view: everything, with its actions. */
function block(v: ViewCtx, p: PostApi): Html {
  const at = zonedParts(Date.parse(p.scheduledTime), v.zone);
  const thumb = v.thumbs.get(p.id);
  return html`<article class="post" id="post-${p.id}">
  <div class="post-row">${thumb ? html`<img class="thumb" src="${thumb}" alt="" width="72" height="72" loading="lazy">` : ""}
  <div><p><strong><time datetime="${p.scheduledTime}">${at.time}</time></strong> ${statusBadge(p.status)}${seriesMark(p)}</p>
  <p class="post-caption"><a href="${CURRENT}/posts/${p.id}">${captionOf(v.captions.get(p.creationId)) || "(post)"}</a></p></div></div>
  ${targetsList(p, v.retries.get(p.id) ?? [], v.zone, v.ctx.deps.clock.now())}
  <p class="actions"><a class="button small secondary" href="${CURRENT}/posts/${p.id}">Details${movable(p) && canSchedule(v.s) ? ", reschedule" : ""}<span class="sr-only"> of the post at ${at.time}</span></a></p>
</article>`;
}

/** Where a post goes, each target with its state; one being retried says when, and what the last try answered. */
function targetsList(p: PostApi, retries: readonly PendingRetry[], zone: string, now: number): Html {
  return html`<ul class="targets">${p.targets.map((t) => {
    const retry = retries.find((r) => r.targetKey === t.accountId);
    const state = retry ? html`<span class="badge status status-publishing">retrying</span>` : html`<span class="badge status status-${t.status}">${TARGET_LABELS[t.status] ?? t.status}</span>`;
    const detail = retry
      ? html`<br><strong>${retryLine(retry, zone, now)}.</strong>${retry.lastError ? html` <span class="muted">Last try: ${retry.lastError}</span>` : ""}`
      : t.errorMessage
        ? html`<br><span class="error-text">${t.errorMessage}</span>`
        : "";
    return html`<li>${state} ${t.label} <span class="muted">(${platformName(t.platform)})</span>${t.publishedUrl ? html` · <a href="${t.publishedUrl}">see the post</a>` : ""}${detail}</li>`;
  })}</ul>`;
}


/** The last day a calendar may be asked for: its week and the next-week link stay within four-digit years. */
const LAST_ASKABLE = "9999-12-24";

/** The `date` parameter: null when absent (today), "invalid" unless a real day YYYY-MM-DD from 1970 to 9999-12-24. */
function calendarDate(value: string | null): string | null | "invalid" {
  if (value === null || value === "") return null;
  return zonedDateValid(value) && value >= FIRST_DATE && value <= LAST_ASKABLE ? value : "invalid";
}

async function calendarPage(ctx: DashboardCtx, s: SessionContext, account: Membership, request: Request, notices: Notice[]): Promise<Html> {
  const params = new URL(request.url).searchParams;
  const zone = zoneOf(s);
  const now = ctx.deps.clock.now();
  const today = zonedParts(now, zone).date;
  const wanted = params.get("view");
  const view: View = wanted === "week" || wanted === "day" || wanted === "month" ? wanted : "month";
  const filterKey = params.get("status") && FILTERS[params.get("status") ?? ""] ? (params.get("status") as string) : "all";
  const filter = FILTERS[filterKey] ?? { label: "All" };
  const asked = calendarDate(params.get("date"));
  let anchor = typeof asked === "string" && asked !== "invalid" ? asked : today;
  const focusPost = params.get("post");
  if (focusPost) {
    try {
      anchor = zonedParts(Date.parse((await getPost(ctx.deps, account.accountId, focusPost)).post.scheduledTime), zone).date;
    } catch {
      // an unknown id: show the default view
    }
  }

  // The days shown: a month as whole Monday-first weeks, a week from Monday, or the one day.
  const first = view === "month" ? mondayOf(firstOfMonth(anchor)) : view === "week" ? mondayOf(anchor) : anchor;
  const monthLast = addDays(addMonths(anchor, 1), -1);
  const last = view === "month" ? addDays(mondayOf(monthLast.slice(0, 7) === anchor.slice(0, 7) ? monthLast : LAST_DATE), 6) : view === "week" ? addDays(first, 6) : anchor;
  const days: string[] = [];
  // At most six weeks; addDays stops at the last date it knows, so the walk ends there too.
  for (let d = first; days.length < 42; ) {
    days.push(d);
    const next = addDays(d, 1);
    if (d >= last || next === d) break;
    d = next;
  }

  const from = zonedToUtc(first, "00:00", zone) ?? now;
  const to = zonedToUtc(addDays(last, 1), "00:00", zone) ?? now;
  const { posts, nextCursor } = await listPosts(ctx.deps, account.accountId, { from: isoAt(from), to: isoAt(to), status: filter.status, limit: VIEW_LIMIT });
  const byDay = new Map<string, PostApi[]>();
  for (const p of [...posts].sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime))) {
    const key = zonedParts(Date.parse(p.scheduledTime), zone).date;
    byDay.set(key, [...(byDay.get(key) ?? []), p]);
  }
  const link = (changes: Record<string, string>) => `${CURRENT}?${new URLSearchParams({ view, date: anchor, status: filterKey, ...changes }).toString()}`;
  const v: ViewCtx = {
    ctx,
    s,
    accountId: account.accountId,
    zone,
    thumbs: await postThumbnails(ctx.deps, account.accountId, posts.map((p) => p.id)),
    captions: await creationCaptions(ctx.deps, account.accountId, posts.map((p) => p.creationId)),
    retries: await pendingRetries(ctx.deps, posts.map((p) => p.id)),
    back: link({}),
  };
  const prev = view === "month" ? addMonths(anchor, -1) : addDays(anchor, view === "week" ? -7 : -1);
  const next = view === "month" ? addMonths(anchor, 1) : addDays(anchor, view === "week" ? 7 : 1);
  const heading = view === "month" ? monthTitle(anchor) : view === "week" ? `Week of ${longDate(first)}` : longDate(anchor);
  const month = anchor.slice(0, 7);

  const cell = (d: string) => {
    const list = byDay.get(d) ?? [];
    const outside = view === "month" && d.slice(0, 7) !== month;
    const isToday = d === today;
    const label = `${longDate(d)}${isToday ? ", today" : ""}${list.length ? `, ${list.length} post${list.length === 1 ? "" : "s"}` : ""}`;
    return html`<li class="cal-day${list.length === 0 ? " empty" : ""}${isToday ? " today" : ""}${outside ? " outside" : ""}" data-date="${d}" aria-label="${label}">
  <h3 class="cal-date"><a href="${link({ view: "day", date: d })}">${view === "month" ? html`<span class="wd">${shortDate(d).split(" ")[0]} </span>${Number(d.slice(8))}` : shortDate(d)}</a>${isToday ? html` <span class="badge">today</span>` : ""}</h3>
  ${list.map((p) => chip(v, p))}
</li>`;
  };

  return page(
    s,
    { title: "Calendar", current: CURRENT, notices },
    html`<nav class="tabs" aria-label="Calendar view">
  ${VIEWS.map((w) => html`<a href="${link({ view: w })}"${w === view ? html` aria-current="page"` : ""}>${VIEW_LABELS[w]}</a>`)}
</nav>
<nav class="tabs" aria-label="Which posts">
  ${Object.entries(FILTERS).map(([key, f]) => html`<a href="${link({ status: key })}"${key === filterKey ? html` aria-current="page"` : ""}>${f.label}</a>`)}
</nav>
<div class="actions cal-nav">
  <a class="button small secondary" href="${link({ date: prev })}">← Previous<span class="sr-only"> ${view}</span></a>
  <a class="button small secondary" href="${link({ date: today })}">Today</a>
  <a class="button small secondary" href="${link({ date: next })}">Next<span class="sr-only"> ${view}</span> →</a>
</div>
<h2>${heading} <span class="muted zone-note">times in ${zoneLabel(zone)} (${zoneNameOver(view === "month" ? firstOfMonth(anchor) : first, view === "month" ? monthLast : last, zone)}) · <a href="/dashboard/account">change</a></span></h2>
${
  view === "day"
    ? html`<section class="single-day" data-date="${anchor}" aria-label="${longDate(anchor)}">${(byDay.get(anchor) ?? []).length === 0 ? html`<p class="muted">Nothing on this day.</p>` : (byDay.get(anchor) ?? []).map((p) => block(v, p))}</section>`
    : html`${view === "month" ? html`<ol class="cal-head plain" aria-hidden="true">${["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map((d) => html`<li>${d}</li>`)}</ol>` : ""}
<ol class="cal-grid cal-${view} plain"${canSchedule(s) ? html` data-csrf="${s.csrfToken}" data-back="${link({})}"` : ""}>${days.map(cell)}</ol>
${canSchedule(s) ? html`<p class="hint">Drag a scheduled post to another day to move it (same time of day), or open it to choose a new date and time.</p>` : ""}`
}
${nextCursor ? html`<p class="hint">Showing the first ${VIEW_LIMIT} posts; use a narrower view to see all.</p>` : ""}
<p class="actions">${canSchedule(s) ? html`<a class="button small secondary" href="${IMPORT_PAGE_PATH}">Import posts from CSV</a>` : ""}<a class="button small secondary" href="${EXPORT_PATH}" download>Export all posts as CSV</a></p>`,
  );
}

/** GET /dashboard/calendar[?view=month|week|day&date=YYYY-MM-DD&status=&post=] */
export async function getCalendar(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (calendarDate(new URL(request.url).searchParams.get("date")) === "invalid") {
    // Today's calendar, saying why, with a 400: the address asked for a day that does not exist here.
    const notice: Notice = { kind: "error", text: "That date is not a day between 1970 and 9999 written YYYY-MM-DD; showing today instead." };
    return htmlResponse(await calendarPage(ctx, s, account, request, [notice]), 400);
  }
  return htmlResponse(await calendarPage(ctx, s, account, request, noticeFrom(request)));
}

function scheduler(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canSchedule(s)) return forbiddenPage(s, "Only owners and editors change scheduled posts.");
  return account;
}

async function findPostOrNull(ctx: DashboardCtx, accountId: string, id: string): Promise<PostApi | null> {
  try {
    return (await getPost(ctx.deps, accountId, id)).post;
  } catch {
    return null;
  }
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such post in this account. <a href="${CURRENT}">Calendar</a></p>`), 404);
}

function dayLink(zone: string, p: PostApi, view = "month"): string {
  return `${CURRENT}?view=${view}&date=${zonedParts(Date.parse(p.scheduledTime), zone).date}`;
}

interface PostPageState {
  notices?: Notice[];
  /** Per unconfirmed target (its accountId): what was wrong with the pasted address. */
  resolveErrors?: Record<string, FieldErrors>;
  errors?: FieldErrors;
  values?: { date: string; time: string };
  contentErrors?: FieldErrors;
  contentValues?: { caption: string; altText: string };
}

/**
 * The question for one unconfirmed target (decisions.md §12): the network could not tell whether it went out, so a
 * person looks and answers "It was posted" (with its address, when they have it) or "Send again".
 */
function unconfirmedCard(s: SessionContext, p: PostApi, t: PostApi["targets"][number], errors: FieldErrors = {}): Html {
  const f = new FormState(errors);
  const network = platformName(t.platform);
  const action = `${CURRENT}/posts/${p.id}/targets/${t.accountId}/resolve`;
  const id = `resolve-${t.accountId}`;
  return html`<section class="card form-card attention" aria-labelledby="${id}-title">
  <h2 id="${id}-title">Did it go out on ${t.label}?</h2>
  <p>${network} did not confirm whether this post went out, and Seedcast cannot ask. It will not send it again by itself, so that nobody sees it twice. Look at ${t.label} on ${network}, then tell Seedcast what you found.</p>
  <form method="post" action="${action}" novalidate>
    ${csrfField(s.csrfToken)}
    <input type="hidden" name="outcome" value="posted">
    ${f.input({ name: "publishedUrl", id: `${id}-url`, label: "Its address (optional)", type: "url", value: "", hint: `Paste the link to the post on ${network}, if you have it.`, attrs: html` placeholder="https://…"` })}
    <button type="submit">It was posted</button>
  </form>
  <form method="post" action="${action}">
    ${csrfField(s.csrfToken)}
    <input type="hidden" name="outcome" value="send_again">
    <p class="hint">Not there? Send it again now: messages already confirmed are not sent a second time.</p>
    <button type="submit" class="secondary">Send again</button>
  </form>
</section>`;
}

/** The post's page: everything about it, and the keyboard way to reschedule (date and time fields). */
async function postPage(ctx: DashboardCtx, s: SessionContext, account: Membership, p: PostApi, state: PostPageState): Promise<Html> {
  const zone = zoneOf(s);
  const at = zonedParts(Date.parse(p.scheduledTime), zone);
  const thumb = (await postThumbnails(ctx.deps, account.accountId, [p.id])).get(p.id);
  const failed = p.status === "failed" || p.status === "partially_failed";
  const f = new FormState(state.errors);
  const soon = zonedParts(ctx.deps.clock.now() + MIN_LEAD_MS + 60_000, zone);
  const values = state.values ?? (failed ? { date: soon.date, time: soon.time } : { date: at.date, time: at.time });
  const creation = await findCreationRow(ctx.deps, account.accountId, p.creationId);
  const creationExists = creation !== null;
  const caption = p.content.caption;
  const retries = (await pendingRetries(ctx.deps, [p.id])).get(p.id) ?? [];
  const connections = new Map((await listConnections(ctx.deps, account.accountId)).map((c) => [c.id, c]));
  const blocked = p.targets
    .filter((t) => t.status === "scheduled" || t.status === "publishing")
    .map((t) => connections.get(t.accountId))
    .filter((c): c is ConnectionRow => c !== undefined && !c.readyToPost);
  const timeFields = html`<div class="grid2 tight">${f.input({ name: "date", label: "Date", type: "date", value: values.date, required: true })}
    ${f.input({ name: "time", label: "Time", type: "time", value: values.time, required: true, hint: `${zoneLabel(zone)} (${zoneAbbreviation(Date.parse(p.scheduledTime), zone)})` })}</div>`;
  return page(
    s,
    { title: POST_TITLES[p.status] ?? "Scheduled post", current: CURRENT, notices: state.notices },
    html`<p><a href="${dayLink(zone, p)}">← Back to the calendar</a></p>
<article class="card post">
  <div class="post-row">${thumb ? html`<img class="thumb" src="${thumb}" alt="" width="96" height="96">` : ""}
  <div><p><strong>${longDate(at.date)}, <time datetime="${p.scheduledTime}">${at.time}</time></strong> <span class="muted">${zoneLabel(zone)}</span> ${statusBadge(p.status)}</p>
  <p class="post-caption caption">${caption}</p>
  ${creationExists ? html`<p><a href="/dashboard/creations/${p.creationId}">Open the post it was made from</a></p>` : ""}</div></div>
  ${await postContentView(ctx.deps, account.accountId, p.content, 2)}
  ${
    p.status === "unconfirmed"
      ? html`<p class="notice notice-warn">Not every network could confirm that this went out. Answer for each below; nothing is sent again until you do.${
          p.seriesId ? " This post repeats: its next time is scheduled once you have answered." : ""
        }</p>`
      : p.errorMessage
        ? html`<p class="notice notice-error">${p.errorMessage}</p>`
        : ""
  }
  ${p.status === "pending_approval" ? waitingNote(s, p) : ""}
  ${blocked.map((c) => html`<p class="notice notice-warn">${c.label} needs attention: ${c.blockedReason ?? "it is not ready to post."} <a href="/dashboard/connections#connection-${c.id}">Fix it on the Connections page</a>.</p>`)}
  <h2>Where it goes</h2>
  ${targetsList(p, retries, zone, ctx.deps.clock.now())}
</article>
${canSchedule(s) ? p.targets.filter((t) => t.status === "unconfirmed").map((t) => unconfirmedCard(s, p, t, state.resolveErrors?.[t.accountId])) : ""}
${
  canSchedule(s) && movable(p)
    ? (() => {
        const cf = new FormState(state.contentErrors);
        const cv = state.contentValues ?? { caption: p.content.caption, altText: p.content.altText ?? "" };
        return html`<form method="post" action="${CURRENT}/posts/${p.id}/content" class="card form-card" aria-labelledby="content-title" novalidate>
  <h2 id="content-title">Edit what it sends</h2>
  ${csrfField(s.csrfToken)}
  ${cf.textarea({ name: "caption", label: "Caption", value: cv.caption, rows: 7, required: true, hint: "Checked against each connection's limit. The post it was made from stays as it is." })}
  ${p.content.altText !== null ? cf.textarea({ name: "altText", label: p.content.images.length > 1 ? "Alt text of the first image (describes it for people who cannot see it)" : "Alt text (describes the image for people who cannot see it)", value: cv.altText, rows: 3 }) : ""}
  <button type="submit">Save the post's text</button>
</form>`;
      })()
    : ""
}
${
  canSchedule(s) && movable(p)
    ? html`<form method="post" action="${CURRENT}/posts/${p.id}/reschedule" class="card form-card" aria-labelledby="move-title" novalidate>
  <h2 id="move-title">Reschedule</h2>
  ${csrfField(s.csrfToken)}
  ${timeFields}
  <button type="submit">Move the post</button>
</form>`
    : ""
}
${
  canSchedule(s) && failed && creationExists
    ? html`<form method="post" action="${CURRENT}/posts/${p.id}/retry" class="card form-card" aria-labelledby="retry-title" novalidate>
  <h2 id="retry-title">Try again</h2>
  ${csrfField(s.csrfToken)}
  <p>Schedules the post again to the connections where it failed, with its post's current caption and image. Fix what the platform answered first (for example on the <a href="/dashboard/connections">Connections</a> page).</p>
  ${timeFields}
  <button type="submit">Retry at this time</button>
</form>`
    : ""
}
${canSchedule(s) && p.status !== "published" && !p.targets.some((t) => t.status === "published" || t.status === "unconfirmed") ? html`<p><a class="button small danger" href="${CURRENT}/${p.id}/cancel">Cancel this post…</a></p>` : ""}`,
  );
}

/** GET /dashboard/calendar/posts/:id */
export async function getPostPage(ctx: DashboardCtx, s: SessionContext, id: string, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const p = await findPostOrNull(ctx, account.accountId, id);
  if (!p) return missing(s);
  return htmlResponse(await postPage(ctx, s, account, p, { notices: noticeFrom(request) }));
}

/** Reads date and time in the person's zone; errors in plain words beside the fields. */
function readWhen(ctx: DashboardCtx, zone: string, form: Form | undefined): { at: number | null; values: { date: string; time: string }; errors: FieldErrors } {
  const values = { date: field(form, "date"), time: field(form, "time") };
  const errors: FieldErrors = {};
  const at = zonedToUtc(values.date, values.time, zone);
  if (!zonedDateValid(values.date)) errors.date = "Enter a date, such as 2026-11-25.";
  if (!/^([01]\d|2[0-3]):[0-5]\d$/.test(values.time)) errors.time = "Enter a time, such as 09:00.";
  else if (at !== null && at < ctx.deps.clock.now() + MIN_LEAD_MS) errors.time = `Choose a time at least ${Math.round(MIN_LEAD_MS / 60000)} minutes from now.`;
  return { at: Object.keys(errors).length === 0 ? at : null, values, errors };
}

/** Where to go after a move: the page the drag came from (a calendar URL only), or the post's month. */
function backTo(form: Form | undefined, fallback: string): string {
  const back = field(form, "back");
  return /^\/dashboard\/calendar\?[A-Za-z0-9=&%_.-]*$/.test(back) ? back : fallback;
}

/** POST /dashboard/calendar/posts/:id/reschedule (the drag, or the form): the schedule service's reschedule. */
export async function postReschedule(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const p = await findPostOrNull(ctx, account.accountId, id);
  if (!p) return missing(s);
  const zone = zoneOf(s);
  const { at, values, errors } = readWhen(ctx, zone, form);
  if (at === null) return htmlResponse(await postPage(ctx, s, account, p, { errors, values }), 400);
  try {
    const { post } = await reschedulePost(ctx.deps, account.accountId, id, { scheduledTime: isoAt(at) });
    const fallback = `${dayLink(zone, post)}`;
    const back = backTo(form, fallback);
    return redirect(`${back}${back.includes("?") ? "&" : "?"}notice=rescheduled#post-${post.id}`);
  } catch (error) {
    if (error instanceof AppError && error.code === "scheduled_time_too_soon") {
      return htmlResponse(await postPage(ctx, s, account, p, { errors: { time: `Choose a time at least ${Math.round(MIN_LEAD_MS / 60000)} minutes from now.` }, values }), 400);
    }
    const { notice, status } = refusal(error);
    const fresh = await findPostOrNull(ctx, account.accountId, id);
    if (!fresh) return missing(s);
    return htmlResponse(await postPage(ctx, s, account, fresh, { notices: [notice], values }), status);
  }
}

/** POST /dashboard/calendar/posts/:id/content: changes the caption and alt text the post sends (its snapshot). */
export async function postContent(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const p = await findPostOrNull(ctx, account.accountId, id);
  if (!p) return missing(s);
  const values = { caption: field(form, "caption"), altText: field(form, "altText") };
  try {
    await reschedulePost(
      ctx.deps,
      account.accountId,
      id,
      { content: { caption: values.caption, ...(p.content.altText !== null ? { altText: values.altText } : {}) } },
      account,
    );
    return redirect(`${CURRENT}/posts/${id}?notice=post-content-saved`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const fresh = (await findPostOrNull(ctx, account.accountId, id)) ?? p;
    const problems = Array.isArray(error.extra.problems) ? (error.extra.problems as { problem?: string }[]) : [];
    const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: string; problem?: string }[]) : [];
    const errors: FieldErrors = {};
    for (const d of details) {
      if (d.field === "content.caption") errors.caption = /empty/.test(d.problem ?? "") ? "Write a caption; it cannot be empty." : `The caption ${d.problem}.`;
      if (d.field === "content.alt_text") errors.altText = `The alt text ${d.problem}.`;
    }
    if (error.code === "not_schedulable") errors.caption = `It cannot go out as it is: ${problems.map((x) => x.problem).filter(Boolean).join("; ") || error.message}.`;
    if (Object.keys(errors).length > 0) return htmlResponse(await postPage(ctx, s, account, fresh, { contentErrors: errors, contentValues: values }), error.status);
    const { notice, status } = refusal(error);
    return htmlResponse(await postPage(ctx, s, account, fresh, { notices: [notice], contentValues: values }), status);
  }
}

/** POST /dashboard/calendar/posts/:id/targets/:accountId/resolve: "It was posted" or "Send again" for an unconfirmed target. */
export async function postResolve(ctx: DashboardCtx, s: SessionContext, id: string, targetId: string, form: Form | undefined): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const p = await findPostOrNull(ctx, account.accountId, id);
  if (!p) return missing(s);
  const outcome = field(form, "outcome") === "send_again" ? "send_again" : "posted";
  try {
    await resolveUnconfirmedTarget(ctx.deps, account.accountId, id, targetId, { outcome, publishedUrl: outcome === "posted" ? field(form, "publishedUrl") : null });
    return redirect(`${CURRENT}/posts/${id}?notice=${outcome === "posted" ? "marked-posted" : "sending-again"}`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const errors = { [targetId]: { publishedUrl: "Paste the post's address as it shows in your browser, starting with https://, or leave it empty." } };
      return htmlResponse(await postPage(ctx, s, account, p, { resolveErrors: errors }), 400);
    }
    const { notice, status } = refusal(error);
    const fresh = (await findPostOrNull(ctx, account.accountId, id)) ?? p;
    return htmlResponse(await postPage(ctx, s, account, fresh, { notices: [notice] }), status);
  }
}

/** POST /dashboard/calendar/posts/:id/retry: schedules the creation again to the targets that failed. */
export async function postRetry(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const p = await findPostOrNull(ctx, account.accountId, id);
  if (!p) return missing(s);
  const zone = zoneOf(s);
  const { at, values, errors } = readWhen(ctx, zone, form);
  if (at === null) return htmlResponse(await postPage(ctx, s, account, p, { errors, values }), 400);
  const failedTargets = p.targets.filter((t) => t.status === "failed").map((t) => t.accountId);
  try {
    const { post } = await scheduleRequest(ctx.deps, account, { creationId: p.creationId, scheduledTime: isoAt(at), targets: failedTargets });
    return redirect(`${CURRENT}/posts/${post.id}?notice=retry-scheduled`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await postPage(ctx, s, account, p, { notices: [notice], values }), status);
  }
}

/** GET /dashboard/calendar/:id/cancel: the confirmation step. */
export async function getCancel(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const post = await findPostOrNull(ctx, account.accountId, id);
  if (!post) return missing(s);
  const zone = zoneOf(s);
  const at = zonedParts(Date.parse(post.scheduledTime), zone);
  return htmlResponse(
    confirmPage(s, {
      title: "Cancel this post?",
      current: CURRENT,
      question: html`Cancel the post scheduled for ${longDate(at.date)} at ${at.time} (${zoneLabel(zone)}) to ${post.targets.map((t) => t.label).join(", ")}? It is withdrawn from every provider that holds it, then removed from the calendar.`,
      action: `${CURRENT}/${post.id}/cancel`,
      confirmLabel: "Cancel this post",
      keepLabel: "Keep it",
      cancelHref: `${CURRENT}/posts/${post.id}`,
    }),
  );
}

/** POST /dashboard/calendar/:id/cancel */
export async function postCancel(ctx: DashboardCtx, s: SessionContext, id: string, request: Request): Promise<Response> {
  const account = scheduler(s);
  if (account instanceof Response) return account;
  const post = await findPostOrNull(ctx, account.accountId, id);
  if (!post) return missing(s);
  const zone = zoneOf(s);
  try {
    await cancelPost(ctx.deps, account.accountId, id);
    return redirect(`${dayLink(zone, post)}&notice=cancelled`);
  } catch (error) {
    const { notice, status } = refusal(error);
    const url = new URL(request.url);
    url.pathname = CURRENT;
    url.search = `?date=${zonedParts(Date.parse(post.scheduledTime), zone).date}`;
    return htmlResponse(await calendarPage(ctx, s, account, new Request(url), [notice]), status);
  }
}
