/**
 * Seeds: list and search them with their text, write a new one, edit or delete one, and generate a creation from it
 * (aspect ratio, style, and the image: none, a generated visual, or one from the library). Everything goes through
 * the seeds and creations services the API uses; owners and editors write (the roles that may hold Content creation).
 */
import { ASPECT_RATIOS, DEFAULT_ASPECT_RATIO, DEFAULT_MEDIA_STYLE, MEDIA_STYLES } from "../../../generation/generator";
import { BUILTIN_GENERATOR_NAME } from "../../../generation/builtin";
import { generatorFor } from "../../instance-settings/service";
import { isoAt } from "../../../lib/clock";
import { AppError } from "../../../lib/errors";
import { ROLE_SCOPES } from "../../../auth/scopes";
import { generateCreation, listCreations } from "../../creations/service";
import { type Seed, type SeedInput, createSeed, deleteSeed, getOwnedSeed, listSeeds, patchSeed } from "../../seeds/service";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { imagePicker } from "../image-picker";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { Membership, SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";
import { zoneOf } from "../../../web/preferences";

const CURRENT = "/dashboard/seeds";

/** How the picker names a media style: as a card style when the builtin writer renders it (it draws no photos). */
function styleLabel(style: (typeof MEDIA_STYLES)[number], cardsOnly: boolean): string {
  const name = style[0]!.toUpperCase() + style.slice(1);
  if (!cardsOnly) return name;
  if (style === "photorealistic") return "Photo-look card (a text card; photos need an image model)";
  if (style === "illustration") return "Illustrated card (shapes and text)";
  return `${name} card`;
}
const PAGE_SIZE = 20;
const EXCERPT = 280;

const ASPECT_LABELS: Record<string, string> = {
  square: "Square (1080×1080)",
  portrait: "Portrait (1080×1350)",
  landscape: "Landscape (1200×628)",
  story: "Story (1080×1920)",
};
const IMAGE_CHOICES = [
  ["generate", "Generate a visual"],
  ["library", "Use an image from the library"],
  ["none", "No image (text only)"],
] as const;

function canWrite(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("create");
}

function excerpt(text: string): string {
  const chars = [...text];
  return chars.length > EXCERPT ? `${chars.slice(0, EXCERPT).join("")}…` : text;
}

/** Service refusals about a seed's fields, in plain words. */
function seedWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "title") return "Give the seed a title.";
  if (fieldName === "content") return "Write what the post is about.";
  if (fieldName === "image_url") return "That is not a web address; it starts with http:// or https://.";
  return problem || message;
}
const SEED_FIELDS = { title: "title", content: "content", category: "category", image_url: "image_url" };

function seedFormControls(f: FormState, v: Record<string, string>): Html {
  return html`${f.input({ name: "title", label: "Title", value: v.title, required: true, attrs: html` maxlength="200"` })}
  ${f.textarea({ name: "content", label: "What is the post about?", value: v.content, required: true, rows: 7, hint: "Notes, a draft, a link: the generator turns it into a caption." })}
  ${f.input({ name: "category", label: "Category (optional)", value: v.category, hint: "A word to group seeds by, e.g. recipes." })}
  ${f.input({ name: "image_url", label: "Image address (optional)", type: "url", value: v.image_url, hint: "An image on the web to use when generating, if you do not choose another." })}`;
}

