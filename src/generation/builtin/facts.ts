/**
 * The facts a seed states that a caption must never drop (decisions.md §15): times, dates, prices, addresses, phone
 * numbers and links. The caption writer keeps every sentence that states one, and when room runs out it shortens such
 * a sentence to the clauses that carry its facts before it gives any of them up. Pure functions, no state.
 */

const MONTH = "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)";
const WEEKDAY = "(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:rs(?:day)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)";
const DAY = "\\d{1,2}(?:st|nd|rd|th)?";
const CLOCK = "\\d{1,2}(?:[:.]\\d{2})\\s?(?:[ap]\\.?m\\.?)?|\\d{1,2}\\s?[ap]\\.?m\\.?";
const RANGE = "\\s?(?:[–—-]|to|until|bis)\\s?";
const STREET_WORD =
  "(?:Street|St\\.?|Road|Rd\\.?|Avenue|Ave\\.?|Lane|Ln\\.?|Boulevard|Blvd\\.?|Way|Drive|Dr\\.?|Square|Sq\\.?|Place|Pl\\.?|Court|Ct\\.?|Terrace|Row|Parade|High Street|Market)";

/** Each kind of fact with the pattern that finds it. Order matters where two could overlap: links first. */
const FACT_PATTERNS: ReadonlyArray<{ kind: FactKind; re: RegExp }> = [
  { kind: "link", re: /\bhttps?:\/\/[^\s<>"]*[^\s<>".,;:!?)\]]|\bwww\.[^\s<>"]*[^\s<>".,;:!?)\]]/giu },
  // An email address is a way to reach the business, like a phone number.
  { kind: "phone", re: /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/gu },
  { kind: "phone", re: /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,5}\)[\s.-]?)?\d[\d\s./-]{5,}\d/gu },
  { kind: "price", re: /(?:[€$£¥]\s?\d+(?:[.,]\d{1,2})?|\b\d+(?:[.,]\d{1,2})?\s?(?:€|EUR|USD|GBP|CHF|\$|£|euros?|dollars?|pounds?)(?![\p{L}]))/giu },
  { kind: "date", re: new RegExp(`\\b${DAY}\\s+${MONTH}\\b\\.?(?:,?\\s+\\d{4})?|\\b${MONTH}\\.?\\s+${DAY}\\b(?:,?\\s+\\d{4})?|\\b\\d{4}-\\d{2}-\\d{2}\\b|\\b\\d{1,2}[./]\\d{1,2}[./](?:\\d{4}|\\d{2})\\b`, "giu") },
  { kind: "time", re: new RegExp(`(?:\\b${WEEKDAY}\\.?(?:${RANGE}${WEEKDAY}\\.?)?\\s)?(?:${CLOCK})(?:${RANGE}(?:${CLOCK}|\\d{1,2}))?`, "giu") },
  { kind: "date", re: new RegExp(`\\b${WEEKDAY}\\b\\.?(?:${RANGE}${WEEKDAY}\\b\\.?)?`, "gu") },
  {
    kind: "address",
    re: new RegExp(`\\b\\d{1,5}[a-z]?\\s+(?:[A-Z][\\p{L}'’-]*\\s+){0,3}${STREET_WORD}(?![\\p{L}])(?:,\\s*[A-Z][\\p{L}'’-]+(?:\\s[A-Z][\\p{L}'’-]+)?)?`, "gu"),
  },
  { kind: "address", re: /\b[A-ZÄÖÜ][\p{L}-]*(?:straße|strasse|str\.|weg|platz|allee|gasse|damm|ring)\s+\d+[a-z]?(?:,\s*\d{4,5}\s+[A-ZÄÖÜ][\p{L}-]+)?/gu },
];

export type FactKind = "link" | "phone" | "price" | "date" | "time" | "address";

/** A fact found in a text: its kind, its exact words, where it starts. */
export interface Fact {
  kind: FactKind;
  text: string;
  index: number;
}

function digits(text: string): number {
  return text.replace(/\D/g, "").length;
}

/** True when a digit run the phone pattern found is really a phone number (enough digits, not a date or a time). */
function looksLikePhone(text: string): boolean {
  if (text.includes("@")) return true;
  if (digits(text) < 7) return false;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text) || /^\d{1,2}[./]\d{1,2}[./]\d{2,4}$/.test(text)) return false;
  return /^[+(]/.test(text) || /\d[\s/-]\d/.test(text) || digits(text) >= 9;
}

/**
 * Every fact stated in `text`, in reading order, without overlaps (a longer find wins over one inside it: the
 * address "12 Market Street" is one fact, not a number and a street).
 */
export function findFacts(text: string): Fact[] {
  const found: Fact[] = [];
  for (const { kind, re } of FACT_PATTERNS) {
    re.lastIndex = 0;
    for (const match of text.matchAll(re)) {
      const raw = match[0].trim().replace(/[\s,;:–—-]+$/u, "");
      if (raw.length === 0) continue;
      const index = (match.index ?? 0) + match[0].indexOf(raw);
      if (kind === "phone" && !looksLikePhone(raw)) continue;
      if (kind === "time" && !/\d/.test(raw)) continue;
      const end = index + raw.length;
      const overlapping = found.filter((f) => index < f.index + f.text.length && f.index < end);
      if (overlapping.some((f) => f.text.length >= raw.length)) continue;
      for (const f of overlapping) found.splice(found.indexOf(f), 1);
      found.push({ kind, text: raw, index });
    }
  }
  return found.sort((a, b) => a.index - b.index);
}

/**
 * The sentence cut down to the clauses (between commas, semicolons and dashes set off by spaces) that carry `facts`,
 * in their order; the sentence itself when every clause carries one. Links never split.
 */
export function factClauses(sentence: string, facts: readonly Fact[]): string {
  const clauses = sentence.split(/(?<=[,;])\s+|\s+[–—]\s+/u);
  const kept = clauses.filter((clause) => facts.some((f) => clause.includes(f.text)));
  const covered = facts.every((f) => kept.join(" ").includes(f.text));
  if (!covered || kept.length === 0) return facts.map((f) => f.text).join(" · ");
  return kept.join(" ").replace(/[,;]$/u, "");
}
