/** /dashboard: who you are, which account, its credits and where to go next. */
import { creditSummary } from "../../credits/service";
import { listKeys } from "../../auth/keys-service";
import { listConnections } from "../../connections/service";
import { listPosts } from "../../schedule/service";
import type { DashboardCtx } from "../guard";
import { html } from "../html";
import { htmlResponse } from "../http";
import { page } from "../layout";
import type { SessionContext } from "../session";
import { connectorCard } from "./connector-card";

/** GET /dashboard */
export function getOverview(ctx: DashboardCtx, s: SessionContext): Response {
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
  const credits = creditSummary(ctx.deps, account.accountId);
  const activeKeys = listKeys(ctx.deps, account.accountId).filter((k) => k.state === "active" || k.state === "grace").length;
  const connections = listConnections(ctx.deps, account.accountId);
  const ready = connections.filter((c) => c.readyToPost).length;
  const upcoming = listPosts(ctx.deps, account.accountId, { from: new Date(ctx.deps.clock.now()).toISOString(), status: "scheduled", limit: 200 }).posts.length;
  return htmlResponse(
    page(
      s,
      { title: account.accountName, current: "/dashboard" },
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
    <li><a href="/dashboard/keys">Mint an API key</a> for the tool that will call Seedcast.</li>
    <li>Create seeds and creations through the API, then watch them on the <a href="/dashboard/calendar">calendar</a>.</li>
  </ol>
</section>
${connectorCard(ctx)}`,
    ),
  );
}
