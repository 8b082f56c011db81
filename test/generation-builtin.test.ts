import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdirSync } from "node:fs";
import { createBuiltinGenerator } from "../src/generation/builtin/index.ts";
import { emojiCount, graphemeCount } from "../src/generation/builtin/text.ts";
import { colourName } from "../src/generation/builtin/describe.ts";
import {
  ASPECT_RATIOS,
  DEFAULT_VOICE,
  MEDIA_STYLES,
  type AspectRatio,
  type BrandVoice,
  type CaptionRequest,
  type SeedText,
} from "../src/generation/generator.ts";
import { fitImageUnderBytes } from "../src/lib/image-fit.ts";
import { loadSharp } from "../src/lib/sharp.ts";

const ARTIFACTS = `${import.meta.dir}/../test-artifacts/cards`;
const gen = createBuiltinGenerator();

const SEED: SeedText = {
  title: "Seedcast 2.0 is live",
  content:
    "After six months of work, Seedcast 2.0 ships today. It schedules posts to Bluesky and Mastodon from one place. " +
    "The new calendar view shows 30 days at a glance. Teams can now share brand voices. " +
    "We also fixed 120 issues you reported. Thanks to everyone who tested the beta!",
  category: "announcement",
};
const VOICE: BrandVoice = { ...DEFAULT_VOICE, hashtags: ["seedcast", "social media"], signature: "— The Seedcast team" };

function req(over: Partial<CaptionRequest> = {}): CaptionRequest {
  return { seed: SEED, voice: VOICE, maxGraphemes: 300, variant: 0, ...over };
}

/** Reads width/height from a PNG's IHDR chunk (bytes 16–23), checking the signature first. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  expect([...bytes.subarray(0, 8)]).toEqual(signature);
  expect(new TextDecoder().decode(bytes.subarray(12, 16))).toBe("IHDR");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

/** Whole-word, case-insensitive presence. */
function hasWord(text: string, word: string): boolean {
  return new RegExp(`(?<![\\p{L}\\p{N}_])${word}(?![\\p{L}\\p{N}_])`, "iu").test(text);
}

