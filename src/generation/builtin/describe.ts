/**
 * Alt text for an existing library image without a vision model: what sharp can measure (shape, dominant
 * colour, brightness) plus the seed it goes with, in plain words (no pixel sizes). Honest and short rather than
 * invented.
 */
import { loadSharp } from "../../lib/sharp.ts";
import type { DescribeRequest } from "../generator.ts";
import { removeBannedWords, stripEmoji } from "./text.ts";

/** Reference colours for naming a dominant RGB; nearest wins. */
const NAMED: [string, number, number, number][] = [
  ["black", 20, 20, 20], ["dark grey", 70, 70, 70], ["grey", 128, 128, 128], ["light grey", 200, 200, 200],
  ["white", 245, 245, 245], ["red", 200, 40, 40], ["dark red", 120, 20, 30], ["orange", 240, 140, 40],
  ["brown", 120, 80, 45], ["beige", 225, 205, 170], ["yellow", 240, 220, 60], ["olive", 120, 120, 40],
  ["green", 60, 160, 70], ["dark green", 25, 80, 40], ["teal", 30, 130, 130], ["light blue", 150, 200, 240],
  ["blue", 40, 90, 200], ["navy", 20, 30, 80], ["purple", 120, 60, 160], ["pink", 240, 150, 190],
];

/** Nearest reference colour name for an RGB triple. */
export function colourName(r: number, g: number, b: number): string {
  let best = NAMED[0]!;
  let bestD = Infinity;
  for (const c of NAMED) {
    const d = (c[1] - r) ** 2 + (c[2] - g) ** 2 + (c[3] - b) ** 2;
    if (d < bestD) [best, bestD] = [c, d];
  }
  return best[0];
}

/** Describes an image by shape and colour, tied to the seed's title. */
export async function describeImageBytes(req: DescribeRequest): Promise<string> {
  const sharp = loadSharp();
  const img = sharp(req.bytes).rotate();
  const [meta, stats] = await Promise.all([img.metadata(), img.stats()]);
  const w = meta.autoOrient?.width ?? meta.width ?? 0;
  const h = meta.autoOrient?.height ?? meta.height ?? 0;
  const shape = w === h ? "square" : w > h ? "landscape" : "portrait";
  const { r, g, b } = stats.dominant;
  const brightness = (r * 299 + g * 587 + b * 114) / 1000;
  const mood = brightness < 70 ? "dark" : brightness > 190 ? "bright" : "mid-toned";
  const title = removeBannedWords(stripEmoji(req.seed.title), req.voice.bannedWords).trim();
  const about = title ? ` for “${title}”` : "";
  // Plain words a screen reader user can picture; pixel sizes mean nothing to them and are left out.
  const tone = mood === "mid-toned" ? "" : `${mood}, `;
  return removeBannedWords(`A ${tone}mostly ${colourName(r, g, b)} ${shape === "square" ? "square" : shape} picture${about}.`, req.voice.bannedWords);
}
