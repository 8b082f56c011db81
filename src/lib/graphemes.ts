/** Counting text the way people see it: user-perceived characters (grapheme clusters, Intl.Segmenter). */

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Length in user-perceived characters, the unit of every caption limit. */
export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of graphemes.segment(text)) n += 1;
  return n;
}

/** The first `max` user-perceived characters of `text` (all of it when shorter). */
export function firstGraphemes(text: string, max: number): string {
  let out = "";
  let n = 0;
  for (const { segment } of graphemes.segment(text)) {
    if (n === max) break;
    out += segment;
    n += 1;
  }
  return out;
}
