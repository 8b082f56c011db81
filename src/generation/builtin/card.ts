/**
 * Designs a text card: picks the words (title, key line, kicker, footer), sizes the type so it fits the
 * aspect ratio, and builds satori's element tree (plain objects, no JSX) plus alt text saying what it shows.
 */
import type { AspectRatio, BrandVoice, MediaStyle, SeedText } from "../generator.ts";
import { ASPECT_RATIOS } from "../generator.ts";
import { keyLine, normalizeCategory } from "./caption.ts";
import type { Category } from "./caption-templates.ts";
import { CARD_STYLES, type Palette, type Typography } from "./styles.ts";
import { removeBannedWords, stripEmoji, truncateGraphemes } from "./text.ts";

/** A satori element: what JSX would compile to. */
export interface CardNode {
  type: string;
  props: { style?: Record<string, string | number>; children?: (CardNode | string)[] | CardNode | string };
}

export interface CardDesign {
  tree: CardNode;
  width: number;
  height: number;
  altText: string;
}

export interface CardInput {
  seed: SeedText;
  voice: BrandVoice;
  aspectRatio: AspectRatio;
  mediaStyle: MediaStyle;
  variant: number;
}

/** Type scale per ratio, as fractions of the width; lines are the most the block may wrap to. */
const LAYOUT: Record<AspectRatio, { pad: number; titleMax: number; titleMin: number; titleLines: number; bodySize: number; bodyLines: number; kicker: number }> = {
  square: { pad: 0.08, titleMax: 0.095, titleMin: 0.052, titleLines: 4, bodySize: 0.036, bodyLines: 4, kicker: 0.024 },
  portrait: { pad: 0.08, titleMax: 0.1, titleMin: 0.055, titleLines: 5, bodySize: 0.038, bodyLines: 5, kicker: 0.025 },
  landscape: { pad: 0.06, titleMax: 0.058, titleMin: 0.036, titleLines: 3, bodySize: 0.025, bodyLines: 2, kicker: 0.018 },
  story: { pad: 0.09, titleMax: 0.11, titleMin: 0.06, titleLines: 6, bodySize: 0.044, bodyLines: 6, kicker: 0.028 },
};

const KICKERS: Record<Category, string> = {
  announcement: "Announcement",
  tip: "Quick tip",
  question: "Question",
  story: "Story",
  event: "Event",
  product: "New",
  other: "Update",
};

/** Greedy word wrap estimate: how many lines `text` takes at `fontSize` in `width` px. */
function estimateLines(text: string, fontSize: number, charEm: number, width: number): number {
  const perLine = Math.max(1, Math.floor(width / (fontSize * charEm)));
  let lines = 1;
  let used = 0;
  for (const word of text.split(/\s+/)) {
    const len = [...word].length;
    if (used === 0) used = len;
    else if (used + 1 + len <= perLine) used += 1 + len;
    else {
      lines++;
      used = len;
    }
    while (used > perLine) {
      lines++;
      used -= perLine;
    }
  }
  return lines;
}

/** Largest font size (step 2px) at which the text fits `maxLines`; truncates with an ellipsis if even the minimum does not. */
function fitText(text: string, width: number, maxLines: number, max: number, min: number, charEm: number): { text: string; size: number } {
  for (let size = Math.floor(max); size >= min; size -= 2) {
    if (estimateLines(text, size, charEm, width) <= maxLines) return { text, size };
  }
  const perLine = Math.floor(width / (min * charEm));
  return { text: truncateGraphemes(text, Math.max(10, perLine * maxLines - 2)), size: Math.floor(min) };
}

function div(style: Record<string, string | number>, children?: CardNode["props"]["children"]): CardNode {
  return { type: "div", props: children === undefined ? { style } : { style, children } };
}

