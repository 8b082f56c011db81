/**
 * The dashboard's static files, embedded in the binary: the stylesheet and the icon as file imports (Bun embeds it with
 * `--compile`) and the script as a string (the general part and the composer's, one file). Served with a content hash as ETag and a short cache.
 */
import cssPath from "./dashboard.css" with { type: "file" };
import faviconPath from "./favicon.svg" with { type: "file" };
import { CLIENT_SCRIPT } from "./client-script";
import { COMPOSER_SCRIPT } from "./composer-script";

export interface StaticFile {
  body: string;
  type: string;
  etag: string;
}

function entry(body: string, type: string): StaticFile {
  return { body, type, etag: `"${Bun.hash(body).toString(36)}"` };
}

let cache: Map<string, StaticFile> | null = null;

/** The static files by name, read once. */
export async function staticFiles(): Promise<Map<string, StaticFile>> {
  if (cache) return cache;
  const css = await Bun.file(cssPath).text();
  const favicon = await Bun.file(faviconPath).text();
  cache = new Map([
    ["dashboard.css", entry(css, "text/css; charset=utf-8")],
    ["dashboard.js", entry(CLIENT_SCRIPT + COMPOSER_SCRIPT, "text/javascript; charset=utf-8")],
    ["favicon.svg", entry(favicon, "image/svg+xml")],
  ]);
  return cache;
}
