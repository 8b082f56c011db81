/**
 * The `openai` generator: captions, images and alt text from any OpenAI-compatible server
 * (chat completions, images API, vision). Limits are enforced after the model answers.
 */

import { createHash } from "node:crypto";
import type { CaptionRequest, DescribeRequest, GeneratedImage, Generator, ImageRequest } from "../generator.ts";
import { enforceCaption, sameCaption } from "./caption-rules.ts";
import { chatJson, requireString } from "./chat.ts";
import { DEFAULT_TIMEOUT_MS, generationError, type ClientConfig } from "./client.ts";
import { altTextFor, generatePicture } from "./images.ts";
import { captionMessages } from "./prompts.ts";

export const OPENAI_GENERATOR_NAME = "openai";
/** Attempts at a caption (or image) that differs from the previous one: the first, and one retry. */
const ATTEMPTS_TO_DIFFER = 2;

export interface OpenAiGeneratorOptions {
  /** The server's API root, e.g. https://api.openai.com/v1. Operator configuration, not user input. */
  baseUrl: string;
  apiKey: string;
  /** Chat model for captions and (vision) alt text. */
  textModel: string;
  imageModel: string;
  /** Per request; default 60 s. */
  timeoutMs?: number;
  /** Injected for tests; default the global fetch. */
  fetch?: typeof fetch;
}

/** Creates the `openai` generator over an OpenAI-compatible server. Every failure throws GenerationError. */
export function createOpenAiGenerator(opts: OpenAiGeneratorOptions): Generator {
  const cfg: ClientConfig = {
    baseUrl: opts.baseUrl,
    apiKey: opts.apiKey,
    timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    fetch: opts.fetch ?? fetch,
  };

  async function writeCaption(req: CaptionRequest, signal?: AbortSignal): Promise<string> {
    const what = "caption request";
    let lastProblem = "";
    for (let attempt = 0; attempt < ATTEMPTS_TO_DIFFER; attempt++) {
      const answer = await chatJson(cfg, opts.textModel, captionMessages(req, attempt > 0), what, signal);
      const caption = enforceCaption(requireString(answer, "caption", what, cfg.apiKey), req.voice.bannedWords, req.maxGraphemes);
      if (caption === null) {
        lastProblem = "nothing was left of the caption after removing banned words";
        continue;
      }
      if (req.previousCaption !== undefined && sameCaption(caption, req.previousCaption)) {
        lastProblem = "the model repeated the previous caption";
        continue;
      }
      return caption;
    }
    throw generationError(`${what} failed: ${lastProblem} (after ${ATTEMPTS_TO_DIFFER} attempts)`, cfg.apiKey);
  }

  async function renderImage(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage> {
    for (let attempt = 0; attempt < ATTEMPTS_TO_DIFFER; attempt++) {
      const picture = await generatePicture(cfg, opts.imageModel, req, signal);
      const sha256 = createHash("sha256").update(picture.bytes).digest("hex");
      if (req.previousImageSha256 !== undefined && sha256 === req.previousImageSha256.toLowerCase()) continue;
      const altText = await altTextFor(cfg, opts.textModel, picture.bytes, req.seed, req.voice, signal);
      return { ...picture, altText };
    }
    throw generationError(`image request failed: the server answered the previous image again (after ${ATTEMPTS_TO_DIFFER} attempts)`, cfg.apiKey);
  }

  async function describeImage(req: DescribeRequest, signal?: AbortSignal): Promise<string> {
    return altTextFor(cfg, opts.textModel, req.bytes, req.seed, req.voice, signal);
  }

  return { name: OPENAI_GENERATOR_NAME, writeCaption, renderImage, describeImage };
}
