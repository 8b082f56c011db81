/**
 * The bulk import (decisions.md §14): POST /api/v1/schedule/import takes a CSV file (csv.ts) and makes every row a
 * creation written by hand and a post, or refuses the whole file.
 *
 * Order, so that a refusal stores nothing:
 *  1. every row is checked without a fetch (`checkImport`, also the dashboard's preview): caption, image URLs (http(s),
 *     at most 10), alt texts (no more than images), scheduled_time (RFC 3339, 5 minutes ahead) or queue, targets
 *     (resolved as POST /schedule resolves them, each ready to post), first comment, and what each target takes;
 *  2. the images are brought in, outside any transaction: a URL of this server's own library (`{base_url}/media/<id>`,
 *     what an export writes) is that asset, reused; any other URL is fetched once (the same URL in many rows is one
 *     fetch) under the ingest's rules (safe-fetch, byte cap, type by magic bytes), a few at a time. A URL that fails
 *     makes every row using it bad (field image_urls, the ingest's reason), and the images this import fetched are
 *     deleted again;
 *  3. the rows are checked again with their images (types each network takes);
 *  4. one write transaction stores every creation and post (queued rows take free slots one after the other in that
 *     transaction); a queued row without a free slot fails the transaction and is named.
 * An editor's import on an account that requires approval stores every post `pending_approval` (approval.ts).
 * Any bad row answers 400 invalid_rows with `rows: [{row, field, problem}]` (row 1 = the first data row).
 */
