/**
 * Plain text from a fragment of HTML (a feed item's description or content): tags dropped, block ends and <br> kept
 * as line breaks, character references decoded, runs of blanks folded. For reading text, never for sanitising markup
 * that is shown again (the result is text: every page escapes it).
 */

const NAMED: Readonly<Record<string, string>> = {
  amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–",
  lsquo: "‘", rsquo: "’", ldquo: "“", rdquo: "”", laquo: "«", raquo: "»", copy: "©", reg: "®", trade: "™",
  middot: "·", bull: "•", euro: "€", pound: "£", eacute: "é", egrave: "è", agrave: "à", uuml: "ü", ouml: "ö",
  auml: "ä", szlig: "ß", ccedil: "ç",
};

/** Decodes numeric (`&#8217;`, `&#x2019;`) and common named (`&amp;`, `&hellip;`) character references. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      // NUL, surrogates and out-of-range points are not text.
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
      return String.fromCodePoint(code);
    }
    return NAMED[ref] ?? NAMED[ref.toLowerCase()] ?? whole;
  });
}

/** The text of an HTML fragment, paragraphs as blank-line-separated lines. */
export function htmlToText(html: string): string {
  const text = html
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<(script|style|template|noscript)\b[\s\S]*?<\/\1\s*>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/li\s*>/gi, "\n")
    .replace(/<\/(p|div|h[1-6]|ul|ol|blockquote|pre|figure|figcaption|tr|section|article)\s*>/gi, "\n\n")
    .replace(/<li\b[^>]*>/gi, "• ")
    .replace(/<[^>]*>/g, "");
  return decodeEntities(text)
    .replace(/\u00a0/g, " ")
    .replace(/[ \t\f\v]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The `src` of the first `<img>` in an HTML fragment, decoded, or null. */
export function firstImageSrc(html: string): string | null {
  const match = /<img\b[^>]*?\ssrc\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(html);
  if (!match) return null;
  const value = decodeEntities(match[2] ?? match[3] ?? match[4] ?? "").trim();
  return value === "" ? null : value;
}