/** Decorative blobs for the illustration style; positions rotate with the variant. */
function shapes(p: Palette, width: number, height: number, variant: number): CardNode[] {
  const s = p.shapes ?? [];
  if (s.length < 3) return [];
  const big = width * 0.55;
  const mid = width * 0.3;
  const small = width * 0.14;
  const flip = variant % 2 === 1;
  const abs = (size: number, colour: string, x: number, y: number, radius: string) =>
    div({ position: "absolute", left: x, top: y, width: size, height: size, borderRadius: radius, backgroundColor: colour });
  // Shapes hug the edges (mostly off-canvas) so they never sit under the text column.
  return flip
    ? [
        abs(big, s[0]!.hex, -big * 0.45, -big * 0.5, "50%"),
        abs(mid, s[1]!.hex, width - mid * 0.7, height - mid * 0.75, "40%"),
        abs(small, s[2]!.hex, width - small * 0.5, height * 0.55, "50%"),
        div({ position: "absolute", left: width * 0.8, top: height * 0.1, width: small * 0.5, height: small * 0.5, borderRadius: "50%", border: `${Math.round(width * 0.008)}px solid ${p.accent.hex}` }),
      ]
    : [
        abs(big, s[0]!.hex, width - big * 0.7, -big * 0.35, "50%"),
        abs(mid, s[1]!.hex, width - mid * 0.75, height - mid * 0.8, "40%"),
        abs(small, s[2]!.hex, -small * 0.5, height * 0.62, "50%"),
        div({ position: "absolute", left: width * 0.62, top: width * 0.025, width: small * 0.5, height: small * 0.5, borderRadius: "50%", border: `${Math.round(width * 0.008)}px solid ${p.accent.hex}` }),
  ];
}

function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}

function colourWords(p: Palette): string {
  return `${p.text.name} text on ${article(p.background.name)} ${p.background.name} background with ${p.accent.name} accents`;
}

/** `"text".` without doubling the text's own final punctuation. */
function quoted(text: string): string {
  return /[.!?…]$/u.test(text) ? `"${text}"` : `"${text}".`;
}

