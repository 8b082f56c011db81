/**
 * The bulk pages (decisions.md §14): import a CSV file of posts with a preview, row by row, before anything is stored
 * (each row's problems shown at that row), and the export of the account's posts as CSV. The preview reads and checks
 * the file exactly as POST /api/v1/schedule/import does (modules/schedule/import.ts `checkImport`), without fetching
 * images; confirming sends the same text back and runs the import, whose refusal (an image that cannot be fetched, a
 * queue without a free slot) shows the preview again with those rows marked.
 */
import { ROLE_SCOPES } from "../../../auth/scopes";
import { AppError } from "../../../lib/errors";
import { type Html, html } from "../../../lib/html";
import { parseRfc3339 } from "../../../lib/rfc3339";
import { shortDate, zoneLabel, zonedParts } from "../../../lib/zoned";
import { isUploadedFile } from "../../../http/form-body";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import { zoneOf } from "../../../web/preferences";
import type { Membership, SessionContext } from "../../../web/session";
import { type CsvRow, IMPORT_COLUMNS, listItems, MAX_IMPORT_ROWS, readCsv, type RowProblem } from "../../schedule/csv";
import { exportCsv, exportFileName } from "../../schedule/export";
import { checkImport, importCsv } from "../../schedule/import";
import { MAX_CSV_BYTES } from "../../../http/csv-body";
import { refusal } from "./common";

export const IMPORT_PAGE_PATH = "/dashboard/calendar/import";
export const IMPORT_PREVIEW_PATH = "/dashboard/calendar/import/preview";
export const EXPORT_PATH = "/dashboard/calendar/export.csv";
/** The import forms (both multipart, so the text is sent as is) carry the file or its text, plus framing. */
export const IMPORT_FORM_MAX_BYTES = MAX_CSV_BYTES + 64 * 1024;
const CURRENT = "/dashboard/calendar";
/** The longest caption excerpt a preview row shows. */
const EXCERPT = 140;

function canSchedule(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

function importer(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canSchedule(s)) return forbiddenPage(s, "Only owners and editors import posts.");
  return account;
}

const SAMPLE = `${IMPORT_COLUMNS.join(",")}
"Our autumn menu is here",https://example.com/menu.jpg,"Soup, bread and apples",2026-12-01T09:00:00Z,,bluesky|mastodon,Book a table
"Tuesday tip: keep your knives sharp",,,,true,bluesky,`;

function formPage(s: SessionContext, notices: readonly Notice[], text = ""): Html {
  return page(
    s,
    { title: "Import posts", current: CURRENT, notices },
    html`<p>Load many posts at once from a spreadsheet saved as CSV. You see every row checked before anything is saved; nothing is saved until you confirm, and a file with a problem saves nothing.</p>
<form method="post" action="${IMPORT_PREVIEW_PATH}" enctype="multipart/form-data" class="card">
  ${csrfField(s.csrfToken)}
  <label for="import-file">CSV file</label>
  <input id="import-file" name="file" type="file" accept=".csv,text/csv" aria-describedby="import-file-hint">
  <p class="hint" id="import-file-hint">UTF-8, a header row, at most ${MAX_IMPORT_ROWS.toLocaleString("en")} rows.</p>
  <label for="import-text">…or paste the CSV here</label>
  <textarea id="import-text" name="csv" rows="8" aria-describedby="import-columns">${text}</textarea>
  <div class="actions"><button type="submit">Preview</button></div>
</form>
<details class="card" id="import-columns">
  <summary>The columns</summary>
  <ul>
    <li><strong>caption</strong> (required): the post's text.</li>
    <li><strong>image_urls</strong>: image addresses separated by <code>|</code> (at most 10); they are downloaded into your library when you confirm.</li>
    <li><strong>alt_texts</strong>: one per image, in the same order, separated by <code>|</code>.</li>
    <li><strong>scheduled_time</strong>: when, such as <code>2026-12-01T09:00:00Z</code>; or leave it empty and put <strong>queue</strong> <code>true</code> to take the next free queue slot.</li>
    <li><strong>targets</strong> (required): networks (<code>bluesky</code>) or connection ids, separated by <code>|</code>.</li>
    <li><strong>first_comment</strong>: posted as the first reply.</li>
  </ul>
  <p>An export (<a href="${EXPORT_PATH}">download all posts as CSV</a>) has the same columns plus id, status and published URLs, and can be imported again.</p>
  <pre class="import-sample"><code>${SAMPLE}</code></pre>
</details>`,
  );
}

