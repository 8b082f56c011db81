/**
 * How the post will look on each network: the account's name and the connection's handle, the text with its links
 * made links, the image grid (1–4 tiles, "+n" beyond), the thread under it and the first comment. Rendered here first;
 * the page script rebuilds the same markup as the person types (static/composer-script.ts: keep the class names in
 * step).
 */
import { type Html, html } from "../../../lib/html";
import type { DraftImage } from "./draft";
import type { Effective, Network } from "./networks";

/** What the page knows of a library image: its same-origin address, type and file name. */
export interface ImageInfo {
  src: string;
  mimeType: string;
  fileName: string;
}

/** Links in text, as the networks make them. */
const LINK_RE = /https?:\/\/[^\s<>"]+/g;
/** Tiles the grid shows; the rest are a "+n" on the last. */
const GRID_TILES = 4;

/** `text` with its web addresses as links (everything escaped; the address is the link's text). */
export function linkified(text: string): Html {
  const parts: Html[] = [];
  let last = 0;
  for (const match of text.matchAll(LINK_RE)) {
    const at = match.index ?? 0;
    // A sentence's full stop or closing bracket after an address is not part of it.
    const url = match[0].replace(/[.,;:!?)\]]+$/, "");
    parts.push(html`${text.slice(last, at)}<a href="${url}" rel="nofollow noopener noreferrer">${url}</a>`);
    last = at + url.length;
  }
  parts.push(html`${text.slice(last)}`);
  return html`${parts}`;
}

/** The image grid of a post or part: at most `max` images go out; at most GRID_TILES tiles show. */
export function imageGrid(images: readonly DraftImage[], info: ReadonlyMap<string, ImageInfo>, max = Number.POSITIVE_INFINITY): Html {
  const sent = images.slice(0, max);
  if (sent.length === 0) return html``;
  const shown = sent.slice(0, GRID_TILES);
  const more = sent.length - shown.length;
  return html`<div class="pv-grid pv-grid-${shown.length}">${shown.map((image, i) => {
    const src = info.get(image.assetId)?.src ?? "";
    return html`<span class="pv-tile"><img src="${src}" alt="${image.altText}" loading="lazy">${i === shown.length - 1 && more > 0 ? html`<span class="pv-more">+${more}<span class="sr-only"> more images</span></span>` : ""}</span>`;
  })}</div>`;
}

function head(accountName: string, handle: string): Html {
  const initial = [...accountName.trim()][0]?.toUpperCase() ?? "?";
  return html`<div class="pv-head"><span class="pv-avatar" aria-hidden="true">${initial}</span><span class="pv-who"><strong class="pv-name">${accountName}</strong> <span class="pv-handle">${handle}</span></span></div>`;
}

/**
 * The preview of what `network` receives (`e`): `accountName` is the Seedcast account's name, the handle is the
 * connection's label. The data attributes carry what the page script needs to redraw it.
 */
export function networkPreview(network: Network, e: Effective, accountName: string, info: ReadonlyMap<string, ImageInfo>): Html {
  const max = network.caps.maxImages;
  return html`<article class="pv" aria-label="Preview on ${network.caps.name}, ${network.label}" data-platform="${network.platform}" data-name="${accountName}" data-handle="${network.label}" data-max-images="${max}">
  ${head(accountName, network.label)}
  ${e.caption.trim() === "" ? html`<p class="pv-text pv-empty">The caption shows here as you write it.</p>` : html`<p class="pv-text">${linkified(e.caption.trim())}</p>`}
  ${imageGrid(e.images, info, max)}
  <ol class="pv-thread plain">${e.thread.map((part) => html`<li class="pv-reply">${head(accountName, network.label)}<p class="pv-text">${linkified(part.caption.trim())}</p>${imageGrid(part.images, info, max)}</li>`)}</ol>
  <div class="pv-comment"${e.firstComment.trim() === "" ? html` hidden` : ""}><p class="pv-comment-label">First comment</p>${head(accountName, network.label)}<p class="pv-text">${linkified(e.firstComment.trim())}</p></div>
</article>`;
}
