/**
 * The `fileName` of a new asset (decisions.md §4): the label, with the detected extension appended when the label
 * has none; without a label, the source URL's last path segment (same rule), else `image.<ext>`.
 * "Has an extension" means it already ends in one of the image extensions (.png .jpg .jpeg .gif .webp), so a label
 * like "Launch v1.2" still gets ".png" while "cat.jpeg" is kept as the person wrote it.
 */

/** Longest stored file name; longer names are cut (keeping the extension). */
export const MAX_FILE_NAME = 255;
const IMAGE_EXT_RE = /\.(png|jpe?g|gif|webp)$/i;
// NB: control characters and path separators never belong in a display name (logs, Content-Disposition, HTML).
const UNSAFE_CHARS_RE = /[\u0000-\u001f\u007f-\u009f/\\]/g;
const FALLBACK_STEM = "image";

function clean(name: string): string {
  return name.replace(UNSAFE_CHARS_RE, "").trim();
}

function withExt(name: string, ext: string): string {
  const full = IMAGE_EXT_RE.test(name) ? name : `${name}.${ext}`;
  if (full.length <= MAX_FILE_NAME) return full;
  const suffix = full.slice(full.lastIndexOf("."));
  return full.slice(0, MAX_FILE_NAME - suffix.length) + suffix;
}

/** The last non-empty path segment of `url`, percent-decoded, or null. */
export function lastPathSegment(url: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  const segment = pathname.split("/").filter(Boolean).pop();
  if (!segment) return null;
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // A malformed escape: keep the raw segment rather than failing an otherwise good ingest.
  }
  return clean(decoded) || null;
}

/**
 * The stored file name for an image of extension `ext` (png, jpg, gif, webp).
 * `label` wins when it has any visible characters; else `fallbackName` (a URL segment or an uploaded file's name).
 */
export function assetFileName(ext: string, label?: string | null, fallbackName?: string | null): string {
  const fromLabel = label ? clean(label) : "";
  if (fromLabel) return withExt(fromLabel, ext);
  const fromFallback = fallbackName ? clean(fallbackName) : "";
  if (fromFallback) return withExt(fromFallback, ext);
  return `${FALLBACK_STEM}.${ext}`;
}
