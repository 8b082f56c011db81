/**
 * Discord's channel webhooks (https://discord.com/developers/docs/resources/webhook): parse a webhook URL, read the
 * webhook (get_webhook_by_token), execute it with `?wait=true` (execute_webhook: the answer is the stored message),
 * delete a message it sent (delete_webhook_message). Files go as multipart `files[n]` with `payload_json`
 * (https://discord.com/developers/docs/reference#uploading-files), each attachment's alt text as its `description`.
 * Every call goes through the outbound layer (src/publishing/outbound.ts), so PLATFORM_ORIGIN_OVERRIDES applies.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { type MultipartPart, providerFetch } from "../../outbound";
import type { ErrorResponse, GuildIncomingWebhookResponse, IncomingWebhookRequestPartial, MessageResponse } from "./types";

/** The API's base (discord.openapi.json `servers`). */
export const DISCORD_API = "https://discord.com/api/v10";
/** Where a stored connection points: the webhook without its token (the token is sealed with the credentials). */
export const DISCORD_WEBHOOKS = "https://discord.com/api/webhooks";

/** A webhook: its id (public) and token (the secret half of the URL). */
export interface DiscordWebhook {
  id: string;
  token: string;
}

/**
 * https://discord.com/api/webhooks/<id>/<token> and the forms Discord hands out as well: discordapp.com, the ptb. and
 * canary. clients' hosts, an API version segment (/api/v10/webhooks/…). Nothing after the token (no /slack, /github).
 */
const WEBHOOK_URL = /^https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v\d{1,2})?\/webhooks\/([0-9]{15,21})\/([A-Za-z0-9_.-]{20,200})\/?$/;

/** Parses a pasted webhook URL (query ignored: `?wait` and `?thread_id` are Seedcast's to set), or answers why not. */
export function parseWebhookUrl(raw: string): DiscordWebhook | { problem: string } {
  const typed = raw.trim();
  if (typed === "") return { problem: "Paste the channel's webhook URL." };
  const withoutQuery = typed.split(/[?#]/, 1)[0] ?? "";
  const match = WEBHOOK_URL.exec(withoutQuery);
  if (!match?.[1] || !match[2]) {
    return {
      problem:
        "This is not a Discord webhook URL. In Discord, open the channel's settings → Integrations → Webhooks, choose a webhook (or create one), click \"Copy Webhook URL\" and paste it here; it looks like https://discord.com/api/webhooks/123…/abc….",
    };
  }
  return { id: match[1], token: match[2] };
}

/** Runs `send`; a failure's message never carries the webhook's token (it is in the URL's path). */
async function redacted<T>(webhook: DiscordWebhook, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof DeliveryError && webhook.token !== "" && error.message.includes(webhook.token)) {
      throw new DeliveryError(error.kind, error.message.replaceAll(webhook.token, "<webhook token>"));
    }
    throw error;
  }
}

function webhookPath(webhook: DiscordWebhook): string {
  return `${DISCORD_API}/webhooks/${webhook.id}/${encodeURIComponent(webhook.token)}`;
}

/** A Discord answer that is not a success: the status and Discord's own words. */
export interface DiscordFailure {
  status: number;
  message: string;
  /** 429: seconds to wait. */
  retryAfter: number | null;
  /** Discord's JSON error code (10015 Unknown Webhook, 50027 Invalid Webhook Token, 50035 Invalid Form Body). */
  code: number | null;
}

async function failureOf(res: Response): Promise<DiscordFailure> {
  const text = await res.text().catch(() => "");
  let body: Partial<ErrorResponse> = {};
  try {
    body = JSON.parse(text) as Partial<ErrorResponse>;
  } catch {
    // not JSON (a proxy's page): the status speaks
  }
  const detail = body.errors === undefined ? "" : ` ${firstErrorDetail(body.errors)}`;
  return {
    status: res.status,
    message: typeof body.message === "string" ? `${body.message}${detail}`.trim() : `HTTP ${res.status}`,
    retryAfter: typeof body.retry_after === "number" ? body.retry_after : null,
    code: typeof body.code === "number" ? body.code : null,
  };
}

