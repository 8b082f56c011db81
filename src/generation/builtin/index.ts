/**
 * The `builtin` generator (decisions.md §6): offline, no model. Captions are extractive and shaped by
 * category and brand voice; images are designed text cards rendered to PNG. Deterministic per variant.
 */
import { createHash } from "node:crypto";
import { GenerationError, type Generator, type GeneratedImage, type ImageRequest } from "../generator.ts";
import { writeCaption } from "./caption.ts";
import { designCard } from "./card.ts";
import { describeImageBytes } from "./describe.ts";
import { MAX_CARD_BYTES, rasterizeCard } from "./rasterize.ts";

/** The builtin generator's name (creations record it as who wrote a caption). */
export const BUILTIN_GENERATOR_NAME = "builtin";
const NAME = BUILTIN_GENERATOR_NAME;
const PNG = "image/png";
/** Variants to try when one renders the exact bytes being replaced. */
const MAX_IMAGE_TRIES = 8;

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new GenerationError("generation aborted", { cause: signal.reason });
}

/** Wraps any failure as GenerationError (→ 502 generation_failed), keeping the cause. */
async function guarded<T>(what: string, fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof GenerationError) throw err;
    throw new GenerationError(`builtin ${what} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
}

async function renderCard(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage> {
  for (let k = 0; k < MAX_IMAGE_TRIES; k++) {
    throwIfAborted(signal);
    const design = designCard({ seed: req.seed, voice: req.voice, aspectRatio: req.aspectRatio, mediaStyle: req.mediaStyle, variant: Math.max(0, Math.floor(req.variant)) + k });
    const bytes = await rasterizeCard(design);
    if (bytes.byteLength > MAX_CARD_BYTES) throw new GenerationError(`card is ${bytes.byteLength} bytes, over ${MAX_CARD_BYTES}`);
    if (req.previousImageSha256 && sha256Hex(bytes) === req.previousImageSha256.toLowerCase()) continue;
    return { bytes, mimeType: PNG, width: design.width, height: design.height, altText: design.altText };
  }
  throw new GenerationError("could not render a card different from the previous one");
}

/** Creates the offline generator. Fonts and sharp load lazily on first image. */
export function createBuiltinGenerator(): Generator {
  return {
    name: NAME,
    writeCaption: (req, signal) =>
      guarded("caption", () => {
        throwIfAborted(signal);
        return writeCaption(req);
      }),
    renderImage: (req, signal) => guarded("image", () => renderCard(req, signal)),
    describeImage: (req, signal) =>
      guarded("describe", () => {
        throwIfAborted(signal);
        return describeImageBytes(req);
      }),
  };
}
