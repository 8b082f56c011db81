/**
 * The `openai` generator against a real local OpenAI-compatible server: captions (with limits enforced after the
 * model answers), images with alt text, describe, and every failure turned into a GenerationError without the key.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import sharp from "sharp";
import { DEFAULT_VOICE, GenerationError, type CaptionRequest, type ImageRequest } from "../src/generation/generator.ts";
import { createOpenAiGenerator } from "../src/generation/openai/index.ts";
import { fitGraphemes, graphemeCount, removeBannedWords } from "../src/generation/openai/caption-rules.ts";
import { apiSizeFor } from "../src/generation/openai/image-size.ts";
import { startOpenAiServer, type OpenAiServer } from "./peers/openai-server.ts";

const SEED = { title: "Sourdough at home", content: "How to keep a starter alive and bake a loaf every week.", category: "food" };
let server: OpenAiServer;

function generator(timeoutMs?: number, apiKey = server.apiKey) {
  return createOpenAiGenerator({ baseUrl: server.baseUrl, apiKey, textModel: "gpt-test", imageModel: "gpt-image-1", timeoutMs });
}
function captionReq(over: Partial<CaptionRequest> = {}): CaptionRequest {
  return { seed: SEED, voice: DEFAULT_VOICE, maxGraphemes: 300, variant: 0, ...over };
}
function imageReq(over: Partial<ImageRequest> = {}): ImageRequest {
  return { seed: SEED, voice: DEFAULT_VOICE, aspectRatio: "square", mediaStyle: "minimal", variant: 0, ...over };
}
const caption = (text: string): string => JSON.stringify({ caption: text });
const alt = (text: string): string => JSON.stringify({ altText: text });

/** Runs `fn`, expects a GenerationError, checks the key is not in its message, and answers the message. */
async function generationFailure(fn: () => Promise<unknown>, key = server.apiKey): Promise<string> {
  const err = await fn().then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(GenerationError);
  const message = (err as GenerationError).message;
  expect(message).not.toContain(key);
  return message;
}

beforeAll(async () => {
  server = await startOpenAiServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(() => {
  server.setMode("ok");
  server.requests.length = 0;
  server.setChatContent(caption("A fixed caption from the test server."));
});

describe("captions", () => {
  test("asks chat completions for a JSON caption with seed, voice, limit, banned words, previous caption and changes", async () => {
    server.queueChat(caption("Feed your starter, bake your bread 🍞"));
    const voice = { ...DEFAULT_VOICE, tone: "playful", bannedWords: ["cheap"], hashtags: ["bread"], signature: "— The Bakery" };
    const text = await generator().writeCaption(captionReq({ voice, maxGraphemes: 120, previousCaption: "Old words", changeInstructions: "shorter" }));
    expect(text).toBe("Feed your starter, bake your bread 🍞");
    const [req] = server.requests;
    expect(req?.endpoint).toBe("chat");
    expect(req?.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(req?.body?.model).toBe("gpt-test");
    expect(req?.body?.response_format).toEqual({ type: "json_object" });
    const prompt = JSON.stringify(req?.body?.messages);
    for (const part of ["Sourdough at home", "keep a starter alive", "playful", "120", '\\"cheap\\"', "#bread", "The Bakery", "Old words", "shorter"]) {
      expect(prompt).toContain(part);
    }
  });

  test("banned words are removed and the caption is cut to the grapheme limit after the model answers", async () => {
    server.queueChat(caption("This CHEAP bread is #cheapeats and cheap-ish, truly the best loaf in town, you will love it 👨‍👩‍👧‍👦👨‍👩‍👧‍👦"));
    const voice = { ...DEFAULT_VOICE, bannedWords: ["cheap", "in town"] };
    const text = await generator().writeCaption(captionReq({ voice, maxGraphemes: 40 }));
    expect(text.toLowerCase()).not.toContain("cheap");
    expect(text.toLowerCase()).not.toContain("in town");
    expect(graphemeCount(text)).toBeLessThanOrEqual(40);
    expect(text.endsWith("…")).toBe(true);
  });

  test("a caption equal to the previous one is retried once, then fails", async () => {
    server.queueChat(caption("Same as before"), caption("Something new"));
    expect(await generator().writeCaption(captionReq({ previousCaption: "same as  before" }))).toBe("Something new");
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]?.body?.messages)).toContain("repeated the previous caption");

    server.queueChat(caption("Same as before"), caption("Same as before"));
    const message = await generationFailure(() => generator().writeCaption(captionReq({ previousCaption: "Same as before" })));
    expect(message).toContain("repeated the previous caption");
  });

  test("a caption made only of banned words fails", async () => {
    server.queueChat(caption("cheap cheap"), caption("CHEAP"));
    const voice = { ...DEFAULT_VOICE, bannedWords: ["cheap"] };
    expect(await generationFailure(() => generator().writeCaption(captionReq({ voice })))).toContain("banned words");
  });
});

