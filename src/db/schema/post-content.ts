/**
 * The shape of a post as people write it (decisions.md §13), as stored in JSON columns of `creations` and
 * `scheduled_posts`: the images after the first caption, the thread's follow-up parts, the first comment, and a
 * version per network. Stored camelCase; the API's requests are snake_case and its answers camelCase.
 *
 * NB: `images` holds every image in order, the first included; the older columns `image_asset_id` and `alt_text`
 * mirror `images[0]` (interface.md's `body.imageUrl`/`body.altText`, thumbnails, asset-in-use checks), and are kept
 * in step by every writer.
 */

/** One image of a post or thread part: an owned library asset (immutable) and its own alt text. */
export interface StoredImage {
  assetId: string;
  altText: string | null;
}

/** One follow-up part of a thread. */
export interface StoredPart {
  caption: string;
  images: StoredImage[];
}

/** A network's own version: a field it sets replaces the post's for that network's targets. */
export interface StoredVariant {
  caption?: string;
  images?: StoredImage[];
  /** `[]` clears the thread for that network. */
  thread?: StoredPart[];
  /** `""` clears the first comment for that network. */
  firstComment?: string;
}

/** Versions by platform name (`x`, `bluesky`, …). */
export type StoredVariants = Record<string, StoredVariant>;

/** At most this many images per post or thread part. */
export const MAX_IMAGES = 10;
/** At most this many follow-up parts. */
export const MAX_THREAD_PARTS = 24;

/**
 * The content of a creation version beyond its caption, alt text and first image (creation_versions.content): every
 * image, the thread, the first comment and the versions per network. Null on versions kept before these existed.
 */
export interface StoredVersionContent {
  images: StoredImage[];
  thread: StoredPart[];
  firstComment: string | null;
  variants: StoredVariants;
}
