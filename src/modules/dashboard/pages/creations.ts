/**
 * Posts (creations): the list, and one creation's page, the composer: the preview, the caption and alt text edited by
 * hand (creations' `updateCreation`, the service of PATCH /creations/{id}) with a counter per connected platform that
 * turns red when over, regenerate (parts, change instructions), "Schedule" to chosen connections at a date and time
 * in the person's own zone (`schedulePost`), and delete (`deleteCreation`) so its image can be freed.
 */
import { isoAt } from "../../../lib/clock";
import { AppError } from "../../../lib/errors";
import { connectorFor } from "../../../publishing/registry";
import { ROLE_SCOPES } from "../../../auth/scopes";
import { listConnections } from "../../connections/service";
import { openConnection } from "../../../store/connections";
import { deleteCreation, updateCreation } from "../../creations/edit";
import { type Creation, MAX_HAND_CAPTION_GRAPHEMES, REGENERATE_PARTS, type RegeneratePart } from "../../creations/model";
import { findCreationRow, getCreation, graphemeCount, listCreations, regenerateCreation, regeneratePrice } from "../../creations/service";
import { listVersions, restoreVersion } from "../../creations/versions";
import { BUILTIN_GENERATOR_NAME } from "../../../generation/builtin";
import type { CreationVersion } from "../../creations/model";
import { MIN_LEAD_MS, schedulePost } from "../../schedule/service";
import { getOwnedSeed } from "../../seeds/service";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import { zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import { addDays, zoneAbbreviation, zoneLabel, zonedParts, zonedToUtc } from "../zoned";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/creations";
const PAGE_SIZE = 24;
const EXCERPT = 160;
/** Mastodon and others count every link as this many characters (matches the schedule service's rule). */
const URL_RE = /https?:\/\/[^\s<>"]+/g;
const PLATFORM_NAMES = { bluesky: "Bluesky", mastodon: "Mastodon", nostr: "Nostr", discord: "Discord", telegram: "Telegram", webhook: "Webhook", x: "X", instagram: "Instagram", facebook: "Facebook", threads: "Threads" } as const;
const PART_LABELS: Record<RegeneratePart, string> = { caption: "The caption", image: "The image", both: "Both" };

/** A library URL made same-origin, so the page shows it whatever BASE_URL says. */
function sameOrigin(ctx: DashboardCtx, url: string | null): string | null {
  if (!url) return null;
  return url.startsWith(ctx.deps.config.baseUrl) ? url.slice(ctx.deps.config.baseUrl.length) : url;
}

function excerpt(text: string, max = EXCERPT): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
}

function canCreate(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("create");
}
function canSchedule(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

async function seedTitle(ctx: DashboardCtx, accountId: string, seedId: string | null): Promise<string | null> {
  if (!seedId) return null;
  try {
    return (await getOwnedSeed(ctx.deps, accountId, seedId)).title;
  } catch {
    return null;
  }
}

/** `titles`: seed id → the seed's title (null when it is gone), read before rendering. */
function creationCard(ctx: DashboardCtx, c: Creation, titles: ReadonlyMap<string, string | null>, zone: string): Html {
  const img = sameOrigin(ctx, c.body.imageUrl);
  const title = c.seedId === null ? null : titles.get(c.seedId);
  return html`<li>
  ${img ? html`<img src="${img}" alt="${c.body.altText ?? ""}" loading="lazy">` : html`<div class="no-image muted">No image</div>`}
  <div class="meta">${title ? html`<p class="hint">From “${title}”</p>` : ""}<p class="caption-excerpt">${excerpt(c.body.caption)}</p>
    <span class="muted">${timeTag(c.createdAt, "—", zone)}</span></div>
  <p class="card-link"><a href="${CURRENT}/${c.id}">Open<span class="sr-only"> the post from ${c.createdAt.slice(0, 10)}</span></a></p>
</li>`;
}

/** GET /dashboard/creations[?seed=&cursor=] */
export async function getCreations(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const params = new URL(request.url).searchParams;
  const seedId = params.get("seed") ?? undefined;
  // The older per-seed listing now lives on the seed's page.
  if (seedId) {
    if ((await seedTitle(ctx, account.accountId, seedId)) === null) return htmlResponse(page(s, { title: "Seed not found", current: CURRENT }, html`<p class="card">No such seed in this account.</p>`), 404);
    return redirect(`/dashboard/seeds/${seedId}`);
  }
  let result: Awaited<ReturnType<typeof listCreations>>;
  try {
    result = await listCreations(ctx.deps, account.accountId, { limit: PAGE_SIZE, cursor: params.get("cursor") ?? undefined });
  } catch {
    result = await listCreations(ctx.deps, account.accountId, { limit: PAGE_SIZE });
  }
  const titles = new Map<string, string | null>();
  for (const c of result.creations) {
    if (c.seedId !== null && !titles.has(c.seedId)) titles.set(c.seedId, await seedTitle(ctx, account.accountId, c.seedId));
  }
  return htmlResponse(
    page(
      s,
      { title: "Posts", current: CURRENT, notices: noticeFrom(request) },
      html`<p class="muted">Posts generated from your seeds. Open one to edit its caption and schedule it.</p>
<section aria-labelledby="creations-title">
  <h2 id="creations-title" class="sr-only">Generated posts</h2>
  ${
    result.creations.length === 0
      ? html`<p class="card">No posts yet. <a href="/dashboard/seeds">Write a seed</a> and generate a post from it.</p>`
      : html`<ul class="gallery creations">${result.creations.map((c) => creationCard(ctx, c, titles, zoneOf(s)))}</ul>`
  }
  ${result.nextCursor ? html`<p><a href="${CURRENT}?cursor=${encodeURIComponent(result.nextCursor)}">Older posts</a></p>` : ""}
</section>`,
    ),
  );
}

interface Counter {
  name: string;
  max: number;
  urlLength: number | null;
}

/** One counter per connected platform with a limit (Bluesky 300, each Mastodon instance's own), plus Seedcast's own for hand-written captions. */
async function counters(ctx: DashboardCtx, accountId: string): Promise<Counter[]> {
  // A caption written by hand may be as long as the longest network takes (decisions.md §13).
  const out: Counter[] = [{ name: "Seedcast limit", max: MAX_HAND_CAPTION_GRAPHEMES, urlLength: null }];
  for (const row of await listConnections(ctx.deps, accountId)) {
    const limit = connectorFor(row.platform).captionLimit(openConnection(ctx.deps, row));
    if (limit) out.push({ name: `${limit.platformName} · ${row.label}`, max: limit.maxGraphemes, urlLength: limit.urlLength ?? null });
  }
  return out;
}

/** The length the server checks: the caption as stored (trimmed, creations/edit.ts), links at the platform's length. */
function counted(typed: string, c: Counter): number {
  const caption = typed.trim();
  return graphemeCount(c.urlLength === null ? caption : caption.replace(URL_RE, "x".repeat(c.urlLength)));
}

function counterList(caption: string, list: readonly Counter[]): Html {
  return html`<ul class="counters plain" id="caption-counters" data-for="caption">${list.map((c) => {
    const n = counted(caption, c);
    return html`<li class="counter${n > c.max ? " over" : ""}" data-max="${c.max}"${c.urlLength === null ? "" : html` data-url-length="${c.urlLength}"`}>
      <span class="count">${n}</span>/${c.max} <span class="counter-name">${c.name}</span><span class="over-text">${n > c.max ? " · too long" : ""}</span></li>`;
  })}</ul>`;
}

interface PageState {
  notices?: Notice[];
  editErrors?: FieldErrors;
  editValues?: { caption: string; altText: string };
  scheduleErrors?: FieldErrors;
  scheduleValues?: { date: string; time: string; targets: string[] };
  regenErrors?: FieldErrors;
  regenValues?: { parts: string; change_instructions: string };
}

async function schedulePart(ctx: DashboardCtx, s: SessionContext, account: Membership, c: Creation, state: PageState): Promise<Html> {
  const zone = zoneOf(s);
  const now = ctx.deps.clock.now();
  const tomorrow = addDays(zonedParts(now, zone).date, 1);
  const v = state.scheduleValues ?? { date: tomorrow, time: "09:00", targets: [] };
  const f = new FormState(state.scheduleErrors);
  const connections = await listConnections(ctx.deps, account.accountId);
  const boxes = connections.length === 0
    ? html`<p>No connections yet. <a href="/dashboard/connections">Connect an account</a> to post to.</p>`
    : html`${connections.map(
        (row) => html`<label><input type="checkbox" name="targets" value="${row.id}"${v.targets.includes(row.id) ? html` checked` : ""}${row.readyToPost ? "" : html` disabled`}>
          <span>${row.label} <span class="muted">(${PLATFORM_NAMES[row.platform]})</span>${row.readyToPost ? "" : html` <span class="badge state-warn">needs attention</span>`}</span></label>${
            row.readyToPost ? "" : html`<p class="hint target-why">${row.blockedReason ?? ""} <a href="/dashboard/connections#connection-${row.id}">Fix it on the Connections page</a>.</p>`
          }`,
      )}`;
  return html`<form method="post" action="${CURRENT}/${c.id}/schedule" class="card" aria-labelledby="schedule-title" novalidate>
  <h2 id="schedule-title">Schedule</h2>
  ${csrfField(s.csrfToken)}
  ${f.group("targets", "Post to", boxes)}
  <div class="grid2 tight">
    ${f.input({ name: "date", label: "Date", type: "date", value: v.date, required: true })}
    ${f.input({ name: "time", label: "Time", type: "time", value: v.time, required: true, hint: `${zoneLabel(zone)} (${zoneAbbreviation(now, zone)}). Change it in your settings.` })}
  </div>
  <p class="hint">At least ${Math.round(MIN_LEAD_MS / 60000)} minutes from now. The post keeps the caption and image as they are when you schedule.</p>
  <button type="submit">Schedule</button>
</form>`;
}

/** The sentence of decisions.md §15 for a caption the builtin writer wrote (no language model). */
function offlineNote(s: SessionContext): Html {
  const settings = s.isAdmin ? html`<a href="/dashboard/instance#model-title">Settings → Instance</a>` : "Settings → Instance";
  return html`<p class="hint offline-note">Written offline from your own words; connect a language model in ${settings} for new wording.</p>`;
}

/** Earlier versions (the last 10), each with "Restore" for people who may change posts. */
function versionsPart(ctx: DashboardCtx, s: SessionContext, c: Creation, versions: readonly CreationVersion[], writable: boolean): Html {
  if (versions.length === 0) return html``;
  const zone = zoneOf(s);
  return html`<details class="card" id="versions"><summary><h2 class="inline-h">Earlier versions (${versions.length})</h2></summary>
  <p class="hint">Every regenerate, edit and restore keeps what it replaced; the last 10 stay.</p>
  <ol class="versions">${versions.map((v, i) => {
    const img = sameOrigin(ctx, v.imageUrl);
    const hand = v.editedByHand.caption || v.editedByHand.altText;
    return html`<li class="version">
    ${img ? html`<img class="thumb" src="${img}" alt="${v.altText ?? ""}" width="72" height="72">` : ""}
    <div><p class="caption-excerpt">${excerpt(v.caption, 280)}</p>
    <p class="muted">Replaced ${timeTag(v.replacedAt, "—", zone)}${hand ? html` · <span class="badge">written by hand</span>` : ""}${v.imageAssetId && !img ? " · its image was deleted from the library" : ""}</p>
    ${
      writable
        ? html`<form method="post" action="${CURRENT}/${c.id}/versions/${v.id}/restore">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Restore<span class="sr-only"> version ${i + 1}</span></button></form>`
        : ""
    }</div></li>`;
  })}</ol></details>`;
}

async function creationPage(ctx: DashboardCtx, s: SessionContext, account: Membership, c: Creation, state: PageState): Promise<Html> {
  const title = await seedTitle(ctx, account.accountId, c.seedId);
  const row = await findCreationRow(ctx.deps, account.accountId, c.id);
  const versions = await listVersions(ctx.deps, account.accountId, c.id);
  const img = sameOrigin(ctx, c.body.imageUrl);
  const ev = state.editValues ?? { caption: c.body.caption, altText: c.body.altText ?? "" };
  const edit = new FormState(state.editErrors);
  const regen = new FormState(state.regenErrors);
  const rv = state.regenValues ?? { parts: "caption", change_instructions: "" };
  const prices = REGENERATE_PARTS.map((p) => `${PART_LABELS[p].toLowerCase()} ${regeneratePrice(ctx.deps, p)}`).join(", ");
  const writable = canCreate(s);
  const captionCounters = writable ? await counters(ctx, account.accountId) : [];
  const scheduling = canSchedule(s) ? await schedulePart(ctx, s, account, c, state) : "";
  return page(
    s,
    { title: "Post", current: CURRENT, notices: state.notices },
    html`<p class="muted">${title && c.seedId ? html`From the seed <a href="/dashboard/seeds/${c.seedId}">${title}</a> · ` : ""}created ${timeTag(c.createdAt, "—", zoneOf(s))}${c.updatedAt !== c.createdAt ? html`, changed ${timeTag(c.updatedAt, "—", zoneOf(s))}` : ""} · <a href="${sameOrigin(ctx, c.url) ?? c.url}">public preview</a></p>
<div class="grid2">
  <article class="card post-preview" aria-labelledby="preview-title">
    <h2 id="preview-title">As it will appear</h2>
    ${img ? html`<img src="${img}" alt="${c.body.altText ?? ""}">` : html`<p class="muted">Text only, no image.</p>`}
    <p class="caption">${c.body.caption}</p>
    ${row?.captionSource === BUILTIN_GENERATOR_NAME ? offlineNote(s) : ""}
    ${c.seedId ? html`<p class="hint">A different image? Pick one from the library (or add one: upload, web address, upload link) when you <a href="/dashboard/seeds/${c.seedId}#generate-title">generate from the seed</a>.</p>` : ""}
  </article>
  ${
    writable
      ? html`<form method="post" action="${CURRENT}/${c.id}" class="card" aria-labelledby="edit-title" novalidate>
    <h2 id="edit-title">Edit</h2>
    ${csrfField(s.csrfToken)}
    ${edit.textarea({ name: "caption", label: "Caption", value: ev.caption, rows: 9, required: true, hint: "Counted per platform below; a red counter means too long there." })}
    ${counterList(ev.caption, captionCounters)}
    ${img ? edit.textarea({ name: "altText", label: "Alt text (describes the image for people who cannot see it)", value: ev.altText, rows: 3 }) : ""}
    <button type="submit">Save caption${img ? " and alt text" : ""}</button>
  </form>`
      : html`<section class="card"><h2>Caption</h2><p class="caption">${c.body.caption}</p></section>`
  }
</div>
${scheduling}
${versionsPart(ctx, s, c, versions, writable)}
${
  writable
    ? html`<details class="card"${state.regenErrors ? html` open` : ""}><summary><h2 class="inline-h">Regenerate</h2></summary>
  <form method="post" action="${CURRENT}/${c.id}/regenerate" novalidate>
    ${csrfField(s.csrfToken)}
    ${regen.group("parts", "What to write again", html`${REGENERATE_PARTS.map((p) => html`<label><input type="radio" name="parts" value="${p}"${rv.parts === p ? html` checked` : ""}> ${PART_LABELS[p]}</label>`)}`, `Credits: ${prices}.`)}
    ${regen.input({ name: "change_instructions", label: "What to change (optional)", value: rv.change_instructions, hint: "For example: shorter, more formal, add a question, no emoji.", attrs: html` maxlength="1000"` })}
    ${c.editedByHand.caption || c.editedByHand.altText ? html`<p class="hint">You edited ${c.editedByHand.caption ? "the caption" : "the alt text"} by hand: you will be asked before it is replaced, and it stays under Earlier versions.</p>` : ""}
    <button type="submit" class="secondary">Regenerate</button>
  </form></details>
<p><a class="button danger small" href="${CURRENT}/${c.id}/delete">Delete this post…</a></p>`
    : ""
}`,
  );
}

async function load(ctx: DashboardCtx, accountId: string, id: string): Promise<Creation | null> {
  if (!(await findCreationRow(ctx.deps, accountId, id))) return null;
  return getCreation(ctx.deps, accountId, id);
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Post not found", current: CURRENT }, html`<p class="card">No such post in this account. <a href="${CURRENT}">All posts</a></p>`), 404);
}

/** GET /dashboard/creations/:id */
export async function getCreationPage(ctx: DashboardCtx, s: SessionContext, id: string, request?: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  return htmlResponse(await creationPage(ctx, s, account, c, { notices: request ? noticeFrom(request) : [] }));
}

function gate(s: SessionContext, scope: "create" | "schedule"): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const ok = scope === "create" ? canCreate(s) : canSchedule(s);
  if (!ok) return forbiddenPage(s, scope === "create" ? "Only owners and editors change posts." : "Only owners and editors schedule posts.");
  return account;
}

function editWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "caption" && /empty/.test(problem)) return "Write a caption; it cannot be empty.";
  if (fieldName === "caption") return `The caption is too long: it ${problem.replace(/^must be/, "must be")}.`;
  if (fieldName === "altText") return /no image/.test(problem) ? "This post has no image to describe." : `The alt text ${problem}.`;
  return message;
}

