/**
 * The composer (decisions.md §13, §15): a post written by hand, blank or from a seed, or an existing post edited.
 * Several images (from the library or uploaded, in order, each with its alt text and a hint while it has none), thread
 * parts, a first comment, and a tab per network the account is connected to with that network's version, its counts
 * by the network's own rule, what it cannot take, and a preview. One form: every button works without script (a round
 * trip that keeps what was typed, nothing stored until "Save"); the page script moves and removes items in place,
 * uploads files one by one, switches tabs and redraws previews and counts as the person types.
 */
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import { isUploadedFile, type UploadedFile } from "../../../http/form-body";
import { AppError } from "../../../lib/errors";
import { type Html, html } from "../../../lib/html";
import { ROLE_SCOPES } from "../../../auth/scopes";
import { ingestUploadOnce } from "../../assets/service";
import { getOwnedSeed } from "../../seeds/service";
import type { CreationPatch } from "../../creations/content-input";
import { createCreationByHand, updateCreation } from "../../creations/edit";
import type { Creation } from "../../creations/model";
import { findCreationRow, getCreation } from "../../creations/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import type { Membership, SessionContext } from "../../../web/session";
import { type FieldErrors, FormState } from "../fields";
import { imageChecklist } from "../image-picker";
import { plainMessage } from "./common";
import {
  type ComposedInput,
  type Draft,
  type DraftImage,
  type DraftPart,
  type ImageScope,
  addImages,
  altFieldName,
  applyOperation,
  blankDraft,
  composedInput,
  draftAssetIds,
  draftFromForm,
  imagesIn,
  operationOf,
} from "../composer/draft";
import { type Network, accountNetworks, countsFor, effectiveFor, hintsFor, platformsOf } from "../composer/networks";
import { imageInfo } from "../composer/images";
import { type ImageInfo, networkPreview } from "../composer/preview";

/** The composer of a new post (NAV's "New post"). */
export const COMPOSE_PATH = "/dashboard/compose";
const POSTS = "/dashboard/creations";

/** Where the composer's form goes and what it is about: a new post, or an existing one (`creationId`). */
export interface ComposerTarget {
  creationId: string | null;
}

/** Everything one rendering of the composer shows. */
export interface ComposerState {
  draft: Draft;
  errors?: FieldErrors;
  notices?: Notice[];
  /** The id of the control to put the cursor on (the button just pressed, after a round trip without script). */
  focus?: string;
}

function canCreate(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("create");
}
function canSchedule(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

/** The session's account when it may write posts; otherwise the page to answer. */
export function composerGate(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canCreate(s)) return forbiddenPage(s, "Only owners and editors write posts.");
  return account;
}

/** Drops images that are not the account's (a hand-made form): nothing foreign is shown or stored. */
function keepOwned(draft: Draft, info: ReadonlyMap<string, ImageInfo>): void {
  const own = (list: DraftImage[]) => list.splice(0, list.length, ...list.filter((i) => info.has(i.assetId)));
  own(draft.images);
  draft.thread.forEach((p) => own(p.images));
}

function buttonId(value: string): string {
  return `op-${value.replace(/[^a-z0-9-]/gi, "-")}`;
}

/** A submit button of the form: `op` names what it does; `label` is trusted markup or text. */
function opButton(value: string, label: Html | string, opts: { kind?: string; disabled?: boolean; focus?: string; data?: Html } = {}): Html {
  const id = buttonId(value);
  return html`<button type="submit" name="op" value="${value}" id="${id}" class="${opts.kind ?? "small secondary"}"${opts.disabled ? html` disabled` : ""}${opts.focus === id ? html` autofocus` : ""}${opts.data ?? ""}>${label}</button>`;
}

