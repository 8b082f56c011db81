/**
 * All of a post's content, read only, for the post pages (a creation's, and the calendar's scheduled post): every
 * image with its alt text (or a hint that it has none), the thread's parts, the first comment, and each network's
 * version. The caption itself is shown by the page.
 */
import type { Deps } from "../../deps";
import { type Html, html } from "../../lib/html";
import { accountNetworks } from "./composer/networks";
import { linkified } from "./composer/preview";
import { imageInfo } from "./composer/images";

interface ViewImage {
  assetId: string;
  altText: string | null;
}
interface ViewPart {
  caption: string;
  images: readonly ViewImage[];
}
interface ViewVersion {
  caption?: string;
  images?: readonly ViewImage[];
  thread?: readonly ViewPart[];
  firstComment?: string;
}

/** A post's content as both the creation and the scheduled post answer it. */
export interface ViewContent {
  images: readonly ViewImage[];
  thread: readonly ViewPart[];
  firstComment: string | null;
  variants: Partial<Record<string, ViewVersion>>;
}

type Info = Awaited<ReturnType<typeof imageInfo>>;

function imagesBlock(images: readonly ViewImage[], info: Info, label: string): Html {
  if (images.length === 0) return html``;
  return html`<ul class="content-images" aria-label="${label}">${images.map((image, i) => {
    const src = info.get(image.assetId)?.src;
    const alt = image.altText?.trim() ?? "";
    return html`<li><figure>${src ? html`<img src="${src}" alt="${alt}" loading="lazy">` : html`<p class="muted">This image is no longer in the library.</p>`}
      <figcaption${alt === "" ? html` class="alt-missing"` : ""}>${i + 1}. ${alt === "" ? "No alt text" : html`Alt text: ${alt}`}</figcaption></figure></li>`;
  })}</ul>`;
}

function threadBlock(thread: readonly ViewPart[], info: Info): Html {
  return html`<ol class="content-thread" start="2">${thread.map(
    (part, i) => html`<li><p class="caption post-caption">${linkified(part.caption)}</p>${imagesBlock(part.images, info, `Images of part ${i + 2}`)}</li>`,
  )}</ol>`;
}

function versionLines(v: ViewVersion, info: Info): Html {
  const lines: Html[] = [];
  if (v.caption !== undefined) lines.push(html`<dd><span class="muted">Caption:</span> <span class="caption post-caption">${linkified(v.caption)}</span></dd>`);
  if (v.images !== undefined) lines.push(html`<dd><span class="muted">Its own images:</span>${v.images.length === 0 ? " none" : imagesBlock(v.images, info, "Its own images")}</dd>`);
  if (v.thread !== undefined) lines.push(v.thread.length === 0 ? html`<dd>No thread there.</dd>` : html`<dd><span class="muted">Its own thread:</span>${threadBlock(v.thread, info)}</dd>`);
  if (v.firstComment !== undefined) lines.push(v.firstComment === "" ? html`<dd>No first comment there.</dd>` : html`<dd><span class="muted">First comment:</span> ${linkified(v.firstComment)}</dd>`);
  return html`${lines}`;
}

/**
 * The images (headed "Images" when there are several), the thread, the first comment and the versions of `content`;
 * `level` is the heading level of each block (the page's sections are h2). Empty parts are left out.
 */
export async function postContentView(deps: Deps, accountId: string, content: ViewContent, level: 2 | 3 = 3): Promise<Html> {
  const versions = Object.entries(content.variants).filter((e): e is [string, ViewVersion] => e[1] !== undefined);
  const all = [
    ...content.images,
    ...content.thread.flatMap((p) => p.images),
    ...versions.flatMap(([, v]) => [...(v.images ?? []), ...(v.thread ?? []).flatMap((p) => p.images)]),
  ];
  const info = await imageInfo(deps, accountId, [...new Set(all.map((i) => i.assetId))]);
  const names = new Map((versions.length > 0 ? await accountNetworks(deps, accountId) : []).map((n) => [n.platform, n.caps.name]));
  const h = (id: string, text: string) => (level === 2 ? html`<h2 id="${id}">${text}</h2>` : html`<h3 id="${id}">${text}</h3>`);
  return html`${content.images.length > 0 ? html`${h("content-images-title", content.images.length === 1 ? "Image" : `Images (${content.images.length})`)}${imagesBlock(content.images, info, "The post's images")}` : ""}
${content.thread.length > 0 ? html`${h("content-thread-title", `Thread (${content.thread.length + 1} parts)`)}<p class="hint">Part 1 is the post above; each part is a reply to the one before.</p>${threadBlock(content.thread, info)}` : ""}
${content.firstComment ? html`${h("content-comment-title", "First comment")}<p class="caption post-caption">${linkified(content.firstComment)}</p>` : ""}
${versions.length > 0 ? html`${h("content-versions-title", "Versions per network")}<dl class="content-versions">${versions.map(([platform, v]) => html`<dt>${names.get(platform) ?? platform.charAt(0).toUpperCase() + platform.slice(1)}</dt>${versionLines(v, info)}`)}</dl>` : ""}`;
}