/** POST /dashboard/creations/:id: save the caption and alt text. */
export async function postEditCreation(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = gate(s, "create");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  const values = { caption: field(form, "caption"), altText: field(form, "altText") };
  try {
    await updateCreation(ctx.deps, account.accountId, id, { caption: values.caption, ...(c.body.imageUrl ? { altText: values.altText } : {}) });
    return redirect(`${CURRENT}/${id}?notice=creation-saved`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === "not_found") return missing(s);
    const { fields: errors, general } = errorsOf(error, { caption: "caption", altText: "altText" }, editWords, "caption");
    return htmlResponse(
      await creationPage(ctx, s, account, c, { editErrors: errors, editValues: values, notices: general ? [{ kind: "error", text: general }] : [] }),
      error.status,
    );
  }
}

/** POST /dashboard/creations/:id/schedule: the date and time are read in the person's zone. */
export async function postScheduleCreation(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = gate(s, "schedule");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  const zone = zoneOf(s);
  const values = { date: field(form, "date"), time: field(form, "time"), targets: fields(form, "targets") };
  const errors: FieldErrors = {};
  if (values.targets.length === 0) errors.targets = "Choose at least one connection to post to.";
  const at = zonedToUtc(values.date, values.time, zone);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(values.date) || at === null) errors.date = "Enter a date, such as 2026-11-25.";
  if (!/^\d{2}:\d{2}$/.test(values.time)) errors.time = "Enter a time, such as 09:00.";
  else if (at !== null && at < ctx.deps.clock.now() + MIN_LEAD_MS) errors.time = `Choose a time at least ${Math.round(MIN_LEAD_MS / 60000)} minutes from now.`;
  if (Object.keys(errors).length === 0 && at !== null) {
    try {
      const { post } = await schedulePost(ctx.deps, account.accountId, { creationId: id, scheduledTime: isoAt(at), targets: values.targets });
      return redirect(`/dashboard/calendar?view=month&date=${values.date}&notice=scheduled#post-${post.id}`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === "scheduled_time_too_soon") errors.time = `Choose a time at least ${Math.round(MIN_LEAD_MS / 60000)} minutes from now.`;
      else if (error.code === "unknown_target" || error.code === "target_not_ready") errors.targets = error.message;
      else if (error.code === "not_schedulable") {
        const problems = Array.isArray(error.extra.problems) ? (error.extra.problems as { problem?: string }[]) : [];
        errors.targets = `It cannot go out as it is: ${problems.map((p) => p.problem).filter(Boolean).join("; ") || error.message}. Shorten the caption above, or untick that connection.`;
      } else {
        const { notice, status } = refusal(error);
        return htmlResponse(await creationPage(ctx, s, account, c, { notices: [notice], scheduleValues: values }), status);
      }
    }
  }
  return htmlResponse(await creationPage(ctx, s, account, c, { scheduleErrors: errors, scheduleValues: values }), 400);
}