/** One image of a list, with its alt text, the hint while it has none, and its move and remove buttons. */
function imageItem(scope: ImageScope, image: DraftImage, index: number, count: number, info: ReadonlyMap<string, ImageInfo>, state: ComposerState): Html {
  const meta = info.get(image.assetId);
  const name = altFieldName(scope, image.assetId);
  const fieldId = `alt-${scope}-${image.assetId}`;
  const missing = image.altText.trim() === "";
  const error = state.errors?.[name];
  const where = html`<span class="sr-only"> image <span class="pos">${index + 1}</span>${scope === "post" ? "" : html` of this part`}</span>`;
  return html`<li class="image-item" data-asset="${image.assetId}" data-mime="${meta?.mimeType ?? ""}" data-src="${meta?.src ?? ""}">
  <img class="image-thumb" src="${meta?.src ?? ""}" alt="" width="88" height="88" draggable="false">
  <div class="image-fields${error ? " has-error" : ""}">
    <label for="${fieldId}">Alt text of image <span class="pos">${index + 1}</span> <span class="muted">${meta?.fileName ?? ""}</span></label>
    <textarea id="${fieldId}" name="${name}" rows="2" data-alt aria-describedby="${fieldId}-hint${error ? ` ${fieldId}-error` : ""}"${error ? html` aria-invalid="true"` : ""}>${image.altText}</textarea>
    ${error ? html`<p class="field-error" id="${fieldId}-error">${error}</p>` : ""}
    <p class="hint alt-hint${missing ? " alt-missing" : ""}" id="${fieldId}-hint">${missing ? "No alt text yet: describe the image for people who cannot see it." : "Read aloud to people who cannot see the image."}</p>
    <div class="item-moves">
      ${opButton(`image-up:${scope}:${index}`, html`Move up${where}`, { disabled: index === 0, focus: state.focus, data: html` data-move="up"` })}
      ${opButton(`image-down:${scope}:${index}`, html`Move down${where}`, { disabled: index === count - 1, focus: state.focus, data: html` data-move="down"` })}
      ${opButton(`image-remove:${scope}:${index}`, html`Remove${where}`, { focus: state.focus, data: html` data-remove` })}
    </div>
  </div>
</li>`;
}

function imageList(scope: ImageScope, images: readonly DraftImage[], info: ReadonlyMap<string, ImageInfo>, state: ComposerState, labelledBy: string): Html {
  return html`<ol class="image-list plain" data-scope="${scope}" aria-labelledby="${labelledBy}">${images.map((image, i) => imageItem(scope, image, i, images.length, info, state))}</ol>`;
}

/** A part's text field, labelled with the part's number (kept in step by the page script when parts move). */
function partText(part: DraftPart, index: number, state: ComposerState): Html {
  const name = `part_caption_${part.key}`;
  const error = state.errors?.[name];
  return html`<div class="row${error ? " has-error" : ""}"><label for="${name}">Text of part <span class="pos">${index + 2}</span></label>
  <textarea id="${name}" name="${name}" rows="4" data-part-caption${error ? html` aria-invalid="true" aria-describedby="${name}-error" autofocus` : ""}>${part.caption}</textarea>
  ${error ? html`<p class="field-error" id="${name}-error">${error}</p>` : ""}</div>`;
}

function partItem(part: DraftPart, index: number, count: number, info: ReadonlyMap<string, ImageInfo>, state: ComposerState): Html {
  const n = html`<span class="pos">${index + 2}</span>`;
  const titleId = `part-${part.key}-title`;
  return html`<li class="part" data-key="${part.key}">
  <h3 id="${titleId}" class="part-title">Part <span class="pos">${index + 2}</span></h3>
  ${partText(part, index, state)}
  <p class="hint part-images-label" id="${titleId}-images"${part.images.length === 0 ? html` hidden` : ""}>Images of this part</p>
  ${imageList(part.key, part.images, info, state, `${titleId}-images`)}
  <div class="item-moves">
    ${opButton(`part-up:${part.key}`, html`Move part ${n} up`, { disabled: index === 0, focus: state.focus, data: html` data-move="up"` })}
    ${opButton(`part-down:${part.key}`, html`Move part ${n} down`, { disabled: index === count - 1, focus: state.focus, data: html` data-move="down"` })}
    ${opButton(`part-remove:${part.key}`, html`Remove part ${n}`, { focus: state.focus, data: html` data-remove` })}
  </div>
</li>`;
}

