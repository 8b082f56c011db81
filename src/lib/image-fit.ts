/**
 * Fits an image under a byte budget (e.g. Bluesky's 1,000,000-byte blob limit) with sharp.
 * One concern: orientation + size. Callers decide the budget; this never upscales.
 */
import { AppError } from "./errors.ts";
import { loadSharp } from "./sharp.ts";

/** The result: bytes that fit, their type and pixel size (after EXIF orientation). */
export interface FittedImage {
  bytes: Uint8Array;
  mimeType: string;
  width: number;
  height: number;
}

const JPEG_MIME = "image/jpeg";
/** Longest side tried first (what Bluesky and Mastodon display at most), then smaller steps. */
const MAX_SIDES = [2000, 1600, 1280, 1024, 800, 640, 480, 320];
/** Qualities tried at each size before shrinking further: few steps keep the worst case fast. */
const QUALITIES = [82, 70, 58];
/** EXIF orientations 5–8 rotate by 90°, swapping width and height. */
const SWAPS_SIDES = new Set([5, 6, 7, 8]);
/** Formats we re-encode in their own format when only the orientation needs fixing. */
const KEEP_FORMATS: Record<string, string> = { jpeg: JPEG_MIME, png: "image/png", webp: "image/webp" };

/**
 * Returns `bytes` unchanged when they are already under `maxBytes` and upright; otherwise applies the EXIF
 * orientation and, if still too big, re-encodes as JPEG with decreasing quality, then size, until it fits.
 * Throws AppError `unsupported_type` when the bytes are not a decodable image and `image_too_large`
 * when even the smallest step does not fit.
 */
export async function fitImageUnderBytes(bytes: Uint8Array, mimeType: string, maxBytes: number): Promise<FittedImage> {
  const sharp = loadSharp();
  let meta;
  try {
    meta = await sharp(bytes).metadata();
  } catch (err) {
    throw new AppError("unsupported_type", `Not a decodable image (${mimeType}): ${(err as Error).message}`);
  }
  const orientation = meta.orientation ?? 1;
  const rawW = meta.width ?? 0;
  const rawH = meta.height ?? 0;
  const [width, height] = SWAPS_SIDES.has(orientation) ? [rawH, rawW] : [rawW, rawH];

  if (bytes.byteLength <= maxBytes && orientation === 1) {
    return { bytes, mimeType, width, height };
  }

  // Upright but too big, or small but rotated: first try the same format with orientation applied.
  const sameFormat = meta.format ? KEEP_FORMATS[meta.format] : undefined;
  if (orientation !== 1 && sameFormat && bytes.byteLength <= maxBytes) {
    const { data, info } = await sharp(bytes).rotate().toFormat(meta.format as "jpeg").toBuffer({ resolveWithObject: true });
    if (data.byteLength <= maxBytes) {
      return { bytes: new Uint8Array(data), mimeType: sameFormat, width: info.width, height: info.height };
    }
  }

  const longest = Math.max(width, height);
  const sides = MAX_SIDES.filter((s) => s < longest);
  // Try the original size only when it is already modest; a 12 MP photo never fits at good quality.
  if (longest <= MAX_SIDES[0]!) sides.unshift(longest);
  for (const side of sides) {
    for (const quality of QUALITIES) {
      const { data, info } = await sharp(bytes)
        .rotate()
        .resize({ width: side, height: side, fit: "inside", withoutEnlargement: true })
        .flatten({ background: "#ffffff" }) // JPEG has no alpha: composite on white, not black
        .jpeg({ quality })
        .toBuffer({ resolveWithObject: true });
      if (data.byteLength <= maxBytes) {
        return { bytes: new Uint8Array(data), mimeType: JPEG_MIME, width: info.width, height: info.height };
      }
    }
  }
  throw new AppError("image_too_large", `Could not fit the image under ${maxBytes} bytes.`);
}
