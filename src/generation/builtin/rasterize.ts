/**
 * Turns a card design into PNG bytes: satori draws SVG (glyphs as paths, fonts from the binary), sharp
 * rasterises it (27–56 ms here, vs 110–290 ms for resvg-wasm; see images.md).
 */
import { loadSharp } from "../../lib/sharp.ts";
import { loadFonts } from "./fonts.ts";
import type { CardDesign } from "./card.ts";

/** Budget the card must stay under (platform upload limits, decisions.md §6). */
export const MAX_CARD_BYTES = 1_000_000;

type Satori = typeof import("satori").default;
let satoriModule: Promise<Satori> | null = null;

/**
 * satori and its CSS stack take ~80 ms to evaluate; they load on the first card, not at every start of the binary
 * (the CLI and the server's start-to-ready time never pay for them). The bundler still embeds them.
 */
function loadSatori(): Promise<Satori> {
  satoriModule ??= import("satori").then((m) => m.default);
  return satoriModule;
}

/** Renders a designed card to PNG; quantises to a palette PNG only if the full-colour one is over budget. */
export async function rasterizeCard(design: CardDesign): Promise<Uint8Array> {
  const [satori, fonts] = await Promise.all([loadSatori(), loadFonts()]);
  // satori's types want a React element; our plain object tree is exactly that shape.
  const svg = await satori(design.tree as unknown as Parameters<typeof satori>[0], { width: design.width, height: design.height, fonts });
  const sharp = loadSharp();
  const input = Buffer.from(svg);
  let png = await sharp(input).png({ compressionLevel: 7 }).toBuffer();
  if (png.byteLength > MAX_CARD_BYTES) png = await sharp(input).png({ palette: true, quality: 90, dither: 0.5 }).toBuffer();
  return new Uint8Array(png);
}