/** POST /dashboard/creations/:id/regenerate */
export async function postRegenerate(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = gate(s, "create");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  const values = { parts: field(form, "parts"), change_instructions: field(form, "change_instructions") };
  if (!(REGENERATE_PARTS as readonly string[]).includes(values.parts)) {
    return htmlResponse(await creationPage(ctx, s, account, c, { regenErrors: { parts: "Choose what to write again." }, regenValues: values }), 400);
  }
  const part = values.parts as RegeneratePart;
  const replacesHand = (part !== "image" && c.editedByHand.caption) || (part !== "caption" && c.editedByHand.altText);
  if (replacesHand && field(form, "confirm") !== "yes") return htmlResponse(regenerateConfirmPage(s, c, part, values.change_instructions));
  try {
    await regenerateCreation(ctx.deps, account.accountId, {
      creation_id: id,
      parts: values.parts as RegeneratePart,
      ...(values.change_instructions.trim() ? { change_instructions: values.change_instructions.slice(0, 1000) } : {}),
    });
    return redirect(`${CURRENT}/${id}?notice=regenerated`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await creationPage(ctx, s, account, c, { notices: [notice], regenValues: values }), status);
  }
}

/**
 * The step before a regenerate replaces text written by hand (decisions.md §15): a form that sends the same request
 * again with `confirm=yes`, so it works without script.
 */
