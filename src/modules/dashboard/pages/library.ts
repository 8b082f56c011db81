/**
 * Library: the account's images as a grid; upload (drag and drop with progress via the page script, or a plain form
 * post without it) through the same ingest service the API uses; delete with confirmation. Owners and editors change
 * it (the roles that may hold Content creation); viewers see it.
 */
import { ROLE_SCOPES } from "../../../auth/scopes";
import { type AssetRecord, MEDIA_PATH, deleteAsset, findAsset, ingestImageBytes, ingestUploadOnce, listAssets } from "../../assets/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { type UploadedFile, isUploadedFile } from "../../../http/form-body";
import { type Form, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { Membership, SessionContext } from "../../../web/session";
import { isoAt } from "../../../lib/clock";
import { AppError } from "../../../lib/errors";
import { noticeFrom, refusal } from "./common";
import { zoneOf } from "../../../web/preferences";
import { type AssetUse, assetUses } from "../asset-uses";
import type { FieldErrors } from "../fields";
import { addForms, ingestUrl, linkBlock, makeUploadLink } from "./library-add";

const CURRENT = "/dashboard/library";
const PAGE_SIZE = 48;
const ACCEPT = "image/png,image/jpeg,image/gif,image/webp";

function canChange(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("create");
}

/** Same-origin path of an asset's image (works whatever BASE_URL says). */
export function mediaPath(asset: Pick<AssetRecord, "id" | "ext">): string {
  return `${MEDIA_PATH}/${asset.id}.${asset.ext}`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The in-use badge: a link to the one thing using the image, or a disclosure listing them (no script needed). */
function inUse(uses: readonly AssetUse[]): Html {
  if (uses.length === 0) return html``;
  const first = uses[0] as AssetUse;
  if (uses.length === 1) return html`<a class="badge in-use" href="${first.href}">In use<span class="sr-only">: ${first.label}</span></a>`;
  return html`<details class="in-use"><summary><span class="badge">In use ×${uses.length}</span></summary>
    <ul class="plain">${uses.map((u) => html`<li><a href="${u.href}">${u.label}</a></li>`)}</ul></details>`;
}

/**
 * One tile. The image sits in a fixed 4:3 box and is contained, never cropped; its width/height attributes stay (no
 * layout shift while it loads) but the stylesheet's `height: auto` + `aspect-ratio` win over them.
 */
function tile(s: SessionContext, a: AssetRecord, uses: readonly AssetUse[]): Html {
  return html`<li>
    <a class="thumb" href="${mediaPath(a)}"><img src="${mediaPath(a)}" alt="${a.fileName}" loading="lazy" width="${a.width}" height="${a.height}"></a>
    <div class="meta"><span class="file-name" title="${a.fileName}">${a.fileName}</span>
      <span class="muted">${a.width}×${a.height} · ${size(a.sizeBytes)} · ${timeTag(isoAt(a.createdAt), "—", zoneOf(s))}</span></div>
    <div class="tile-actions">${inUse(uses)}
    ${canChange(s) && uses.length === 0 ? html`<form method="get" action="${CURRENT}/${a.id}/delete"><button type="submit" class="small danger">Delete<span class="sr-only"> ${a.fileName}</span></button></form>` : ""}</div>
  </li>`;
}

async function libraryPage(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  cursor: string | undefined,
  notices: Notice[],
  extra: { top?: Html | null; urlErrors?: FieldErrors; urlValues?: { url: string } } = {},
): Promise<Html> {
  let result: Awaited<ReturnType<typeof listAssets>>;
  try {
    result = await listAssets(ctx.deps, account.accountId, { limit: PAGE_SIZE, cursor });
  } catch {
    result = await listAssets(ctx.deps, account.accountId, { limit: PAGE_SIZE });
  }
  const max = ctx.deps.config.maxImageBytes;
  const uses = await assetUses(ctx.deps, account.accountId, result.assets.map((a) => a.id));
  return page(
    s,
    { title: "Library", current: CURRENT, notices },
    html`${extra.top ?? ""}${
      canChange(s)
        ? html`<form method="post" action="${CURRENT}/upload" enctype="multipart/form-data" class="card" data-done="${CURRENT}?notice=uploaded" aria-labelledby="upload-title">
  <h2 id="upload-title">Add images</h2>
  ${csrfField(s.csrfToken)}
  <div class="dropzone">
    <label for="upload-file">Drop images here, or choose files</label>
    <input id="upload-file" name="file" type="file" accept="${ACCEPT}" multiple required aria-describedby="upload-hint">
    <p class="hint" id="upload-hint">PNG, JPEG, GIF or WebP, up to ${size(max)} each.</p>
  </div>
  <progress id="upload-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
  <p id="upload-status" role="status" class="hint"></p>
  <button type="submit">Upload</button>
</form>
${addForms(s, extra.urlErrors, extra.urlValues)}`
        : ""
    }
<section aria-labelledby="images-title">
  <h2 id="images-title">Images</h2>
  ${
    result.assets.length === 0
      ? html`<p class="muted">No images yet.</p>`
      : html`<ul class="gallery library">${result.assets.map((a) => tile(s, a, uses.get(a.id) ?? []))}</ul>`
  }
  ${result.nextCursor ? html`<p><a href="${CURRENT}?cursor=${encodeURIComponent(result.nextCursor)}">Older images</a></p>` : ""}
</section>`,
  );
}

function changer(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canChange(s)) return forbiddenPage(s, "Only owners and editors change the library.");
  return account;
}

/** GET /dashboard/library */
export async function getLibrary(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const cursor = new URL(request.url).searchParams.get("cursor") ?? undefined;
  return htmlResponse(await libraryPage(ctx, s, account, cursor, noticeFrom(request), { top: await linkBlock(ctx, s, request) }));
}

/** POST /dashboard/library/from-url */
export async function postFromUrl(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = changer(s);
  if (account instanceof Response) return account;
  const result = await ingestUrl(ctx, account, form);
  if (result instanceof Response) return result;
  return htmlResponse(await libraryPage(ctx, s, account, undefined, [], { urlErrors: result.errors, urlValues: result.values }), 400);
}

/** POST /dashboard/library/upload-link */
export async function postUploadLink(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = changer(s);
  if (account instanceof Response) return account;
  return makeUploadLink(ctx, s, account, form);
}

function filesOf(form: Form | undefined): UploadedFile[] {
  const value = form?.file;
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is UploadedFile => isUploadedFile(v) && v.bytes.byteLength > 0);
}

