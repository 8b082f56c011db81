/**
 * The HTML of the upload page and its outcomes. Plain server-rendered HTML, one stylesheet and one script served from
 * the binary (no third-party resources), every dynamic value escaped. Without JavaScript the form still works: it
 * posts multipart/form-data to the page's own URL and gets a page back.
 */

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Relative to /upload/<token>, so the page also works behind a path prefix. */
const STYLE_HREF = "_/upload-page.css";
const SCRIPT_SRC = "_/upload-page.js";
const ICON_HREF = "_/icon.svg";

/** The page's icon: the Seedcast mark, so the browser does not ask for /favicon.ico. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M8 1a7 7 0 0 1 7 7 7 7 0 0 1-7 7H1V8a7 7 0 0 1 7-7z" fill="#2f6b4f"/></svg>';
export const ACCEPT_ATTR = "image/png,image/jpeg,image/gif,image/webp";

interface Shell {
  title: string;
  body: string;
  script?: boolean;
}

function shell({ title, body, script }: Shell): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)} · Seedcast</title>
<link rel="icon" href="${ICON_HREF}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLE_HREF}">
${script ? `<script src="${SCRIPT_SRC}" defer></script>` : ""}
</head>
<body>
<main class="card">
<p class="brand"><span class="mark" aria-hidden="true"></span>Seedcast</p>
${body}
</main>
</body>
</html>
`;
}

/** Human size: 1.4 MB, 820 KB, 312 bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** The upload form. `error` is shown above it after a refused no-script post (the link stays valid). */
export function uploadFormPage(opts: {
  /** Where the form posts; "" is the page's own URL. */
  action: string;
  expiresAt: string;
  /** Seconds left: the script counts from this, so a browser clock that is off does not matter. */
  expiresInSeconds: number;
  maxBytes: number;
  error?: string | null;
}): string {
  // A no-break space keeps "10 MB" on one line.
  const maxLabel = formatBytes(opts.maxBytes).replace(" ", "\u00a0");
  const error = opts.error ?? "";
  return shell({
    title: "Add an image",
    script: true,
    body: `<h1 id="title">Add an image to your library</h1>
<p class="lead" id="lead">PNG, JPEG, GIF or WebP, up to ${escapeHtml(maxLabel)}. This link works once and expires
<time datetime="${escapeHtml(opts.expiresAt)}" id="expires">at ${escapeHtml(opts.expiresAt.slice(11, 16))} UTC</time>.</p>
<form id="upload-form" method="post" action="${escapeHtml(opts.action)}" enctype="multipart/form-data"
  data-max-bytes="${opts.maxBytes}" data-expires-in="${Math.max(0, Math.floor(opts.expiresInSeconds))}" novalidate>
  <label class="drop" id="drop" for="file">
    <input type="file" id="file" name="file" accept="${ACCEPT_ATTR}" required>
    <span class="drop-empty" id="drop-empty">
      <span class="drop-icon" aria-hidden="true"></span>
      <strong>Choose an image</strong> or drag it here
    </span>
    <img id="preview" class="preview" alt="" hidden>
  </label>
  <p class="file-info" id="file-info" hidden></p>
  <div class="progress" id="progress" hidden>
    <progress id="progress-bar" max="100" value="0">0%</progress>
    <span id="progress-text">0%</span>
  </div>
  <p class="message error" id="message" role="alert"${error ? "" : " hidden"}>${escapeHtml(error)}</p>
  <button type="submit" id="submit">Upload image</button>
</form>
<div class="done" id="done" hidden>
  <p class="message success" role="status"><strong>Image added to your library.</strong> <span id="done-detail"></span></p>
  <p class="hint">You can close this page. The link is now used up.</p>
</div>`,
  });
}

/** After a successful no-script post. */
export function uploadDonePage(opts: { fileName: string; sizeBytes: number; width: number; height: number }): string {
  return shell({
    title: "Image added",
    body: `<h1>Image added</h1>
<p class="message success" role="status"><strong>${escapeHtml(opts.fileName)}</strong> (${opts.width}×${opts.height},
${escapeHtml(formatBytes(opts.sizeBytes))}) is in your library now.</p>
<p class="hint">You can close this page. The link is now used up.</p>`,
  });
}

/** The page for a link that can no longer take a file, or never existed. */
export function linkGonePage(kind: "used" | "expired" | "unknown" | "disabled"): string {
  const text: Record<typeof kind, readonly [title: string, detail: string]> = {
    disabled: ["This link does not take files now", "The account this link belongs to is disabled, so nothing can be added through it."],
    used: ["This link was already used", "An image was already added through this link. Each link works once: ask for a new one to add another image."],
    expired: ["This link has expired", "Upload links work for 15 minutes. Ask for a new one to add an image."],
    unknown: ["This upload link does not exist", "Check that the whole address was copied, or ask for a new link."],
  };
  const [title, detail] = text[kind];
  return shell({
    title,
    body: `<h1>${escapeHtml(title)}</h1>
<p class="message ${kind === "unknown" ? "error" : "gone"}" role="alert">${escapeHtml(detail)}</p>`,
  });
}
