/**
 * The bulk routes (decisions.md §14): POST /api/v1/schedule/import (schedule; the one route whose body is CSV) and
 * GET /api/v1/schedule/posts.csv (read).
 */
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { CSV_BODY_ROUTES, MAX_CSV_BYTES, parseCsvBody } from "../../http/csv-body";
import { authOf } from "../../http/request-context";
import { scopePlugin } from "../../http/scope";
import { exportQuery, importResponse } from "./bulk-model";
import { IMPORT_COLUMNS, MAX_IMPORT_ROWS } from "./csv";
import { exportCsv, exportFileName } from "./export";
import { importCsv } from "./import";

const TAGS = ["schedule"];
const IMPORT_PATH = "/api/v1/schedule/import";
if (!CSV_BODY_ROUTES.has(`POST ${IMPORT_PATH}`)) throw new Error("the import route must be listed in CSV_BODY_ROUTES (its body cap)");

const SAMPLE_CSV =
  "caption,image_urls,alt_texts,scheduled_time,queue,targets,first_comment\r\n" +
  'Our autumn menu is here,https://example.com/menu.jpg,"Soup, bread and apples",2026-12-01T09:00:00Z,,bluesky|mastodon,Book a table at example.com\r\n' +
  "Tuesday tip: keep your knives sharp,,,,true,bluesky,\r\n";

/** Mounts the import and export routes. */
export function bulkModule(deps: Deps) {
  return new Elysia()
    .use(scopePlugin)
    // parseCsvBody answers the text (a string) or refuses; no body schema, so the document keeps text/csv.
    .post(IMPORT_PATH, ({ request, body }) => importCsv(deps, authOf(request), typeof body === "string" ? body : ""), {
      parse: parseCsvBody,
      scope: "schedule",
      errors: ["invalid_rows", "no_free_slot"],
      response: importResponse,
      detail: {
        summary: "Import posts from a CSV file: every row a creation and a scheduled post, or nothing",
        description:
          `Content-Type: text/csv (the one route that takes CSV; any other type → 415). A header row naming the columns ${IMPORT_COLUMNS.join(", ")} ` +
          "(caption and targets required; id, status and published_urls of an export are accepted and ignored), then at most " +
          `${MAX_IMPORT_ROWS} data rows; ${MAX_CSV_BYTES} bytes at most (413). \`|\` separates list items (image_urls, alt_texts by position, targets). ` +
          "Each row: scheduled_time (RFC 3339, at least 5 minutes ahead) or queue true (the first free posting slot; queue is true, false or empty); targets are platforms or accountIds. " +
          "Every row is checked before anything is stored: any bad row → 400 invalid_rows with rows [{row, field, problem}] (row 1 is the first data row) and nothing stored. " +
          "image_urls of this server's library ({base_url}/media/…, what an export writes) are reused; others are fetched under the ingest's rules, once per distinct URL; " +
          "a URL that cannot be fetched makes its rows bad and the images already fetched are removed. Then every row is stored in one transaction.",
        tags: TAGS,
        requestBody: { required: true, content: { "text/csv": { schema: { type: "string", maxLength: MAX_CSV_BYTES }, example: SAMPLE_CSV } } },
      },
    })
    .get(
      "/api/v1/schedule/posts.csv",
      async ({ request, query, set }) => {
        const text = await exportCsv(deps, authOf(request).accountId, query);
        set.headers["content-type"] = "text/csv; charset=utf-8";
        set.headers["content-disposition"] = `attachment; filename="${exportFileName(deps.clock.now())}"`;
        return text;
      },
      {
        scope: "read",
        query: exportQuery,
        detail: {
          summary: "Export posts as CSV (the import's columns plus id, status, published_urls)",
          description:
            "Newest first; from/to bound scheduledTime and status filters like GET /schedule/posts. image_urls are library URLs (an import reuses them); a queued post not yet out has queue true and no scheduled_time. " +
            "Importing an export of pending posts makes the same posts again. A thread and per-network versions have no column.",
          tags: TAGS,
          responses: {
            "200": {
              description: "The posts as CSV (RFC 4180, a header row, CRLF line ends)",
              content: { "text/csv": { schema: { type: "string" }, example: `${SAMPLE_CSV.split("\r\n")[0]},id,status,published_urls\r\n` } },
            },
          },
        },
      },
    );
}
