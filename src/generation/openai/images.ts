/**
 * Image generation through the images API (b64_json) and alt text through chat with vision.
 */

import type { BrandVoice, ImageRequest, SeedText } from "../generator.ts";
import { chatJson, requireString } from "./chat.ts";
import { generationError, postJson, type ClientConfig } from "./client.ts";
import { apiSizeFor, fitToAspect, visionDataUrl, wantsResponseFormat, type ImageMime } from "./image-size.ts";
import { fitGraphemes } from "./caption-rules.ts";
import { altTextMessages, imagePrompt } from "./prompts.ts";

export const IMAGES_PATH = "/images/generations";
/** Alt text longer than this is cut (Mastodon allows 1,500 characters; shorter is kinder to readers anyway). */
export const MAX_ALT_GRAPHEMES = 1000;

/** Asks the images API for one picture and answers it cropped to the aspect ratio. */
export async function generatePicture(
  cfg: ClientConfig,
  model: string,
  req: ImageRequest,
  signal?: AbortSignal,
): Promise<{ bytes: Uint8Array; mimeType: ImageMime; width: number; height: number }> {
  const what = "image request";
  const body: Record<string, unknown> = { model, prompt: imagePrompt(req), n: 1, size: apiSizeFor(model, req.aspectRatio) };
  if (wantsResponseFormat(model)) body.response_format = "b64_json";
  const answer = await postJson(cfg, IMAGES_PATH, body, what, signal);
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length === 0) throw generationError(`${what} failed: the answer held no image`, cfg.apiKey);
  const b64 = (data[0] as { b64_json?: unknown } | null)?.b64_json;
  if (typeof b64 !== "string" || b64 === "") throw generationError(`${what} failed: the answer had no b64_json image`, cfg.apiKey);
  try {
    return await fitToAspect(Buffer.from(b64, "base64"), req.aspectRatio);
  } catch (err) {
    throw generationError(`${what} failed: the answer was not a readable image`, cfg.apiKey, err);
  }
}

/** Writes alt text for image bytes with a vision-capable chat model. */
export async function altTextFor(
  cfg: ClientConfig,
  model: string,
  bytes: Uint8Array,
  seed: SeedText,
  voice: BrandVoice,
  signal?: AbortSignal,
): Promise<string> {
  const what = "alt text request";
  let dataUrl: string;
  try {
    dataUrl = await visionDataUrl(bytes);
  } catch (err) {
    throw generationError(`${what} failed: the image could not be read`, cfg.apiKey, err);
  }
  const answer = await chatJson(cfg, model, altTextMessages(dataUrl, seed, voice), what, signal);
  return fitGraphemes(requireString(answer, "altText", what, cfg.apiKey), MAX_ALT_GRAPHEMES);
}