async function listPage(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  request: Request,
  extra: { notices?: Notice[]; errors?: FieldErrors; values?: Record<string, string> } = {},
): Promise<Html> {
  const params = new URL(request.url).searchParams;
  const search = params.get("q") ?? "";
  let result: Awaited<ReturnType<typeof listSeeds>>;
  try {
    result = await listSeeds(ctx.deps, account.accountId, { search: search || null, limit: PAGE_SIZE, cursor: params.get("cursor") });
  } catch {
    result = await listSeeds(ctx.deps, account.accountId, { search: search || null, limit: PAGE_SIZE, cursor: null });
  }
  const f = new FormState(extra.errors);
  const v = extra.values ?? {};
  return page(
    s,
    { title: "Ideas", current: CURRENT, notices: extra.notices ?? noticeFrom(request) },
    html`<p class="muted">An idea (a seed) is what a post is about. Write one, then generate posts from it: a new post starts here.</p>
${
  canWrite(s)
    ? html`<details class="card" id="new-seed"${extra.errors || result.seeds.length === 0 || new URL(request.url).searchParams.has("new") ? html` open` : ""}><summary><h2 class="inline-h">Write a seed</h2></summary>
  <form method="post" action="${CURRENT}" class="form-card" novalidate>
    ${csrfField(s.csrfToken)}
    ${seedFormControls(f, v)}
    <button type="submit">Save seed</button>
  </form></details>`
    : ""
}
<section aria-labelledby="seeds-title">
  <h2 id="seeds-title">Your seeds</h2>
  <form method="get" action="${CURRENT}" class="actions search" role="search">
    <label class="sr-only" for="q">Search seeds</label>
    <input id="q" name="q" type="search" value="${search}" placeholder="Search title, text and category">
    <button type="submit" class="secondary">Search</button>
    ${search ? html`<a href="${CURRENT}">Clear</a>` : ""}
  </form>
  ${
    result.seeds.length === 0
      ? html`<p class="muted">${search ? html`No seed matches “${search}”.` : "No seeds yet. Write your first one above."}</p>`
      : html`<ul class="plain seed-cards">${result.seeds.map(
          (seed: Seed) => html`<li class="card">
    <h3><a href="${CURRENT}/${seed.id}">${seed.title}</a>${seed.category ? html` <span class="badge">${seed.category}</span>` : ""}</h3>
    <p class="seed-text">${excerpt(seed.content)}</p>
    <p class="hint">Written ${timeTag(isoAt(seed.createdAt), "—", zoneOf(s))}</p>
  </li>`,
        )}</ul>`
  }
  ${result.nextCursor ? html`<p><a href="${CURRENT}?q=${encodeURIComponent(search)}&amp;cursor=${encodeURIComponent(result.nextCursor)}">More seeds</a></p>` : ""}
</section>`,
  );
}

/** GET /dashboard/seeds[?q=&cursor=] */
export async function getSeeds(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(await listPage(ctx, s, account, request));
}

function writer(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canWrite(s)) return forbiddenPage(s, "Only owners and editors write seeds.");
  return account;
}

function seedValues(form: Form | undefined): Record<string, string> {
  return { title: field(form, "title"), content: field(form, "content"), category: field(form, "category"), image_url: field(form, "image_url") };
}

function seedInput(v: Record<string, string>): SeedInput {
  return { title: v.title ?? "", content: v.content ?? "", category: v.category || null, image_url: v.image_url || null };
}

/** Plain-word checks before the service (which checks the same again). */
function precheck(v: Record<string, string>): FieldErrors {
  const errors: FieldErrors = {};
  if (!v.title?.trim()) errors.title = seedWords("title", "", "");
  if (!v.content?.trim()) errors.content = seedWords("content", "", "");
  return errors;
}

/** POST /dashboard/seeds */
export async function postSeed(ctx: DashboardCtx, s: SessionContext, form: Form | undefined, request: Request): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  const v = seedValues(form);
  let errors = precheck(v);
  if (Object.keys(errors).length === 0) {
    try {
      const seed = await createSeed(ctx.deps, account.accountId, seedInput(v));
      return redirect(`${CURRENT}/${seed.id}?notice=seed-saved`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors = errorsOf(error, SEED_FIELDS, seedWords, "title").fields;
    }
  }
  return htmlResponse(await listPage(ctx, s, account, request, { errors, values: v, notices: [] }), 400);
}

async function ownedSeed(ctx: DashboardCtx, accountId: string, id: string): Promise<Seed | null> {
  try {
    return await getOwnedSeed(ctx.deps, accountId, id);
  } catch (error) {
    if (error instanceof AppError) return null;
    throw error;
  }
}

function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Seed not found", current: CURRENT }, html`<p class="card">No such seed in this account. <a href="${CURRENT}">All seeds</a></p>`), 404);
}

interface SeedPageState {
  notices?: Notice[];
  editErrors?: FieldErrors;
  editValues?: Record<string, string>;
  genErrors?: FieldErrors;
  genValues?: Record<string, string>;
}