describe("builtin captions", () => {
  test("reads like a post: opener, seed sentences, signature and the hashtags that fit the seed", async () => {
    const c = await gen.writeCaption(req());
    expect(c).toContain("Seedcast 2.0 ships today.");
    expect(c).toContain("— The Seedcast team");
    // #seedcast fits (the seed is about Seedcast); #SocialMedia does not (the seed never says so).
    expect(c).toMatch(/#seedcast$/);
    expect(c).not.toContain("#SocialMedia");
    expect(emojiCount(c)).toBeGreaterThanOrEqual(1);
  });

  test("always fits maxGraphemes, counting graphemes not code units", async () => {
    const emojiSeed = { ...SEED, content: `${SEED.content} 👩‍👩‍👧‍👦🇩🇪 Family-friendly 👍🏽 café.` };
    for (const max of [300, 200, 120, 80, 40, 12]) {
      for (const variant of [0, 1, 2, 3]) {
        const c = await gen.writeCaption(req({ seed: emojiSeed, maxGraphemes: max, variant, voice: { ...VOICE, emoji: "lots" } }));
        expect(graphemeCount(c)).toBeLessThanOrEqual(max);
        expect(c.length).toBeGreaterThan(0);
      }
    }
    // A long single sentence is trimmed at a word boundary with an ellipsis.
    const long = { ...SEED, content: "word ".repeat(200).trim() + ".", title: "" };
    const c = await gen.writeCaption(req({ seed: long, maxGraphemes: 100, voice: DEFAULT_VOICE }));
    expect(graphemeCount(c)).toBeLessThanOrEqual(100);
    expect(c).toContain("…");
    expect(c).not.toMatch(/wor…|wo…/);
  });

  test("banned words never appear, in any case, anywhere (seed, title, templates, signature, hashtags)", async () => {
    const banned = ["seedcast", "BETA", "news", "calendar view", "team", "social"];
    const voice = { ...VOICE, bannedWords: banned, signature: "Love, the Seedcast Team", hashtags: ["SeedcastNews", "social media", "launch"] };
    for (const category of ["announcement", "tip", "product", "other"]) {
      for (let variant = 0; variant < 8; variant++) {
        for (const changeInstructions of [undefined, "longer", "more casual", "add a question", "more formal"]) {
          const c = await gen.writeCaption(req({ seed: { ...SEED, category }, voice, variant, changeInstructions }));
          for (const w of banned) expect(hasWord(c, w)).toBe(false);
        }
      }
    }
    const c = await gen.writeCaption(req({ voice }));
    expect(c).toContain("#launch");
    expect(c).not.toMatch(/#SeedcastNews|#SocialMedia/i);
  });

  test("property: any seed, voice and limit → fits, no banned word, differs from previous", async () => {
    const word = fc.stringMatching(/^[A-Za-zäöü]{2,9}$/);
    const sentence = fc.array(word, { minLength: 1, maxLength: 14 }).map((w) => `${w.join(" ")}.`);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          title: fc.array(word, { maxLength: 6 }).map((w) => w.join(" ")),
          content: fc.array(sentence, { maxLength: 8 }).map((s) => s.join(" ")),
          category: fc.constantFrom("announcement", "tip", "question", "story", "event", "product", "other", null, "x"),
        }),
        fc.array(word, { maxLength: 4 }),
        fc.constantFrom("none", "some", "lots"),
        fc.integer({ min: 20, max: 400 }),
        fc.nat(50),
        fc.constantFrom(undefined, "shorter", "longer", "more formal", "more casual", "add a question", "no emoji", "more emoji", "no hashtags"),
        async (seed, bannedWords, emoji, maxGraphemes, variant, changeInstructions) => {
          const voice = { ...VOICE, emoji: emoji as BrandVoice["emoji"], bannedWords, hashtags: ["alpha", ...bannedWords.slice(0, 1)] };
          const r = { seed, voice, maxGraphemes, variant, changeInstructions };
          const c = await gen.writeCaption(r);
          expect(graphemeCount(c)).toBeLessThanOrEqual(maxGraphemes);
          for (const w of bannedWords) expect(hasWord(c, w)).toBe(false);
          const next = await gen.writeCaption({ ...r, previousCaption: c });
          expect(next).not.toBe(c);
          expect(graphemeCount(next)).toBeLessThanOrEqual(maxGraphemes);
        },
      ),
      { numRuns: 300 },
    );
  });

  test("every variant differs, and a regenerate always differs from the previous caption", async () => {
    const seen = new Set<string>();
    for (let variant = 0; variant < 12; variant++) seen.add(await gen.writeCaption(req({ variant })));
    expect(seen.size).toBe(12);

    let previous = await gen.writeCaption(req());
    for (let variant = 1; variant < 10; variant++) {
      const next = await gen.writeCaption(req({ variant, previousCaption: previous }));
      expect(next).not.toBe(previous);
      previous = next;
    }
    // Even when asked for the same variant that produced the previous one.
    const same = await gen.writeCaption(req({ variant: 3 }));
    expect(await gen.writeCaption(req({ variant: 3, previousCaption: same }))).not.toBe(same);
    // And with a tiny seed where there is little to vary.
    const tiny = { title: "", content: "Open today.", category: null };
    const a = await gen.writeCaption(req({ seed: tiny, voice: DEFAULT_VOICE }));
    expect(await gen.writeCaption(req({ seed: tiny, voice: DEFAULT_VOICE, previousCaption: a }))).not.toBe(a);
  });

  test("each change instruction has its effect", async () => {
    const base = await gen.writeCaption(req());
    const shorter = await gen.writeCaption(req({ changeInstructions: "shorter" }));
    const longer = await gen.writeCaption(req({ changeInstructions: "make it longer" }));
    expect(graphemeCount(shorter)).toBeLessThan(graphemeCount(base));
    expect(graphemeCount(longer)).toBeGreaterThan(graphemeCount(base));

    const formal = await gen.writeCaption(req({ changeInstructions: "more formal" }));
    const casual = await gen.writeCaption(req({ changeInstructions: "more casual" }));
    expect(formal).not.toContain("!");
    expect(formal).not.toMatch(/\b(we're|it's|don't|can't)\b/i);
    expect(casual).toContain("!");
    expect(new Set([base, formal, casual]).size).toBe(3);

    const question = await gen.writeCaption(req({ changeInstructions: "add a question" }));
    expect(base).not.toContain("?");
    expect(question).toMatch(/\?/);

    const noEmoji = await gen.writeCaption(req({ changeInstructions: "no emoji please" }));
    expect(emojiCount(base)).toBeGreaterThan(0);
    expect(emojiCount(noEmoji)).toBe(0);
    const moreEmoji = await gen.writeCaption(req({ changeInstructions: "more emoji" }));
    expect(emojiCount(moreEmoji)).toBeGreaterThan(emojiCount(base));

    const noTags = await gen.writeCaption(req({ changeInstructions: "no hashtags" }));
    expect(base).toContain("#");
    expect(noTags).not.toContain("#");

    const combined = await gen.writeCaption(req({ changeInstructions: "Shorter, no emoji, no hashtags" }));
    expect(graphemeCount(combined)).toBeLessThan(graphemeCount(base));
    expect(emojiCount(combined)).toBe(0);
    expect(combined).not.toContain("#");
  });

  test("voice emoji none/some/lots is honoured", async () => {
    const none = await gen.writeCaption(req({ voice: { ...VOICE, emoji: "none" }, seed: { ...SEED, content: `${SEED.content} 🎉` } }));
    const some = await gen.writeCaption(req({ voice: { ...VOICE, emoji: "some" } }));
    const lots = await gen.writeCaption(req({ voice: { ...VOICE, emoji: "lots" } }));
    expect(emojiCount(none)).toBe(0);
    expect(emojiCount(some)).toBe(1);
    expect(emojiCount(lots)).toBeGreaterThanOrEqual(3);
  });

  test("every category (and unknown ones) gives a sensible, distinct caption", async () => {
    const captions = new Map<string, string>();
    for (const category of ["announcement", "tip", "question", "story", "event", "product", "other", "weird-thing", null]) {
      const c = await gen.writeCaption(req({ seed: { ...SEED, category } }));
      expect(c.length).toBeGreaterThan(40);
      expect(c).toContain("Seedcast 2.0");
      captions.set(String(category), c);
    }
    expect(captions.get("question")).toMatch(/\?/);
    expect(captions.get("weird-thing")).toBe(captions.get("other")!);
    expect(captions.get("null")).toBe(captions.get("other")!);
    const known = ["announcement", "tip", "question", "story", "event", "product", "other"].map((k) => captions.get(k));
    expect(new Set(known).size).toBe(7);
  });

  test("as a person would post it: no closing line promising a link the seed does not give", async () => {
    const noLink = { title: "Broad beans", content: "Sow broad beans in November for an early crop. They need little care over winter.", category: null };
    for (const category of ["announcement", "tip", "event", "product", "other", null]) {
      for (const tone of ["formal", "", "playful"]) {
        for (let variant = 0; variant < 9; variant++) {
          for (const changeInstructions of [undefined, "longer"]) {
            const c = await gen.writeCaption(req({ seed: { ...noLink, category }, voice: { ...DEFAULT_VOICE, tone }, variant, changeInstructions }));
            expect([category, tone, variant, c]).not.toEqual([category, tone, variant, expect.stringMatching(/our site|check it out|take a look|sign-up|registration details/i)]);
          }
        }
      }
    }
    // With a link in the seed, the caption gives the link itself (the seed's own words), in every variant.
    const linked = { ...noLink, category: "other", content: `${noLink.content} Our guide: https://garden.example/beans` };
    const all = await Promise.all([0, 1, 2].map((variant) => gen.writeCaption(req({ seed: linked, voice: DEFAULT_VOICE, variant }))));
    for (const c of all) expect(c).toContain("Our guide: https://garden.example/beans");
    // And the link is not broken by a full stop glued to its end.
    for (const c of all) expect(c).not.toContain("https://garden.example/beans.");
  });

  test("hashtags only where they fit the seed: shared word stems or the category's theme", async () => {
    const beans = { title: "Broad beans", content: "Sow broad beans in November for an early crop.", category: "tip" };
    const voice = { ...DEFAULT_VOICE, hashtags: ["gardening", "beans", "SocialMedia", "tips", "growyourown"] };
    const c = await gen.writeCaption(req({ seed: beans, voice }));
    expect(c).toContain("#beans");
    expect(c).toContain("#tips"); // a tip post
    expect(c).not.toMatch(/#SocialMedia|#gardening|#growyourown/);
    const none = await gen.writeCaption(req({ seed: beans, voice: { ...DEFAULT_VOICE, hashtags: ["marketing", "SaaS"] } }));
    expect(none).not.toContain("#");
  });

  test("the brand voice's tone shows in the opener", async () => {
    const seed = { title: "Broad beans", content: "Sow broad beans in November for an early crop. They need little care over winter.", category: "tip" };
    const formal = await Promise.all([0, 1, 2].map((variant) => gen.writeCaption(req({ seed, voice: { ...DEFAULT_VOICE, tone: "professional", emoji: "none" }, variant }))));
    const warm = await Promise.all([0, 1, 2].map((variant) => gen.writeCaption(req({ seed, voice: { ...DEFAULT_VOICE, tone: "warm and upbeat", emoji: "none" }, variant }))));
    for (const c of formal) expect(c).not.toContain("!");
    expect(warm.some((c) => c.includes("!"))).toBe(true);
    expect(new Set([...formal, ...warm]).size).toBe(6);
  });

  test("non-English voices get no English template words", async () => {
    const seed = { title: "Neue Version", content: "Seit heute gibt es Version 2. Sie plant Beiträge für Bluesky.", category: "announcement" };
    const c = await gen.writeCaption(req({ seed, voice: { ...DEFAULT_VOICE, language: "de", emoji: "none" } }));
    expect(c).toContain("Seit heute gibt es Version 2.");
    expect(c).not.toMatch(/\b(news|announcing|details|our site)\b/i);
  });
});

