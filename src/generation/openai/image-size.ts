/**
 * Maps Seedcast's aspect ratios to a size the images API accepts, and fits the answer to the exact ratio.
 * Images APIs only offer a few sizes per model; we ask for the closest one and crop to the exact ratio after.
 */

// sharp through the loader that also works inside the compiled binary (images.md).
import { loadSharp } from "../../lib/sharp.ts";
import { ASPECT_RATIOS, type AspectRatio } from "../generator.ts";

/** Sizes per model family, as documented by OpenAI. Unknown models get the gpt-image sizes. */
const SIZES_BY_FAMILY: Array<{ prefix: string; sizes: string[] }> = [
  { prefix: "dall-e-2", sizes: ["1024x1024"] },
  { prefix: "dall-e-3", sizes: ["1024x1024", "1792x1024", "1024x1792"] },
];
const DEFAULT_SIZES = ["1024x1024", "1536x1024", "1024x1536"];

export type ImageMime = "image/png" | "image/jpeg" | "image/webp";

/** The supported size whose ratio is closest to the aspect ratio's. */
export function apiSizeFor(model: string, aspect: AspectRatio): string {
  const sizes = SIZES_BY_FAMILY.find((f) => model.startsWith(f.prefix))?.sizes ?? DEFAULT_SIZES;
  const target = Math.log(ASPECT_RATIOS[aspect].width / ASPECT_RATIOS[aspect].height);
  let best = sizes[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const size of sizes) {
    const [w, h] = size.split("x").map(Number) as [number, number];
    const distance = Math.abs(Math.log(w / h) - target);
    if (distance < bestDistance) {
      best = size;
      bestDistance = distance;
    }
  }
  return best;
}

/** Whether the model takes `response_format` (dall-e models do; gpt-image models refuse it and always send base64). */
export function wantsResponseFormat(model: string): boolean {
  return model.startsWith("dall-e");
}

/**
 * Crops and scales the model's image to the exact pixel size of the aspect ratio, keeping its format
 * (PNG, JPEG or WebP; anything else becomes PNG). Throws if the bytes are not an image.
 */
export async function fitToAspect(bytes: Uint8Array, aspect: AspectRatio): Promise<{ bytes: Uint8Array; mimeType: ImageMime; width: number; height: number }> {
  const { width, height } = ASPECT_RATIOS[aspect];
  const sharp = loadSharp();
  const meta = await sharp(bytes).metadata();
  const pipeline = sharp(bytes).rotate().resize(width, height, { fit: "cover", position: "attention" });
  const format = meta.format === "jpeg" || meta.format === "webp" ? meta.format : "png";
  const out = await pipeline.toFormat(format).toBuffer();
  const mimeType: ImageMime = format === "jpeg" ? "image/jpeg" : format === "webp" ? "image/webp" : "image/png";
  return { bytes: new Uint8Array(out), mimeType, width, height };
}

/** A small JPEG data: URL of an image, for vision requests (keeps the request small). */
export async function visionDataUrl(bytes: Uint8Array, maxSide = 768): Promise<string> {
  const sharp = loadSharp();
  const jpeg = await sharp(bytes).rotate().resize(maxSide, maxSide, { fit: "inside", withoutEnlargement: true }).flatten({ background: "#ffffff" }).jpeg({ quality: 80 }).toBuffer();
  return `data:image/jpeg;base64,${jpeg.toString("base64")}`;
}