async function generateForm(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  seed: Seed,
  errors: FieldErrors | undefined,
  v: Record<string, string>,
): Promise<Html> {
  const f = new FormState(errors);
  const choice = v.image ?? "generate";
  const price = ctx.deps.config.prices.generateSocialPost;
  const picker = await imagePicker(ctx.deps, account.accountId, "image_asset_id", v.image_asset_id ?? "", "Library image (when “from the library” is chosen)");
  // Without a model server the images are designed cards: every style is named as the card it gives (decisions §15).
  const cardsOnly = (await generatorFor(ctx.deps)).name === BUILTIN_GENERATOR_NAME;
  return html`<form method="post" action="${CURRENT}/${seed.id}/generate" class="card" aria-labelledby="generate-title">
  <h2 id="generate-title">Generate a post</h2>
  ${csrfField(s.csrfToken)}
  <div class="grid2 tight">
    ${f.select({ name: "aspect_ratio", label: "Shape", value: v.aspect_ratio ?? DEFAULT_ASPECT_RATIO, options: Object.keys(ASPECT_RATIOS).map((k) => [k, ASPECT_LABELS[k] ?? k] as const) })}
    ${f.select({ name: "media_style", label: "Style", value: v.media_style ?? DEFAULT_MEDIA_STYLE, options: MEDIA_STYLES.map((m) => [m, styleLabel(m, cardsOnly)] as const) })}
  </div>
  ${f.group(
    "image",
    "Image",
    html`${IMAGE_CHOICES.map(([value, label]) => html`<label><input type="radio" name="image" value="${value}"${choice === value ? html` checked` : ""}> ${label}</label>`)}
    ${picker}`,
  )}
  <p class="hint">Costs ${price} credit${price === 1 ? "" : "s"}. You can edit the caption afterwards.</p>
  <button type="submit">Generate</button>
</form>`;
}

async function seedPage(ctx: DashboardCtx, s: SessionContext, account: Membership, seed: Seed, state: SeedPageState): Promise<Html> {
  const edit = new FormState(state.editErrors);
  const ev = state.editValues ?? { title: seed.title, content: seed.content, category: seed.category ?? "", image_url: seed.imageUrl ?? "" };
  const { creations } = await listCreations(ctx.deps, account.accountId, { seedId: seed.id, limit: 12 });
  const writable = canWrite(s);
  const generate = writable ? await generateForm(ctx, s, account, seed, state.genErrors, state.genValues ?? {}) : "";
  return page(
    s,
    { title: seed.title, current: CURRENT, notices: state.notices },
    html`<p class="muted"><a href="${CURRENT}">All seeds</a> · written ${timeTag(isoAt(seed.createdAt), "—", zoneOf(s))}${seed.updatedAt !== seed.createdAt ? html`, changed ${timeTag(isoAt(seed.updatedAt), "—", zoneOf(s))}` : ""}${seed.category ? html` · <span class="badge">${seed.category}</span>` : ""}</p>
<section class="card" aria-labelledby="text-title"><h2 id="text-title">Text</h2><p class="seed-text">${seed.content}</p>
${writable ? html`<p><a class="button secondary" href="/dashboard/compose?seed=${seed.id}">Write a post</a> <span class="hint">yourself, starting from these words: several images, a thread, a first comment, a version per network.</span></p>` : ""}</section>
${generate}
<section aria-labelledby="made-title">
  <h2 id="made-title">Posts from this seed</h2>
  ${
    creations.length === 0
      ? html`<p class="muted">None yet.</p>`
      : html`<ul class="plain seed-list">${creations.map((c) => html`<li><a href="/dashboard/creations/${c.id}">${excerpt(c.body.caption).slice(0, 120)}</a> <span class="muted">${timeTag(c.createdAt, "—", zoneOf(s))}</span></li>`)}</ul>`
  }
</section>
${
  writable
    ? html`<details class="card"${state.editErrors ? html` open` : ""}><summary><h2 class="inline-h">Edit this seed</h2></summary>
  <form method="post" action="${CURRENT}/${seed.id}" class="form-card" novalidate>
    ${csrfField(s.csrfToken)}
    ${seedFormControls(edit, ev)}
    <div class="actions"><button type="submit">Save changes</button> <a class="button danger" href="${CURRENT}/${seed.id}/delete">Delete seed…</a></div>
  </form></details>`
    : ""
}`,
  );
}

