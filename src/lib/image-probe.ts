/**
 * What an image is and how big, read from its first bytes without decoding a pixel (decisions.md §4:
 * "dimensions read from the header before anything is decoded"). The type comes from content only, never
 * from a name or a Content-Type; SVG and everything else that is not PNG, JPEG, GIF or WebP is refused.
 */

export const DEFAULT_MAX_PIXELS = 40_000_000;
/**
 * Decoded bytes per pixel the pixel limit is sized for: 8-bit RGBA. The decoded size (width × height × channels ×
 * bytes per sample) may not exceed `maxPixels × BUDGET_BYTES_PER_PIXEL`, so a 16-bit RGBA PNG (8 bytes a pixel) is
 * held to half the pixels: a 6,300 × 6,300 one is 318 MB decoded, over the 160 MB a 40-megapixel RGBA image takes.
 */
export const BUDGET_BYTES_PER_PIXEL = 4;

/** The four accepted types and the extension each is stored with. */
export const IMAGE_TYPES = {
  png: { mimeType: "image/png", ext: "png" },
  jpeg: { mimeType: "image/jpeg", ext: "jpg" },
  gif: { mimeType: "image/gif", ext: "gif" },
  webp: { mimeType: "image/webp", ext: "webp" },
} as const;

type ImageKind = keyof typeof IMAGE_TYPES;
export type ImageMimeType = (typeof IMAGE_TYPES)[ImageKind]["mimeType"];
export type ImageExt = (typeof IMAGE_TYPES)[ImageKind]["ext"];

/** A probed image. */
export interface ImageProbe {
  mimeType: ImageMimeType;
  ext: ImageExt;
  width: number;
  height: number;
}

/** Refusal reasons; each is the ErrorCode of decisions.md §4, so `new AppError(e.reason, e.message)` maps it. */
export type ProbeReason = "unsupported_type" | "image_dimensions_too_large" | "empty_body";

/** Thrown when bytes are not an accepted image, or one too large to decode. */
export class ProbeError extends Error {
  readonly reason: ProbeReason;

  constructor(reason: ProbeReason, message: string) {
    super(message);
    this.name = "ProbeError";
    this.reason = reason;
  }
}

type FileTypeFromBuffer = typeof import("file-type").fileTypeFromBuffer;
let fileTypeModule: Promise<FileTypeFromBuffer> | null = null;

/** file-type pulls in `debug` (~60 ms to evaluate); it loads on the first probe, not at every start of the binary. */
function loadFileType(): Promise<FileTypeFromBuffer> {
  fileTypeModule ??= import("file-type").then((m) => m.fileTypeFromBuffer);
  return fileTypeModule;
}

/** file-type's MIME answers that count as each accepted kind (an animated PNG is still a PNG file). */
const FILE_TYPE_KINDS: Readonly<Record<string, ImageKind>> = {
  "image/png": "png",
  "image/apng": "png",
  "image/jpeg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  return prefix.every((b, i) => bytes[at + i] === b);
}

/** Magic bytes, for the synchronous streaming probe (file-type is the authority in probeImage). */
function sniffKind(bytes: Uint8Array): ImageKind | null {
  if (startsWith(bytes, PNG_SIGNATURE)) return "png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "jpeg";
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "gif";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "webp";
  return null;
}

/** The longest prefix the signature check needs; below it, a prefix of a valid signature may be incomplete. */
const SNIFF_BYTES = 12;

/** A prefix of bytes could still become one of the signatures once more arrive. */
function couldBecomeImage(bytes: Uint8Array): boolean {
  const candidates = [PNG_SIGNATURE, [0xff, 0xd8, 0xff], ascii("GIF87a"), ascii("GIF89a"), ascii("RIFF")];
  return candidates.some((sig) => sig.slice(0, bytes.length).every((b, i) => bytes[i] === b));
}

/** What decoding the image costs per pixel: channels × bytes per sample, as the decoder will hold it. */
type Dimensions = { width: number; height: number; bytesPerPixel: number };
/** null: the header is not complete in these bytes. */
type DimensionResult = Dimensions | null;

