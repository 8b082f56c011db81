/**
 * Unicode hygiene for text that arrives from outside: lone UTF-16 surrogates (a JSON `\uD800` escape without its
 * pair, which no UTF-8 store or client can represent faithfully) and the invisible control and format characters
 * (Unicode categories Cc and Cf: a right-to-left override U+202E turns "exe.pdf" around on screen).
 */

const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/gu;

/** `text` without Unicode control (Cc) and format (Cf) characters. */
export function withoutControlOrFormat(text: string): string {
  return text.replace(CONTROL_OR_FORMAT, "");
}

/** What `loneSurrogateField` reports: where the bad text is, and what it is. */
export interface SurrogateFinding {
  /** The dotted path of the field (`title`, `bannedWords.1`, `content.caption`); `body` for the top level. */
  field: string;
  problem: string;
}

/** The problem text of a field holding a lone surrogate. */
export const LONE_SURROGATE_PROBLEM = "must not contain a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF escape)";

/**
 * The first string in a parsed JSON value (property names included) that holds a lone UTF-16 surrogate, with its
 * dotted path; null when there is none. `prefix` names where `value` sits (empty for a whole body).
 */
export function loneSurrogateField(value: unknown, prefix = ""): SurrogateFinding | null {
  if (typeof value === "string") return value.isWellFormed() ? null : { field: prefix || "body", problem: LONE_SURROGATE_PROBLEM };
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogateField(value[i], prefix ? `${prefix}.${i}` : String(i));
      if (found) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    if (!key.isWellFormed()) return { field: prefix || "body", problem: "must not have a property name containing a lone UTF-16 surrogate" };
    const found = loneSurrogateField(child, prefix ? `${prefix}.${key}` : key);
    if (found) return found;
  }
  return null;
}

/**
 * True when JSON text may hold a lone surrogate: it has a `\uD800`-`\uDFFF` escape (raw UTF-8 cannot carry one; the
 * decoder replaces it). A cheap test before walking the parsed value.
 */
export function mayHoldLoneSurrogate(json: string): boolean {
  return json.includes("\\u") && /\\u[dD][89a-fA-F]/.test(json);
}
