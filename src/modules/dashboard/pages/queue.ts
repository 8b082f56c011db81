/**
 * The queue pages (decisions.md §14): the Queue view (the coming posting slots, filled and empty; move a post to
 * another slot; "Post now") and the posting-schedule editor (days × times × connections, and the account's time zone,
 * which only owners change). Times are shown in the person's own zone; slot times are typed in the account's.
 */
import { ROLE_SCOPES } from "../../../auth/scopes";
import { AppError } from "../../../lib/errors";
import { type Html, html } from "../../../lib/html";
import { PLATFORM_NAMES } from "../../../db/schema/connections";
import type { ConnectionRow } from "../../../store/connections";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import { timeZones, zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import { listConnections } from "../../connections/service";
import { moveToSlot, postNow, queueView } from "../../schedule/queue";
import { MIN_LEAD_MS } from "../../schedule/service";
import { getSlots, type PostingSchedule, putSlots, WEEKDAYS } from "../../schedule/slots";
import { FormState } from "../fields";
import { shortDate, zoneAbbreviation, zoneLabel, zonedParts } from "../../../lib/zoned";
import { refusal } from "./common";

export const QUEUE_PATH = "/dashboard/queue";
export const SCHEDULE_EDITOR_PATH = "/dashboard/queue/schedule";
/** How far ahead the Queue view lists slots. */
const VIEW_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;
const DAY_NAMES: Record<string, string> = { mon: "Mon", tue: "Tue", wed: "Wed", thu: "Thu", fri: "Fri", sat: "Sat", sun: "Sun" };
/** Empty rows the editor offers for new slots. */
const NEW_ROWS = 1;

const QUEUE_NOTICES: Record<string, string> = {
  "slots-saved": "The posting schedule was saved. Posts already queued keep their times.",
  moved: "The post was moved to that slot.",
  "posted-now": "The post is going out now.",
  queued: "Added to the queue: it takes the slot shown.",
};

function canSchedule(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

function noticeOf(request: Request): Notice[] {
  const key = new URL(request.url).searchParams.get("notice");
  const text = key ? QUEUE_NOTICES[key] : undefined;
  return text ? [{ kind: "ok", text }] : [];
}

/** A connection as people tell it apart: its label and its network (one shop is often @name on several). */
function nameOf(c: ConnectionRow): string {
  return `${c.label} (${PLATFORM_NAMES[c.platform]})`;
}

function labelsOf(connections: readonly ConnectionRow[], ids: readonly string[]): string {
  const byId = new Map(connections.map((c) => [c.id, nameOf(c)]));
  return ids.map((id) => byId.get(id) ?? "a removed connection").join(", ");
}

function when(at: number, zone: string): { date: string; time: string } {
  return zonedParts(at, zone);
}

/** A "Move to" choice: the empty slots that have every one of the post's connections. */
function moveForm(s: SessionContext, postId: string, options: readonly { at: number; label: string }[]): Html {
  if (options.length === 0) return html``;
  return html`<form method="post" action="${QUEUE_PATH}/posts/${postId}/move" class="inline actions">
  ${csrfField(s.csrfToken)}
  <label for="move-${postId}" class="sr-only">Move this post to</label>
  <select id="move-${postId}" name="at">${options.map((o) => html`<option value="${String(o.at)}">${o.label}</option>`)}</select>
  <button type="submit" class="secondary">Move</button>
</form>`;
}

async function queuePage(ctx: DashboardCtx, s: SessionContext, account: Membership, notices: readonly Notice[]): Promise<Html> {
  const zone = zoneOf(s);
  const now = ctx.deps.clock.now();
  const from = now + MIN_LEAD_MS;
  const [{ slots, outside }, schedule, connections] = await Promise.all([
    queueView(ctx.deps, account.accountId, from, from + VIEW_DAYS * DAY_MS),
    getSlots(ctx.deps, account.accountId),
    listConnections(ctx.deps, account.accountId),
  ]);
  const writable = canSchedule(s);
  const empty = slots.filter((slot) => slot.post === null);
  const label = (at: number) => {
    const w = when(at, zone);
    return `${shortDate(w.date)}, ${w.time}`;
  };
  const days = new Map<string, typeof slots>();
  for (const slot of slots) {
    const date = when(slot.at, zone).date;
    days.set(date, [...(days.get(date) ?? []), slot]);
  }
  const filled = slots.length - empty.length;
  const intro =
    schedule.slots.length === 0
      ? html`<p class="card">No posting slots yet. ${writable ? html`<a href="${SCHEDULE_EDITOR_PATH}">Set up the posting schedule</a>` : "An owner or editor sets up the posting schedule"}; then "Add to queue" on a post puts it in the next free slot.</p>`
      : html`<p>${filled} of ${slots.length} slots in the next ${VIEW_DAYS} days are filled. Times are in ${zoneLabel(zone)} (${zoneAbbreviation(now, zone)}); the schedule follows the account's zone, ${zoneLabel(schedule.timeZone)}. ${writable ? html`<a href="${SCHEDULE_EDITOR_PATH}">Change the posting schedule</a>.` : ""}</p>`;
  const rows = [...days.entries()].map(
    ([date, daySlots]) => html`<section class="card queue-day" aria-labelledby="day-${date}">
  <h2 id="day-${date}">${shortDate(date)}</h2>
  <ol class="queue-slots">${daySlots.map((slot) => {
    const w = when(slot.at, zone);
    if (!slot.post) {
      return html`<li class="queue-slot empty"><p><time datetime="${new Date(slot.at).toISOString()}">${w.time}</time> <span class="muted">Empty · ${labelsOf(connections, slot.targets)}</span></p></li>`;
    }
    const post = slot.post;
    const fits = empty.filter((e) => post.targets.every((t) => e.targets.includes(t))).map((e) => ({ at: e.at, label: label(e.at) }));
    return html`<li class="queue-slot filled" id="post-${post.id}">
  <p><time datetime="${new Date(slot.at).toISOString()}">${w.time}</time> <a href="/dashboard/calendar/posts/${post.id}">${post.caption.slice(0, 80) || "(post)"}</a></p>
  <p class="muted">To ${labelsOf(connections, post.targets)}</p>
  ${
    writable && post.status === "scheduled"
      ? html`<div class="actions">${moveForm(s, post.id, fits)}
  <form method="post" action="${QUEUE_PATH}/posts/${post.id}/now" class="inline">${csrfField(s.csrfToken)}<button type="submit" class="secondary">Post now</button></form></div>`
      : html`<p class="muted">${post.status.replace("_", " ")}</p>`
  }
</li>`;
  })}</ol>
</section>`,
  );
  const stray = outside.length === 0
    ? html``
    : html`<section class="card" aria-labelledby="outside-title"><h2 id="outside-title">Queued outside today's slots</h2>
  <p class="hint">The schedule changed after these were queued; they keep their times.</p>
  <ul>${outside.map((p) => html`<li><time datetime="${new Date(p.at).toISOString()}">${label(p.at)}</time> <a href="/dashboard/calendar/posts/${p.id}">${p.caption.slice(0, 80) || "(post)"}</a></li>`)}</ul></section>`;
  return page(s, { title: "Queue", current: QUEUE_PATH, notices }, html`${intro}${rows}${stray}`);
}

/** GET /dashboard/queue */
export async function getQueue(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(await queuePage(ctx, s, account, noticeOf(request)));
}

function scheduleGate(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canSchedule(s)) return forbiddenPage(s, "Only owners and editors change the queue.");
  return account;
}

/** POST /dashboard/queue/posts/:id/move */
export async function postMove(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = scheduleGate(s);
  if (account instanceof Response) return account;
  const at = Number(field(form, "at"));
  try {
    if (!Number.isSafeInteger(at)) throw new AppError("no_free_slot", "Choose one of the empty slots.");
    await moveToSlot(ctx.deps, account.accountId, id, at);
    return redirect(`${QUEUE_PATH}?notice=moved#post-${id}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await queuePage(ctx, s, account, [notice]), status);
  }
}

/** POST /dashboard/queue/posts/:id/now */
export async function postPostNow(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = scheduleGate(s);
  if (account instanceof Response) return account;
  try {
    await postNow(ctx.deps, account.accountId, id);
    return redirect(`${QUEUE_PATH}?notice=posted-now`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await queuePage(ctx, s, account, [notice]), status);
  }
}

interface EditorRow {
  days: string[];
  time: string;
  targets: string[];
}

function rowFields(s: SessionContext, i: number, row: EditorRow, connections: readonly ConnectionRow[], isNew: boolean): Html {
  const legend = isNew ? "New slot" : `Slot ${i + 1}`;
  return html`<fieldset class="slot-row" id="slot-${i}">
  <legend>${legend}</legend>
  <div class="slot-days" role="group" aria-label="${legend}: days">${WEEKDAYS.map(
    (d) => html`<label><input type="checkbox" name="days-${String(i)}" value="${d}"${row.days.includes(d) ? html` checked` : ""}> ${DAY_NAMES[d] ?? d}</label>`,
  )}</div>
  <label for="time-${i}">Time (HH:MM)</label>
  <input id="time-${i}" name="time-${String(i)}" type="time" value="${row.time}">
  <div role="group" aria-label="${legend}: connections">${connections.map(
    (c) => html`<label><input type="checkbox" name="targets-${String(i)}" value="${c.id}"${row.targets.includes(c.id) ? html` checked` : ""}> <span>${c.label} <span class="muted">(${PLATFORM_NAMES[c.platform]})</span></span></label>`,
  )}</div>
  ${isNew ? "" : html`<label><input type="checkbox" name="remove-${String(i)}" value="yes"> Remove this slot</label>`}
</fieldset>`;
}

async function editorPage(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  opts: { notices?: readonly Notice[]; schedule?: PostingSchedule; zoneError?: string },
): Promise<Html> {
  const schedule = opts.schedule ?? (await getSlots(ctx.deps, account.accountId));
  const connections = await listConnections(ctx.deps, account.accountId);
  const now = ctx.deps.clock.now();
  const owner = account.role === "owner";
  const f = new FormState(opts.zoneError ? { timeZone: opts.zoneError } : {});
  const zoneControl = owner
    ? f.select({
        name: "timeZone",
        label: "The account's time zone",
        value: schedule.timeZone,
        options: timeZones().map((z) => [z, z.replace(/_/g, " ")] as const),
        hint: "Slots and repeating posts follow it: 09:00 stays 09:00 when the clocks change. Everyone still sees times in their own zone.",
      })
    : html`<p>Slot times are in the account's time zone, <strong>${zoneLabel(schedule.timeZone)}</strong> (${zoneAbbreviation(now, schedule.timeZone)}). Only an owner changes it.</p><input type="hidden" name="timeZone" value="${schedule.timeZone}">`;
  const rows = schedule.slots.map((slot, i) => rowFields(s, i, slot, connections, false));
  const blanks = Array.from({ length: NEW_ROWS }, (_, k) => rowFields(s, schedule.slots.length + k, { days: [], time: "", targets: [] }, connections, true));
  const body = connections.length === 0
    ? html`<p class="card">No connections yet. <a href="/dashboard/connections">Connect an account</a>, then give it posting slots.</p>`
    : html`<form method="post" action="${SCHEDULE_EDITOR_PATH}" class="card" aria-labelledby="editor-title" novalidate>
  <h2 id="editor-title">Posting slots</h2>
  ${csrfField(s.csrfToken)}
  <input type="hidden" name="rows" value="${String(schedule.slots.length + NEW_ROWS)}">
  ${zoneControl}
  <p class="hint">Each slot is a time on the days you tick, for the connections you tick. "Add to queue" puts a post in the first free slot with all its connections, at least ${Math.round(MIN_LEAD_MS / 60000)} minutes ahead.</p>
  ${rows}${blanks}
  <button type="submit">Save posting schedule</button>
</form>`;
  return page(s, { title: "Posting schedule", current: QUEUE_PATH, notices: opts.notices ?? [] }, html`<p><a href="${QUEUE_PATH}">Back to the queue</a></p>${body}`);
}

/** GET /dashboard/queue/schedule */
export async function getScheduleEditor(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = scheduleGate(s);
  if (account instanceof Response) return account;
  return htmlResponse(await editorPage(ctx, s, account, { notices: noticeOf(request) }));
}

/** The editor's rows as a schedule: removed rows and blank new rows left out. */
function scheduleFromForm(form: Form | undefined): PostingSchedule {
  const count = Math.min(Number(field(form, "rows")) || 0, 200);
  const slots: EditorRow[] = [];
  for (let i = 0; i < count; i++) {
    if (field(form, `remove-${i}`) === "yes") continue;
    const row = { days: fields(form, `days-${i}`), time: field(form, `time-${i}`).slice(0, 5), targets: fields(form, `targets-${i}`) };
    if (row.days.length === 0 && row.time === "" && row.targets.length === 0) continue;
    slots.push(row);
  }
  return { timeZone: field(form, "timeZone") || "UTC", slots: slots as PostingSchedule["slots"] };
}

/** POST /dashboard/queue/schedule */
export async function postScheduleEditor(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = scheduleGate(s);
  if (account instanceof Response) return account;
  const schedule = scheduleFromForm(form);
  try {
    await putSlots(ctx.deps, { accountId: account.accountId, role: account.role }, schedule);
    return redirect(`${SCHEDULE_EDITOR_PATH}?notice=slots-saved`);
  } catch (error) {
    const { notice, status } = refusal(error);
    const zoneError = error instanceof AppError && JSON.stringify(error.extra).includes("timeZone") ? String(notice.text) : undefined;
    return htmlResponse(await editorPage(ctx, s, account, { notices: [notice], schedule, ...(zoneError ? { zoneError } : {}) }), status);
  }
}
