/**
 * Benchmarks the builtin generator: one caption + one card per run, ~30 runs over all ratios and styles.
 * Prints p50/p95 in ms (goal: p50 < 250 ms). Run: `bun bench/generate-image.ts [runs]`.
 */
import { createBuiltinGenerator } from "../src/generation/builtin/index.ts";
import { ASPECT_RATIOS, DEFAULT_VOICE, MEDIA_STYLES, type AspectRatio } from "../src/generation/generator.ts";

const json = process.argv.includes("--json");
const RUNS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 30);
const WARMUP = 2;

const seed = {
  title: "Spring workshop: social media that feels human",
  content:
    "Join us on Saturday, April 12 at 10am for a hands-on workshop. We'll cover writing captions that sound like you, " +
    "planning a month of posts in an hour, and measuring what matters. Seats are limited to 25 people. Coffee is on us.",
  category: "event",
};
const voice = { ...DEFAULT_VOICE, hashtags: ["workshop", "social media"], signature: "— The Seedcast team" };

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

const gen = createBuiltinGenerator();
const ratios = Object.keys(ASPECT_RATIOS) as AspectRatio[];
const times: number[] = [];
for (let i = 0; i < RUNS + WARMUP; i++) {
  const t0 = performance.now();
  const caption = await gen.writeCaption({ seed, voice, maxGraphemes: 300, variant: i });
  await gen.renderImage({ seed, voice, caption, variant: i, aspectRatio: ratios[i % ratios.length]!, mediaStyle: MEDIA_STYLES[i % MEDIA_STYLES.length]! });
  if (i >= WARMUP) times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const rss = Math.round(process.memoryUsage().rss / 1e6);
const p50 = Math.round(percentile(times, 50));
if (json) {
  console.log(
    JSON.stringify({
      bench: "generate-image",
      figures: [
        { label: `builtin caption+card p50 (${RUNS} runs)`, value: p50, unit: "ms", goal: "< 250", ok: p50 < 250 },
        { label: "builtin caption+card p95", value: Math.round(percentile(times, 95)), unit: "ms", goal: "", ok: null },
        { label: "bench process RSS", value: rss, unit: "MB", goal: "", ok: null },
      ],
    }),
  );
} else console.log(`builtin caption+card, ${RUNS} runs: p50 ${percentile(times, 50).toFixed(0)} ms, p95 ${percentile(times, 95).toFixed(0)} ms, max ${times.at(-1)!.toFixed(0)} ms, rss ${rss} MB`);