/** The add-images card: upload, or tick library images; both go to the post or a chosen part. */
async function addImagesCard(ctx: DashboardCtx, account: Membership, draft: Draft, f: FormState, state: ComposerState): Promise<Html> {
  const checklist = await imageChecklist(ctx.deps, account.accountId, "pick", "From the library");
  const megabytes = Math.floor(ctx.deps.config.maxImageBytes / (1024 * 1024));
  const targets: [string, string][] = [["post", "The post"], ...draft.thread.map((p, i): [string, string] => [p.key, `Part ${i + 2}`])];
  return html`<section class="card" id="add-images" aria-labelledby="add-images-title">
  <h2 id="add-images-title">Add images</h2>
  ${f.input({ name: "upload", label: "Upload from this device", type: "file", attrs: html` accept="image/png,image/jpeg,image/gif,image/webp" multiple data-composer-upload`, hint: `PNG, JPEG, GIF or WebP, up to ${megabytes} MB each. They go into the library too.` })}
  ${checklist ?? html`<p class="muted">Your library has no images yet: upload some above.</p>`}
  ${targets.length > 1 ? f.select({ name: "pick_to", label: "Add them to", options: targets, value: "post" }) : html`<input type="hidden" name="pick_to" value="post">`}
  <p class="hint">At most ${MAX_IMAGES} images per post and per part.</p>
  ${opButton("add-images", "Add the images", { kind: "secondary", focus: state.focus })}
</section>`;
}

/** One platform's tab panel: each of its connections' preview, counts and hints, then the platform's version. */
function networkPanel(platform: string, networks: readonly Network[], draft: Draft, accountName: string, info: ReadonlyMap<string, ImageInfo>, f: FormState): Html {
  const first = networks[0];
  if (!first) return html``;
  const name = first.caps.name;
  const e = effectiveFor(draft, platform);
  const v = draft.versions[platform];
  const mimeOf = (id: string) => info.get(id)?.mimeType;
  return html`<section class="net-panel" id="net-${platform}" aria-labelledby="net-${platform}-title" data-platform="${platform}">
  <h3 id="net-${platform}-title" class="net-title">${name}</h3>
  ${networks.map((n) => {
    const counts = countsFor(n, e);
    const hints = hintsFor(n, e, mimeOf);
    const limit = n.limit;
    return html`<div class="net-connection" data-platform="${platform}" data-name="${n.caps.name}" data-max-images="${n.caps.maxImages}" data-max-parts="${n.caps.maxThreadParts}" data-first-comment="${n.caps.firstComment ? "1" : "0"}" data-requires-image="${n.caps.requiresImage ? "1" : "0"}" data-image-types="${n.caps.imageTypes.join(",")}"${limit ? html` data-max="${limit.maxGraphemes}"${limit.urlLength !== undefined ? html` data-url-length="${limit.urlLength}"` : ""}${limit.count ? html` data-own-count="1"` : ""}` : ""}>
    ${networkPreview(n, e, accountName, info)}
    <ul class="net-counts plain" aria-label="Length on ${name}, ${n.label}">${
      limit
        ? counts.map((c) => html`<li class="counter${c.n > c.max ? " over" : ""}">${c.label}: <span class="count">${c.n}</span>/${c.max}<span class="over-text">${c.n > c.max ? " · too long" : ""}</span></li>`)
        : html`<li class="muted">No length limit.</li>`
    }</ul>
    ${limit?.count ? html`<p class="hint">${name} counts characters its own way: these counts are redone each time you press a button of the page (Save too), not as you type.</p>` : ""}
    <ul class="net-hints plain" aria-live="polite">${hints.map((h) => html`<li class="notice notice-warn">${h}</li>`)}</ul>
  </div>`;
  })}
  <fieldset class="version">
    <legend>${name}’s version</legend>
    ${f.textarea({ name: `version_caption_${platform}`, label: `Caption on ${name}`, value: v?.caption ?? "", rows: 4, hint: "Leave it empty to use the post’s caption.", attrs: html` data-version-caption` })}
    <label class="check"><input type="checkbox" name="version_nothread_${platform}" value="1"${v?.noThread ? html` checked` : ""} data-version-nothread> No thread on ${name}</label>
    <label class="check"><input type="checkbox" name="version_nocomment_${platform}" value="1"${v?.noFirstComment ? html` checked` : ""} data-version-nocomment> No first comment on ${name}</label>
  </fieldset>
</section>`;
}

