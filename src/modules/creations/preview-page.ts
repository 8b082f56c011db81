/**
 * The public preview page at a creation's `url` (`{base_url}/c/<id>`): the caption, its images with their alt text,
 * the thread's parts and the first comment under it, and Open Graph / Twitter card tags (the first image) so a shared
 * link unfurls. Every value is escaped (the `html` tag escapes by default);
 * the page loads nothing from third parties (inline style, images only from this instance), enforced by its CSP.
 */
import type { StoredImage } from "../../db/schema/post-content";
import { Html, html, raw } from "../../lib/html";
import type { Deps } from "../../deps";
import { type AssetRecord, assetUrl } from "../assets/service";
import { creationUrl, findCreationForPreview, graphemeCount } from "./service";

const SITE_NAME = "Seedcast";
/** Open Graph titles are cut around here by most unfurlers. */
const TITLE_MAX_GRAPHEMES = 70;
const DESCRIPTION_MAX_GRAPHEMES = 200;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f1ec;color:#1d1b19;line-height:1.5}
main{max-width:640px;margin:0 auto;padding:32px 16px 48px}
article{background:#fff;border-radius:16px;box-shadow:0 1px 3px rgba(0,0,0,.08),0 8px 24px rgba(0,0,0,.06);overflow:hidden}
img{display:block;width:100%;height:auto;background:#e9e4dc}
.caption{margin:0;padding:20px 24px 24px;font-size:1.05rem;white-space:pre-wrap;overflow-wrap:anywhere}
.part{margin-top:12px}
.label{margin:0;padding:16px 24px 0;font-size:.8rem;color:#7a736b}
footer{margin-top:16px;text-align:center;font-size:.8rem;color:#7a736b}
h1{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
`;

/** Security headers: nothing but this instance's images and the inline style above. */
function headers(deps: Pick<Deps, "config">): Record<string, string> {
  const self = new URL(deps.config.baseUrl).origin;
  return {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": `default-src 'none'; img-src 'self' ${self} data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
  };
}

/** The first `max` graphemes of `text`, with an ellipsis when cut. */
function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (graphemeCount(flat) <= max) return flat;
  const parts = Array.from(new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(flat), (s) => s.segment);
  return `${parts
    .slice(0, max - 1)
    .join("")
    .trimEnd()}…`;
}

function notFoundPage(deps: Pick<Deps, "config">): Response {
  const body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>Not found · ${SITE_NAME}</title><style>${raw(STYLE)}</style></head>
<body><main><article><p class="caption">This post does not exist, or it was removed.</p></article></main></body></html>`;
  return new Response(body.value, { status: 404, headers: headers(deps) });
}

/** The `<img>` tags of `images` (those still in the library), each with its own alt text. */
function imageTags(deps: Pick<Deps, "config">, images: readonly StoredImage[], assets: ReadonlyMap<string, AssetRecord>): Html[] {
  return images.flatMap((image) => {
    const asset = assets.get(image.assetId);
    return asset ? [html`<img src="${assetUrl(deps, asset)}" alt="${image.altText ?? ""}" width="${asset.width}" height="${asset.height}">`] : [];
  });
}

/** Renders the preview page of creation `id` (404 page when unknown). */
export async function previewPage(deps: Deps, id: string): Promise<Response> {
  const found = await findCreationForPreview(deps, id);
  if (!found) return notFoundPage(deps);
  const { row, asset, assets, seedTitle } = found;
  const url = creationUrl(deps, row.id);
  const title = clip(seedTitle ?? row.caption, TITLE_MAX_GRAPHEMES);
  const description = clip(row.caption, DESCRIPTION_MAX_GRAPHEMES);
  const imageUrl = asset ? assetUrl(deps, asset) : null;
  const altText = row.altText ?? "";

  const imageMeta: Html = asset
    ? html`<meta property="og:image" content="${imageUrl}">
<meta property="og:image:type" content="${asset.mimeType}">
<meta property="og:image:width" content="${asset.width}">
<meta property="og:image:height" content="${asset.height}">
<meta property="og:image:alt" content="${altText}">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:image" content="${imageUrl}">
<meta name="twitter:image:alt" content="${altText}">`
    : html`<meta name="twitter:card" content="summary">`;

  const image: Html = asset
    ? html`<img src="${imageUrl}" alt="${altText}" width="${asset.width}" height="${asset.height}">`
    : html``;

  const body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · ${SITE_NAME}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${url}">
<link rel="icon" href="data:,">
<meta property="og:type" content="article">
<meta property="og:site_name" content="${SITE_NAME}">
<meta property="og:url" content="${url}">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
<meta name="twitter:title" content="${title}">
<meta name="twitter:description" content="${description}">
${imageMeta}
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
<article>
${image}
${imageTags(deps, row.images.slice(1), assets)}
<p class="caption">${row.caption}</p>
</article>
${row.thread.map(
  (part, i) => html`<article class="part" aria-label="Thread part ${i + 2} of ${row.thread.length + 1}">
${imageTags(deps, part.images, assets)}
<p class="caption">${part.caption}</p>
</article>`,
)}
${row.firstComment ? html`<article class="part" aria-label="First comment"><p class="label">First comment</p><p class="caption">${row.firstComment}</p></article>` : html``}
<footer>Shared with ${SITE_NAME}</footer>
</main>
</body>
</html>`;
  return new Response(body.value, { status: 200, headers: headers(deps) });
}