import type { CreationRow } from "../../db/schema";
import { creations, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import { isoAt } from "../../lib/clock";
import { isUuid, newId } from "../../lib/ids";
import { AppError } from "../../lib/errors";
import { parseRfc3339 } from "../../lib/rfc3339";
import { MAX_IMAGES, type StoredImage } from "../../db/schema/post-content";
import type { Deps } from "../../deps";
import type { StoredContent } from "../../publishing/content";
import { runDueOnce } from "../../publishing/dispatcher";
import type { ConnectionRow } from "../../store/connections";
import { type AssetRecord, MEDIA_PATH, deleteAsset, findAsset, ingestFromUrl } from "../assets/service";
import { listConnections } from "../connections/service";
import { cleanAltText, cleanFirstComment, cleanHandCaption, lockAssets } from "../creations/content-input";
import { handCreationRow } from "../creations/edit";
import { type CsvRow, listItems, readCsv, type RowProblem } from "./csv";
import { type FitTarget, type ImageFacts, targetProblems } from "./fit";
import { type ApprovalCaller, holdForApproval, needsApproval } from "./approval";
import { ChunkedInsert } from "./chunked-insert";
import { queueSlotTaker } from "./queue";
import { fitTargetOf, MIN_LEAD_MS, postRowOf, resolveTargets, targetRowsOf } from "./service";

/** How many image URLs one import fetches at the same time. */
const FETCH_CONCURRENCY = 4;
/** The most distinct image URLs (besides this server's library) one import fetches: a file of more is split. */
export const MAX_FETCHED_URLS = 1_000;

/** A row that passed the checks of step 1, ready to be stored once its images are in. */
export interface PlannedRow {
  row: number;
  caption: string;
  imageUrls: string[];
  altTexts: string[];
  /** The post's time, or null for the queue. */
  scheduledTime: number | null;
  firstComment: string | null;
  chosen: ConnectionRow[];
}

/** The outcome of checking a file: the rows as planned, and every problem found. */
export interface ImportCheck {
  rows: PlannedRow[];
  problems: RowProblem[];
  /** How many data rows the file has (0 when it could not be read). */
  rowCount: number;
}

/** One post the import stored. */
export interface ImportedPost {
  row: number;
  id: string;
  creationId: string;
  scheduledTime: string;
  queued: boolean;
}

/** 400 invalid_rows naming every bad row, field and problem; nothing was stored. */
export function invalidRows(problems: readonly RowProblem[]): AppError {
  const rows = new Set(problems.map((p) => p.row)).size;
  return new AppError("invalid_rows", `${rows === 1 ? "One row" : `${rows} rows`} cannot be imported; nothing was stored.`, { rows: problems });
}

/** The problem sentence of a service's refusal (its first detail when it has one). */
function problemOf(error: AppError): string {
  const details = error.extra.details;
  if (Array.isArray(details) && details.length > 0) {
    const first = details[0] as { problem?: unknown };
    if (typeof first.problem === "string") return first.problem;
  }
  return error.message;
}

/** Runs `check`; a refusal of it becomes a problem of `field` at `row` (and the answer is undefined). */
function attempt<T>(problems: RowProblem[], row: number, field: string, check: () => T): T | undefined {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    problems.push({ row, field, problem: problemOf(error) });
    return undefined;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/** The checks of one row that need no fetch. */
function checkRow(csv: CsvRow, row: number, connections: ConnectionRow[], now: number, problems: RowProblem[]): PlannedRow | null {
  const before = problems.length;
  const caption = attempt(problems, row, "caption", () => cleanHandCaption(csv.caption));
  const imageUrls = listItems(csv.image_urls);
  if (imageUrls.length > MAX_IMAGES) problems.push({ row, field: "image_urls", problem: `at most ${MAX_IMAGES} images (this row has ${imageUrls.length})` });
  const badUrl = imageUrls.find((url) => !isHttpUrl(url));
  if (badUrl !== undefined) problems.push({ row, field: "image_urls", problem: `not an http(s) URL: ${badUrl.slice(0, 200)}` });
  // Alt texts are positional: "|a dog" gives the second image its alt text and the first none.
  const altCells = csv.alt_texts.trim() === "" ? [] : csv.alt_texts.split("|").map((a) => a.trim());
  if (altCells.length > imageUrls.length) {
    problems.push({ row, field: "alt_texts", problem: `${altCells.length} alt texts for ${imageUrls.length} images` });
  }
  const altTexts = altCells.map((alt, i) => attempt(problems, row, "alt_texts", () => cleanAltText(alt, `alt_texts[${i}]`)) ?? "");
  const scheduledTime = checkTiming(csv, row, now, problems);
  const firstComment = attempt(problems, row, "first_comment", () => cleanFirstComment(csv.first_comment));
  const names = listItems(csv.targets);
  let chosen: ConnectionRow[] = [];
  if (names.length === 0) problems.push({ row, field: "targets", problem: "name at least one target (a platform or an accountId)" });
  else chosen = attempt(problems, row, "targets", () => resolveTargets(connections, names)) ?? [];
  for (const c of chosen) {
    if (!c.readyToPost) problems.push({ row, field: "targets", problem: `${c.label} cannot post right now: ${c.blockedReason ?? "it needs attention"}` });
  }
  if (problems.length > before || caption === undefined || scheduledTime === undefined || firstComment === undefined) return null;
  return { row, caption, imageUrls, altTexts, scheduledTime, firstComment, chosen };
}

/** The row's time: a timestamp, or null for the queue; undefined when it has a problem (pushed). */
function checkTiming(csv: CsvRow, row: number, now: number, problems: RowProblem[]): number | null | undefined {
  const queue = csv.queue.trim().toLowerCase();
  if (queue !== "" && queue !== "true" && queue !== "false") {
    problems.push({ row, field: "queue", problem: "must be true, false or empty" });
    return undefined;
  }
  const time = csv.scheduled_time.trim();
  if (queue === "true") {
    if (time === "") return null;
    problems.push({ row, field: "scheduled_time", problem: "leave it empty when queue is true (the queue picks the time)" });
    return undefined;
  }
  if (time === "") {
    problems.push({ row, field: "scheduled_time", problem: "required unless queue is true" });
    return undefined;
  }
  const ms = parseRfc3339(time);
  if (ms === null) {
    problems.push({ row, field: "scheduled_time", problem: "must be an RFC 3339 timestamp such as 2026-11-22T10:00:00Z" });
    return undefined;
  }
  if (ms < now + MIN_LEAD_MS) {
    problems.push({ row, field: "scheduled_time", problem: "must be at least 5 minutes ahead" });
    return undefined;
  }
  return ms;
}

/** The post content of a planned row with `images` (step 3) or stand-ins for them (step 1). */
function contentOf(row: PlannedRow, images: StoredImage[]): StoredContent {
  return { caption: row.caption, images, thread: [], firstComment: row.firstComment, variants: {} };
}

/** What each target takes, per row; `facts` empty checks the number of images but not their types. */
function fitProblems(rows: readonly PlannedRow[], imagesOf: (row: PlannedRow) => StoredImage[], facts: ImageFacts, targets: (c: ConnectionRow) => FitTarget): RowProblem[] {
  const problems: RowProblem[] = [];
  for (const row of rows) {
    const content = contentOf(row, imagesOf(row));
    for (const connection of row.chosen) {
      for (const p of targetProblems(targets(connection), content, facts)) {
        problems.push({ row: row.row, field: p.field.startsWith("images") ? "image_urls" : p.field, problem: p.problem });
      }
    }
  }
  return problems;
}

/** A cache of FitTarget per connection, so ten thousand rows open each connection once. */
function fitTargets(deps: Deps): (c: ConnectionRow) => FitTarget {
  const cache = new Map<string, FitTarget>();
  return (c) => {
    let target = cache.get(c.id);
    if (!target) cache.set(c.id, (target = fitTargetOf(deps, c)));
    return target;
  };
}

/**
 * Step 1: reads `text` and checks every row without fetching anything (the dashboard's preview shows this). An image
 * is counted against what each target takes; its type is checked once fetched.
 */
export async function checkImport(deps: Deps, accountId: string, text: string): Promise<ImportCheck & { targets: (c: ConnectionRow) => FitTarget }> {
  const targets = fitTargets(deps);
  const read = readCsv(text);
  if (!read.ok) return { rows: [], problems: read.problems, rowCount: 0, targets };
  const now = deps.clock.now();
  const connections = await listConnections(deps, accountId);
  const problems: RowProblem[] = [];
  const rows: PlannedRow[] = [];
  read.rows.forEach((csv, i) => {
    const planned = checkRow(csv, i + 1, connections, now, problems);
    if (planned) rows.push(planned);
  });
  problems.push(...fetchCapProblems(deps, rows));
  const standIns = (row: PlannedRow) => row.imageUrls.map((_, i) => ({ assetId: `pending-${i}`, altText: null }));
  problems.push(...fitProblems(rows, standIns, new Map(), targets));
  problems.sort((a, b) => a.row - b.row);
  return { rows, problems, rowCount: read.rows.length, targets };
}

/** The row where the distinct image URLs to fetch pass MAX_FETCHED_URLS, if they do. */
function fetchCapProblems(deps: Pick<Deps, "config">, rows: readonly PlannedRow[]): RowProblem[] {
  const seen = new Set<string>();
  for (const row of rows) {
    for (const url of row.imageUrls) if (ownMediaId(deps, url) === null) seen.add(url);
    if (seen.size > MAX_FETCHED_URLS) {
      return [{ row: row.row, field: "image_urls", problem: `one import fetches at most ${MAX_FETCHED_URLS} different image URLs; split the file before this row` }];
    }
  }
  return [];
}

/** The asset id of a URL of this server's library (`{base_url}/media/<id>.<ext>`), or null. */
function ownMediaId(deps: Pick<Deps, "config">, url: string): string | null {
  const prefix = `${deps.config.baseUrl}${MEDIA_PATH}/`;
  if (!url.startsWith(prefix)) return null;
  const id = url.slice(prefix.length).split(".")[0] ?? "";
  return isUuid(id) ? id : null;
}

/** Step 2: every distinct image URL as an asset, or the rows whose URL failed. `fetched` lists what to delete on a refusal. */
async function bringImages(
  deps: Deps,
  accountId: string,
  rows: readonly PlannedRow[],
): Promise<{ assets: Map<string, AssetRecord>; fetched: AssetRecord[]; problems: RowProblem[] }> {
  const urls = [...new Set(rows.flatMap((r) => r.imageUrls))];
  const assets = new Map<string, AssetRecord>();
  const failed = new Map<string, string>();
  const fetched: AssetRecord[] = [];
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++]!;
      const own = ownMediaId(deps, url);
      try {
        if (own !== null) {
          const asset = await findAsset(deps, accountId, own);
          if (asset) assets.set(url, asset);
          else failed.set(url, `not_found: no asset of this account's library is at ${url.slice(0, 200)}`);
          continue;
        }
        const asset = await ingestFromUrl(deps, accountId, { url });
        fetched.push(asset);
        assets.set(url, asset);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        failed.set(url, `${error.code}: ${error.message} (${url.slice(0, 200)})`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, urls.length) }, worker));
  const problems: RowProblem[] = [];
  for (const row of rows) {
    for (const url of row.imageUrls) {
      const reason = failed.get(url);
      if (reason !== undefined) problems.push({ row: row.row, field: "image_urls", problem: reason });
    }
  }
  return { assets, fetched, problems };
}