function regenerateConfirmPage(s: SessionContext, c: Creation, part: RegeneratePart, changeInstructions: string): Html {
  const what = [part !== "image" && c.editedByHand.caption ? "caption" : "", part !== "caption" && c.editedByHand.altText ? "alt text" : ""].filter(Boolean).join(" and ");
  return page(
    s,
    { title: "Replace your own words?", current: CURRENT },
    html`<section class="card">
  <p>You wrote this post's ${what} by hand. Regenerating replaces it with new wording.</p>
  <blockquote class="caption">${excerpt(c.body.caption, 400)}</blockquote>
  <p>Your version is kept under <strong>Earlier versions</strong> on the post's page, where you can restore it.</p>
  <form method="post" action="${CURRENT}/${c.id}/regenerate" class="actions">
    ${csrfField(s.csrfToken)}
    <input type="hidden" name="parts" value="${part}">
    <input type="hidden" name="change_instructions" value="${changeInstructions}">
    <input type="hidden" name="confirm" value="yes">
    <button type="submit" class="danger">Replace and regenerate</button>
    <a class="button secondary" href="${CURRENT}/${c.id}">Keep my ${what}</a>
  </form>
</section>`,
  );
}

/** POST /dashboard/creations/:id/versions/:versionId/restore: the version becomes the current one. */
export async function postRestoreVersion(ctx: DashboardCtx, s: SessionContext, id: string, versionId: string): Promise<Response> {
  const account = gate(s, "create");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  try {
    await restoreVersion(ctx.deps, account.accountId, id, versionId);
    return redirect(`${CURRENT}/${id}?notice=version-restored`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await creationPage(ctx, s, account, c, { notices: [notice] }), status);
  }
}

