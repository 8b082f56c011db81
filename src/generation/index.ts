/** Chooses the configured generator. */
import type { Config } from "../config";
import { createBuiltinGenerator } from "./builtin";
import type { Generator } from "./generator";
import { createOpenAiGenerator } from "./openai";

/** The generator named by GENERATOR (builtin by default). */
export function createGenerator(config: Readonly<Config>): Generator {
  if (config.generator === "openai") {
    return createOpenAiGenerator({
      baseUrl: config.openai.baseUrl,
      apiKey: config.openai.apiKey,
      textModel: config.openai.textModel,
      imageModel: config.openai.imageModel,
      timeoutMs: config.openai.timeoutMs,
    });
  }
  return createBuiltinGenerator();
}