/** Deletes the images this import fetched (a refusal stores nothing). */
async function dropFetched(deps: Deps, accountId: string, fetched: readonly AssetRecord[]): Promise<void> {
  for (const asset of fetched) await deleteAsset(deps, accountId, asset.id).catch(() => undefined);
}

/** POST /schedule/import: checks every row, brings the images in, then stores every creation and post in one write. */
export async function importCsv(deps: Deps, caller: ApprovalCaller, text: string): Promise<{ imported: number; posts: ImportedPost[] }> {
  const { accountId } = caller;
  const checked = await checkImport(deps, accountId, text);
  if (checked.problems.length > 0) throw invalidRows(checked.problems);
  if (checked.rows.length >= COLLECT_EVERY_ROWS) collectGarbage();
  const { assets, fetched, problems } = await bringImages(deps, accountId, checked.rows);
  try {
    if (problems.length > 0) throw invalidRows(problems);
    const imagesOf = (row: PlannedRow): StoredImage[] =>
      row.imageUrls.map((url, i) => ({ assetId: assets.get(url)!.id, altText: row.altTexts[i] ? row.altTexts[i]! : null }));
    const facts: ImageFacts = new Map([...assets.values()].map((a) => [a.id, { mimeType: a.mimeType, readable: true }]));
    const fit = fitProblems(checked.rows.filter((r) => r.imageUrls.length > 0), imagesOf, facts, checked.targets);
    if (fit.length > 0) throw invalidRows(fit);
    const { posts, handOver } = await storeRows(deps, caller, checked.rows, imagesOf);
    if (handOver.length > 0) await runDueOnce(deps, {}, handOver);
    return { imported: posts.length, posts };
  } catch (error) {
    await dropFetched(deps, accountId, fetched);
    throw error;
  }
}