function networksCard(networks: readonly Network[], draft: Draft, accountName: string, info: ReadonlyMap<string, ImageInfo>, f: FormState): Html {
  const platforms = platformsOf(networks);
  if (platforms.length === 0) {
    return html`<section class="card" aria-labelledby="networks-title"><h2 id="networks-title">On each network</h2>
  <p>No connections yet. <a href="/dashboard/connections">Connect an account</a> to see the post as each network will show it, with its own version.</p></section>`;
  }
  const names = new Map(networks.map((n) => [n.platform, n.caps.name]));
  return html`<section class="card net-card" aria-labelledby="networks-title"><h2 id="networks-title">On each network</h2>
  <p class="hint">How the post will look, its length by each network’s rule, and that network’s own version.</p>
  <div class="net-tabs" data-tabs>
    <div class="tab-list" role="tablist" aria-label="Networks" hidden>${platforms.map((p, i) => html`<button type="button" role="tab" id="tab-${p}" aria-controls="net-${p}" aria-selected="${i === 0 ? "true" : "false"}" tabindex="${i === 0 ? "0" : "-1"}">${names.get(p) ?? p}</button>`)}</div>
    ${platforms.map((p) => networkPanel(p, networks.filter((n) => n.platform === p), draft, accountName, info, f))}
  </div>
</section>`;
}