/** Builds the card's element tree and alt text. Pure: same input, same design. */
export function designCard(input: CardInput): CardDesign {
  const { width, height } = ASPECT_RATIOS[input.aspectRatio];
  const style = CARD_STYLES[input.mediaStyle];
  const palette = style.palettes[input.variant % style.palettes.length]!;
  const layoutIndex = Math.floor(input.variant / style.palettes.length) % 2; // 0: left-aligned, 1: centred
  const centred = layoutIndex === 1;
  const t: Typography = style.typography;
  const L = LAYOUT[input.aspectRatio];
  const banned = input.voice.bannedWords;
  const clean = (s: string) => removeBannedWords(stripEmoji(s), banned).trim();

  const category = normalizeCategory(input.seed.category);
  const kicker = clean(KICKERS[category]);
  const rawTitle = clean(input.seed.title) || clean(keyLine(input.seed, input.voice)) || kicker;
  let line = clean(keyLine(input.seed, input.voice, input.variant));
  if (line.toLowerCase() === rawTitle.toLowerCase()) line = "";
  const footer = clean(input.voice.signature.replace(/^[\s—–-]+/, "")) || clean(input.voice.hashtags.slice(0, 2).map((h) => `#${h.replace(/^#+/, "").replace(/\s+/g, "")}`).join("  "));

  const pad = Math.round(width * L.pad);
  const inner = width - 2 * pad;
  const titleText = t.titleCase === "uppercase" ? rawTitle.toUpperCase() : rawTitle;
  const title = fitText(titleText, inner, L.titleLines, width * L.titleMax, width * L.titleMin, t.titleCharEm);
  const bodySize = Math.round(width * L.bodySize);
  const body = line ? fitText(line, inner * (centred ? 0.92 : 0.9), L.bodyLines, bodySize, bodySize, t.bodyCharEm) : { text: "", size: bodySize };
  const kickerSize = Math.round(width * L.kicker);
  const align = centred ? "center" : "flex-start";

  const kickerNode = div(
    { display: "flex", alignItems: "center", gap: Math.round(kickerSize * 0.6), fontFamily: t.bodyFont, fontWeight: 500, fontSize: kickerSize, letterSpacing: kickerSize * 0.12, textTransform: "uppercase", color: input.mediaStyle === "bold" ? palette.accent.hex : palette.muted },
    [div({ width: kickerSize * 1.6, height: Math.max(3, Math.round(kickerSize * 0.18)), backgroundColor: palette.accent.hex }), kicker],
  );
  const titleNode = div(
    { display: "flex", fontFamily: t.titleFont, fontWeight: t.titleWeight, fontSize: title.size, lineHeight: t.titleLineHeight, letterSpacing: title.size * t.titleLetterSpacing, color: palette.text.hex, textAlign: centred ? "center" : "left", wordBreak: "break-word", maxWidth: inner },
    title.text,
  );
  const rule = input.mediaStyle === "editorial" ? div({ width: centred ? inner * 0.25 : inner * 0.18, height: 2, backgroundColor: palette.accent.hex, marginTop: bodySize * 0.9, marginBottom: bodySize * 0.9 }) : div({ height: bodySize * 0.9 });
  const bodyNode = div(
    { display: "flex", fontFamily: t.bodyFont, fontWeight: t.bodyWeight, fontStyle: t.bodyStyle, fontSize: body.size, lineHeight: 1.4, color: palette.muted, wordBreak: "break-word", textAlign: centred ? "center" : "left", maxWidth: inner * (centred ? 0.92 : 0.9) },
    body.text,
  );
  const main = div({ display: "flex", flexDirection: "column", alignItems: align, flexGrow: 1, justifyContent: "center" }, body.text ? [titleNode, rule, bodyNode] : [titleNode]);
  const footerNode = div(
    { display: "flex", width: "100%", alignItems: "center", justifyContent: centred ? "center" : "space-between", fontFamily: t.bodyFont, fontWeight: 500, fontSize: kickerSize, color: palette.muted },
    centred ? [footer || " "] : [footer || " ", div({ width: kickerSize * 0.9, height: kickerSize * 0.9, borderRadius: "50%", backgroundColor: palette.accent.hex })],
  );

  const layers: CardNode[] = [];
  if (input.mediaStyle === "illustration") layers.push(...shapes(palette, width, height, input.variant));
  if (input.mediaStyle === "photorealistic") {
    // A darker band behind the text keeps white type readable over the bright part of the "photo".
    layers.push(div({ position: "absolute", left: 0, top: 0, width, height, backgroundImage: "linear-gradient(180deg, rgba(0,0,0,0.05) 0%, rgba(0,0,0,0.18) 55%, rgba(0,0,0,0.4) 100%)" }));
  }
  if (input.mediaStyle === "bold") {
    layers.push(div({ position: "absolute", left: centred ? 0 : width - pad * 0.45, top: centred ? height - pad * 0.45 : 0, width: centred ? width : pad * 0.45, height: centred ? pad * 0.45 : height, backgroundColor: palette.accent.hex }));
  }
  if (input.mediaStyle === "editorial") {
    layers.push(div({ position: "absolute", left: pad * 0.5, top: pad * 0.5, width: width - pad, height: height - pad, border: `1px solid ${palette.muted}` }));
  }

  const content = div(
    { position: "absolute", left: 0, top: 0, width, height, boxSizing: "border-box", padding: pad, display: "flex", flexDirection: "column", alignItems: align },
    [kickerNode, main, footerNode],
  );
  // No overflow:hidden and no text-shadow (not even "none"): satori turns them into SVG masks and blur
  // filters that made rasterising 2–3× slower; the SVG viewport clips anyway, and overlays give contrast.
  const rootStyle: Record<string, string | number> = { width, height, display: "flex", position: "relative", backgroundColor: palette.background.hex, boxSizing: "border-box" };
  if (palette.backgroundImage) rootStyle.backgroundImage = palette.backgroundImage;
  const tree = div(rootStyle, [...layers, content]);

  const shapesWords = palette.shapes ? `, with ${palette.shapes.map((s) => s.name).join(", ")} shapes` : "";
  const parts = [
    `${style.description} with ${colourWords(palette)}${shapesWords}.`,
    `A small label reads ${quoted(kicker)}`,
    `The headline reads ${quoted(title.text)}`,
  ];
  if (body.text) parts.push(`Below it: ${quoted(body.text)}`);
  if (footer) parts.push(`Footer: ${quoted(footer)}`);
  return { tree, width, height, altText: removeBannedWords(parts.join(" "), banned) };
}
