/**
 * A post written and scheduled the way a person does it in the dashboard, for the browser walks of each network:
 * the composer (/dashboard/compose: caption, images uploaded or ticked in the library with their alt text, thread parts,
 * a first comment) → "Save and schedule…" → the post's schedule form, ticked to the named connections. The post id is
 * read from the address the dashboard lands on, never from the database.
 *
 * How the post becomes due within seconds: the schedule form takes times at least 5 minutes ahead, so `when: "now"`
 * uses what the dashboard offers for going out at once: "Add to queue" (a button of the same schedule form) puts the
 * post in a posting slot, and the Queue view's "Post now" sends it at that moment. The helper first adds one daily
 * slot for exactly those connections in the posting-schedule editor (/dashboard/queue/schedule). `when: "later"` keeps
 * the form's date and time (tomorrow 09:00 unless `at` says otherwise): a post to cancel before it is due.
 */
import type { Page } from "playwright-core";

/** One image of the post: uploaded from bytes, or ticked in the library by its file name; with its alt text. */
export type ComposedImage = { alt: string; upload: { name: string; bytes: Uint8Array } } | { alt: string; library: string };

/** What the person writes in the composer. */
export interface ComposedPost {
  caption: string;
  /** The post's own images (0–10), each with a distinct file name; ticked library images come first, then uploads. */
  images?: readonly ComposedImage[];
  /** The thread's parts after the post (part 2, 3, …), text only. */
  thread?: readonly string[];
  firstComment?: string;
}

/** Where and when the post goes. */
export interface ScheduleChoice {
  /** The connections to tick, by their label as the connections page shows it (e.g. "Garden club", "@gardenclub"). */
  targets: readonly string[];
  /** "now": Add to queue, then Post now. "later": the form's date and time (a post to cancel before it is due). */
  when: "now" | "later";
  /** For "later": the date (YYYY-MM-DD) and time (HH:MM) typed in the form, in the person's zone. */
  at?: { date: string; time: string };
}

/** Called at each page a walk may want to check or photograph, while the page shows it filled in. */
export type DashboardStep = "composer-filled" | "schedule-form-filled";

