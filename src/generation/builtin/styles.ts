/**
 * Look of a card per media style: typography and a few palettes each. Variant rotates palettes (and then
 * layouts), so regenerating yields a visibly different card. Colour names feed the alt text.
 */
import type { MediaStyle } from "../generator.ts";
import { FONT, type FontFamily } from "./fonts.ts";

/** A named colour: the hex for drawing, the words for alt text. */
export interface Colour {
  hex: string;
  name: string;
}

export interface Palette {
  background: Colour;
  /** CSS background-image drawn over the background colour (gradients), or none. */
  backgroundImage?: string;
  text: Colour;
  muted: string;
  accent: Colour;
  /** Decorative shapes (illustration style). */
  shapes?: Colour[];
}

export interface Typography {
  titleFont: FontFamily;
  titleWeight: 400 | 500 | 700 | 800;
  titleCase: "none" | "uppercase";
  /** Average glyph width in em for this font/weight, used to estimate line breaks. */
  titleCharEm: number;
  titleLineHeight: number;
  titleLetterSpacing: number;
  bodyFont: FontFamily;
  bodyWeight: 400 | 500;
  bodyStyle: "normal" | "italic";
  bodyCharEm: number;
}

export interface CardStyle {
  /** Words for the alt text: "a minimal card", "an editorial-style card". */
  description: string;
  typography: Typography;
  palettes: Palette[];
}

const WHITE: Colour = { hex: "#FFFFFF", name: "white" };

