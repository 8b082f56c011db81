/**
 * The composer's draft: what the form holds between round trips (a post being written is never stored until "Save").
 * Read from the submitted form, changed by the form's buttons (add images, move, remove, add a thread part), and
 * turned into the creations service's input. Without script every button is a round trip through here; with script
 * the page moves and removes items itself, and the form's field ORDER carries the order (no indexes to renumber).
 *
 * Field names, one per thing so a long thread stays under the form parser's field cap: `caption`; each image as its
 * alt text field `alt_<scope>_<assetId>` (scope `post` or a thread part's key); each thread part as
 * `part_caption_<key>` (a stable key such as `p3`); `first_comment`; a network's version as
 * `version_caption_<platform>`, `version_nothread_<platform>`, `version_nocomment_<platform>`. The ORDER of the fields
 * is the order of the images and parts: a parsed form keeps its fields in the order they came (string keys of a
 * JavaScript object keep their insertion order), so moving an item on the page moves it in the post.
 */
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import { type Form, field, fields } from "../../../web/http";

/** One image of the draft: a library asset and the alt text typed for it. */
export interface DraftImage {
  assetId: string;
  altText: string;
}

/** One follow-up part; `key` is stable across moves, so its fields keep their names. */
export interface DraftPart {
  key: string;
  caption: string;
  images: DraftImage[];
}

/** A network's own version as the composer offers it: its own caption, and clearing the thread or first comment. */
export interface DraftVersion {
  caption: string;
  noThread: boolean;
  noFirstComment: boolean;
}

export interface Draft {
  seedId: string | null;
  caption: string;
  images: DraftImage[];
  thread: DraftPart[];
  firstComment: string;
  /** By platform (`bluesky`, `mastodon`, …); only platforms the account has connections on. */
  versions: Record<string, DraftVersion>;
}

/** Where an image list lives: the post itself, or a thread part by its key. */
export type ImageScope = "post" | string;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An empty draft (a blank composer), or one started from a seed's text. */
export function blankDraft(seed?: { id: string; content: string }): Draft {
  return { seedId: seed?.id ?? null, caption: seed?.content ?? "", images: [], thread: [], firstComment: "", versions: {} };
}

/** A version that changes nothing is no version. */
export function versionIsEmpty(v: DraftVersion | undefined): boolean {
  return v === undefined || (v.caption.trim() === "" && !v.noThread && !v.noFirstComment);
}

const ALT_FIELD = /^alt_(post|p\d{1,4})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const PART_FIELD = /^part_caption_(p\d{1,4})$/;

/** The alt text field's name of an image in `scope`. */
export function altFieldName(scope: ImageScope, assetId: string): string {
  return `alt_${scope}_${assetId}`;
}

/**
 * The draft the form carries. `platforms` are the networks the account is connected to (only their versions are read).
 * Malformed names (a hand-made request) are ignored; the assets are checked against the account by the caller.
 */
export function draftFromForm(form: Form | undefined, platforms: readonly string[]): Draft {
  const seedId = field(form, "seed_id");
  const thread: DraftPart[] = [];
  const images = new Map<string, DraftImage[]>([["post", []]]);
  for (const name of Object.keys(form ?? {})) {
    const part = PART_FIELD.exec(name);
    if (part?.[1] && !images.has(part[1])) {
      const key = part[1];
      const list: DraftImage[] = [];
      images.set(key, list);
      thread.push({ key, caption: field(form, name), images: list });
    }
  }
  for (const name of Object.keys(form ?? {})) {
    const alt = ALT_FIELD.exec(name);
    const list = alt?.[1] ? images.get(alt[1]) : undefined;
    const assetId = alt?.[2]?.toLowerCase() ?? "";
    if (list && !list.some((i) => i.assetId === assetId)) list.push({ assetId, altText: field(form, name) });
  }
  const versions: Record<string, DraftVersion> = {};
  for (const platform of platforms) {
    const v = {
      caption: field(form, `version_caption_${platform}`),
      noThread: field(form, `version_nothread_${platform}`) === "1",
      noFirstComment: field(form, `version_nocomment_${platform}`) === "1",
    };
    if (!versionIsEmpty(v)) versions[platform] = v;
  }
  return {
    seedId: UUID.test(seedId) ? seedId : null,
    caption: field(form, "caption"),
    images: images.get("post") ?? [],
    thread,
    firstComment: field(form, "first_comment"),
    versions,
  };
}

/** A key no part of `draft` has. */
export function newPartKey(draft: Draft): string {
  const used = draft.thread.map((p) => Number(p.key.slice(1)));
  return `p${used.length === 0 ? 1 : Math.max(...used) + 1}`;
}

