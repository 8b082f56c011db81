/**
 * Does a post fit where it goes? (decisions.md §7, §13.) Every target is checked against what THAT target will send
 * (the post with its network's version applied: contentForPlatform) and what its network declares it can take
 * (connector.capabilities and captionLimit): the caption, each thread part and the first comment under the network's
 * counting rule, the number and types of images, a thread where there are no threads, a first comment where there is
 * none, a post without an image where one is required. Each problem names the network, the target and the part.
 */
import { inArray } from "drizzle-orm";
import type { StoredImage } from "../../db/schema/post-content";
import { assets } from "../../db/tables";
import type { Deps } from "../../deps";
import type { CaptionLimit, NetworkCapabilities } from "../../publishing/connector";
import { captionLength } from "../../publishing/caption-count";
import { assetIdsOf, contentForPlatform, type StoredContent } from "../../publishing/content";

/** One reason a post cannot be scheduled; `accountId`/`platform` name the target when it is one target's. */
export interface FitProblem {
  accountId?: string;
  platform?: string;
  field: string;
  problem: string;
}

/** A target as the checks see it: its connection, what its network takes, and its caption limit. */
export interface FitTarget {
  accountId: string;
  platform: string;
  label: string;
  capabilities: NetworkCapabilities;
  captionLimit: CaptionLimit | null;
  /** The limit of a part carrying `images` images, where it depends on them (Telegram); captionLimit otherwise. */
  captionLimitFor?: (images: number) => CaptionLimit | null;
}

/** The library facts the checks need of each image: its type, and whether its file is still there. */
export type ImageFacts = ReadonlyMap<string, { mimeType: string; readable: boolean }>;

/** Reads the type of every image `content` uses and checks its file exists (one query, one stat per image). */
export async function imageFacts(deps: Pick<Deps, "store" | "storage">, content: StoredContent): Promise<ImageFacts> {
  const ids = assetIdsOf(content);
  const facts = new Map<string, { mimeType: string; readable: boolean }>();
  if (ids.length === 0) return facts;
  const rows = await deps.store.db.select({ id: assets.id, mimeType: assets.mimeType, storageKey: assets.storageKey }).from(assets).where(inArray(assets.id, ids)).all();
  await Promise.all(rows.map(async (r) => facts.set(r.id, { mimeType: r.mimeType, readable: await deps.storage.exists(r.storageKey) })));
  return facts;
}

/** The problems of the images `images` (at `field`) on `target`. */
function imageProblems(target: FitTarget, images: readonly StoredImage[], field: string, facts: ImageFacts): FitProblem[] {
  const at = { accountId: target.accountId, platform: target.platform };
  const caps = target.capabilities;
  const problems: FitProblem[] = [];
  if (images.length > caps.maxImages) {
    problems.push({
      ...at,
      field,
      problem:
        caps.maxImages === 0
          ? `${caps.name} (${target.label}) takes no images; this has ${images.length}${caps.imagesHint ? `. ${caps.imagesHint.replace(/\.$/, "")}` : ""}`
          : `${images.length} images; ${caps.name} (${target.label}) takes at most ${caps.maxImages}`,
    });
  }
  images.forEach((image, i) => {
    const fact = facts.get(image.assetId);
    if (fact && !caps.imageTypes.includes(fact.mimeType)) {
      problems.push({ ...at, field: `${field}[${i}]`, problem: `${caps.name} (${target.label}) cannot send ${fact.mimeType} images` });
    }
  });
  return problems;
}

/** The problems of the text `text` (at `field`, going with `images` images) under `target`'s counting rule. */
function textProblem(target: FitTarget, text: string, field: string, what: string, images: number): FitProblem[] {
  const limit = target.captionLimitFor ? target.captionLimitFor(images) : target.captionLimit;
  if (limit === null) return [];
  const broken = limit.rule?.(text) ?? null;
  if (broken !== null) return [{ accountId: target.accountId, platform: target.platform, field, problem: `${what}: ${broken} (${target.label})` }];
  const length = captionLength(text, limit);
  if (length <= limit.maxGraphemes) return [];
  return [
    {
      accountId: target.accountId,
      platform: target.platform,
      field,
      problem: `${what} is ${length} characters; ${limit.platformName} (${target.label}) allows ${limit.maxGraphemes}`,
    },
  ];
}

/** Every problem of sending `content` to `target` (its network's version applied). */
export function targetProblems(target: FitTarget, content: StoredContent, facts: ImageFacts): FitProblem[] {
  const sends = contentForPlatform(content, target.platform);
  const caps = target.capabilities;
  const at = { accountId: target.accountId, platform: target.platform };
  const problems: FitProblem[] = [];
  if (sends.caption.trim() !== "") problems.push(...textProblem(target, sends.caption, "caption", "the caption", sends.images.length));
  problems.push(...imageProblems(target, sends.images, "images", facts));
  if (caps.requiresImage && sends.images.length === 0) {
    problems.push({ ...at, field: "images", problem: `${caps.name} (${target.label}) needs at least one image` });
  }
  if (sends.thread.length > 0 && caps.maxThreadParts === 0) {
    problems.push({
      ...at,
      field: "thread",
      problem: `${caps.name} (${target.label}) has no threads; remove the ${sends.thread.length} thread parts, or give ${target.platform} a version without a thread`,
    });
  } else {
    if (sends.thread.length > caps.maxThreadParts) {
      problems.push({ ...at, field: "thread", problem: `${sends.thread.length} thread parts; ${caps.name} (${target.label}) takes at most ${caps.maxThreadParts}` });
    }
    sends.thread.forEach((part, i) => {
      problems.push(...textProblem(target, part.caption, `thread[${i}].caption`, `thread part ${i + 1}`, part.images.length));
      problems.push(...imageProblems(target, part.images, `thread[${i}].images`, facts));
    });
  }
  if (sends.firstComment !== null) {
    if (!caps.firstComment) {
      problems.push({
        ...at,
        field: "first_comment",
        problem: `${caps.name} (${target.label}) takes no first comment; remove it, or give ${target.platform} a version whose first_comment is ""`,
      });
    } else {
      problems.push(...textProblem(target, sends.firstComment, "first_comment", "the first comment", 0));
    }
  }
  return problems;
}

/** The problems that are the post's, whatever the target: no caption, an image gone from the library or storage. */
export function postProblems(content: StoredContent, facts: ImageFacts): FitProblem[] {
  const problems: FitProblem[] = [];
  if (content.caption.trim() === "") problems.push({ field: "caption", problem: "the creation has no caption" });
  const gone = assetIdsOf(content).filter((id) => !facts.get(id)?.readable);
  if (gone.length > 0) {
    problems.push({
      field: "images",
      problem: `${gone.length === 1 ? "one of the post's images is" : `${gone.length} of the post's images are`} no longer in the library or its file is missing`,
    });
  }
  return problems;
}