/**
 * Rows per multi-row INSERT of the store step, each table's full chunks through one prepared statement
 * (chunked-insert.ts). NB: before that, every chunk was a new statement holding its bound values in native memory
 * until collected: chunks of 250 rows peaked the server at 205-220 MB on 10,000 rows (bench/import.ts), 50 at ~180 MB.
 */
const INSERT_CHUNK = 50;
/**
 * Rows between two full collections in the store step (and one after the checks of a file this long). NB: the import
 * awaits only the database, so the process never idles and JavaScriptCore collects late; the garbage of the checks
 * and of the rows piled up to a 195-200 MB peak on 10,000 rows (the live data itself is ~15 MB). A collection marks
 * the whole heap (15-70 ms by the machine's load): with one prepared statement per table, one every 1,000 rows holds
 * the peak at ~160-170 MB; without any, 199 MB (docs/benchmarks/import.md).
 */
const COLLECT_EVERY_ROWS = 1000;

/** A full, synchronous collection (see COLLECT_EVERY_ROWS). */
function collectGarbage(): void {
  Bun.gc(true);
}

/**
 * Step 4: one write transaction with every creation and post. The images are locked first (an image deleted since
 * step 2 refuses the import), queued rows take free slots one after the other (queue.ts `queueSlotTaker`), and the
 * rows go in as multi-row inserts.
 */
