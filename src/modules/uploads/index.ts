/**
 * Upload links: the API that mints and polls them (POST /api/v1/assets/upload-link, create;
 * GET /api/v1/assets/upload-links/{id}, read) and the public page at `uploadUrl` (/upload/<token>), which shows the
 * form (GET) and takes the file (POST, multipart field `file`). The page's stylesheet and script are served from the
 * binary under /upload/_/.
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { jsonResponse } from "../../http/error-response";
import { authOf } from "../../http/request-context";
import { parseJsonBody } from "../../http/json-body";
import { scopePlugin } from "../../http/scope";
import { AppError } from "../../lib/errors";
import { isoAt } from "../../lib/clock";
import { recordIngestRefusal } from "../assets/ingest";
import { assetToApi } from "../assets/service";
import { uploadLinkBody, uploadLinkParams, uploadLinkResponse, uploadLinkStatusResponse } from "./model";
import { readUploadedFile } from "./multipart";
import { ICON_SVG, formatBytes, linkGonePage, uploadDonePage, uploadFormPage } from "./page";
import {
  UPLOAD_PATH,
  assertLinkUsable,
  createUploadLink,
  findLinkByToken,
  getUploadLinkStatus,
  uploadThroughLink,
} from "./service";
import pageCss from "./upload-page.css" with { type: "file" };
import pageJs from "./upload-page.client.js" with { type: "file" };

const TAGS = ["assets"];

/** The page's Content-Security-Policy: only its own script, stylesheet and XHR; previews come from blob: URLs. */
export const UPLOAD_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/** Every answer at an upload URL: never cached, never sent as a Referer (the URL is a credential). */
export const UPLOAD_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "content-security-policy": UPLOAD_PAGE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "x-robots-tag": "noindex, nofollow",
  "cross-origin-opener-policy": "same-origin",
};

const STATIC_CACHE = "public, max-age=3600";
/** The page routes' OpenAPI answers: HTML for a browser, the error envelope for Accept: application/json. */
const htmlDoc = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" as const } } } });
const errorDoc = (description: string, code: string) => ({
  description,
  content: {
    "text/html": { schema: { type: "string" as const } },
    "application/json": { schema: { $ref: "#/components/schemas/Error" }, example: { error: code, message: "A sentence for a person." } },
  },
});
const uploadedSchemaRef = { type: "object" as const, required: ["asset"], properties: { asset: { $ref: "#/components/schemas/Asset" } } };
const uploadedExample = {
  asset: {
    id: "0192f1c4-7b2a-7c3e-9d4f-2a6b8c0d1e2f",
    fileName: "photo.png",
    mimeType: "image/png",
    sizeBytes: 48213,
    url: "https://seedcast.example/media/0192f1c4-7b2a-7c3e-9d4f-2a6b8c0d1e2f.png",
    createdAt: "2026-11-22T10:00:00.000Z",
  },
};
/** Stands in for the parsed body of the upload POST: the handler streams the request itself. */
const DEFERRED_BODY = Object.freeze({ deferred: true });

function html(status: number, body: string): Response {
  return new Response(body, { status, headers: { "content-type": "text/html; charset=utf-8", ...UPLOAD_PAGE_HEADERS } });
}

function json(status: number, body: unknown): Response {
  return jsonResponse(status, body, { ...UPLOAD_PAGE_HEADERS });
}

/** The browser (or script) asked for JSON: the page's XHR sends `Accept: application/json`. */
function acceptsJson(request: Request): boolean {
  return (request.headers.get("accept") ?? "").toLowerCase().includes("application/json");
}

/** A sentence for the person at the page, for each refusal; the link stays valid after every 400. */
function friendlyMessage(error: AppError, maxBytes: number): string {
  const still = "This link still works.";
  switch (error.code) {
    case "unsupported_type":
      return `That file is not a PNG, JPEG, GIF or WebP image. Choose another file. ${still}`;
    case "image_too_large":
      return `That image is larger than ${formatBytes(maxBytes)}. Choose a smaller file. ${still}`;
    case "image_dimensions_too_large":
      return `That image is too large to decode: over 40 megapixels, or over 160 MB once decoded (16-bit images count double). Choose a smaller one. ${still}`;
    case "empty_body":
      return `That file is empty. Choose another file. ${still}`;
    case "invalid_request":
      return `Choose an image first. ${still}`;
    case "upload_link_used":
      return "This link was already used. Each link adds one image: ask for a new one.";
    case "upload_link_expired":
      return "This link has expired. Ask for a new one to add an image.";
    case "not_found":
      return "This upload link does not exist. Check the address, or ask for a new link.";
    case "forbidden":
      return "The account this link belongs to is disabled, so nothing can be added through it.";
    default:
      return error.message;
  }
}

function gonePageFor(error: AppError): Response {
  if (error.code === "forbidden") return html(403, linkGonePage("disabled"));
  if (error.code === "upload_link_used") return html(410, linkGonePage("used"));
  if (error.code === "upload_link_expired") return html(410, linkGonePage("expired"));
  return html(404, linkGonePage("unknown"));
}

/**
 * One body at a time per link: a second upload to the same link waits (unread, so it costs no memory) until the first
 * has been refused or has consumed the link; then it finds the link used, or takes its turn. With a 10 MiB cap, a link
 * so never holds more than one image's worth of memory, however many requests are aimed at it.
 */
class PerKeyQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const mine = previous.then(task, task);
    const tail = mine.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await mine;
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** Mounts the upload-link API and the upload page. */
export function uploadsModule(deps: Deps) {
  const perLink = new PerKeyQueue();
  const formPage = (expiresAt: number, error?: string) =>
    uploadFormPage({
      // Empty: the form posts to the page's own URL, whatever path prefix a proxy put in front of it.
      action: "",
      expiresAt: isoAt(expiresAt),
      expiresInSeconds: (expiresAt - deps.clock.now()) / 1000,
      maxBytes: deps.config.maxImageBytes,
      error,
    });
  return new Elysia()
    .use(scopePlugin)
    .post(
      "/api/v1/assets/upload-link",
      ({ request, body, set }) => {
        const auth = authOf(request);
        set.status = 201;
        return createUploadLink(deps, auth.accountId, auth.keyId, body?.expires_in_seconds);
      },
      {
        parse: parseJsonBody,
        scope: "create",
        created: { path: "/api/v1/assets/upload-links/{id}", idAt: "id" },
        body: uploadLinkBody,
        response: { 201: uploadLinkResponse },
        detail: {
          summary: "Mint a single-use browser upload link (15 minutes unless expires_in_seconds says otherwise)",
          description:
            "uploadUrl is a page with a file picker, drag and drop, a progress bar and a preview; the first image that passes the ingest checks consumes it. Treat it as a credential. " +
            "The body is optional: expires_in_seconds (300 to 604800, default 900) sets how long the link stays usable.",
          tags: TAGS,
        },
      },
    )
    .get(
      "/api/v1/assets/upload-links/:id",
      ({ request, params }) => getUploadLinkStatus(deps, authOf(request).accountId, params.id),
      {
        scope: "read",
        errors: ["not_found"],
        params: uploadLinkParams,
        response: uploadLinkStatusResponse,
        detail: { summary: "Poll an upload link: valid, used (with assetId) or expired", tags: TAGS },
      },
    )
    .get(
      `${UPLOAD_PATH}/_/upload-page.css`,
      () =>
        new Response(Bun.file(pageCss), {
          headers: { "content-type": "text/css; charset=utf-8", "cache-control": STATIC_CACHE, "x-content-type-options": "nosniff" },
        }),
      { detail: { hide: true } },
    )
    .get(
      `${UPLOAD_PATH}/_/upload-page.js`,
      () =>
        new Response(Bun.file(pageJs), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": STATIC_CACHE,
            "x-content-type-options": "nosniff",
          },
        }),
      { detail: { hide: true } },
    )
    .get(
      `${UPLOAD_PATH}/_/icon.svg`,
      () =>
        new Response(ICON_SVG, {
          headers: {
            "content-type": "image/svg+xml",
            "cache-control": STATIC_CACHE,
            "x-content-type-options": "nosniff",
            "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
          },
        }),
      { detail: { hide: true } },
    )
    .get(
      `${UPLOAD_PATH}/:token`,
      async ({ params }) => {
        try {
          const link = await assertLinkUsable(deps, await findLinkByToken(deps, params.token));
          return html(200, formPage(link.expiresAt));
        } catch (error) {
          if (error instanceof AppError) return gonePageFor(error);
          throw error;
        }
      },
      {
        detail: {
          summary: "The upload page of an upload link (the uploadUrl; the token is the credential)",
          description: "A page with a file picker, drag and drop, a progress bar and a preview, until the link is used or expires.",
          tags: TAGS,
          responses: { 200: htmlDoc("The page with the file picker"), 404: htmlDoc("No such link"), 410: htmlDoc("The link was used or has expired") },
        },
      },
    )
    .post(
      `${UPLOAD_PATH}/:token`,
      async ({ params, request }) => {
        const wantsJson = acceptsJson(request);
        const maxBytes = deps.config.maxImageBytes;
        let expiresAt = 0;
        try {
          // The link is checked before the body is read: a dead link never costs an upload's worth of memory.
          const link = await assertLinkUsable(deps, await findLinkByToken(deps, params.token));
          expiresAt = link.expiresAt;
          const asset = await perLink.run(link.id, async () => {
            // Checked again after waiting: the upload before this one may have used the link.
            await assertLinkUsable(deps, await findLinkByToken(deps, params.token));
            const file = await readUploadedFile(request, maxBytes);
            return uploadThroughLink(deps, params.token, file);
          });
          if (wantsJson) return json(201, { asset: assetToApi(deps, asset) });
          return html(200, uploadDonePage(asset));
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          // The one place upload-page refusals are counted (the streaming cap and every image check end up here).
          recordIngestRefusal(deps, error);
          const message = friendlyMessage(error, maxBytes);
          if (wantsJson) return json(error.status, { ...error.toBody(), message });
          if (error.status === 400) {
            return html(400, formPage(expiresAt, message));
          }
          return gonePageFor(error);
        }
      },
      {
        // NB: the body is read by readUploadedFile under a streaming cap. `parse: "none"` is not enough once a global
        // parser exists (the pipeline's JSON one), so this parser claims the request without reading it.
        parse: () => DEFERRED_BODY,
        created: { path: "/api/v1/assets/{id}", idAt: "asset.id" },
        detail: {
          summary: "Upload the image of an upload link (multipart field `file`); JSON answers with Accept: application/json",
          description: "The first image that passes the ingest checks consumes the link; a refused file leaves it usable. The page posts here; a script may too.",
          tags: TAGS,
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: { type: "object" as const, required: ["file"], properties: { file: { type: "string" as const, format: "binary", description: "A PNG, JPEG, GIF or WebP image" } } },
              },
            },
          },
          responses: {
            200: htmlDoc("The image was added (the page says so)"),
            201: {
              description: "The image was added (Accept: application/json)",
              content: { "application/json": { schema: uploadedSchemaRef, example: uploadedExample } },
            },
            400: errorDoc("The file was refused (not an image, too large, none chosen); the link still works", "unsupported_type"),
            404: errorDoc("No such link", "not_found"),
            410: errorDoc("The link was used or has expired", "upload_link_used"),
          },
        },
      },
    );
}
