/**
 * /dashboard: what needs attention first (failed posts, connections to fix), then the account at a glance and the
 * getting-started steps, each ticked once it is done.
 */
import { creditSummary } from "../../credits/service";
import { listKeys } from "../../auth/keys-service";
import { listConnections } from "../../connections/service";
import { listPosts } from "../../schedule/service";
import type { DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { htmlResponse } from "../../../web/http";
import { page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { connectorCard } from "./connector-card";
import { noticeFrom } from "./common";
import { listSeeds } from "../../seeds/service";
import { listCreations } from "../../creations/service";
import { zoneOf } from "../../../web/preferences";
import { troubleCard } from "./overview-trouble";

interface Step {
  done: boolean;
  text: Html;
}

/** The getting-started steps as a list that ticks off what is done. */
function checklist(steps: readonly Step[]): Html {
  const left = steps.filter((st) => !st.done).length;
  return html`<section class="card" aria-labelledby="next-title">
  <h2 id="next-title">Getting started</h2>
  <p class="hint">${left === 0 ? "All done: you are up and running." : `${steps.length - left} of ${steps.length} done.`}</p>
  <ol class="checklist">${steps.map(
    (st) =>
      html`<li${st.done ? html` class="done"` : ""}><span class="tick" aria-hidden="true">${st.done ? "✓" : ""}</span><span class="step">${st.text}<span class="sr-only">${st.done ? " (done)" : " (to do)"}</span></span></li>`,
  )}</ol>
</section>`;
}

/** GET /dashboard */
export async function getOverview(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = s.account;
  if (!account) {
    return htmlResponse(
      page(
        s,
        { title: "Overview", current: "/dashboard" },
        html`<p class="card">You are not a member of any account yet.${s.isAdmin ? html` Create one on the <a href="/dashboard/instance">Instance</a> page.` : ""}</p>`,
      ),
    );
  }
  const credits = await creditSummary(ctx.deps, account.accountId);
  const activeKeys = (await listKeys(ctx.deps, account.accountId)).filter((k) => k.state === "active" || k.state === "grace").length;
  const connections = await listConnections(ctx.deps, account.accountId);
  const ready = connections.filter((c) => c.readyToPost).length;
  const upcoming = (await listPosts(ctx.deps, account.accountId, { from: new Date(ctx.deps.clock.now()).toISOString(), status: "scheduled", limit: 200 })).posts.length;
  const hasSeed = (await listSeeds(ctx.deps, account.accountId, { limit: 1 })).seeds.length > 0;
  const hasCreation = (await listCreations(ctx.deps, account.accountId, { limit: 1 })).creations.length > 0;
  const hasScheduled = (await listPosts(ctx.deps, account.accountId, { limit: 1 })).posts.length > 0;
  const steps: Step[] = [
    { done: connections.length > 0, text: html`<a href="/dashboard/connections">Connect</a> a Bluesky or Mastodon account, or a webhook.` },
    { done: hasSeed, text: html`<a href="/dashboard/seeds?new=1#new-seed">Write an idea</a>: what a post is about.` },
    { done: hasCreation, text: html`Generate a post from it on the <a href="/dashboard/seeds">Ideas</a> page, and check its caption.` },
    { done: hasScheduled, text: html`Schedule it, and see it on the <a href="/dashboard/calendar">calendar</a>.` },
  ];
  return htmlResponse(
    page(
      s,
      { title: account.accountName, current: "/dashboard", notices: noticeFrom(request) },
      html`<p class="muted">Signed in as ${s.email}, ${account.role} of this account${s.isAdmin ? " and administrator of this instance" : ""}.</p>
${await troubleCard(ctx, account.accountId, zoneOf(s), account.role)}
<div class="stats">
  <a class="stat" href="/dashboard/calendar"><div class="value">${upcoming === 200 ? "200+" : upcoming}</div><div class="label">${upcoming === 1 ? "post" : "posts"} coming up</div></a>
  <a class="stat" href="/dashboard/connections"><div class="value">${ready} / ${connections.length}</div><div class="label">connections ready</div></a>
  <a class="stat" href="/dashboard/credits"><div class="value">${credits.balance}</div><div class="label">credits available</div></a>
  <a class="stat" href="/dashboard/keys"><div class="value">${activeKeys}</div><div class="label">working API keys</div></a>
</div>
${checklist(steps)}
${connectorCard(ctx)}`,
    ),
  );
}