async function storeRows(
  deps: Deps,
  caller: ApprovalCaller,
  rows: readonly PlannedRow[],
  imagesOf: (row: PlannedRow) => StoredImage[],
): Promise<{ posts: ImportedPost[]; handOver: string[] }> {
  const { accountId } = caller;
  const now = deps.clock.now();
  const imageIds = [...new Set(rows.flatMap((row) => imagesOf(row).map((i) => i.assetId)))];
  return deps.store.write(async (tx) => {
    if (!(await lockAssets(deps, accountId, imageIds))) {
      const problem = "an image was deleted from the library during the import";
      throw invalidRows(rows.filter((r) => r.imageUrls.length > 0).map((r) => ({ row: r.row, field: "image_urls", problem })));
    }
    const takeSlot = queueSlotTaker(deps, accountId);
    const posts: ImportedPost[] = [];
    const handOver: string[] = [];
    // Posts go in after their creations and targets after their posts (foreign keys).
    const creationRows = new ChunkedInsert(tx, creations, INSERT_CHUNK);
    const postRows = new ChunkedInsert(tx, scheduledPosts, INSERT_CHUNK);
    const targetRows = new ChunkedInsert(tx, scheduledPostTargets, INSERT_CHUNK);
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      const chunk: { creation: CreationRow; post: typeof scheduledPosts.$inferInsert; targets: (typeof scheduledPostTargets.$inferInsert)[] }[] = [];
      for (const row of rows.slice(start, start + INSERT_CHUNK)) {
        const images = imagesOf(row);
        const creation = handCreationRow(accountId, { caption: row.caption, images, thread: [], firstComment: row.firstComment, variants: {} }, null, now);
        let at = row.scheduledTime;
        if (at === null) {
          try {
            at = await takeSlot(tx, row.chosen, now);
          } catch (error) {
            if (error instanceof AppError && error.code === "no_free_slot") throw invalidRows([{ row: row.row, field: "queue", problem: error.message }]);
            throw error;
          }
        }
        const post = postRowOf({ id: newId(), accountId, scheduledTime: at, now }, creation, { queued: row.scheduledTime === null, seriesId: null });
        const targets = targetRowsOf({ id: post.id!, accountId, thread: [], firstComment: row.firstComment, variants: {} }, row.chosen, at, now);
        chunk.push({ creation, post, targets: targets.rows });
        handOver.push(...targets.handOver);
        posts.push({ row: row.row, id: post.id!, creationId: creation.id, scheduledTime: isoAt(at), queued: row.scheduledTime === null });
      }
      // A chunk of rows is one chunk of creations and one of posts, written by add(); the last, partial one is
      // written before its targets go in. Targets (one or more per post) may wait for a later chunk, never earlier.
      await creationRows.add(chunk.map((c) => c.creation));
      await postRows.add(chunk.map((c) => c.post));
      if (start + INSERT_CHUNK >= rows.length) {
        await creationRows.finish();
        await postRows.finish();
      }
      await targetRows.add(chunk.flatMap((c) => c.targets));
      if ((start + INSERT_CHUNK) % COLLECT_EVERY_ROWS === 0) collectGarbage();
    }
    await targetRows.finish();
    // An editor's import on an account that requires approval waits for an owner, post by post, as POST /schedule.
    if (await needsApproval(tx, caller)) {
      for (const post of posts) await holdForApproval(tx, post.id, now);
      return { posts, handOver: [] };
    }
    return { posts, handOver };
  });
}
