/**
 * Limits enforced on a model's caption after it answers, because a model cannot be trusted to follow them:
 * banned words removed, length cut to the grapheme limit, and a regenerated caption different from the last one.
 */

const ELLIPSIS = "…";
/** When cutting, prefer a word boundary if one lies within this share of the limit's end. */
const WORD_CUT_WINDOW = 0.3;

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Number of user-perceived characters (grapheme clusters). */
export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Removes every banned word or phrase, case-insensitively. A single banned word takes its whole token with it
 * (so "#crypto" and "cryptocurrency" go too): a caption must never contain the banned text at all.
 */
export function removeBannedWords(text: string, bannedWords: string[]): string {
  let result = text;
  for (const raw of bannedWords) {
    const banned = raw.trim();
    if (banned === "") continue;
    const pattern = /\s/.test(banned)
      ? new RegExp(escapeRegExp(banned), "giu")
      : new RegExp(`[^\\s]*${escapeRegExp(banned)}[^\\s]*`, "giu");
    result = result.replace(pattern, " ");
  }
  return tidy(result);
}

/** Collapses the spaces left by removals, keeping line breaks. */
export function tidy(text: string): string {
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t]+/g, " ").replace(/ +([,.;:!?])/g, "$1").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** Cuts `text` to at most `max` graphemes, at a word boundary when one is near, ending with an ellipsis. */
export function fitGraphemes(text: string, max: number): string {
  if (max <= 0) return "";
  const graphemes = [...segmenter.segment(text)].map((s) => s.segment);
  if (graphemes.length <= max) return text;
  if (max === 1) return ELLIPSIS;
  let cut = graphemes.slice(0, max - 1);
  const lastSpace = cut.findLastIndex((g) => /^\s+$/u.test(g));
  if (lastSpace > 0 && lastSpace >= Math.floor((max - 1) * (1 - WORD_CUT_WINDOW))) cut = cut.slice(0, lastSpace);
  return `${cut.join("").trimEnd()}${ELLIPSIS}`;
}

/** True when two captions are the same text for a reader (case, spacing and Unicode form ignored). */
export function sameCaption(a: string, b: string): boolean {
  const norm = (s: string): string => s.normalize("NFKC").toLocaleLowerCase().replace(/\s+/g, " ").trim();
  return norm(a) === norm(b);
}

/** Applies every rule; answers the caption, or null when nothing usable is left. */
export function enforceCaption(text: string, bannedWords: string[], maxGraphemes: number): string | null {
  const cleaned = fitGraphemes(removeBannedWords(tidy(text), bannedWords), maxGraphemes);
  return cleaned === "" || cleaned === ELLIPSIS ? null : cleaned;
}
