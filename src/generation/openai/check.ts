/**
 * "Test" on the Instance page: one small chat completion against an OpenAI-compatible server, answered as a result a
 * person can read (what the server said, or why it could not be reached), never with the API key in it.
 */
import { CHAT_PATH } from "./chat.ts";
import { type ClientConfig, postJson } from "./client.ts";

/** How long the test waits for the server. */
export const CHECK_TIMEOUT_MS = 20_000;

export type ModelCheck = { ok: true; model: string; reply: string } | { ok: false; message: string };

/** Sends "Reply with OK." to `model` and answers what came back, or the failure as a sentence. */
export async function checkChatModel(cfg: Omit<ClientConfig, "timeoutMs"> & { timeoutMs?: number }, model: string): Promise<ModelCheck> {
  try {
    const answer = await postJson(
      { ...cfg, timeoutMs: cfg.timeoutMs ?? CHECK_TIMEOUT_MS },
      CHAT_PATH,
      { model, messages: [{ role: "user", content: "Reply with OK." }], max_tokens: 16 },
      "The test",
    );
    const choices = (answer as { choices?: unknown } | null)?.choices;
    const content = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content : undefined;
    if (typeof content !== "string") return { ok: false, message: "The server answered, but not like a chat completion (no choices with a message)." };
    const answeredModel = (answer as { model?: unknown }).model;
    return { ok: true, model: typeof answeredModel === "string" ? answeredModel : model, reply: content.trim().slice(0, 200) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
