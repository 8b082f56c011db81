/**
 * The overview's "Needs your attention" list (decisions.md §15: trouble shows where people look). Each kind of trouble
 * is one source: a heading and a function listing its items: posts waiting for an owner's approval (shown to owners),
 * failed posts, posts a network could not confirm (a person must say whether they went out), connections needing
 * attention.
 */
import { isoAt } from "../../../lib/clock";
import { type Html, html } from "../../../lib/html";
import { listConnections } from "../../connections/service";
import { creationCaptions } from "../../creations/service";
import { type PostApi, listPosts } from "../../schedule/service";
import type { DashboardCtx } from "../../../web/guard";
import { shortDate, zonedParts } from "../../../lib/zoned";
import type { Role } from "../../../auth/scopes";

/** One thing to look at: where to go, what it is, and why it is here. */
export interface TroubleItem {
  href: string;
  title: string;
  why: string;
}

/** One kind of trouble. */
export interface TroubleSource {
  key: string;
  heading: string;
  list(ctx: DashboardCtx, accountId: string, zone: string): Promise<TroubleItem[]>;
  /** Shown only to these roles (everyone when absent). */
  roles?: readonly Role[];
}

/** How far back failed posts are listed. */
const FAILED_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;
/** The most items one source lists; the page it links to has the rest. */
const PER_SOURCE = 10;
const EXCERPT = 60;

function excerpt(text: string | undefined): string {
  const chars = [...(text ?? "").replace(/\s+/g, " ").trim()];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join("")}…` : chars.join("");
}

function failureWhy(p: PostApi): string {
  const reasons = [...new Set(p.targets.filter((t) => t.status === "failed" && t.errorMessage).map((t) => `${t.label}: ${t.errorMessage}`))];
  return reasons.join(" · ") || p.errorMessage || "It could not be sent.";
}

const failedPosts: TroubleSource = {
  key: "failed-posts",
  heading: "Posts that failed",
  async list(ctx, accountId, zone) {
    const from = isoAt(ctx.deps.clock.now() - FAILED_WINDOW_MS);
    const [failed, partly] = await Promise.all([
      listPosts(ctx.deps, accountId, { from, status: "failed", limit: PER_SOURCE }),
      listPosts(ctx.deps, accountId, { from, status: "partially_failed", limit: PER_SOURCE }),
    ]);
    const posts = [...failed.posts, ...partly.posts].sort((a, b) => b.scheduledTime.localeCompare(a.scheduledTime)).slice(0, PER_SOURCE);
    const captions = await creationCaptions(ctx.deps, accountId, posts.map((p) => p.creationId));
    return posts.map((p) => {
      const at = zonedParts(Date.parse(p.scheduledTime), zone);
      const what = excerpt(captions.get(p.creationId)) || "A post";
      return {
        href: `/dashboard/calendar/posts/${p.id}`,
        title: `${shortDate(at.date)} ${at.time}: ${what}${p.status === "partially_failed" ? " (went out to some places only)" : ""}`,
        why: failureWhy(p),
      };
    });
  },
};

const unconfirmedPosts: TroubleSource = {
  key: "unconfirmed-posts",
  heading: "Posts to check: did they go out?",
  async list(ctx, accountId, zone) {
    // Unconfirmed posts wait for a person however old they are: no window.
    const { posts } = await listPosts(ctx.deps, accountId, { status: "unconfirmed", limit: PER_SOURCE });
    const captions = await creationCaptions(ctx.deps, accountId, posts.map((p) => p.creationId));
    return posts.map((p) => {
      const at = zonedParts(Date.parse(p.scheduledTime), zone);
      const where = p.targets.filter((t) => t.status === "unconfirmed").map((t) => t.label);
      return {
        href: `/dashboard/calendar/posts/${p.id}`,
        title: `${shortDate(at.date)} ${at.time}: ${excerpt(captions.get(p.creationId)) || "A post"}`,
        why: `${where.join(", ")} could not confirm it went out. Look, then answer "It was posted" or "Send again".`,
      };
    });
  },
};

const connectionsNeedingAttention: TroubleSource = {
  key: "connections",
  heading: "Connections that need attention",
  async list(ctx, accountId) {
    const rows = (await listConnections(ctx.deps, accountId)).filter((c) => !c.readyToPost);
    return rows.slice(0, PER_SOURCE).map((c) => ({
      href: `/dashboard/connections#connection-${c.id}`,
      title: c.label,
      why: c.blockedReason ?? "It is not ready to post.",
    }));
  },
};

const awaitingApproval: TroubleSource = {
  key: "awaiting-approval",
  heading: "Posts waiting for your approval",
  roles: ["owner"],
  async list(ctx, accountId, zone) {
    const { posts } = await listPosts(ctx.deps, accountId, { status: "pending_approval", limit: PER_SOURCE });
    return [...posts]
      .sort((a, b) => a.scheduledTime.localeCompare(b.scheduledTime))
      .map((p) => {
        const at = zonedParts(Date.parse(p.scheduledTime), zone);
        return {
          href: `/dashboard/approvals#post-${p.id}`,
          title: `${shortDate(at.date)} ${at.time}: ${excerpt(p.content.caption) || "A post"}`,
          why: "An editor scheduled it; it goes out only once an owner approves it.",
        };
      });
  },
};

/** Every kind of trouble, in the order shown. */
export const TROUBLE_SOURCES: readonly TroubleSource[] = [awaitingApproval, failedPosts, unconfirmedPosts, connectionsNeedingAttention];

/** The "Needs your attention" card, or nothing when all is well. */
export async function troubleCard(ctx: DashboardCtx, accountId: string, zone: string, role: Role): Promise<Html> {
  const sources = TROUBLE_SOURCES.filter((source) => source.roles === undefined || source.roles.includes(role));
  const found = await Promise.all(sources.map(async (source) => ({ source, items: await source.list(ctx, accountId, zone) })));
  const shown = found.filter((f) => f.items.length > 0);
  if (shown.length === 0) return html``;
  return html`<section class="card attention" aria-labelledby="trouble-title">
  <h2 id="trouble-title">Needs your attention</h2>
  ${shown.map(
    ({ source, items }) => html`<h3 id="trouble-${source.key}">${source.heading}</h3>
  <ul class="trouble" aria-labelledby="trouble-${source.key}">${items.map((i) => html`<li><a href="${i.href}">${i.title}</a><span class="why">${i.why}</span></li>`)}</ul>`,
  )}
</section>`;
}