/** The first `_errors[].message` of Discord's nested ErrorDetails, with the path that led to it. */
function firstErrorDetail(errors: unknown, path: string[] = []): string {
  if (errors === null || typeof errors !== "object") return "";
  const record = errors as Record<string, unknown>;
  const list = record._errors;
  if (Array.isArray(list) && list.length > 0) {
    const first = list[0] as { message?: unknown };
    if (typeof first.message === "string") return `(${path.join(".") || "body"}: ${first.message})`;
  }
  for (const [key, value] of Object.entries(record)) {
    const found = firstErrorDetail(value, [...path, key]);
    if (found) return found;
  }
  return "";
}

/** GET the webhook (it answers its name, channel and server). */
export async function getWebhook(deps: Pick<Deps, "config">, webhook: DiscordWebhook): Promise<GuildIncomingWebhookResponse | DiscordFailure> {
  const res = await redacted(webhook, () => providerFetch(deps, webhookPath(webhook)));
  if (res.status !== 200) return failureOf(res);
  return readJson<GuildIncomingWebhookResponse>(res, "the webhook lookup");
}

/** One file of a message: its bytes, type, name and alt text. */
export interface DiscordFile {
  bytes: Uint8Array;
  mimeType: string;
  fileName: string;
  description: string | null;
}

/**
 * Executes the webhook with `?wait=true`: the message is stored when this answers it. Text alone goes as JSON; with
 * files, multipart with `payload_json` and `files[n]`, each attachment `{id: n, filename, description}`. Mentions
 * are never parsed (a caption's "@everyone" stays text). Throws the outbound layer's DeliveryError on no answer.
 */
export async function executeWebhook(
  deps: Pick<Deps, "config">,
  webhook: DiscordWebhook,
  content: string,
  files: readonly DiscordFile[],
): Promise<MessageResponse | DiscordFailure> {
  const payload: IncomingWebhookRequestPartial = { content, allowed_mentions: { parse: [] } };
  const url = `${webhookPath(webhook)}?wait=true`;
  let res: Response;
  if (files.length === 0) {
    res = await redacted(webhook, () => providerFetch(deps, url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(payload) }));
  } else {
    payload.attachments = files.map((f, n) => ({ id: String(n), filename: f.fileName, ...(f.description ? { description: f.description } : {}) }));
    const form: MultipartPart[] = [{ name: "payload_json", value: JSON.stringify(payload) }];
    files.forEach((f, n) => form.push({ name: `files[${n}]`, fileName: f.fileName, type: f.mimeType, bytes: f.bytes }));
    res = await redacted(webhook, () => providerFetch(deps, url, { method: "POST", body: form }));
  }
  // A server error, or a success whose answer cannot be read: the message may be stored, and a webhook cannot list it.
  if (res.status >= 500) throw new DeliveryError("unknown", `Discord answered HTTP ${res.status} to the message.`);
  if (res.status !== 200) return failureOf(res);
  return readJson<MessageResponse>(res, "the message");
}

/** A 200's JSON, or an unknown outcome when the answer cannot be read whole. */
async function readJson<T>(res: Response, what: string): Promise<T> {
  try {
    return (await res.json()) as T;
  } catch {
    throw new DeliveryError("unknown", `Discord's answer to ${what} could not be read.`);
  }
}

/** Deletes a message the webhook sent: true when deleted, false when Discord no longer had it. */
export async function deleteWebhookMessage(deps: Pick<Deps, "config">, webhook: DiscordWebhook, messageId: string): Promise<true | false | DiscordFailure> {
  const res = await redacted(webhook, () => providerFetch(deps, `${webhookPath(webhook)}/messages/${encodeURIComponent(messageId)}`, { method: "DELETE" }));
  if (res.status === 204) return true;
  const failure = await failureOf(res);
  return failure.status === 404 && failure.code === UNKNOWN_MESSAGE ? false : failure;
}

/** Discord's JSON error codes Seedcast tells apart (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json). */
export const UNKNOWN_WEBHOOK = 10015;
export const UNKNOWN_MESSAGE = 10008;
export const INVALID_WEBHOOK_TOKEN = 50027;

/** True when `value` is a failure rather than Discord's answer. */
export function isFailure(value: unknown): value is DiscordFailure {
  return value !== null && typeof value === "object" && "status" in value && "retryAfter" in value;
}
