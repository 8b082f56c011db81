/**
 * The library picker: the account's newest images as radio buttons with thumbnails (a plain form control, so it works
 * without script). Used by "generate from a seed"; `imageChecklist` is the composer's several-at-once variant.
 */
import { listAssets } from "../assets/service";
import type { Deps } from "../../deps";
import { type Html, html } from "../../lib/html";
import { mediaPath } from "./pages/library";

/** How many of the newest images the picker offers. */
export const PICKER_SIZE = 24;

/** A radio group named `name` over the newest images; `selected` is checked. Empty library: a sentence and a link. */
export async function imagePicker(deps: Deps, accountId: string, name: string, selected: string, legend: string): Promise<Html> {
  const { assets } = await listAssets(deps, accountId, { limit: PICKER_SIZE });
  if (assets.length === 0) {
    return html`<p class="muted">Your library has no images yet. <a href="/dashboard/library">Add some in the library</a>: upload, from a web address, or with an upload link to hand to someone.</p>`;
  }
  return html`<fieldset class="picker"><legend>${legend}</legend>
  <ul class="picker-grid plain">${assets.map(
    (a) => html`<li><label><input type="radio" name="${name}" value="${a.id}"${a.id === selected ? html` checked` : ""}>
      <img src="${mediaPath(a)}" alt="" loading="lazy" width="${a.width}" height="${a.height}"><span class="picker-name">${a.fileName}</span></label></li>`,
  )}</ul>
  <p class="hint">Another image? <a href="/dashboard/library">Add it to the library</a>: upload, from a web address, or with an upload link to hand to someone.</p></fieldset>`;
}

/**
 * Checkboxes over the newest images (the composer's "add from the library": several at once), `name` repeated once per
 * ticked image. Empty library: null (the caller offers the upload).
 */
export async function imageChecklist(deps: Deps, accountId: string, name: string, legend: string): Promise<Html | null> {
  const { assets } = await listAssets(deps, accountId, { limit: PICKER_SIZE });
  if (assets.length === 0) return null;
  return html`<fieldset class="picker"><legend>${legend}</legend>
  <ul class="picker-grid plain">${assets.map(
    (a) => html`<li><label><input type="checkbox" name="${name}" value="${a.id}">
      <img src="${mediaPath(a)}" alt="" loading="lazy" width="${a.width}" height="${a.height}"><span class="picker-name">${a.fileName}</span></label></li>`,
  )}</ul></fieldset>`;
}
