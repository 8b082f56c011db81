/**
 * Feeds: follow a blog by its feed (RSS, Atom or JSON Feed) so each new article becomes an idea, a draft post, or a
 * post in the queue; see when each feed was last read, why a read failed, read one now (which resumes a paused feed)
 * or stop following it. Everything goes through the feeds service the API uses; owners and editors change feeds
 * (the roles that may hold Content creation), everyone in the account sees them.
 */
import { PLATFORM_NAMES } from "../../../db/schema/connections";
import { ROLE_SCOPES } from "../../../auth/scopes";
import type { FeedMode } from "../../../db/schema/feeds";
import { FEED_MODES } from "../../../db/schema/feeds";
import { AppError } from "../../../lib/errors";
import { type Html, html, timeTag } from "../../../lib/html";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import { zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import { listConnections } from "../../connections/service";
import type { FeedApi } from "../../feeds/model";
import { MAX_FAILURES, createFeed, deleteFeed, getFeed, listFeeds, pollFeedNow } from "../../feeds/service";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { noticeFrom } from "./common";

const CURRENT = "/dashboard/feeds";

const MODE_LABELS: Record<FeedMode, string> = {
  seed: "Ideas only",
  draft: "Ideas and draft posts",
  queue: "Ideas, posts, and into the queue",
};

function modeHint(mode: FeedMode, price: number): string {
  if (mode === "seed") return "Each new article becomes an idea you can write a post from.";
  if (mode === "draft") return `Each new article also becomes a post, written for you (${price} credits each), waiting for you to schedule it.`;
  return `Each new article also becomes a post (${price} credits each) that takes the next free time of your posting schedule.`;
}

/** Fixed notices of this page, chosen by key after a redirect. */
const FEED_NOTICES: Record<string, string> = {
  "feed-added": "The feed was added. Its articles so far are now ideas; new ones are picked up every 30 minutes.",
  "feed-read": "The feed was read.",
  "feed-unchanged": "The feed was read: nothing new since last time.",
  "feed-failed": "The feed could not be read; the reason is shown below.",
  "feed-removed": "The feed was removed. The ideas and posts it made stay.",
};

function notices(request: Request): Notice[] {
  const key = new URL(request.url).searchParams.get("notice");
  const text = key ? FEED_NOTICES[key] : undefined;
  if (text) return [{ kind: key === "feed-failed" ? "error" : "ok", text }];
  return noticeFrom(request);
}

function canWrite(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("create");
}

/** A refusal of the feed's first read, in plain words. */
function feedWords(apiField: string, problem: string, message: string): string {
  if (apiField === "targets") return "Choose where the queued posts go.";
  if (apiField === "url") return "Enter the feed's web address, starting with https://.";
  return problem || message;
}
const FEED_FIELDS = { url: "url", targets: "targets", mode: "mode" };

function stateBadge(feed: FeedApi): Html {
  return feed.state === "paused"
    ? html`<span class="badge state-failed">Paused</span>`
    : feed.lastError
      ? html`<span class="badge state-warn">Last read failed</span>`
      : html`<span class="badge state-active">Active</span>`;
}

function feedCard(s: SessionContext, feed: FeedApi, writable: boolean): Html {
  const zone = zoneOf(s);
  const name = feed.title ?? feed.url;
  return html`<li class="card feed-card">
  <h3>${name} ${stateBadge(feed)}</h3>
  <p class="hint feed-url">${feed.url}</p>
  <dl class="details">
    <dt>What it makes</dt><dd>${MODE_LABELS[feed.mode]}</dd>
    <dt>Articles taken</dt><dd>${feed.itemsSeen}</dd>
    <dt>Last read</dt><dd>${timeTag(feed.lastPolledAt, "Not yet", zone)}</dd>
    <dt>Next read</dt><dd>${feed.state === "paused" ? "Not while paused" : timeTag(feed.nextPollAt, "—", zone)}</dd>
  </dl>
  ${
    feed.state === "paused"
      ? html`<p class="field-error" role="status">Paused after ${MAX_FAILURES} failed reads in a row. The last one said: ${feed.lastError ?? "no reason given"}</p>`
      : feed.lastError
        ? html`<p class="hint">The last read failed (${feed.failures} of ${MAX_FAILURES} before it pauses): ${feed.lastError}</p>`
        : ""
  }
  ${
    writable
      ? html`<div class="actions">
    <form method="post" action="${CURRENT}/${feed.id}/poll">${csrfField(s.csrfToken)}<button type="submit" class="secondary">${feed.state === "paused" ? "Resume and read now" : "Read now"}</button></form>
    <a class="button secondary" href="${CURRENT}/${feed.id}/remove">Remove</a>
  </div>`
      : ""
  }
</li>`;
}

async function addForm(ctx: DashboardCtx, s: SessionContext, account: Membership, errors: FieldErrors | undefined, v: { url: string; mode: string; targets: string[] }): Promise<Html> {
  const f = new FormState(errors);
  const price = ctx.deps.config.prices.generateSocialPost;
  const connections = await listConnections(ctx.deps, account.accountId);
  const modes = html`${FEED_MODES.map(
    (mode) => html`<label><input type="radio" name="mode" value="${mode}"${(v.mode || "seed") === mode ? html` checked` : ""}> <span>${MODE_LABELS[mode]}<span class="hint block">${modeHint(mode, price)}</span></span></label>`,
  )}`;
  const boxes =
    connections.length === 0
      ? html`<p class="hint">No connections yet. <a href="/dashboard/connections">Connect an account</a> to queue posts to.</p>`
      : html`${connections.map(
          (row) => html`<label><input type="checkbox" name="targets" value="${row.id}"${v.targets.includes(row.id) ? html` checked` : ""}> <span>${row.label} <span class="muted">(${PLATFORM_NAMES[row.platform]})</span></span></label>`,
        )}`;
  return html`<details class="card" id="add-feed"${errors ? html` open` : ""}><summary><h2 class="inline-h">Follow a blog</h2></summary>
  <form method="post" action="${CURRENT}" class="form-card" novalidate>
    ${csrfField(s.csrfToken)}
    ${f.input({ name: "url", label: "Feed address", type: "url", value: v.url, required: true, hint: "The blog's RSS, Atom or JSON Feed address, e.g. https://example.com/feed/. It is read once now." })}
    ${f.group("mode", "What each new article becomes", modes)}
    ${f.group("targets", "Where queued posts go", boxes, "Only for “into the queue”.")}
    <button type="submit">Follow</button>
  </form></details>`;
}

async function feedsPage(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  request: Request,
  extra: { notices?: Notice[]; errors?: FieldErrors; values?: { url: string; mode: string; targets: string[] } } = {},
): Promise<Html> {
  const { feeds } = await listFeeds(ctx.deps, account.accountId);
  const writable = canWrite(s);
  return page(
    s,
    { title: "Feeds", current: CURRENT, notices: extra.notices ?? notices(request) },
    html`<p class="muted">Follow a blog, and each new article it publishes becomes an <a href="/dashboard/seeds">idea</a>, a draft post, or a post in your queue. Feeds are read every 30 minutes.</p>
${writable ? await addForm(ctx, s, account, extra.errors, extra.values ?? { url: "", mode: "seed", targets: [] }) : ""}
<section aria-labelledby="feeds-title">
  <h2 id="feeds-title">Followed feeds</h2>
  ${feeds.length === 0 ? html`<p class="muted">No feeds yet.${writable ? " Follow a blog above." : ""}</p>` : html`<ul class="plain feed-cards">${feeds.map((feed) => feedCard(s, feed, writable))}</ul>`}
</section>`,
  );
}

function writer(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canWrite(s)) return forbiddenPage(s, "Only owners and editors change feeds.");
  return account;
}