describe("builtin cards", () => {
  mkdirSync(ARTIFACTS, { recursive: true });

  for (const ratio of Object.keys(ASPECT_RATIOS) as AspectRatio[]) {
    for (const style of MEDIA_STYLES) {
      test(`${ratio} × ${style}: PNG of the right size, under 1 MB, with alt text`, async () => {
        const img = await gen.renderImage({ seed: SEED, voice: VOICE, aspectRatio: ratio, mediaStyle: style, variant: 0 });
        await Bun.write(`${ARTIFACTS}/${ratio}-${style}.png`, img.bytes);
        expect(img.mimeType).toBe("image/png");
        expect(pngSize(img.bytes)).toEqual(ASPECT_RATIOS[ratio]);
        expect({ width: img.width, height: img.height }).toEqual(ASPECT_RATIOS[ratio]);
        expect(img.bytes.byteLength).toBeLessThan(1_000_000);
        expect(img.altText).toContain('"Seedcast 2.0 is live"'.replace("Seedcast 2.0 is live", style === "bold" ? "SEEDCAST 2.0 IS LIVE" : "Seedcast 2.0 is live"));
        expect(img.altText).toMatch(/background/);
        // Pixel sizes mean nothing to a person hearing the alt text.
        expect(img.altText).not.toContain(`${ASPECT_RATIOS[ratio].width}×${ASPECT_RATIOS[ratio].height}`);
      });
    }
  }

  test("a long title and body still render within the canvas (artifact: long-*.png)", async () => {
    const seed = {
      title: "Five things we learned shipping a self-hosted scheduler to three hundred small teams in one year",
      content: "Small teams do not want another dashboard: they want their posts out on time, in their own voice, without logging into five apps every morning before coffee.",
      category: "story",
    };
    for (const ratio of ["landscape", "story"] as const) {
      const img = await gen.renderImage({ seed, voice: VOICE, aspectRatio: ratio, mediaStyle: "editorial", variant: 1 });
      await Bun.write(`${ARTIFACTS}/long-${ratio}-editorial.png`, img.bytes);
      expect(pngSize(img.bytes)).toEqual(ASPECT_RATIOS[ratio]);
    }
  });

  test("regenerate yields different bytes; previousImageSha256 is never repeated", async () => {
    const base = { seed: SEED, voice: VOICE, aspectRatio: "square" as const, mediaStyle: "minimal" as const };
    const a = await gen.renderImage({ ...base, variant: 0 });
    const b = await gen.renderImage({ ...base, variant: 1 });
    await Bun.write(`${ARTIFACTS}/square-minimal-variant1.png`, b.bytes);
    expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes))).toBe(false);
    expect(a.altText).not.toBe(b.altText);
    const sha = new Bun.CryptoHasher("sha256").update(a.bytes).digest("hex");
    const again = await gen.renderImage({ ...base, variant: 0, previousImageSha256: sha });
    expect(new Bun.CryptoHasher("sha256").update(again.bytes).digest("hex")).not.toBe(sha);
  });

  test("banned words and emoji stay off the card and its alt text", async () => {
    const voice = { ...VOICE, bannedWords: ["seedcast"] };
    const img = await gen.renderImage({ seed: { ...SEED, title: "Seedcast 2.0 is live 🎉" }, voice, aspectRatio: "square", mediaStyle: "bold", variant: 0 });
    expect(hasWord(img.altText, "seedcast")).toBe(false);
    expect(emojiCount(img.altText)).toBe(0);
  });

  test("describeImage names shape and dominant colour in plain words, without pixel sizes", async () => {
    const sharp = loadSharp();
    const red = new Uint8Array(await sharp({ create: { width: 300, height: 200, channels: 3, background: "#c82828" } }).png().toBuffer());
    const alt = await gen.describeImage({ bytes: red, mimeType: "image/png", seed: SEED, voice: VOICE });
    expect(alt).toContain("landscape");
    expect(alt).toContain("red");
    expect(alt).toContain("Seedcast 2.0 is live");
    expect(alt).not.toMatch(/\d+\s*[×x]\s*\d+|px|pixels/);
    expect(colourName(20, 30, 80)).toBe("navy");
  });
});