/** The composer page for `draft`. */
export async function composerPage(ctx: DashboardCtx, s: SessionContext, account: Membership, target: ComposerTarget, state: ComposerState): Promise<Html> {
  const { draft } = state;
  const f = new FormState(state.errors);
  const networks = await accountNetworks(ctx.deps, account.accountId);
  const info = await imageInfo(ctx.deps, account.accountId, draftAssetIds(draft));
  const seedTitle = draft.seedId ? await getOwnedSeed(ctx.deps, account.accountId, draft.seedId).then((x) => x.title, () => null) : null;
  const action = target.creationId ? `${POSTS}/${target.creationId}/edit` : COMPOSE_PATH;
  const cancel = target.creationId ? `${POSTS}/${target.creationId}` : POSTS;
  return page(
    s,
    { title: target.creationId ? "Edit post" : "New post", current: target.creationId ? POSTS : COMPOSE_PATH, notices: state.notices },
    html`${seedTitle && draft.seedId ? html`<p class="muted">From the idea <a href="/dashboard/seeds/${draft.seedId}">${seedTitle}</a>: its words are in the caption to start from.</p>` : ""}
<form method="post" action="${action}" enctype="multipart/form-data" class="composer" novalidate data-composer>
  <button type="submit" name="op" value="save" class="default-submit" tabindex="-1" aria-hidden="true">Save</button>
  ${csrfField(s.csrfToken)}
  ${draft.seedId ? html`<input type="hidden" name="seed_id" value="${draft.seedId}">` : ""}
  <div class="composer-grid">
  <div class="composer-main">
    <section class="card" aria-labelledby="post-title">
      <h2 id="post-title">Post</h2>
      ${f.textarea({ name: "caption", label: "Caption", value: draft.caption, rows: 8, required: true, hint: "Links become links. Each network’s count is on its tab.", attrs: html` data-main-caption` })}
      <h3 id="images-title">Images <span class="muted">(<span data-image-count>${draft.images.length}</span> of ${MAX_IMAGES})</span></h3>
      ${draft.images.length === 0 ? html`<p class="muted no-images">No images yet: add some below (several at once), or post text only.</p>` : ""}
      ${imageList("post", draft.images, info, state, "images-title")}
      ${draft.images.length > 1 ? html`<p class="hint">The first image leads. Drag an image, or use its Move buttons, to change the order.</p>` : ""}
      ${state.errors?.images ? html`<p class="field-error" id="images-error">${state.errors.images}</p>` : ""}
    </section>
    ${await addImagesCard(ctx, account, draft, f, state)}
    <section class="card" aria-labelledby="thread-title">
      <h2 id="thread-title">Thread</h2>
      <p class="hint">Each part goes out as a reply to the one before it, right after the post (part 1).</p>
      ${state.errors?.thread ? html`<p class="field-error" id="thread-error">${state.errors.thread}</p>` : ""}
      <ol class="parts plain">${draft.thread.map((p, i) => partItem(p, i, draft.thread.length, info, state))}</ol>
      ${draft.thread.length < MAX_THREAD_PARTS ? opButton("add-part", "Add a part", { kind: "secondary", focus: state.focus }) : html`<p class="hint">A thread has at most ${MAX_THREAD_PARTS} parts after the post.</p>`}
    </section>
    <section class="card" aria-labelledby="comment-title">
      <h2 id="comment-title">First comment</h2>
      ${f.textarea({ name: "first_comment", label: "First comment (optional)", value: draft.firstComment, rows: 3, hint: "Posted as the first reply right after the post (and its thread): a good place for links and hashtags.", attrs: html` data-first-comment` })}
    </section>
  </div>
  <div class="composer-side">
    ${networksCard(networks, draft, account.accountName, info, f)}
  </div>
  </div>
  <div class="actions composer-actions">
    ${opButton("save", target.creationId ? "Save changes" : "Save post", { kind: "", focus: state.focus })}
    ${canSchedule(s) ? opButton("save-schedule", "Save and schedule…", { kind: "secondary", focus: state.focus }) : ""}
    <a class="button secondary" href="${cancel}">Cancel</a>
  </div>
  <p id="composer-status" class="sr-only" role="status" aria-live="polite"></p>
</form>`,
  );
}

/** GET /dashboard/compose[?seed=<id>]: blank, or with the seed's words as the caption. */
export async function getComposer(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = composerGate(s);
  if (account instanceof Response) return account;
  const seedId = new URL(request.url).searchParams.get("seed");
  let draft = blankDraft();
  if (seedId) {
    const seed = await getOwnedSeed(ctx.deps, account.accountId, seedId).catch(() => null);
    if (!seed) return htmlResponse(page(s, { title: "Idea not found", current: COMPOSE_PATH }, html`<p class="card">No such idea in this account. <a href="${COMPOSE_PATH}">Write a post without one</a>.</p>`), 404);
    draft = blankDraft({ id: seed.id, content: seed.content });
  }
  return htmlResponse(await composerPage(ctx, s, account, { creationId: null }, { draft }));
}

function uploadsOf(form: Form | undefined): UploadedFile[] {
  const value = form?.upload;
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is UploadedFile => isUploadedFile(v) && v.bytes.byteLength > 0);
}

/** The result of reading the submitted form: the draft with the pressed button applied, or what to say about it. */
export interface ReadDraft {
  draft: Draft;
  op: ReturnType<typeof operationOf>;
  errors: FieldErrors;
  notices: Notice[];
  focus?: string;
}

/**
 * Reads the composer's form: the draft, uploads stored in the library and ticked library images added to the post or
 * the chosen part, then the pressed button's move, removal or new part. Stores nothing but the uploaded images (a file
 * whose bytes the library already holds is not stored again: the post uses that image).
 */
