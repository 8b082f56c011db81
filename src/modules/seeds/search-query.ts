/**
 * User search text → a safe FTS5 MATCH expression. Every token is double-quoted (so no FTS syntax — AND, NEAR, column
 * filters, `*`, `^`, parentheses — can come from the user) and made a prefix query (`"launc"*` finds `launch`).
 */

/** More tokens than this are ignored: they cannot improve the match, only slow it down. */
export const MAX_SEARCH_TOKENS = 12;

/**
 * The words of `search`, or null when it holds none (the caller then lists newest first). Tokens are split on anything
 * that is not a letter, number or combining mark — as FTS5's unicode61 tokenizer does — lower-cased, deduplicated.
 */
export function searchTokens(search: string): string[] | null {
  const tokens = search.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu);
  if (!tokens || tokens.length === 0) return null;
  return [...new Set(tokens)].slice(0, MAX_SEARCH_TOKENS);
}

/** The MATCH expression requiring every token as a word prefix (implicit AND). */
export function matchExpressionOf(tokens: readonly string[]): string {
  // NB: a token holds no `"` (only letters, numbers, marks), so quoting needs no escaping.
  return tokens.map((token) => `"${token}"*`).join(" ");
}

/** The MATCH expression for `search`, or null when it holds no word. */
export function ftsMatchExpression(search: string): string | null {
  const tokens = searchTokens(search);
  return tokens ? matchExpressionOf(tokens) : null;
}
