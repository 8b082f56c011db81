/**
 * Text helpers shared by the caption writer and the card renderer: sentences, graphemes, emoji and
 * banned-word removal. Pure functions, no state.
 */

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const sentenceSegmenter = new Intl.Segmenter("en", { granularity: "sentence" });

/** An emoji or pictograph plus its joiners/variation selectors/skin tones. */
const EMOJI_RE = /(?:\p{Extended_Pictographic}|\p{Regional_Indicator})(?:\u{FE0F}|\u{200D}|\p{Emoji_Modifier}|\p{Extended_Pictographic})*/gu;
const ELLIPSIS = "…";
/** Letters, marks and digits: what counts as "inside a word" for whole-word matching. */
const WORD_CHAR = "[\\p{L}\\p{M}\\p{N}_]";

/** Number of user-perceived characters (what Bluesky counts). */
export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of graphemeSegmenter.segment(text)) n++;
  return n;
}

/** Collapses runs of whitespace inside a line and trims. */
export function tidy(text: string): string {
  return text
    .replace(/[ \t\u00A0]+/g, " ")
    .replace(/ +([,.;:!?…])/g, "$1")
    .replace(/([,;:])(?=[,.;:!?])/g, "")
    .replace(/ *\n */g, "\n")
    .trim();
}

/**
 * Abbreviations after which the segmenter ends a sentence that goes on ("Tel. +49 30 1234567", "Dr. Jones", "No. 5"):
 * such a piece is joined to the next one.
 */
const ABBREVIATION_END = /(?:^|[\s(])(?:Tel|Tél|Ph|Fax|Mob|No|Nr|St|Dr|Mr|Mrs|Ms|Prof|approx|ca|incl|excl|e\.g|i\.e|vs|etc|Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.$/i;

/** Splits prose into trimmed sentences (Intl.Segmenter), dropping empty ones; line breaks also end sentences. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const para of text.split(/\n+/)) {
    let pending = "";
    for (const { segment } of sentenceSegmenter.segment(para)) {
      const s = tidy(pending ? `${pending} ${segment}` : segment);
      if (s.length === 0) continue;
      if (ABBREVIATION_END.test(s)) {
        pending = s;
        continue;
      }
      pending = "";
      out.push(s);
    }
    if (pending) out.push(pending);
  }
  return out;
}

/** Removes emoji and pictographs, then tidies spacing. */
export function stripEmoji(text: string): string {
  return tidy(text.replace(EMOJI_RE, ""));
}

/** Counts emoji clusters. */
export function emojiCount(text: string): number {
  return text.match(EMOJI_RE)?.length ?? 0;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A regex matching any banned word/phrase as a whole word, case-insensitively; null when none. */
export function bannedWordsRegExp(banned: readonly string[]): RegExp | null {
  const words = banned.map((w) => w.trim()).filter((w) => w.length > 0);
  if (words.length === 0) return null;
  // Longest first so a phrase wins over a word inside it.
  const alternatives = words.sort((a, b) => b.length - a.length).map((w) => escapeRegExp(w).replace(/\s+/g, "\\s+"));
  return new RegExp(`(?<!${WORD_CHAR})(?:${alternatives.join("|")})(?!${WORD_CHAR})`, "giu");
}

/**
 * Removes every whole-word occurrence of the banned words (case-insensitive) and repairs the spacing and
 * punctuation left behind. Repeats until stable, because removal can bring new neighbours together.
 */
export function removeBannedWords(text: string, banned: readonly string[]): string {
  const re = bannedWordsRegExp(banned);
  if (!re) return text;
  let current = text;
  for (let i = 0; i < 10; i++) {
    const next = current
      .split("\n")
      .map((line) => {
        re.lastIndex = 0;
        if (!re.test(line)) return line;
        re.lastIndex = 0;
        // Only lines that lost a word need repair (a dangling leading comma, empty brackets).
        const repaired = tidy(line.replace(re, "").replace(/\(\s*\)/g, "")).replace(/^[,;:]\s*/, "");
        // "Quick tip: …" minus "quick" must still start with a capital.
        return /^\p{Ll}/u.test(repaired) && /^\p{Lu}/u.test(line) ? repaired[0]!.toUpperCase() + repaired.slice(1) : repaired;
      })
      .join("\n");
    if (next === current) break;
    current = next;
  }
  return current;
}

/** True when the text contains a banned word as a whole word. */
export function containsBannedWord(text: string, banned: readonly string[]): boolean {
  const re = bannedWordsRegExp(banned);
  return re ? re.test(text) : false; // fresh regex per call, so the global flag's lastIndex is 0
}

/**
 * Cuts text to at most `max` graphemes: at the last sentence end if that keeps most of it, else at a word
 * boundary followed by an ellipsis. Returns text unchanged when it fits.
 */
export function truncateGraphemes(text: string, max: number): string {
  if (graphemeCount(text) <= max) return text;
  if (max <= 0) return "";
  const graphemes = Array.from(graphemeSegmenter.segment(text), (s) => s.segment);
  const head = graphemes.slice(0, max).join("");
  const sentenceEnd = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "));
  if (sentenceEnd >= head.length * 0.6) return head.slice(0, sentenceEnd + 1);
  const room = graphemes.slice(0, Math.max(0, max - 1)).join("");
  const space = room.lastIndexOf(" ");
  const cut = space >= room.length * 0.5 ? room.slice(0, space) : room;
  return cut.replace(/[\s,;:–—-]+$/u, "") + ELLIPSIS;
}

/** Lower-case words of 4+ letters, for keyword overlap. */
export function keywords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]{4,}/gu) ?? [];
  return new Set(words.filter((w) => !STOP_WORDS.has(w)));
}

const STOP_WORDS = new Set([
  "this", "that", "with", "from", "have", "your", "will", "what", "when", "where", "which", "about", "their",
  "there", "they", "them", "then", "than", "into", "just", "more", "some", "also", "been", "were", "here",
]);