export const CARD_STYLES: Record<MediaStyle, CardStyle> = {
  minimal: {
    description: "A minimal card",
    typography: {
      titleFont: FONT.sans, titleWeight: 800, titleCase: "none", titleCharEm: 0.56, titleLineHeight: 1.1,
      titleLetterSpacing: -0.02, bodyFont: FONT.sans, bodyWeight: 400, bodyStyle: "normal", bodyCharEm: 0.5,
    },
    palettes: [
      { background: { hex: "#F7F5F0", name: "warm off-white" }, text: { hex: "#1F2328", name: "charcoal" }, muted: "#5B6168", accent: { hex: "#E4572E", name: "coral" } },
      { background: { hex: "#EEF2F7", name: "pale blue-grey" }, text: { hex: "#0F172A", name: "navy" }, muted: "#475569", accent: { hex: "#2563EB", name: "blue" } },
      { background: { hex: "#FFFFFF", name: "white" }, text: { hex: "#111111", name: "black" }, muted: "#555555", accent: { hex: "#0E9F6E", name: "green" } },
      { background: { hex: "#F4EFE6", name: "sand" }, text: { hex: "#3B2F2F", name: "dark brown" }, muted: "#6B5B55", accent: { hex: "#B45309", name: "amber" } },
    ],
  },
  bold: {
    description: "A bold, high-contrast card",
    typography: {
      titleFont: FONT.grotesk, titleWeight: 700, titleCase: "uppercase", titleCharEm: 0.66, titleLineHeight: 1.0,
      titleLetterSpacing: -0.01, bodyFont: FONT.sans, bodyWeight: 500, bodyStyle: "normal", bodyCharEm: 0.52,
    },
    palettes: [
      { background: { hex: "#1D4ED8", name: "electric blue" }, text: WHITE, muted: "#DBEAFE", accent: { hex: "#FACC15", name: "yellow" } },
      { background: { hex: "#E11D48", name: "crimson" }, text: WHITE, muted: "#FFE4E6", accent: { hex: "#FDE68A", name: "pale yellow" } },
      { background: { hex: "#111111", name: "black" }, text: { hex: "#F5F5F5", name: "off-white" }, muted: "#D4D4D4", accent: { hex: "#A3E635", name: "lime" } },
      { background: { hex: "#6D28D9", name: "violet" }, text: WHITE, muted: "#EDE9FE", accent: { hex: "#F9A8D4", name: "pink" } },
    ],
  },
  editorial: {
    description: "An editorial-style card",
    typography: {
      titleFont: FONT.serif, titleWeight: 700, titleCase: "none", titleCharEm: 0.52, titleLineHeight: 1.12,
      titleLetterSpacing: -0.01, bodyFont: FONT.serif, bodyWeight: 400, bodyStyle: "italic", bodyCharEm: 0.46,
    },
    palettes: [
      { background: { hex: "#FBF7EF", name: "cream" }, text: { hex: "#1A1A1A", name: "ink-black" }, muted: "#4A4A4A", accent: { hex: "#9F1239", name: "burgundy" } },
      { background: { hex: "#1C1C1E", name: "near-black" }, text: { hex: "#F4EDE1", name: "ivory" }, muted: "#CFC6B8", accent: { hex: "#C9A227", name: "gold" } },
      { background: { hex: "#E9E4D8", name: "parchment" }, text: { hex: "#22313F", name: "slate" }, muted: "#46586A", accent: { hex: "#1F6F78", name: "teal" } },
    ],
  },
  illustration: {
    description: "An illustrated card with playful geometric shapes",
    typography: {
      titleFont: FONT.grotesk, titleWeight: 700, titleCase: "none", titleCharEm: 0.6, titleLineHeight: 1.08,
      titleLetterSpacing: -0.01, bodyFont: FONT.sans, bodyWeight: 500, bodyStyle: "normal", bodyCharEm: 0.52,
    },
    palettes: [
      {
        background: { hex: "#FFE8D6", name: "peach" }, text: { hex: "#3D2C8D", name: "indigo" }, muted: "#5B4BA8", accent: { hex: "#FF6B4A", name: "tangerine" },
        shapes: [{ hex: "#FFB4A2", name: "salmon" }, { hex: "#9ED8F5", name: "sky blue" }, { hex: "#F9DC5C", name: "sunflower yellow" }],
      },
      {
        background: { hex: "#E0F4EC", name: "mint" }, text: { hex: "#14532D", name: "forest green" }, muted: "#2F6B45", accent: { hex: "#F97316", name: "orange" },
        shapes: [{ hex: "#A7E3C4", name: "sage" }, { hex: "#FDBA74", name: "apricot" }, { hex: "#FDE047", name: "lemon" }],
      },
      {
        background: { hex: "#EDE7FF", name: "lavender" }, text: { hex: "#2E1065", name: "deep purple" }, muted: "#4C2A8C", accent: { hex: "#EC4899", name: "pink" },
        shapes: [{ hex: "#C4B5FD", name: "lilac" }, { hex: "#FBCFE8", name: "blush" }, { hex: "#99F6E4", name: "aqua" }],
      },
    ],
  },
  photorealistic: {
    description: "A photographic-style card",
    typography: {
      titleFont: FONT.sans, titleWeight: 800, titleCase: "none", titleCharEm: 0.56, titleLineHeight: 1.08,
      titleLetterSpacing: -0.02, bodyFont: FONT.sans, bodyWeight: 500, bodyStyle: "normal", bodyCharEm: 0.5,
    },
    palettes: [
      {
        background: { hex: "#3A2F5B", name: "sunset-toned (deep blue into rose and orange)" }, text: WHITE, muted: "#FCE7F3", accent: { hex: "#FDBA74", name: "warm orange" },
        backgroundImage: "radial-gradient(circle at 78% 70%, rgba(255,196,120,0.85) 0%, rgba(255,140,90,0.35) 28%, rgba(0,0,0,0) 55%), linear-gradient(170deg, #1E2A4A 0%, #5B3A78 42%, #C0587E 72%, #F6A35B 100%)",
      },
      {
        background: { hex: "#0B2545", name: "ocean-toned (deep navy into sea blue)" }, text: WHITE, muted: "#DCEBF7", accent: { hex: "#7DD3FC", name: "light blue" },
        backgroundImage: "radial-gradient(circle at 25% 20%, rgba(180,220,255,0.55) 0%, rgba(0,0,0,0) 45%), linear-gradient(180deg, #0B2545 0%, #13315C 45%, #2E6A8E 80%, #8DA9C4 100%)",
      },
      {
        background: { hex: "#143324", name: "forest-toned (deep green into misty sage)" }, text: WHITE, muted: "#E7F0E0", accent: { hex: "#D9F99D", name: "pale lime" },
        backgroundImage: "radial-gradient(circle at 70% 15%, rgba(255,248,220,0.6) 0%, rgba(0,0,0,0) 45%), linear-gradient(200deg, #C9D8B6 0%, #5E8C61 35%, #24523A 70%, #0F2A1D 100%)",
      },
    ],
  },
};
