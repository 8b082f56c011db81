/**
 * The CSV of the bulk import and export (decisions.md §14): its columns, reading a file into rows of text cells and
 * writing rows back. Parsing and quoting are Papa Parse's (RFC 4180: quoted fields, doubled quotes, line breaks inside
 * quotes, CRLF or LF); a UTF-8 BOM is dropped; every row must have the header's number of cells. `|` separates the
 * items of a list cell.
 *
 * NB: Papa Parse over csv-parse: on 10,000 rows (2 MB) csv-parse's sync parser took 515 ms and 31 MB of RSS, Papa
 * Parse 105 ms and 14 MB (bench/import.ts's goal is 10 s and 200 MB for the whole import).
 */
import Papa from "papaparse";

/** The columns an import reads, in the order an export writes them. */
export const IMPORT_COLUMNS = ["caption", "image_urls", "alt_texts", "scheduled_time", "queue", "targets", "first_comment"] as const;
/** The columns an export adds after IMPORT_COLUMNS; an import accepts and ignores them (export → import round-trips). */
export const EXPORT_ONLY_COLUMNS = ["id", "status", "published_urls"] as const;

export type ImportColumn = (typeof IMPORT_COLUMNS)[number];
export type ExportColumn = ImportColumn | (typeof EXPORT_ONLY_COLUMNS)[number];

/** The columns a header must name; the others may be left out (their cells read as empty). */
const REQUIRED_COLUMNS: readonly ImportColumn[] = ["caption", "targets"];

/** The most data rows one import takes. */
export const MAX_IMPORT_ROWS = 10_000;

/** The separator of the items of a list cell (image_urls, alt_texts, targets, published_urls). */
export const LIST_SEPARATOR = "|";

/** One data row: every import column's cell, trimmed of nothing ("" when the column is absent). */
export type CsvRow = Record<ImportColumn, string>;

/** One problem of a file, at a data row (1 = the first after the header; 0 = the header itself) and field. */
export interface RowProblem {
  row: number;
  field: string;
  problem: string;
}

/** A file read: its rows, or the problems that keep it from being read. */
export type ReadCsv = { ok: true; rows: CsvRow[] } | { ok: false; problems: RowProblem[] };

const KNOWN_COLUMNS: ReadonlySet<string> = new Set<string>([...IMPORT_COLUMNS, ...EXPORT_ONLY_COLUMNS]);

function headerProblems(header: readonly string[]): RowProblem[] {
  const problems: RowProblem[] = [];
  const seen = new Set<string>();
  for (const name of header) {
    if (!KNOWN_COLUMNS.has(name)) problems.push({ row: 0, field: name || "(empty)", problem: `is not a column; use ${IMPORT_COLUMNS.join(", ")}` });
    else if (seen.has(name)) problems.push({ row: 0, field: name, problem: "appears twice in the header" });
    seen.add(name);
  }
  for (const name of REQUIRED_COLUMNS) if (!seen.has(name)) problems.push({ row: 0, field: name, problem: "is missing from the header row" });
  return problems;
}

/**
 * Reads a CSV file with a header row. A malformed file (an unclosed quote, a row with a different number of cells)
 * answers the first data row at fault; an unknown, doubled or missing column answers row 0.
 */
export function readCsv(text: string): ReadCsv {
  const parsed = Papa.parse<string[]>(text.startsWith("\uFEFF") ? text.slice(1) : text, { delimiter: ",", skipEmptyLines: true });
  const error = parsed.errors[0];
  if (error) {
    // Papa's `row` counts records from 0, the header included: that index is the data row's number.
    return { ok: false, problems: [{ row: Math.max(error.row ?? 0, 1), field: "csv", problem: papaProblem(error.code) }] };
  }
  const [header, ...data] = parsed.data;
  if (!header) return { ok: false, problems: [{ row: 0, field: "csv", problem: "the file is empty; it needs a header row and at least one data row" }] };
  const names = header.map((h) => h.trim().toLowerCase());
  const problems = headerProblems(names);
  if (problems.length > 0) return { ok: false, problems };
  if (data.length === 0) return { ok: false, problems: [{ row: 1, field: "csv", problem: "the file has a header row but no data rows" }] };
  if (data.length > MAX_IMPORT_ROWS) {
    return { ok: false, problems: [{ row: MAX_IMPORT_ROWS + 1, field: "csv", problem: `at most ${MAX_IMPORT_ROWS} rows per import; split the file` }] };
  }
  const ragged = data.findIndex((cells) => cells.length !== names.length);
  if (ragged >= 0) return { ok: false, problems: [{ row: ragged + 1, field: "csv", problem: "this row has a different number of cells than the header" }] };
  const at = new Map(names.map((name, i) => [name, i]));
  const rows = data.map((cells) => {
    const row = {} as CsvRow;
    for (const column of IMPORT_COLUMNS) {
      const i = at.get(column);
      row[column] = i === undefined ? "" : (cells[i] ?? "");
    }
    return row;
  });
  return { ok: true, rows };
}

/** Papa Parse's reason in words people read. */
function papaProblem(code: string): string {
  switch (code) {
    case "MissingQuotes":
      return "a quoted cell is never closed";
    case "InvalidQuotes":
      return "a quote inside a cell must be doubled (\"\") and the cell quoted";
    default:
      return "the file is not valid CSV here";
  }
}

/** The items of a list cell: split on `|`, each trimmed, empty items dropped. */
export function listItems(cell: string): string[] {
  return cell
    .split(LIST_SEPARATOR)
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Writes rows under a header of `columns` (RFC 4180 quoting, CRLF line ends). */
export function writeCsv<C extends string>(columns: readonly C[], rows: readonly Record<C, string>[]): string {
  return `${Papa.unparse([[...columns], ...rows.map((row) => columns.map((c) => row[c]))], { newline: "\r\n", quotes: false })}\r\n`;
}