/** The image list of `scope`, or null when that part does not exist. */
export function imagesIn(draft: Draft, scope: ImageScope): DraftImage[] | null {
  if (scope === "post") return draft.images;
  return draft.thread.find((p) => p.key === scope)?.images ?? null;
}

function swap<T>(list: T[], i: number, j: number): void {
  if (i < 0 || j < 0 || i >= list.length || j >= list.length) return;
  const a = list[i] as T;
  list[i] = list[j] as T;
  list[j] = a;
}

/** What a button of the form asks for; `save` and `schedule` store, the others only change the draft. */
export type Operation =
  | { kind: "save"; thenSchedule: boolean }
  | { kind: "add-images" }
  | { kind: "add-part" }
  | { kind: "part"; action: "up" | "down" | "remove"; key: string }
  | { kind: "image"; action: "up" | "down" | "remove"; scope: ImageScope; index: number };

/** The operation the pressed button names (`op`); anything unknown is "save". */
export function operationOf(form: Form | undefined): Operation {
  const op = field(form, "op");
  if (op === "add-images" || op === "add-part") return { kind: op };
  if (op === "save-schedule") return { kind: "save", thenSchedule: true };
  const part = /^part-(up|down|remove):(p\d{1,4})$/.exec(op);
  if (part) return { kind: "part", action: part[1] as "up" | "down" | "remove", key: part[2] ?? "" };
  const image = /^image-(up|down|remove):(post|p\d{1,4}):(\d{1,2})$/.exec(op);
  if (image) return { kind: "image", action: image[1] as "up" | "down" | "remove", scope: image[2] ?? "post", index: Number(image[3]) };
  return { kind: "save", thenSchedule: false };
}

/** A move, removal or new part applied to `draft` (in place). Adding images is `addImages`. */
export function applyOperation(draft: Draft, op: Operation): void {
  if (op.kind === "add-part") {
    if (draft.thread.length < MAX_THREAD_PARTS) draft.thread.push({ key: newPartKey(draft), caption: "", images: [] });
    return;
  }
  if (op.kind === "part") {
    const i = draft.thread.findIndex((p) => p.key === op.key);
    if (i < 0) return;
    if (op.action === "remove") draft.thread.splice(i, 1);
    else swap(draft.thread, i, op.action === "up" ? i - 1 : i + 1);
    return;
  }
  if (op.kind === "image") {
    const list = imagesIn(draft, op.scope);
    if (!list || op.index >= list.length) return;
    if (op.action === "remove") list.splice(op.index, 1);
    else swap(list, op.index, op.action === "up" ? op.index - 1 : op.index + 1);
  }
}

/**
 * Adds `assetIds` (already checked to be the account's) to the list of `scope`, skipping ones already there; answers
 * how many did not fit under MAX_IMAGES.
 */
export function addImages(draft: Draft, scope: ImageScope, assetIds: readonly string[]): number {
  const list = imagesIn(draft, scope);
  if (!list) return 0;
  let left = 0;
  for (const assetId of assetIds) {
    if (list.some((image) => image.assetId === assetId)) continue;
    if (list.length >= MAX_IMAGES) left++;
    else list.push({ assetId, altText: "" });
  }
  return left;
}

/** Every asset id the draft shows (for one lookup of thumbnails). */
export function draftAssetIds(draft: Draft): string[] {
  return [...new Set([...draft.images, ...draft.thread.flatMap((p) => p.images)].map((i) => i.assetId))];
}

/** The creations service's input for this draft (camelCase, as `createCreationByHand` and `updateCreation` take it). */
export interface ComposedInput {
  caption: string;
  images: { assetId: string; altText: string | null }[];
  thread: { caption: string; images: { assetId: string; altText: string | null }[] }[];
  firstComment: string | null;
  variants: Record<string, { caption?: string; thread?: []; firstComment?: "" }>;
}

const image = (i: DraftImage) => ({ assetId: i.assetId, altText: i.altText.trim() === "" ? null : i.altText });

/** The draft as the service's input: empty alt texts and an empty first comment are absent, versions only what they set. */
export function composedInput(draft: Draft): ComposedInput {
  const variants: ComposedInput["variants"] = {};
  for (const [platform, v] of Object.entries(draft.versions)) {
    if (versionIsEmpty(v)) continue;
    variants[platform] = {
      ...(v.caption.trim() !== "" ? { caption: v.caption } : {}),
      ...(v.noThread ? { thread: [] as [] } : {}),
      ...(v.noFirstComment ? { firstComment: "" as const } : {}),
    };
  }
  return {
    caption: draft.caption,
    images: draft.images.map(image),
    thread: draft.thread.map((p) => ({ caption: p.caption, images: p.images.map(image) })),
    firstComment: draft.firstComment.trim() === "" ? null : draft.firstComment,
    variants,
  };
}