/** GET /dashboard/creations/:id/delete: the confirmation step. */
export async function getDeleteCreation(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = gate(s, "create");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  return htmlResponse(
    confirmPage(s, {
      title: "Delete post",
      current: CURRENT,
      question: html`Delete the post “${excerpt(c.body.caption, 80)}”? Its image stays in the library (and can be deleted there once nothing else uses it). Posts already scheduled from it must be cancelled first.`,
      action: `${CURRENT}/${c.id}/delete`,
      confirmLabel: "Delete post",
      cancelHref: `${CURRENT}/${c.id}`,
    }),
  );
}

/** POST /dashboard/creations/:id/delete */
export async function postDeleteCreation(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = gate(s, "create");
  if (account instanceof Response) return account;
  const c = await load(ctx, account.accountId, id);
  if (!c) return missing(s);
  try {
    await deleteCreation(ctx.deps, account.accountId, id);
    return redirect(`${CURRENT}?notice=creation-deleted`);
  } catch (error) {
    if (error instanceof AppError && error.code === "creation_in_use") {
      return htmlResponse(
        await creationPage(ctx, s, account, c, {
          notices: [{ kind: "error", text: html`A scheduled post made from this has not gone out yet. Cancel it in the <a href="/dashboard/calendar">calendar</a> first, then delete this.` }],
        }),
        409,
      );
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await creationPage(ctx, s, account, c, { notices: [notice] }), status);
  }
}