const u16be = (b: Uint8Array, i: number): number => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
const u16le = (b: Uint8Array, i: number): number => (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, i: number): number => u16le(b, i) | ((b[i + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, i: number): number => u16be(b, i) * 0x10000 + u16be(b, i + 2);

/** PNG colour type → channels once decoded (a palette expands to RGBA in the worst case). */
const PNG_CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 4, 4: 2, 6: 4 };

function pngDimensions(b: Uint8Array): DimensionResult {
  // Signature (8), IHDR length (4), "IHDR" (4), width (4), height (4), bit depth (1), colour type (1): IHDR first.
  if (b.length < 26) return null;
  if (!startsWith(b, ascii("IHDR"), 12)) throw new ProbeError("unsupported_type", "The PNG has no IHDR header.");
  const depth = b[24] ?? 0;
  const channels = PNG_CHANNELS[b[25] ?? -1];
  if (channels === undefined || ![1, 2, 4, 8, 16].includes(depth)) {
    throw new ProbeError("unsupported_type", "The PNG header declares an unknown bit depth or colour type.");
  }
  // Palette entries are 8-bit whatever the index depth; samples below 8 bits decode to a byte each.
  return { width: u32be(b, 16), height: u32be(b, 20), bytesPerPixel: channels * (depth === 16 ? 2 : 1) };
}

function gifDimensions(b: Uint8Array): DimensionResult {
  // Decoded as 8-bit RGBA.
  return b.length < 10 ? null : { width: u16le(b, 6), height: u16le(b, 8), bytesPerPixel: 4 };
}

/** Start-of-frame markers: C0–CF except DHT (C4), JPG (C8) and DAC (CC). */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegDimensions(b: Uint8Array): DimensionResult {
  let i = 2; // after SOI
  for (;;) {
    if (i >= b.length) return null;
    if (b[i] !== 0xff) throw new ProbeError("unsupported_type", "The JPEG has a malformed marker.");
    while (b[i] === 0xff) i++; // fill bytes
    if (i >= b.length) return null;
    const marker = b[i] ?? 0;
    i++;
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no length
    if (marker === 0xd9 || marker === 0xda) {
      throw new ProbeError("unsupported_type", "The JPEG has no frame header before its image data.");
    }
    if (i + 2 > b.length) return null;
    const length = u16be(b, i);
    if (length < 2) throw new ProbeError("unsupported_type", "The JPEG has a malformed segment.");
    if (isStartOfFrame(marker)) {
      // length (2), sample precision (1), height (2), width (2), components (1)
      if (i + 8 > b.length) return null;
      const precision = b[i + 2] ?? 8;
      const components = Math.max(1, b[i + 7] ?? 1);
      return { height: u16be(b, i + 3), width: u16be(b, i + 5), bytesPerPixel: components * (precision > 8 ? 2 : 1) };
    }
    i += length;
  }
}

function webpDimensions(b: Uint8Array): DimensionResult {
  if (b.length < 30) return null;
  // WebP decodes to 8-bit RGB or RGBA: counted as RGBA.
  if (startsWith(b, ascii("VP8X"), 12)) {
    return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1, bytesPerPixel: 4 };
  }
  if (startsWith(b, ascii("VP8 "), 12)) {
    if (!startsWith(b, [0x9d, 0x01, 0x2a], 23)) throw new ProbeError("unsupported_type", "The WebP (VP8) frame is malformed.");
    return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff, bytesPerPixel: 4 };
  }
  if (startsWith(b, ascii("VP8L"), 12)) {
    if (b[20] !== 0x2f) throw new ProbeError("unsupported_type", "The WebP (VP8L) header is malformed.");
    const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, bytesPerPixel: 4 };
  }
  throw new ProbeError("unsupported_type", "The WebP has no VP8, VP8L or VP8X chunk first.");
}

const DIMENSION_READERS: Readonly<Record<ImageKind, (b: Uint8Array) => DimensionResult>> = {
  png: pngDimensions,
  gif: gifDimensions,
  jpeg: jpegDimensions,
  webp: webpDimensions,
};

function finish(kind: ImageKind, dims: Dimensions, maxPixels: number): ImageProbe {
  if (dims.width < 1 || dims.height < 1) {
    throw new ProbeError("unsupported_type", "The image header declares no width or height.");
  }
  if (dims.width * dims.height > maxPixels) {
    throw new ProbeError(
      "image_dimensions_too_large",
      `The image is ${dims.width}×${dims.height}, over the ${maxPixels}-pixel limit.`,
    );
  }
  const decoded = dims.width * dims.height * dims.bytesPerPixel;
  const budget = maxPixels * BUDGET_BYTES_PER_PIXEL;
  if (decoded > budget) {
    throw new ProbeError(
      "image_dimensions_too_large",
      `The image is ${dims.width}×${dims.height} at ${dims.bytesPerPixel} bytes a pixel: ${Math.ceil(decoded / 1e6)} MB decoded, over the ${budget / 1e6} MB limit.`,
    );
  }
  return { ...IMAGE_TYPES[kind], width: dims.width, height: dims.height };
}

/** The result of probing a prefix of a body that is still arriving. */
export type HeaderProbe = { status: "ok"; probe: ImageProbe } | { status: "need_more" };

/**
 * Probes the first bytes of a body while it streams: `need_more` until the header is complete, then the
 * type and dimensions, so an unsupported or oversized image can be refused before the rest is downloaded.
 * Throws ProbeError as soon as the prefix rules the body out. NB: this checks signatures itself;
 * `probeImage` on the full body remains the authority (it also consults file-type).
 */
export function probeImageHeader(prefix: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS): HeaderProbe {
  if (prefix.length === 0) return { status: "need_more" };
  const kind = sniffKind(prefix);
  if (kind === null) {
    if (prefix.length < SNIFF_BYTES && couldBecomeImage(prefix)) return { status: "need_more" };
    throw new ProbeError("unsupported_type", "The content is not a PNG, JPEG, GIF or WebP image.");
  }
  const dims = DIMENSION_READERS[kind](prefix);
  return dims === null ? { status: "need_more" } : { status: "ok", probe: finish(kind, dims, maxPixels) };
}

/**
 * Identifies a complete body as PNG, JPEG, GIF or WebP by its content and reads its dimensions from the
 * header. Throws ProbeError: empty_body, unsupported_type (anything else, SVG included, or a truncated
 * header), image_dimensions_too_large (over `maxPixels`, 40 megapixels by default).
 */
export async function probeImage(bytes: Uint8Array, maxPixels = DEFAULT_MAX_PIXELS): Promise<ImageProbe> {
  if (bytes.length === 0) throw new ProbeError("empty_body", "The body is empty.");
  const detected = await (await loadFileType())(bytes);
  const kind = detected ? FILE_TYPE_KINDS[detected.mime] : undefined;
  if (kind === undefined || sniffKind(bytes) !== kind) {
    throw new ProbeError("unsupported_type", "The content is not a PNG, JPEG, GIF or WebP image.");
  }
  const dims = DIMENSION_READERS[kind](bytes);
  if (dims === null) throw new ProbeError("unsupported_type", "The image header is truncated.");
  return finish(kind, dims, maxPixels);
}
