/** /dashboard: who you are, which account, its credits and where to go next. */
import { creditSummary } from "../../credits/service";
import { listKeys } from "../../auth/keys-service";
import { listConnections } from "../../connections/service";
import { listPosts } from "../../schedule/service";
import type { DashboardCtx } from "../../../web/guard";
import { html } from "../../../lib/html";
import { htmlResponse } from "../../../web/http";
import { page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { connectorCard } from "./connector-card";
import { noticeFrom } from "./common";

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
  return htmlResponse(
    page(
      s,
      { title: account.accountName, current: "/dashboard", notices: noticeFrom(request) },
      html`<p class="muted">Signed in as ${s.email}, ${account.role} of this account${s.isAdmin ? " and administrator of this instance" : ""}.</p>
<div class="stats">
  <a class="stat" href="/dashboard/credits"><div class="value">${credits.balance}</div><div class="label">credits available</div></a>
  <a class="stat" href="/dashboard/keys"><div class="value">${activeKeys}</div><div class="label">working API keys</div></a>
  <a class="stat" href="/dashboard/connections"><div class="value">${ready} / ${connections.length}</div><div class="label">connections ready</div></a>
  <a class="stat" href="/dashboard/calendar"><div class="value">${upcoming === 200 ? "200+" : upcoming}</div><div class="label">posts coming up</div></a>
</div>
<section class="card" aria-labelledby="next-title">
  <h2 id="next-title">Getting started</h2>
  <ol>
    <li><a href="/dashboard/connections">Connect</a> a Bluesky or Mastodon account, or a webhook.</li>
    <li><a href="/dashboard/seeds">Write a seed</a>, what a post is about, and generate a post from it.</li>
    <li>Edit its caption, schedule it, and see it on the <a href="/dashboard/calendar">calendar</a>. Tools can do the same with an <a href="/dashboard/keys">API key</a>.</li>
  </ol>
</section>
${connectorCard(ctx)}`,
    ),
  );
}
