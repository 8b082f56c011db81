/**
 * The kind-1 notes of one post (NIP-01), built so that the same post always gives the same events:
 * - `created_at` is the post's scheduled time (in seconds) plus the part's index, so a resend after a crash signs the
 *   same id (an event's id is the hash of pubkey, created_at, kind, tags and content), which a relay stores once;
 * - images are URLs in the content, each on its own line after the text, with a NIP-92 `imeta` tag (`url`, `m`,
 *   `x`, `dim`, `alt`);
 * - thread parts are replies per NIP-10 (marked `e` tags): every part names the post as `root`; a part after the
 *   first also names the part before it as `reply`; each carries a `p` tag with the author's pubkey.
 */
import type { Event } from "nostr-tools/core";
import { finalizeEvent } from "nostr-tools/pure";
import type { UploadedImage } from "./blossom";

/** Kind of a short text note (NIP-01). */
export const NOTE_KIND = 1;

/** One part to sign: its text and its uploaded images. */
export interface NotePart {
  caption: string;
  images: UploadedImage[];
}

/** The `created_at` of part `index` (0 = the post) of a post scheduled at `scheduledTimeMs`. */
export function partCreatedAt(scheduledTimeMs: number, index: number): number {
  return Math.floor(scheduledTimeMs / 1000) + index;
}

/** The note's text: the caption, then each image URL on its own line (clients show them inline). */
function contentOf(part: NotePart): string {
  const urls = part.images.map((i) => i.url);
  if (urls.length === 0) return part.caption;
  return part.caption === "" ? urls.join("\n") : `${part.caption}\n\n${urls.join("\n")}`;
}

/** A NIP-92 `imeta` tag for one image. */
export function imetaTag(image: UploadedImage): string[] {
  const tag = ["imeta", `url ${image.url}`, `m ${image.mimeType}`, `x ${image.sha256}`, `dim ${image.width}x${image.height}`];
  if (image.altText) tag.push(`alt ${image.altText.replace(/\s+/g, " ").trim()}`);
  return tag;
}

/**
 * Signs the parts not out yet, in order: parts before `outIds.length` are out already under those ids (replies name
 * them); the others are signed, each naming the post as `root` and, after the first reply, the part before it as
 * `reply` (a first comment, `replyToRoot`, answers the post itself). `relayHint` goes into the `e` tags (the first
 * relay the connection lists). Answers each signed part with its index.
 */
export function signNotes(
  secret: Uint8Array,
  pubkey: string,
  scheduledTimeMs: number,
  parts: readonly (NotePart & { replyToRoot?: boolean })[],
  relayHint: string,
  outIds: readonly string[] = [],
): Array<{ index: number; event: Event }> {
  const ids = [...outIds];
  const signed: Array<{ index: number; event: Event }> = [];
  for (let index = outIds.length; index < parts.length; index++) {
    const part = parts[index] as NotePart & { replyToRoot?: boolean };
    const tags: string[][] = [];
    if (index > 0) {
      const root = ids[0] as string;
      const parent = part.replyToRoot ? root : (ids[index - 1] as string);
      tags.push(["e", root, relayHint, "root", pubkey]);
      if (parent !== root) tags.push(["e", parent, relayHint, "reply", pubkey]);
      tags.push(["p", pubkey]);
    }
    for (const image of part.images) tags.push(imetaTag(image));
    const event = finalizeEvent({ kind: NOTE_KIND, created_at: partCreatedAt(scheduledTimeMs, index), tags, content: contentOf(part) }, secret);
    ids.push(event.id);
    signed.push({ index, event });
  }
  return signed;
}