describe("images", () => {
  test("renders via the images API at a supported size, crops to the exact ratio, and writes alt text with vision", async () => {
    server.queueChat(alt("A loaf of sourdough on a wooden board"));
    const image = await generator().renderImage(imageReq({ aspectRatio: "portrait", mediaStyle: "photorealistic" }));
    expect(image.altText).toBe("A loaf of sourdough on a wooden board");
    expect(image.mimeType).toBe("image/png");
    expect([image.width, image.height]).toEqual([1080, 1350]);
    const meta = await sharp(image.bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["png", 1080, 1350]);

    const [img, chat] = server.requests;
    expect(img?.endpoint).toBe("images");
    expect(img?.body).toMatchObject({ model: "gpt-image-1", size: "1024x1536", n: 1 });
    expect(img?.body?.response_format).toBeUndefined();
    expect(String(img?.body?.prompt)).toContain("photorealistic");
    expect(chat?.endpoint).toBe("chat");
    expect(chat?.imageUrls).toHaveLength(1);
    expect(chat?.imageUrls[0]).toStartWith("data:image/jpeg;base64,");
  });

  test("aspect ratios map to the closest size each model family supports", () => {
    expect(apiSizeFor("gpt-image-1", "square")).toBe("1024x1024");
    expect(apiSizeFor("gpt-image-1", "landscape")).toBe("1536x1024");
    expect(apiSizeFor("gpt-image-1", "story")).toBe("1024x1536");
    expect(apiSizeFor("dall-e-3", "story")).toBe("1024x1792");
    expect(apiSizeFor("dall-e-3", "landscape")).toBe("1792x1024");
    expect(apiSizeFor("dall-e-2", "portrait")).toBe("1024x1024");
  });

  test("a regenerated image differs from the previous one", async () => {
    server.setChatContent(alt("A loaf"));
    const first = await generator().renderImage(imageReq({ aspectRatio: "landscape" }));
    const previousImageSha256 = createHash("sha256").update(first.bytes).digest("hex");
    const second = await generator().renderImage(imageReq({ aspectRatio: "landscape", previousImageSha256, variant: 1 }));
    expect(createHash("sha256").update(second.bytes).digest("hex")).not.toBe(previousImageSha256);
    expect([second.width, second.height]).toEqual([1200, 628]);
  });

  test("describeImage sends the image as a data: URL and answers the alt text", async () => {
    server.queueChat(alt("A red square"));
    const bytes = new Uint8Array(await sharp({ create: { width: 64, height: 64, channels: 3, background: "#f00" } }).png().toBuffer());
    const text = await generator().describeImage({ bytes, mimeType: "image/png", seed: SEED, voice: DEFAULT_VOICE });
    expect(text).toBe("A red square");
    expect(server.requests[0]?.imageUrls[0]).toStartWith("data:image/");
  });
});

