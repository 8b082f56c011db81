/**
 * Chat completions: sends messages, answers the assistant's text, and parses JSON-object answers.
 */

import type { ClientConfig } from "./client.ts";
import { generationError, postJson } from "./client.ts";

export const CHAT_PATH = "/chat/completions";

export type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string | ChatContentPart[];
}

/** Sends one chat completion asking for a JSON object and answers the parsed object. */
export async function chatJson(
  cfg: ClientConfig,
  model: string,
  messages: ChatMessage[],
  what: string,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const answer = await postJson(cfg, CHAT_PATH, { model, messages, response_format: { type: "json_object" } }, what, signal);
  const choices = (answer as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    throw generationError(`${what} failed: the generation server answered no choices`, cfg.apiKey);
  }
  const message = (choices[0] as { message?: { content?: unknown; refusal?: unknown } } | null)?.message;
  if (typeof message?.refusal === "string" && message.refusal !== "") {
    throw generationError(`${what} failed: the model refused: ${message.refusal.slice(0, 200)}`, cfg.apiKey);
  }
  if (typeof message?.content !== "string" || message.content.trim() === "") {
    throw generationError(`${what} failed: the answer had no message content`, cfg.apiKey);
  }
  return parseJsonObject(message.content, what, cfg.apiKey);
}

/** Parses the model's text as a JSON object; tolerates a ```json fence that some compatible servers add. */
function parseJsonObject(content: string, what: string, apiKey: string): Record<string, unknown> {
  const unfenced = content.trim().replace(/^```(?:json)?\s*/i, "").replace(/\s*```$/, "");
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfenced);
  } catch (err) {
    throw generationError(`${what} failed: the model's answer was not valid JSON`, apiKey, err);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw generationError(`${what} failed: the model's answer was not a JSON object`, apiKey);
  }
  return parsed as Record<string, unknown>;
}

/** Reads a required non-empty string field of a model's JSON answer. */
export function requireString(obj: Record<string, unknown>, field: string, what: string, apiKey: string): string {
  const value = obj[field];
  if (typeof value !== "string" || value.trim() === "") {
    throw generationError(`${what} failed: the model's answer had no "${field}" text`, apiKey);
  }
  return value.trim();
}