/**
 * POST /dashboard/library/upload (multipart). The page script sends one file per request and reads a short text
 * answer, or JSON `{id, fileName}` (with `reused: "true"` when the library already held these bytes and stored nothing)
 * / `{message}` when it asks for it (the composer, which adds the image to the post);
 * a plain form post gets the page back.
 */
export async function postUpload(ctx: DashboardCtx, s: SessionContext, form: Form | undefined, request: Request): Promise<Response> {
  const account = changer(s);
  if (account instanceof Response) return account;
  const scripted = request.headers.get("x-requested-with") === "fetch";
  const json = scripted && (request.headers.get("accept") ?? "").includes("application/json");
  const answer = (status: number, text: string, body: Record<string, string>) =>
    json
      ? Response.json(body, { status, headers: { "cache-control": "no-store" } })
      : new Response(text, { status, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  const files = filesOf(form);
  try {
    if (files.length === 0) throw new AppError("empty_body", "Choose at least one image.");
    let last: { id: string; fileName: string } | null = null;
    let reused = false;
    for (const file of files) {
      if (json) {
        // For the composer, bytes the library already holds are not stored again: the post uses that image.
        ({ asset: last, reused } = await ingestUploadOnce(ctx.deps, account.accountId, { bytes: file.bytes, fileName: file.name }));
      } else {
        last = await ingestImageBytes(ctx.deps, account.accountId, { bytes: file.bytes, fileName: file.name, source: "upload" });
      }
    }
    if (scripted) return answer(200, "uploaded", { id: last?.id ?? "", fileName: last?.fileName ?? "", ...(reused ? { reused: "true" } : {}) });
    return redirect(`${CURRENT}?notice=uploaded${files.length > 1 ? `&count=${files.length}` : ""}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    if (scripted) return answer(status, String(notice.text), { message: String(notice.text) });
    return htmlResponse(await libraryPage(ctx, s, account, undefined, [notice]), status);
  }
}

/** GET /dashboard/library/:id/delete: the confirmation step, with the image. */
export async function getDeleteAsset(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = changer(s);
  if (account instanceof Response) return account;
  const asset = await findAsset(ctx.deps, account.accountId, id);
  if (!asset) return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such image in this account.</p>`), 404);
  return htmlResponse(
    confirmPage(s, {
      title: "Delete image",
      current: CURRENT,
      question: html`Delete <strong>${asset.fileName}</strong> from the library? Its address stops working. Images still used by a seed, creation or scheduled post cannot be deleted.`,
      action: `${CURRENT}/${asset.id}/delete`,
      confirmLabel: "Delete image",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/library/:id/delete */
export async function postDeleteAsset(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = changer(s);
  if (account instanceof Response) return account;
  try {
    await deleteAsset(ctx.deps, account.accountId, id);
    return redirect(`${CURRENT}?notice=deleted`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await libraryPage(ctx, s, account, undefined, [notice]), status);
  }
}
