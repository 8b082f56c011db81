/**
 * The one interface every content generator implements (builtin, openai). Chosen by `GENERATOR` config.
 * A generator never touches the database, credits or storage: it turns inputs into text and image bytes.
 * Any failure is thrown as `GenerationError`; callers turn it into 502 `generation_failed`.
 */

export const ASPECT_RATIOS = {
  square: { width: 1080, height: 1080 },
  portrait: { width: 1080, height: 1350 },
  landscape: { width: 1200, height: 628 },
  story: { width: 1080, height: 1920 },
} as const;
export type AspectRatio = keyof typeof ASPECT_RATIOS;
export const DEFAULT_ASPECT_RATIO: AspectRatio = "square";

export const MEDIA_STYLES = ["photorealistic", "illustration", "minimal", "bold", "editorial"] as const;
export type MediaStyle = (typeof MEDIA_STYLES)[number];
export const DEFAULT_MEDIA_STYLE: MediaStyle = "minimal";

export const EMOJI_LEVELS = ["none", "some", "lots"] as const;
export type EmojiLevel = (typeof EMOJI_LEVELS)[number];

/** The account's brand voice (decisions.md §6). Every generator honours it. */
export interface BrandVoice {
  tone: string;
  audience: string;
  language: string;
  emoji: EmojiLevel;
  hashtags: string[];
  bannedWords: string[];
  signature: string;
}

/** The voice an account has before anyone edits it. */
export const DEFAULT_VOICE: BrandVoice = {
  tone: "friendly",
  audience: "",
  language: "en",
  emoji: "some",
  hashtags: [],
  bannedWords: [],
  signature: "",
};

/** What a generator knows of the seed. */
export interface SeedText {
  title: string;
  content: string;
  category: string | null;
}

export interface CaptionRequest {
  seed: SeedText;
  voice: BrandVoice;
  /** Hard limit in graphemes (Intl.Segmenter); the result must fit. */
  maxGraphemes: number;
  /** On regenerate: the caption being replaced. The new one must differ from it. */
  previousCaption?: string;
  /** Free text such as "shorter", "more formal", "add a question", "no emoji". */
  changeInstructions?: string;
  /** Increases on every regenerate of the same creation; a deterministic generator uses it to vary. */
  variant: number;
}

export interface ImageRequest {
  seed: SeedText;
  voice: BrandVoice;
  aspectRatio: AspectRatio;
  mediaStyle: MediaStyle;
  /** The caption the image goes with, when known. */
  caption?: string;
  /** On regenerate: SHA-256 hex of the image being replaced. The new bytes must differ. */
  previousImageSha256?: string;
  changeInstructions?: string;
  variant: number;
}

export interface GeneratedImage {
  bytes: Uint8Array;
  mimeType: "image/png" | "image/jpeg" | "image/webp";
  width: number;
  height: number;
  /** Alt text that says what the image shows. */
  altText: string;
}

export interface DescribeRequest {
  bytes: Uint8Array;
  mimeType: string;
  seed: SeedText;
  voice: BrandVoice;
}

export interface Generator {
  readonly name: string;
  /** Writes a caption that fits `maxGraphemes`, contains no banned word, and differs from `previousCaption`. */
  writeCaption(req: CaptionRequest, signal?: AbortSignal): Promise<string>;
  /** Produces an image for the seed in the given ratio and style, with its alt text. */
  renderImage(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage>;
  /** Writes alt text for an existing library image. */
  describeImage(req: DescribeRequest, signal?: AbortSignal): Promise<string>;
}

/** Thrown by generators for any failure; rendered as 502 generation_failed, retryable. */
export class GenerationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "GenerationError";
  }
}