export async function readComposerForm(ctx: DashboardCtx, account: Membership, form: Form | undefined): Promise<ReadDraft> {
  const networks = await accountNetworks(ctx.deps, account.accountId);
  const draft = draftFromForm(form, platformsOf(networks));
  const op = operationOf(form);
  const errors: FieldErrors = {};
  const notices: Notice[] = [];
  const scopeName = field(form, "pick_to");
  const scope = scopeName === "post" || draft.thread.some((p) => p.key === scopeName) ? scopeName : "post";
  const added: string[] = [];
  // Uploads whose bytes the library already held: sent with the form (no script), or named by the page script, which
  // uploads each file through /dashboard/library/upload first and adds a hidden "reused" field for these.
  const reusedIds: string[] = fields(form, "reused");
  for (const file of uploadsOf(form)) {
    try {
      const { asset, reused } = await ingestUploadOnce(ctx.deps, account.accountId, { bytes: file.bytes, fileName: file.name });
      added.push(asset.id);
      if (reused) reusedIds.push(asset.id);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      errors.upload = `${file.name || "That file"}: ${plainMessage(error)}`;
    }
  }
  const picked = fields(form, "pick");
  const info = await imageInfo(ctx.deps, account.accountId, [...draftAssetIds(draft), ...picked, ...added]);
  keepOwned(draft, info);
  for (const id of new Set(reusedIds)) {
    const image = info.get(id);
    if (image) notices.push({ kind: "ok", text: `“${image.fileName}” was already in your library: the post uses that image, not a second copy.` });
  }
  const chosen = [...picked.filter((id) => info.has(id)), ...added];
  if (chosen.length > 0) {
    const left = addImages(draft, scope, chosen);
    if (left > 0) errors.upload ??= `${left} ${left === 1 ? "image was" : "images were"} not added: a post or part takes at most ${MAX_IMAGES}.`;
  } else if (op.kind === "add-images" && !errors.upload) {
    errors.upload = "Choose images from the library, or a file to upload, first.";
  }
  applyOperation(draft, op);
  const focus = op.kind === "save" ? undefined : focusAfter(draft, op);
  return { draft, op, errors, notices, focus };
}

/** The control to put the cursor on after a button's round trip: the same button, where the item now is. */
function focusAfter(draft: Draft, op: ReturnType<typeof operationOf>): string | undefined {
  if (op.kind === "add-images" || op.kind === "add-part") return buttonId(op.kind);
  if (op.kind === "part") {
    const i = draft.thread.findIndex((p) => p.key === op.key);
    if (op.action === "remove" || i < 0) return buttonId("add-part");
    const edge = (op.action === "up" && i === 0) || (op.action === "down" && i === draft.thread.length - 1);
    return buttonId(`part-${edge ? (op.action === "up" ? "down" : "up") : op.action}:${op.key}`);
  }
  if (op.kind === "image") {
    const list = imagesIn(draft, op.scope) ?? [];
    const moved = op.action === "up" ? op.index - 1 : op.index + 1;
    if (op.action === "remove" || list.length === 0) return buttonId("add-images");
    const at = Math.max(0, Math.min(list.length - 1, moved));
    const edge = at === 0 ? "down" : at === list.length - 1 ? "up" : op.action;
    return buttonId(`image-${edge}:${op.scope}:${at}`);
  }
  return undefined;
}

/** A post's content as the composer edits it (images with their alt texts, the thread, the versions it can show). */
export function draftFromCreation(c: Creation): Draft {
  const images = (list: readonly { assetId: string; altText: string | null }[]) => list.map((i) => ({ assetId: i.assetId, altText: i.altText ?? "" }));
  const versions: Draft["versions"] = {};
  for (const [platform, v] of Object.entries(c.body.variants)) {
    if (!v) continue;
    versions[platform] = { caption: v.caption ?? "", noThread: v.thread !== undefined && v.thread.length === 0, noFirstComment: v.firstComment === "" };
  }
  return {
    seedId: c.seedId,
    caption: c.body.caption,
    images: images(c.body.images),
    thread: c.body.thread.map((p, i) => ({ key: `p${i + 1}`, caption: p.caption, images: images(p.images) })),
    firstComment: c.body.firstComment ?? "",
    versions,
  };
}

