/**
 * Reading a feed document: RSS 2.0 (and RSS 1.0/RDF), Atom and JSON Feed, parsed by feedsmith (one parser for all
 * four, detecting the format from the document itself), then brought to the few fields a seed needs.
 */
import { parseFeed } from "feedsmith";
import { decodeEntities, firstImageSrc, htmlToText } from "../../lib/html-text";

/** Items read from one document at most: a feed lists its latest 10–20; more is an archive, not news. */
export const MAX_ITEMS_PER_READ = 50;
/** An item key longer than this (a guid is normally a URL) is stored as its SHA-256. */
const MAX_KEY_LENGTH = 500;

/** One item, as a seed will take it. */
export interface FeedEntry {
  /** guid (RSS), id (Atom, JSON Feed), else the link: what makes an item the same item on the next read. */
  key: string;
  title: string | null;
  /** Plain text of the summary (else the content). */
  summary: string;
  link: string | null;
  /** The first image, absolute http(s), or null. */
  imageUrl: string | null;
  category: string | null;
}

/** A document that parsed as a feed. */
export interface ParsedFeed {
  format: "rss" | "atom" | "json" | "rdf";
  title: string | null;
  /** Oldest first (documents list newest first), at most MAX_ITEMS_PER_READ of the newest. */
  entries: FeedEntry[];
}

type Textish = string | { value?: string; type?: string } | undefined;

/** Atom text constructs come as {value, type}; plain strings elsewhere. `html` types are read as HTML. */
function textOf(value: Textish): string | null {
  if (value === undefined) return null;
  const raw = typeof value === "string" ? value : (value.value ?? "");
  const type = typeof value === "string" ? undefined : value.type;
  const text = type === "html" || type === "xhtml" || /<[a-z!/][^>]*>|&[#a-z0-9]+;/i.test(raw) ? htmlToText(raw) : raw.trim();
  return text === "" ? null : text;
}

function htmlOf(value: Textish): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : (value.value ?? "");
}

/** An absolute http(s) URL from `raw` (resolved against `base`), or null. */
function absoluteHttpUrl(raw: string | undefined | null, base: string | null): string | null {
  if (!raw) return null;
  try {
    const url = base ? new URL(decodeEntities(raw.trim()), base) : new URL(decodeEntities(raw.trim()));
    return url.protocol === "https:" || url.protocol === "http:" ? url.toString() : null;
  } catch {
    return null;
  }
}

function isImageType(type: string | undefined): boolean {
  return typeof type === "string" && type.toLowerCase().startsWith("image/");
}

type MediaContent = { url?: string; medium?: string; type?: string };
type Media = { thumbnails?: { url?: string }[]; contents?: MediaContent[]; groups?: { contents?: MediaContent[] }[] } | undefined;

/** The first image of media:content (also inside media:group), a shape RSS and Atom share. */
function mediaContentImage(media: Media): string | undefined {
  if (!media) return undefined;
  const contents = [...(media.contents ?? []), ...(media.groups ?? []).flatMap((g) => g.contents ?? [])];
  return contents.find((c) => c.url && (c.medium === "image" || isImageType(c.type)))?.url;
}

/** media:thumbnail: the last resort (GitHub's feeds put the author's avatar there). */
function mediaThumbnail(media: Media): string | undefined {
  return media?.thumbnails?.find((t) => t.url)?.url;
}