describe("fitImageUnderBytes", () => {
  test("a 4000×3000 noisy JPEG is re-encoded under 1,000,000 bytes", async () => {
    const sharp = loadSharp();
    const width = 4000;
    const height = 3000;
    const noise = new Uint8Array(width * height * 3);
    for (let i = 0; i < noise.length; i += 65536) crypto.getRandomValues(noise.subarray(i, Math.min(noise.length, i + 65536)));
    const big = new Uint8Array(await sharp(noise, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer());
    expect(big.byteLength).toBeGreaterThan(1_000_000);
    const t0 = performance.now();
    const fitted = await fitImageUnderBytes(big, "image/jpeg", 1_000_000);
    const ms = performance.now() - t0;
    expect(fitted.bytes.byteLength).toBeLessThanOrEqual(1_000_000);
    expect(fitted.mimeType).toBe("image/jpeg");
    const meta = await sharp(fitted.bytes).metadata();
    expect({ w: meta.width, h: meta.height }).toEqual({ w: fitted.width, h: fitted.height });
    expect(fitted.width / fitted.height).toBeCloseTo(4 / 3, 2);
    console.log(`fitImageUnderBytes: ${big.byteLength} → ${fitted.bytes.byteLength} bytes, ${fitted.width}×${fitted.height}, ${ms.toFixed(0)} ms`);
  }, 30_000);

  test("keeps a small upright image as is; applies EXIF orientation to a rotated one", async () => {
    const sharp = loadSharp();
    const small = new Uint8Array(await sharp({ create: { width: 64, height: 32, channels: 3, background: "#123456" } }).jpeg().toBuffer());
    const kept = await fitImageUnderBytes(small, "image/jpeg", 1_000_000);
    expect(kept.bytes).toBe(small);
    expect({ w: kept.width, h: kept.height }).toEqual({ w: 64, h: 32 });

    const rotated = new Uint8Array(await sharp(small).withMetadata({ orientation: 6 }).jpeg().toBuffer());
    const upright = await fitImageUnderBytes(rotated, "image/jpeg", 1_000_000);
    expect({ w: upright.width, h: upright.height }).toEqual({ w: 32, h: 64 });
    const meta = await sharp(upright.bytes).metadata();
    expect({ w: meta.width, h: meta.height, o: meta.orientation ?? 1 }).toEqual({ w: 32, h: 64, o: 1 });
  });

  test("PNG with alpha that is too big becomes a JPEG on white; garbage is refused", async () => {
    const sharp = loadSharp();
    const w = 1500;
    const h = 1500;
    const px = new Uint8Array(w * h * 4);
    for (let i = 0; i < px.length; i += 65536) crypto.getRandomValues(px.subarray(i, Math.min(px.length, i + 65536)));
    const png = new Uint8Array(await sharp(px, { raw: { width: w, height: h, channels: 4 } }).png().toBuffer());
    const fitted = await fitImageUnderBytes(png, "image/png", 500_000);
    expect(fitted.mimeType).toBe("image/jpeg");
    expect(fitted.bytes.byteLength).toBeLessThanOrEqual(500_000);
    await expect(fitImageUnderBytes(new TextEncoder().encode("not an image"), "image/png", 1000)).rejects.toMatchObject({ code: "unsupported_type" });
  }, 30_000);
});