/** GET /dashboard/seeds/:id */
export async function getSeedPage(ctx: DashboardCtx, s: SessionContext, request: Request, id: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const seed = await ownedSeed(ctx, account.accountId, id);
  if (!seed) return missing(s);
  return htmlResponse(await seedPage(ctx, s, account, seed, { notices: noticeFrom(request) }));
}

/** POST /dashboard/seeds/:id: save an edit. */
export async function postEditSeed(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  const seed = await ownedSeed(ctx, account.accountId, id);
  if (!seed) return missing(s);
  const v = seedValues(form);
  let errors = precheck(v);
  if (Object.keys(errors).length === 0) {
    try {
      await patchSeed(ctx.deps, account.accountId, id, seedInput(v));
      return redirect(`${CURRENT}/${id}?notice=seed-saved`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors = errorsOf(error, SEED_FIELDS, seedWords, "title").fields;
    }
  }
  return htmlResponse(await seedPage(ctx, s, account, seed, { editErrors: errors, editValues: v }), 400);
}

/** GET /dashboard/seeds/:id/delete: the confirmation step. */
export async function getDeleteSeed(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  const seed = await ownedSeed(ctx, account.accountId, id);
  if (!seed) return missing(s);
  return htmlResponse(
    confirmPage(s, {
      title: "Delete seed",
      current: CURRENT,
      question: html`Delete the seed <strong>${seed.title}</strong>? Posts already generated from it keep their text.`,
      action: `${CURRENT}/${seed.id}/delete`,
      confirmLabel: "Delete seed",
      cancelHref: `${CURRENT}/${seed.id}`,
    }),
  );
}

/** POST /dashboard/seeds/:id/delete */
export async function postDeleteSeed(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  try {
    await deleteSeed(ctx.deps, account.accountId, id);
    return redirect(`${CURRENT}?notice=seed-deleted`);
  } catch (error) {
    if (error instanceof AppError && error.code === "not_found") return missing(s);
    throw error;
  }
}

/** POST /dashboard/seeds/:id/generate: generate a creation, then show it. */
export async function postGenerate(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = writer(s);
  if (account instanceof Response) return account;
  const seed = await ownedSeed(ctx, account.accountId, id);
  if (!seed) return missing(s);
  const v = { aspect_ratio: field(form, "aspect_ratio"), media_style: field(form, "media_style"), image: field(form, "image"), image_asset_id: field(form, "image_asset_id") };
  const errors: FieldErrors = {};
  if (!(v.aspect_ratio in ASPECT_RATIOS)) errors.aspect_ratio = "Choose one of the shapes.";
  if (!(MEDIA_STYLES as readonly string[]).includes(v.media_style)) errors.media_style = "Choose one of the styles.";
  if (!IMAGE_CHOICES.some(([value]) => value === v.image)) errors.image = "Choose where the image comes from.";
  if (v.image === "library" && !v.image_asset_id) errors.image = "Choose an image from the library, or another option.";
  if (Object.keys(errors).length > 0) return htmlResponse(await seedPage(ctx, s, account, seed, { genErrors: errors, genValues: v }), 400);
  try {
    const { creation } = await generateCreation(ctx.deps, account.accountId, {
      seed_id: seed.id,
      aspect_ratio: v.aspect_ratio,
      media_style: v.media_style as (typeof MEDIA_STYLES)[number],
      ...(v.image === "generate" ? { include_visual: true } : {}),
      ...(v.image === "library" ? { image_asset_id: v.image_asset_id } : {}),
    });
    return redirect(`/dashboard/creations/${creation.id}?notice=generated`);
  } catch (error) {
    const { notice, status } = refusal(error);
    const where = error instanceof AppError && error.code === "not_found" ? { image: "That image is no longer in the library; choose another." } : undefined;
    return htmlResponse(await seedPage(ctx, s, account, seed, { notices: where ? [] : [notice], genErrors: where, genValues: v }), status);
  }
}