/** The text of the form: the chosen file, else the pasted text. */
function csvOf(form: Form | undefined): string | AppError {
  const file = form?.file;
  if (isUploadedFile(file) && file.bytes.byteLength > 0) {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(file.bytes);
    } catch {
      return new AppError("invalid_request", "The file is not UTF-8 text. Save it from your spreadsheet as “CSV UTF-8”.");
    }
  }
  const text = field(form, "csv");
  if (text.trim() === "") return new AppError("invalid_request", "Choose a CSV file or paste its text.");
  return text;
}

function whenCell(row: CsvRow, zone: string): Html {
  if (row.queue.trim().toLowerCase() === "true" && row.scheduled_time.trim() === "") return html`Next free queue slot`;
  const at = parseRfc3339(row.scheduled_time.trim());
  if (at === null) return html`${row.scheduled_time || "—"}`;
  const w = zonedParts(at, zone);
  return html`<time datetime="${new Date(at).toISOString()}">${shortDate(w.date)}, ${w.time}</time>`;
}

function previewRow(row: CsvRow, n: number, problems: readonly RowProblem[], zone: string): Html {
  const images = listItems(row.image_urls).length;
  const excerpt = row.caption.length > EXCERPT ? `${row.caption.slice(0, EXCERPT)}…` : row.caption;
  const bad = problems.length > 0;
  return html`<li class="card import-row${bad ? " attention" : ""}" id="row-${String(n)}" aria-labelledby="row-${String(n)}-title">
  <h3 id="row-${String(n)}-title">Row ${String(n)} <span class="${bad ? "error-text" : "ok-text"}">${bad ? `${problems.length === 1 ? "1 problem" : `${problems.length} problems`}` : "ready"}</span></h3>
  <p class="import-caption">${excerpt || html`<span class="muted">(no caption)</span>`}</p>
  <dl class="import-facts">
    <div><dt>When</dt><dd>${whenCell(row, zone)}</dd></div>
    <div><dt>To</dt><dd>${listItems(row.targets).join(", ") || "—"}</dd></div>
    <div><dt>Images</dt><dd>${String(images)}</dd></div>
    ${row.first_comment.trim() ? html`<div><dt>First comment</dt><dd>${row.first_comment.slice(0, EXCERPT)}</dd></div>` : ""}
  </dl>
  ${bad ? html`<ul class="import-problems">${problems.map((p) => html`<li class="error-text"><strong>${p.field}</strong>: ${p.problem}</li>`)}</ul>` : ""}
</li>`;
}

