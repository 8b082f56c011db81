/**
 * The fonts the card renderer draws with. They ship inside the binary: each TTF is imported as a file
 * (an embedded path when compiled, a node_modules path from source) and read once with Bun.file.
 * satori turns glyphs into SVG paths, so the rasteriser never needs system fonts.
 */
import interRegular from "@expo-google-fonts/inter/400Regular/Inter_400Regular.ttf" with { type: "file" };
import interMedium from "@expo-google-fonts/inter/500Medium/Inter_500Medium.ttf" with { type: "file" };
import interExtraBold from "@expo-google-fonts/inter/800ExtraBold/Inter_800ExtraBold.ttf" with { type: "file" };
import playfairRegular from "@expo-google-fonts/playfair-display/400Regular/PlayfairDisplay_400Regular.ttf" with { type: "file" };
import playfairItalic from "@expo-google-fonts/playfair-display/400Regular_Italic/PlayfairDisplay_400Regular_Italic.ttf" with { type: "file" };
import playfairBold from "@expo-google-fonts/playfair-display/700Bold/PlayfairDisplay_700Bold.ttf" with { type: "file" };
import groteskMedium from "@expo-google-fonts/space-grotesk/500Medium/SpaceGrotesk_500Medium.ttf" with { type: "file" };
import groteskBold from "@expo-google-fonts/space-grotesk/700Bold/SpaceGrotesk_700Bold.ttf" with { type: "file" };

/** Family names used in card styles; must match the `name` of the loaded fonts below. */
export const FONT = {
  sans: "Inter",
  serif: "Playfair Display",
  grotesk: "Space Grotesk",
} as const;
export type FontFamily = (typeof FONT)[keyof typeof FONT];

type Weight = 400 | 500 | 700 | 800;

/** What satori expects in its `fonts` option. */
export interface LoadedFont {
  name: string;
  data: ArrayBuffer;
  weight: Weight;
  style: "normal" | "italic";
}

const SOURCES: { name: FontFamily; path: string; weight: Weight; style: "normal" | "italic" }[] = [
  { name: FONT.sans, path: interRegular, weight: 400, style: "normal" },
  { name: FONT.sans, path: interMedium, weight: 500, style: "normal" },
  { name: FONT.sans, path: interExtraBold, weight: 800, style: "normal" },
  { name: FONT.serif, path: playfairRegular, weight: 400, style: "normal" },
  { name: FONT.serif, path: playfairItalic, weight: 400, style: "italic" },
  { name: FONT.serif, path: playfairBold, weight: 700, style: "normal" },
  { name: FONT.grotesk, path: groteskMedium, weight: 500, style: "normal" },
  { name: FONT.grotesk, path: groteskBold, weight: 700, style: "normal" },
];

let loading: Promise<LoadedFont[]> | undefined;

/** Reads every font once per process (about 1.7 MB) and returns satori's font list. */
export function loadFonts(): Promise<LoadedFont[]> {
  loading ??= Promise.all(
    SOURCES.map(async (s) => ({ name: s.name, weight: s.weight, style: s.style, data: await Bun.file(s.path).arrayBuffer() })),
  ).catch((err: unknown) => {
    loading = undefined; // let the next call retry instead of caching the failure
    throw err;
  });
  return loading;
}
