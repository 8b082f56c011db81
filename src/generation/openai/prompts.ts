/**
 * The prompts sent to the model. The model is told every rule; the rules are still enforced afterwards
 * (caption-rules.ts) because models do not always obey.
 */

import type { BrandVoice, CaptionRequest, ImageRequest, SeedText } from "../generator.ts";
import type { ChatContentPart, ChatMessage } from "./chat.ts";

/** Longest seed content quoted in a prompt, so a huge seed cannot blow the model's context. */
const MAX_SEED_CHARS = 6000;
const EMOJI_RULE = { none: "Use no emoji.", some: "Use at most two fitting emoji.", lots: "Use emoji generously." } as const;

function seedBlock(seed: SeedText): string {
  return [
    `Title: ${seed.title}`,
    seed.category ? `Category: ${seed.category}` : null,
    `Content:\n${seed.content.slice(0, MAX_SEED_CHARS)}`,
  ]
    .filter((l) => l !== null)
    .join("\n");
}

function voiceRules(voice: BrandVoice): string[] {
  return [
    `Tone: ${voice.tone}.`,
    voice.audience ? `Audience: ${voice.audience}.` : null,
    `Write in the language with code "${voice.language}".`,
    EMOJI_RULE[voice.emoji],
    voice.hashtags.length > 0 ? `Include these hashtags: ${voice.hashtags.map((h) => (h.startsWith("#") ? h : `#${h}`)).join(" ")}.` : null,
    voice.bannedWords.length > 0 ? `Never use these words or phrases: ${voice.bannedWords.map((w) => `"${w}"`).join(", ")}.` : null,
    voice.signature ? `End with this signature: ${voice.signature}` : null,
  ].filter((l): l is string => l !== null);
}

/** Messages asking for `{"caption": "..."}`. `insistDifferent` is set on the retry after a repeated caption. */
export function captionMessages(req: CaptionRequest, insistDifferent: boolean): ChatMessage[] {
  const rules = [
    "You write one social media post caption for the seed the user gives.",
    'Answer only with a JSON object of the form {"caption": "<the caption>"}.',
    `The caption must be at most ${req.maxGraphemes} characters long, counting every emoji as one character.`,
    ...voiceRules(req.voice),
  ];
  if (req.previousCaption !== undefined) {
    rules.push(`This replaces the previous caption below; the new caption must be clearly different from it.\nPrevious caption: ${req.previousCaption}`);
  }
  if (req.changeInstructions) rules.push(`Change instructions: ${req.changeInstructions}`);
  if (insistDifferent) rules.push("Your last answer repeated the previous caption. Write a different one.");
  return [
    { role: "system", content: rules.join("\n") },
    { role: "user", content: `${seedBlock(req.seed)}\n\n(variant ${req.variant})` },
  ];
}

/** The text prompt for the images endpoint. */
export function imagePrompt(req: ImageRequest): string {
  return [
    `A ${req.mediaStyle} image for a social media post, ${req.aspectRatio} format, no text in the image.`,
    `Subject: ${req.seed.title}.`,
    req.caption ? `It goes with this caption: ${req.caption}` : `About: ${req.seed.content.slice(0, 1000)}`,
    req.voice.tone ? `Mood: ${req.voice.tone}.` : null,
    req.changeInstructions ? `Change instructions: ${req.changeInstructions}` : null,
    req.variant > 0 ? `Variation ${req.variant}: make it different from earlier versions.` : null,
  ]
    .filter((l) => l !== null)
    .join("\n");
}

/** Messages asking for `{"altText": "..."}` describing the attached image (vision). */
export function altTextMessages(dataUrl: string, seed: SeedText, voice: BrandVoice): ChatMessage[] {
  const parts: ChatContentPart[] = [
    { type: "text", text: `The image belongs to a post titled: ${seed.title}` },
    { type: "image_url", image_url: { url: dataUrl } },
  ];
  return [
    {
      role: "system",
      content: [
        "You write alt text for an image, for people who cannot see it.",
        'Answer only with a JSON object of the form {"altText": "<the alt text>"}.',
        "Say plainly what the image shows in one or two sentences, at most 400 characters. Do not start with \"Image of\".",
        `Write in the language with code "${voice.language}".`,
      ].join("\n"),
    },
    { role: "user", content: parts },
  ];
}