describe("every failure is a GenerationError without the key", () => {
  const calls = {
    caption: () => generator().writeCaption(captionReq()),
    image: () => generator().renderImage(imageReq()),
    describe: async () => {
      const bytes = new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 3, background: "#00f" } }).png().toBuffer());
      return generator().describeImage({ bytes, mimeType: "image/png", seed: SEED, voice: DEFAULT_VOICE });
    },
  };

  for (const [name, run] of Object.entries(calls)) {
    test(`${name}: 429 (with retry-after), 500, malformed JSON, empty choices, missing fields`, async () => {
      server.setMode("rate_limited");
      const limited = await generationFailure(run);
      expect(limited).toContain("429");
      expect(limited).toContain("retry after 7 s");
      server.setMode("error500");
      expect(await generationFailure(run)).toContain("HTTP 500");
      server.setMode("malformed");
      expect(await generationFailure(run)).toContain("malformed JSON");
      server.setMode("empty_choices");
      expect(await generationFailure(run)).toMatch(/no choices|no image/);
      server.setMode("missing_data");
      expect(await generationFailure(run)).toMatch(/no message content|no b64_json/);
    });
  }

  test("the model answering non-JSON or JSON without the field", async () => {
    server.queueChat("Sure! Here is a caption: hello");
    expect(await generationFailure(calls.caption)).toContain("not valid JSON");
    server.queueChat(JSON.stringify({ text: "wrong field" }));
    expect(await generationFailure(calls.caption)).toContain('no "caption"');
    server.queueChat(JSON.stringify(["an", "array"]));
    expect(await generationFailure(calls.caption)).toContain("not a JSON object");
    server.setChatContent(JSON.stringify({ caption: "x" }));
    expect(await generationFailure(calls.image)).toContain('no "altText"');
  });

  test("alt text failing after a good image still fails the render", async () => {
    server.setMode("error500", "chat");
    expect(await generationFailure(calls.image)).toContain("alt text request");
  });

  test("a hanging server times out after timeoutMs", async () => {
    server.setMode("hang");
    const started = performance.now();
    const message = await generationFailure(() => generator(300).writeCaption(captionReq()));
    expect(message).toBe("caption request timed out after 300 ms");
    expect(performance.now() - started).toBeLessThan(5000);
    expect(await generationFailure(() => generator(300).renderImage(imageReq()))).toBe("image request timed out after 300 ms");
  });

  test("a caller's abort is reported as cancelled", async () => {
    server.setMode("hang");
    const controller = new AbortController();
    const pending = generationFailure(() => generator().writeCaption(captionReq(), controller.signal));
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toBe("caption request was cancelled");
  });

  test("a wrong key: the server echoes it, the error message does not", async () => {
    const wrongKey = "sk-wrong-key-that-must-not-leak";
    const message = await generationFailure(() => generator(undefined, wrongKey).writeCaption(captionReq()), wrongKey);
    expect(message).toContain("HTTP 401");
    expect(message).toContain("[redacted]");
    expect(server.requests.at(-1)?.status).toBe(401);
  });

  test("an unreachable server", async () => {
    const gone = await startOpenAiServer();
    const baseUrl = gone.baseUrl;
    await gone.stop();
    const gen = createOpenAiGenerator({ baseUrl, apiKey: gone.apiKey, textModel: "t", imageModel: "i" });
    expect(await generationFailure(() => gen.writeCaption(captionReq()), gone.apiKey)).toContain("could not reach");
  });
});

describe("caption rules", () => {
  test("fitGraphemes never exceeds the limit and keeps emoji whole", () => {
    const family = "👨‍👩‍👧‍👦";
    for (let max = 1; max < 30; max++) {
      const cut = fitGraphemes(`${family} word ${family.repeat(20)} end`, max);
      expect(graphemeCount(cut)).toBeLessThanOrEqual(max);
      expect(cut.replace(/…$/, "").replaceAll(family, "")).not.toContain("\u200d");
    }
    expect(fitGraphemes("short", 10)).toBe("short");
  });

  test("removeBannedWords is case-insensitive, takes hashtags and compounds, keeps line breaks", () => {
    expect(removeBannedWords("Buy Crypto now!\n#crypto rocks, cryptocurrency too", ["crypto"])).toBe("Buy now!\nrocks, too");
    expect(removeBannedWords("a limited time offer today", ["Limited Time"])).toBe("a offer today");
  });
});