/** GET /dashboard/feeds */
export async function getFeeds(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(await feedsPage(ctx, s, account, request));
}

/** POST /dashboard/feeds: follow a feed (its first read happens now). */
export async function postFeed(ctx: DashboardCtx, s: SessionContext, form: Form | undefined, request: Request): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  const v = { url: field(form, "url").trim(), mode: field(form, "mode") || "seed", targets: fields(form, "targets") };
  const errors: FieldErrors = {};
  if (!v.url) errors.url = feedWords("url", "", "");
  const mode = (FEED_MODES as readonly string[]).includes(v.mode) ? (v.mode as FeedMode) : null;
  if (!mode) errors.mode = "Choose what each new article becomes.";
  if (Object.keys(errors).length === 0 && mode) {
    try {
      await createFeed(ctx.deps, account.accountId, { url: v.url, mode, ...(v.targets.length > 0 ? { targets: v.targets } : {}) });
      return redirect(`${CURRENT}?notice=feed-added`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      Object.assign(errors, errorsOf(error, FEED_FIELDS, feedWords, "url").fields);
    }
  }
  return htmlResponse(await feedsPage(ctx, s, account, request, { errors, values: v, notices: [] }), 400);
}

/** POST /dashboard/feeds/:id/poll: read now (a paused feed resumes when the read succeeds). */
export async function postPollFeed(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  try {
    const { poll } = await pollFeedNow(ctx.deps, account.accountId, id);
    const key = poll.outcome === "failed" ? "feed-failed" : poll.outcome === "not_modified" || poll.newItems === 0 ? "feed-unchanged" : "feed-read";
    return redirect(`${CURRENT}?notice=${key}#feeds-title`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === "not_found") return missing(s);
    return htmlResponse(page(s, { title: "Feeds", current: CURRENT, notices: [{ kind: "error", text: error.message }] }, html`<p><a href="${CURRENT}">Back to the feeds</a></p>`), error.status);
  }
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Feed not found", current: CURRENT }, html`<p class="card">No such feed in this account. <a href="${CURRENT}">All feeds</a></p>`), 404);
}

/** GET /dashboard/feeds/:id/remove: asks first. */
export async function getRemoveFeed(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  let feed: FeedApi;
  try {
    feed = (await getFeed(ctx.deps, account.accountId, id)).feed;
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return missing(s);
    throw error;
  }
  return htmlResponse(
    confirmPage(s, {
      title: "Remove feed",
      current: CURRENT,
      question: html`Stop following <strong>${feed.title ?? feed.url}</strong>? The ideas and posts it already made stay.`,
      action: `${CURRENT}/${feed.id}/remove`,
      confirmLabel: "Remove feed",
      cancelHref: CURRENT,
      keepLabel: "Keep it",
    }),
  );
}

/** POST /dashboard/feeds/:id/remove */
export async function postRemoveFeed(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  try {
    await deleteFeed(ctx.deps, account.accountId, id);
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return missing(s);
    throw error;
  }
  return redirect(`${CURRENT}?notice=feed-removed`);
}