/** WordPress ends an excerpt with "… Continue reading <title>" (a `more-link` anchor): not part of the summary. */
function withoutMoreLink(html: string): string {
  return html.replace(/<a\b[^>]*class\s*=\s*["'][^"']*more-link[^"']*["'][^>]*>[\s\S]*?<\/a>/gi, "").replace(/\s*(\[(&#8230;|&hellip;|…)\]|&#8230;|&hellip;|…)\s*$/, "");
}

function keyOf(raw: string | null | undefined): string | null {
  const key = raw?.trim();
  if (!key) return null;
  return key.length <= MAX_KEY_LENGTH ? key : `sha256:${new Bun.CryptoHasher("sha256").update(key).digest("hex")}`;
}

/** Parses `body` as a feed; null when it is not one (not XML/JSON, or XML/JSON of another kind). */
export function parseFeedDocument(body: Uint8Array, feedUrl: string): ParsedFeed | null {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(body).replace(/^\uFEFF/, "");
  let parsed: ReturnType<typeof parseFeed>;
  try {
    parsed = parseFeed(text, { maxItems: MAX_ITEMS_PER_READ });
  } catch {
    return null;
  }
  const entries: FeedEntry[] = [];
  let title: string | null = null;
  switch (parsed.format) {
    case "rss":
    case "rdf": {
      const feed = parsed.feed;
      title = textOf(feed.title);
      for (const item of feed.items ?? []) {
        const link = absoluteHttpUrl(item.link, feedUrl);
        const key = keyOf("guid" in item && item.guid ? item.guid.value : null) ?? keyOf(link);
        if (!key) continue;
        const description = withoutMoreLink(item.description ?? "");
        const encoded = item.content?.encoded ?? "";
        const enclosures = "enclosures" in item ? (item.enclosures ?? []) : [];
        const image =
          mediaContentImage(item.media) ??
          enclosures.find((e) => e.url && isImageType(e.type))?.url ??
          firstImageSrc(encoded) ??
          firstImageSrc(description) ??
          mediaThumbnail(item.media);
        const categories = "categories" in item ? (item.categories ?? []) : [];
        entries.push({
          key,
          title: textOf(item.title),
          summary: textOf(description) ?? textOf(encoded) ?? "",
          link,
          imageUrl: absoluteHttpUrl(image, link ?? feedUrl),
          category: categories[0]?.name?.trim() || null,
        });
      }
      break;
    }
    case "atom": {
      const feed = parsed.feed;
      title = textOf(feed.title as Textish);
      for (const entry of feed.entries ?? []) {
        const links = entry.links ?? [];
        const alternate = links.find((l) => (l.rel ?? "alternate") === "alternate")?.href ?? links[0]?.href;
        const link = absoluteHttpUrl(alternate, feedUrl);
        const key = keyOf(entry.id) ?? keyOf(link);
        if (!key) continue;
        const contentHtml = htmlOf(entry.content as Textish);
        const summaryHtml = htmlOf(entry.summary as Textish);
        const image =
          mediaContentImage(entry.media) ??
          links.find((l) => l.rel === "enclosure" && isImageType(l.type))?.href ??
          firstImageSrc(contentHtml) ??
          firstImageSrc(summaryHtml) ??
          mediaThumbnail(entry.media);
        entries.push({
          key,
          title: textOf(entry.title as Textish),
          summary: textOf(entry.summary as Textish) ?? textOf(entry.content as Textish) ?? "",
          link,
          imageUrl: absoluteHttpUrl(image, link ?? feedUrl),
          category: (entry.categories ?? [])[0]?.label?.trim() || (entry.categories ?? [])[0]?.term?.trim() || null,
        });
      }
      break;
    }
    case "json": {
      const feed = parsed.feed;
      title = textOf(feed.title);
      for (const item of feed.items ?? []) {
        const link = absoluteHttpUrl(item.url ?? item.external_url, feedUrl);
        const key = keyOf(item.id === undefined ? null : String(item.id)) ?? keyOf(link);
        if (!key) continue;
        const image =
          item.image ??
          item.banner_image ??
          (item.attachments ?? []).find((a) => a.url && isImageType(a.mime_type))?.url ??
          firstImageSrc(item.content_html ?? "");
        entries.push({
          key,
          title: item.title?.trim() || null,
          summary: item.summary?.trim() || item.content_text?.trim() || textOf(item.content_html) || "",
          link,
          imageUrl: absoluteHttpUrl(image, link ?? feedUrl),
          category: item.tags?.[0]?.trim() || null,
        });
      }
      break;
    }
    default:
      return null;
  }
  return { format: parsed.format, title, entries: entries.reverse() };
}
