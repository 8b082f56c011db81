/**
 * Seeds and creations: browse and search seeds, list creations (all, or one seed's), and see a creation as it will
 * appear: image with its alt text, caption. Read only: seeds and creations are made through the API.
 */
import { isoAt } from "../../../lib/clock";
import { AppError } from "../../../lib/errors";
import type { Creation } from "../../creations/model";
import { findCreationRow, getCreation, listCreations } from "../../creations/service";
import { type Seed, getOwnedSeed, listSeeds } from "../../seeds/service";
import type { DashboardCtx } from "../guard";
import { requireAccount } from "../guard";
import { type Html, html, timeTag } from "../html";
import { htmlResponse } from "../http";
import { page } from "../layout";
import type { Membership, SessionContext } from "../session";

const CURRENT = "/dashboard/creations";
const PAGE_SIZE = 24;
const EXCERPT = 160;

/** A library URL made same-origin, so the page shows it whatever BASE_URL says. */
function sameOrigin(ctx: DashboardCtx, url: string | null): string | null {
  if (!url) return null;
  return url.startsWith(ctx.deps.config.baseUrl) ? url.slice(ctx.deps.config.baseUrl.length) : url;
}

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join("")}…` : text;
}

function creationCard(ctx: DashboardCtx, c: Creation): Html {
  const img = sameOrigin(ctx, c.body.imageUrl);
  return html`<li>
  ${img ? html`<img src="${img}" alt="${c.body.altText ?? ""}" loading="lazy">` : html`<div class="no-image muted">No image</div>`}
  <div class="meta"><p class="caption-excerpt">${excerpt(c.body.caption)}</p>
    <span class="muted">${timeTag(c.createdAt)}</span></div>
  <p class="card-link"><a href="${CURRENT}/${c.id}">Open<span class="sr-only"> creation from ${c.createdAt.slice(0, 10)}</span></a></p>
</li>`;
}

function seedsSection(ctx: DashboardCtx, account: Membership, search: string, cursor: string | null): Html {
  let result: ReturnType<typeof listSeeds>;
  try {
    result = listSeeds(ctx.deps, account.accountId, { search: search || null, limit: PAGE_SIZE, cursor });
  } catch {
    result = listSeeds(ctx.deps, account.accountId, { search: search || null, limit: PAGE_SIZE, cursor: null });
  }
  return html`<section class="card" aria-labelledby="seeds-title">
  <h2 id="seeds-title">Seeds</h2>
  <form method="get" action="${CURRENT}" class="actions search">
    <label class="sr-only" for="q">Search seeds</label>
    <input id="q" name="q" type="search" value="${search}" placeholder="Search seeds">
    <button type="submit" class="secondary">Search</button>
  </form>
  ${
    result.seeds.length === 0
      ? html`<p class="muted">${search ? "No seed matches." : "No seeds yet. Save them through the API (POST /api/v1/seeds)."}</p>`
      : html`<ul class="plain seed-list">${result.seeds.map(
          (s: Seed) => html`<li><a href="${CURRENT}?seed=${s.id}">${s.title}</a>${s.category ? html` <span class="badge">${s.category}</span>` : ""} <span class="muted">${timeTag(isoAt(s.createdAt))}</span></li>`,
        )}</ul>`
  }
  ${result.nextCursor ? html`<p><a href="${CURRENT}?q=${encodeURIComponent(search)}&amp;seedCursor=${encodeURIComponent(result.nextCursor)}">More seeds</a></p>` : ""}
</section>`;
}

/** GET /dashboard/creations[?seed=&q=&cursor=] */
export function getCreations(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const params = new URL(request.url).searchParams;
  const seedId = params.get("seed") ?? undefined;
  let seed: Seed | null = null;
  if (seedId) {
    try {
      seed = getOwnedSeed(ctx.deps, account.accountId, seedId);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return htmlResponse(page(s, { title: "Seed not found", current: CURRENT }, html`<p class="card">No such seed in this account.</p>`), 404);
    }
  }
  let result: ReturnType<typeof listCreations>;
  try {
    result = listCreations(ctx.deps, account.accountId, { seedId: seed?.id, limit: PAGE_SIZE, cursor: params.get("cursor") ?? undefined });
  } catch {
    result = listCreations(ctx.deps, account.accountId, { seedId: seed?.id, limit: PAGE_SIZE });
  }
  return htmlResponse(
    page(
      s,
      { title: "Seeds & creations", current: CURRENT },
      html`${seedsSection(ctx, account, params.get("q") ?? "", params.get("seedCursor"))}
<section aria-labelledby="creations-title">
  <h2 id="creations-title">${seed ? html`Creations from “${seed.title}” <a class="hint" href="${CURRENT}">show all</a>` : "Creations"}</h2>
  ${
    result.creations.length === 0
      ? html`<p class="muted">No creations yet. Generate them through the API (POST /api/v1/creations/generate).</p>`
      : html`<ul class="gallery creations">${result.creations.map((c) => creationCard(ctx, c))}</ul>`
  }
  ${result.nextCursor ? html`<p><a href="${CURRENT}?${seed ? `seed=${seed.id}&` : ""}cursor=${encodeURIComponent(result.nextCursor)}">Older creations</a></p>` : ""}
</section>`,
    ),
  );
}

/** GET /dashboard/creations/:id: the creation as it will appear. */
export function getCreationPage(ctx: DashboardCtx, s: SessionContext, id: string): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!findCreationRow(ctx.deps, account.accountId, id)) {
    return htmlResponse(page(s, { title: "Creation not found", current: CURRENT }, html`<p class="card">No such creation in this account.</p>`), 404);
  }
  const c = getCreation(ctx.deps, account.accountId, id);
  let seedTitle: string | null = null;
  if (c.seedId) {
    try {
      seedTitle = getOwnedSeed(ctx.deps, account.accountId, c.seedId).title;
    } catch {
      seedTitle = null;
    }
  }
  const img = sameOrigin(ctx, c.body.imageUrl);
  return htmlResponse(
    page(
      s,
      { title: "Creation", current: CURRENT },
      html`<p class="muted">${seedTitle && c.seedId ? html`From the seed <a href="${CURRENT}?seed=${c.seedId}">${seedTitle}</a> · ` : ""}created ${timeTag(c.createdAt)}${c.updatedAt !== c.createdAt ? html`, last regenerated ${timeTag(c.updatedAt)}` : ""}</p>
<div class="grid2">
  <article class="card post-preview" aria-labelledby="preview-title">
    <h2 id="preview-title">As it will appear</h2>
    ${img ? html`<img src="${img}" alt="${c.body.altText ?? ""}">` : ""}
    <p class="caption">${c.body.caption}</p>
  </article>
  <section class="card" aria-labelledby="details-title">
    <h2 id="details-title">Details</h2>
    <dl class="details">
      <dt>Caption</dt><dd class="caption">${c.body.caption}</dd>
      <dt>Alt text</dt><dd>${c.body.altText === null ? html`<span class="muted">no image</span>` : c.body.altText || html`<span class="muted">empty</span>`}</dd>
      <dt>Image</dt><dd>${img ? html`<a href="${img}">${c.body.imageUrl}</a>` : html`<span class="muted">none</span>`}</dd>
      <dt>Id</dt><dd><code>${c.id}</code></dd>
      <dt>Public preview</dt><dd><a href="${sameOrigin(ctx, c.url) ?? c.url}">${c.url}</a></dd>
    </dl>
  </section>
</div>`,
    ),
  );
}