export interface PostOptions {
  onStep?: (step: DashboardStep) => Promise<void>;
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** What the page says went wrong (its notices and field errors), for a failure that names it. */
async function pageComplaint(page: Page): Promise<string> {
  const texts = await page.locator(".notice-error, .field-error").allTextContents();
  return `${page.url()}: ${texts.map((t) => t.trim()).join(" | ") || "(no error shown)"}`;
}

/** Clicks `button` and waits for the page it loads; fails with the page's own words unless the address matches `expected`. */
async function submitTo(page: Page, button: ReturnType<Page["getByRole"]>, expected: RegExp, what: string): Promise<URL> {
  await Promise.all([page.waitForEvent("load"), button.click()]);
  if (!expected.test(page.url())) throw new Error(`${what} did not go through: ${await pageComplaint(page)}`);
  return new URL(page.url());
}

/**
 * Writes `post` in the composer of `base` (the page must be signed in as someone who may create and schedule) and
 * presses "Save and schedule…". Resolves with the new post's creation id, the page on its schedule form.
 */
export async function composeInDashboard(page: Page, base: string, post: ComposedPost, options: PostOptions = {}): Promise<string> {
  await page.goto(`${base}/dashboard/compose`);
  await page.getByLabel("Caption", { exact: true }).fill(post.caption);
  const images = post.images ?? [];
  const uploads = images.flatMap((i) => ("upload" in i ? [{ name: i.upload.name, mimeType: "image/png", buffer: Buffer.from(i.upload.bytes) }] : []));
  for (const i of images) if ("library" in i) await page.getByRole("checkbox", { name: i.library, exact: true }).check();
  if (uploads.length > 0) await page.getByLabel("Upload from this device").setInputFiles(uploads);
  if (images.length > 0) {
    await page.getByRole("button", { name: "Add the images" }).click();
    await page.waitForSelector(`ol.image-list[data-scope=post] > li:nth-child(${images.length})`);
  }
  // Each alt text goes to the image with its file name (the composer lists ticked library images first, then uploads).
  for (const image of images) {
    const name = "upload" in image ? image.upload.name : image.library;
    const item = page.locator("ol.image-list[data-scope=post] > li").filter({ has: page.locator("label .muted", { hasText: new RegExp(`^${escapeRegExp(name)}$`) }) });
    await item.locator("textarea[data-alt]").fill(image.alt);
  }
  for (const [n, text] of (post.thread ?? []).entries()) {
    await page.getByRole("button", { name: "Add a part" }).click();
    await page.getByLabel(`Text of part ${n + 2}`, { exact: true }).fill(text);
  }
  if (post.firstComment !== undefined) await page.getByLabel("First comment (optional)").fill(post.firstComment);
  await options.onStep?.("composer-filled");
  const landed = await submitTo(page, page.getByRole("button", { name: "Save and schedule…" }), new RegExp(`/dashboard/creations/${UUID}\\?notice=composed`), "Saving the post");
  return new RegExp(UUID).exec(landed.pathname)?.[0] ?? "";
}

/**
 * Adds one daily posting slot for exactly `targets` in the posting-schedule editor, so "Add to queue" has a slot with
 * all of them. Its time is 00:MM, MM being the row's number: each call adds a row of its own.
 */
async function addDailySlot(page: Page, base: string, targets: readonly string[]): Promise<void> {
  await page.goto(`${base}/dashboard/queue/schedule`);
  const row = Number(await page.locator('input[name="rows"]').inputValue()) - 1;
  const slot = page.locator(`#slot-${row}`);
  for (const day of await slot.locator(`input[name="days-${row}"]`).all()) await day.check();
  await page.locator(`#time-${row}`).fill(`00:${String(row % 60).padStart(2, "0")}`);
  const connections = slot.getByRole("group", { name: "New slot: connections" });
  for (const label of targets) await connections.getByRole("checkbox", { name: new RegExp(`^${escapeRegExp(label)} \\(`) }).check();
  await submitTo(page, page.getByRole("button", { name: "Save posting schedule" }), /notice=slots-saved/, "Saving the posting schedule");
}

/**
 * Schedules the saved post `creationId` through its page's schedule form to `choice.targets`; for `when: "now"` it is
 * then sent at once from the Queue view. Resolves with the scheduled post's id, read from the address the form leads to.
 */
export async function scheduleInDashboard(page: Page, base: string, creationId: string, choice: ScheduleChoice, options: PostOptions = {}): Promise<string> {
  if (choice.when === "now") await addDailySlot(page, base, choice.targets);
  if (!page.url().startsWith(`${base}/dashboard/creations/${creationId}`)) await page.goto(`${base}/dashboard/creations/${creationId}#schedule-title`);
  const form = page.locator("form", { has: page.getByRole("heading", { name: "Schedule", exact: true }) });
  for (const label of choice.targets) await form.getByRole("checkbox", { name: new RegExp(`^${escapeRegExp(label)} \\(`) }).check();
  if (choice.at) {
    await form.getByLabel("Date").fill(choice.at.date);
    await form.getByLabel("Time").fill(choice.at.time);
  }
  await options.onStep?.("schedule-form-filled");
  if (choice.when === "later") {
    const landed = await submitTo(page, form.getByRole("button", { name: "Schedule", exact: true }), new RegExp(`/dashboard/calendar\\?.*notice=scheduled#post-${UUID}`), "Scheduling");
    return landed.hash.slice("#post-".length);
  }
  const queued = await submitTo(page, form.getByRole("button", { name: "Add to queue" }), new RegExp(`/dashboard/queue\\?notice=queued#post-${UUID}`), "Adding to the queue");
  const postId = queued.hash.slice("#post-".length);
  await submitTo(page, page.locator(`#post-${postId}`).getByRole("button", { name: "Post now" }), /\/dashboard\/queue\?notice=posted-now/, "Post now");
  return postId;
}

/** composeInDashboard, then scheduleInDashboard: the post written in the composer and scheduled; its post id. */
export async function postFromDashboard(page: Page, base: string, post: ComposedPost, choice: ScheduleChoice, options: PostOptions = {}): Promise<string> {
  const creationId = await composeInDashboard(page, base, post, options);
  return scheduleInDashboard(page, base, creationId, choice, options);
}

/** Cancels the post `postId` from its page ("Cancel this post…", then "Cancel this post"); resolves on the calendar's notice. */
export async function cancelInDashboard(page: Page, postId: string): Promise<void> {
  const base = new URL(page.url()).origin;
  await page.goto(`${base}/dashboard/calendar/posts/${postId}`);
  await page.getByRole("link", { name: "Cancel this post…" }).click();
  await page.waitForURL(`${base}/dashboard/calendar/${postId}/cancel`);
  await submitTo(page, page.getByRole("button", { name: "Cancel this post", exact: true }), /notice=cancelled/, "Cancelling");
}