/**
 * The versions to store for an edit: the composer's, plus what it does not show and must not drop: a version's own
 * images, thread or first comment set through the API, and the versions of networks the account is not connected to.
 */
function keptVariants(current: Creation, composed: ComposedInput["variants"], shown: readonly string[]): NonNullable<CreationPatch["variants"]> {
  const out: NonNullable<CreationPatch["variants"]> = { ...composed };
  const images = (list: readonly { assetId: string; altText: string }[]) => list.map((i) => ({ assetId: i.assetId, altText: i.altText === "" ? null : i.altText }));
  for (const [platform, v] of Object.entries(current.body.variants)) {
    if (!v) continue;
    const mine = composed[platform] ?? {};
    const own = {
      ...(!shown.includes(platform) && v.caption !== undefined ? { caption: v.caption } : {}),
      ...(v.images !== undefined ? { images: images(v.images) } : {}),
      ...(v.thread !== undefined && v.thread.length > 0 && mine.thread === undefined ? { thread: v.thread.map((p) => ({ caption: p.caption, images: images(p.images) })) } : {}),
      ...(v.firstComment !== undefined && (!shown.includes(platform) || (v.firstComment !== "" && mine.firstComment === undefined)) ? { firstComment: v.firstComment } : {}),
    };
    if (Object.keys(own).length > 0) out[platform] = { ...own, ...mine };
  }
  return out;
}

/** How a refusal's field (the API's name) reads at the composer's control, by the draft's order. */
function controlOf(apiField: string, draft: Draft): { name: string; subject: string } | null {
  let m: RegExpExecArray | null;
  if (apiField === "caption") return { name: "caption", subject: "The caption" };
  if (apiField === "first_comment") return { name: "first_comment", subject: "The first comment" };
  if ((m = /^images\[(\d+)\]\.alt_text$/.exec(apiField))) {
    const image = draft.images[Number(m[1])];
    return image ? { name: altFieldName("post", image.assetId), subject: "This alt text" } : { name: "images", subject: "An alt text" };
  }
  if ((m = /^thread\[(\d+)\]\.caption$/.exec(apiField))) {
    const part = draft.thread[Number(m[1])];
    return part ? { name: `part_caption_${part.key}`, subject: "This part’s text" } : { name: "thread", subject: "A part’s text" };
  }
  if ((m = /^thread\[(\d+)\]\.images\[(\d+)\]\.alt_text$/.exec(apiField))) {
    const part = draft.thread[Number(m[1])];
    const image = part?.images[Number(m[2])];
    return part && image ? { name: altFieldName(part.key, image.assetId), subject: "This alt text" } : { name: "thread", subject: "An alt text" };
  }
  if (apiField.startsWith("images")) return { name: "images", subject: "The images" };
  if (apiField.startsWith("thread")) return { name: "thread", subject: "The thread" };
  if ((m = /^variants\.([a-z]+)\.caption$/.exec(apiField))) return { name: `version_caption_${m[1]}`, subject: "This caption" };
  return null;
}

/** A refusal's problem as a sentence about its control ("must not be empty" → a request to write something). */
function sentence(subject: string, name: string, problem: string): string {
  if (/empty/.test(problem)) {
    if (name === "caption") return "Write a caption; it cannot be empty.";
    if (name.startsWith("part_caption_")) return "Write this part’s text, or remove the part.";
    return `${subject} cannot be empty.`;
  }
  return `${subject} ${problem}.`;
}

