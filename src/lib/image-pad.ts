/**
 * Re-encodes an image as JPEG whose aspect ratio lies within [minRatio, maxRatio] (width / height), by padding with
 * white, never cropping: Instagram takes feed images from 4:5 to 1.91:1 (decisions.md §12). The EXIF orientation is
 * applied first; the longest side is kept at most `maxSide` pixels.
 */
import { AppError } from "./errors.ts";
import { loadSharp } from "./sharp.ts";

/** The padded image. */
export interface PaddedImage {
  bytes: Uint8Array;
  width: number;
  height: number;
}

/** Pads `bytes` to an aspect ratio within [minRatio, maxRatio] and encodes JPEG. Throws AppError `unsupported_type` for undecodable bytes. */
export async function padToAspectJpeg(bytes: Uint8Array, minRatio: number, maxRatio: number, maxSide = 1440): Promise<PaddedImage> {
  const sharp = loadSharp();
  let upright: { data: Buffer; info: { width: number; height: number } };
  try {
    upright = await sharp(bytes).rotate().resize({ width: maxSide, height: maxSide, fit: "inside", withoutEnlargement: true }).toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new AppError("unsupported_type", `Not a decodable image: ${(err as Error).message}`);
  }
  const { width, height } = upright.info;
  const ratio = width / height;
  let padX = 0;
  let padY = 0;
  if (ratio < minRatio) padX = Math.ceil(height * minRatio) - width; // too tall: widen
  else if (ratio > maxRatio) padY = Math.ceil(width / maxRatio) - height; // too wide: heighten
  const left = Math.floor(padX / 2);
  const top = Math.floor(padY / 2);
  const out = await sharp(upright.data)
    .flatten({ background: "#ffffff" })
    .extend({ left, right: padX - left, top, bottom: padY - top, background: "#ffffff" })
    .jpeg({ quality: 88 })
    .toBuffer({ resolveWithObject: true });
  return { bytes: new Uint8Array(out.data), width: out.info.width, height: out.info.height };
}