/** The preview of `text`: every row with its problems, and the confirm form when there are none. */
async function previewPage(ctx: DashboardCtx, s: SessionContext, account: Membership, text: string, known?: readonly RowProblem[]): Promise<{ body: Html; ok: boolean }> {
  const zone = zoneOf(s);
  // `known`: the import's own refusal (an image that could not be fetched, no free slot), shown at its rows.
  const problems = known ?? (await checkImport(ctx.deps, account.accountId, text)).problems;
  const read = readCsv(text);
  const rows = read.ok ? read.rows : [];
  const byRow = new Map<number, RowProblem[]>();
  for (const p of problems) byRow.set(p.row, [...(byRow.get(p.row) ?? []), p]);
  const fileProblems = problems.filter((p) => p.row === 0 || p.row > rows.length || !read.ok);
  const badRows = new Set(problems.map((p) => p.row)).size;
  const ok = problems.length === 0 && rows.length > 0;
  const summary = ok
    ? html`<p class="card">All ${String(rows.length)} rows are ready. Times are shown in ${zoneLabel(zone)}. Images are downloaded when you confirm.</p>
<form method="post" action="${IMPORT_PAGE_PATH}" enctype="multipart/form-data" class="actions import-confirm">
  ${csrfField(s.csrfToken)}
  <input type="hidden" name="csv" value="${text}">
  <button type="submit">Import ${String(rows.length)} ${rows.length === 1 ? "post" : "posts"}</button>
  <a class="button secondary" href="${IMPORT_PAGE_PATH}">Choose another file</a>
</form>`
    : html`<p class="card attention" role="alert">${badRows === 1 ? "One row has" : `${String(badRows)} rows have`} problems; nothing will be saved until the file is fixed. ${
        rows.length > 0 ? html`<a href="#row-${String(problems.find((p) => p.row > 0)?.row ?? 1)}">Go to the first one</a>.` : ""
      }</p>
${fileProblems.length > 0 ? html`<ul class="card import-problems">${fileProblems.map((p) => html`<li class="error-text">${p.row === 0 ? "Header" : `Row ${String(p.row)}`}, <strong>${p.field}</strong>: ${p.problem}</li>`)}</ul>` : ""}
<p><a class="button secondary" href="${IMPORT_PAGE_PATH}">Choose another file</a></p>`;
  const list = rows.length === 0 ? html`` : html`<h2>Rows</h2><ol class="plain import-rows">${rows.map((row, i) => previewRow(row, i + 1, read.ok ? (byRow.get(i + 1) ?? []) : [], zone))}</ol>`;
  return { body: page(s, { title: "Import preview", current: CURRENT }, html`${summary}${list}`), ok };
}

/** GET /dashboard/calendar/import */
export async function getImport(_ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = importer(s);
  if (account instanceof Response) return account;
  const imported = Number(new URL(request.url).searchParams.get("imported"));
  const notices: Notice[] = Number.isSafeInteger(imported) && imported > 0 ? [{ kind: "ok", text: `${imported} ${imported === 1 ? "post was" : "posts were"} imported and scheduled.` }] : [];
  return htmlResponse(formPage(s, notices));
}

/** POST /dashboard/calendar/import/preview */
export async function postImportPreview(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = importer(s);
  if (account instanceof Response) return account;
  const text = csvOf(form);
  if (text instanceof AppError) return htmlResponse(formPage(s, [refusal(text).notice]), 400);
  const { body, ok } = await previewPage(ctx, s, account, text);
  return htmlResponse(body, ok ? 200 : 400);
}

/** POST /dashboard/calendar/import: the confirmed import. */
export async function postImport(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = importer(s);
  if (account instanceof Response) return account;
  const text = csvOf(form);
  if (text instanceof AppError) return htmlResponse(formPage(s, [refusal(text).notice]), 400);
  try {
    const { imported } = await importCsv(ctx.deps, { accountId: account.accountId, role: account.role }, text);
    return redirect(`${IMPORT_PAGE_PATH}?imported=${imported}`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_rows") {
      const { body } = await previewPage(ctx, s, account, text, (error.extra.rows ?? []) as RowProblem[]);
      return htmlResponse(body, 400);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(formPage(s, [notice], text.length <= 64 * 1024 ? text : ""), status);
  }
}

/** GET /dashboard/calendar/export.csv: every post of the account as CSV (any member). */
export async function getExport(ctx: DashboardCtx, s: SessionContext): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const text = await exportCsv(ctx.deps, account.accountId, {});
  return new Response(text, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${exportFileName(ctx.deps.clock.now())}"`,
      "cache-control": "no-store",
    },
  });
}