/** A refusal of the creations service as errors at the composer's controls, or a notice when no control is meant. */
function refusalAtFields(error: AppError, draft: Draft): { errors: FieldErrors; notices: Notice[] } {
  const errors: FieldErrors = {};
  const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: unknown; problem?: unknown }[]) : [];
  for (const d of details) {
    const control = typeof d.field === "string" ? controlOf(d.field, draft) : null;
    if (control && !errors[control.name]) errors[control.name] = sentence(control.subject, control.name, typeof d.problem === "string" ? d.problem : "is not right");
  }
  if (Object.keys(errors).length > 0) return { errors, notices: [] };
  if (error.code === "not_found") {
    return { errors: { images: "An image was deleted from the library meanwhile and was taken out of the post. Check the images, then save again." }, notices: [] };
  }
  return { errors, notices: [{ kind: "error", text: plainMessage(error) }] };
}

/** Reads the form, applies the pressed button, and stores the post on "Save" (a redirect to its page). */
async function handleComposer(ctx: DashboardCtx, s: SessionContext, account: Membership, target: ComposerTarget, form: Form | undefined): Promise<Response> {
  const read = await readComposerForm(ctx, account, form);
  const again = (status: number, errors: FieldErrors, notices: Notice[]) =>
    composerPage(ctx, s, account, target, { draft: read.draft, errors, notices, focus: read.focus }).then((body) => htmlResponse(body, status));
  if (Object.keys(read.errors).length > 0) return again(400, read.errors, read.notices);
  if (read.op.kind !== "save") return again(200, {}, read.notices);
  const input = composedInput(read.draft);
  try {
    let id: string;
    if (target.creationId) {
      const current = await getCreation(ctx.deps, account.accountId, target.creationId);
      const shown = platformsOf(await accountNetworks(ctx.deps, account.accountId));
      const patch: CreationPatch = { caption: input.caption, images: input.images, thread: input.thread, firstComment: input.firstComment, variants: keptVariants(current, input.variants, shown) };
      id = (await updateCreation(ctx.deps, account.accountId, target.creationId, patch)).id;
    } else {
      id = (await createCreationByHand(ctx.deps, account.accountId, { ...input, ...(read.draft.seedId ? { seedId: read.draft.seedId } : {}) })).id;
    }
    const notice = target.creationId ? "creation-saved" : "composed";
    return redirect(`${POSTS}/${id}?notice=${notice}${read.op.thenSchedule ? "#schedule-title" : ""}`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === "not_found") {
      // An image deleted meanwhile: the draft shows what is still there.
      const info = await imageInfo(ctx.deps, account.accountId, draftAssetIds(read.draft));
      keepOwned(read.draft, info);
    }
    const { errors, notices } = refusalAtFields(error, read.draft);
    return again(error.status, errors, notices);
  }
}

/** POST /dashboard/compose: a button of the blank composer (store on "Save"). */
export async function postComposer(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = composerGate(s);
  if (account instanceof Response) return account;
  return handleComposer(ctx, s, account, { creationId: null }, form);
}

async function ownedCreation(ctx: DashboardCtx, accountId: string, id: string): Promise<Creation | null> {
  if (!(await findCreationRow(ctx.deps, accountId, id))) return null;
  return getCreation(ctx.deps, accountId, id);
}

function missingPost(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Post not found", current: POSTS }, html`<p class="card">No such post in this account. <a href="${POSTS}">All posts</a></p>`), 404);
}

/** GET /dashboard/creations/:id/edit: the post in the composer. */
export async function getEditComposer(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = composerGate(s);
  if (account instanceof Response) return account;
  const c = await ownedCreation(ctx, account.accountId, id);
  if (!c) return missingPost(s);
  return htmlResponse(await composerPage(ctx, s, account, { creationId: c.id }, { draft: draftFromCreation(c) }));
}

/** POST /dashboard/creations/:id/edit: a button of the composer of an existing post (PATCH on "Save"). */
export async function postEditComposer(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = composerGate(s);
  if (account instanceof Response) return account;
  if (!(await ownedCreation(ctx, account.accountId, id))) return missingPost(s);
  return handleComposer(ctx, s, account, { creationId: id }, form);
}
