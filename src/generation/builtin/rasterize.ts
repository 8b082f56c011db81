/**
 * Turns a card design into PNG bytes: satori draws SVG (glyphs as paths, fonts from the binary), sharp
 * rasterises it (27–56 ms here, vs 110–290 ms for resvg-wasm; see images.md).
 */
import satori from "satori";
import { loadSharp } from "../../lib/sharp.ts";
import { loadFonts } from "./fonts.ts";
import type { CardDesign } from "./card.ts";

/** Budget the card must stay under (platform upload limits, decisions.md §6). */
export const MAX_CARD_BYTES = 1_000_000;

/** Renders a designed card to PNG; quantises to a palette PNG only if the full-colour one is over budget. */
export async function rasterizeCard(design: CardDesign): Promise<Uint8Array> {
  const fonts = await loadFonts();
  // satori's types want a React element; our plain object tree is exactly that shape.
  const svg = await satori(design.tree as unknown as Parameters<typeof satori>[0], { width: design.width, height: design.height, fonts });
  const sharp = loadSharp();
  const input = Buffer.from(svg);
  let png = await sharp(input).png({ compressionLevel: 7 }).toBuffer();
  if (png.byteLength > MAX_CARD_BYTES) png = await sharp(input).png({ palette: true, quality: 90, dither: 0.5 }).toBuffer();
  return new Uint8Array(png);
}
