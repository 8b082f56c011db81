/**
 * The few Discord types the webhook client uses, hand-typed from test/peers/platform-specs/discord.openapi.json
 * (discord/discord-api-spec, "Discord HTTP API (Preview)", API v10): each interface names the schema it follows and
 * keeps only the fields Seedcast reads or sends, with the description's names and optionality. Hand-typed rather than
 * generated: the description is 1.3 MB and openapi-typescript's output for it would be ~40,000 lines for five types.
 * test/peers/discord/ validates every request the client sends against the description itself.
 */

/** components.schemas.SnowflakeType: a 64-bit id as a decimal string. */
export type Snowflake = string;

/** components.schemas.MessageAttachmentRequest (inside IncomingWebhookRequestPartial.attachments). */
export interface MessageAttachmentRequest {
  /** The index `n` of the multipart field `files[n]` that carries the bytes. */
  id: Snowflake;
  filename?: string | null;
  /** Alt text, up to 1,024 characters. */
  description?: string | null;
}

/** components.schemas.MessageAllowedMentionsRequest. */
export interface MessageAllowedMentionsRequest {
  parse?: ("users" | "roles" | "everyone")[] | null;
}

/** components.schemas.IncomingWebhookRequestPartial: the body of execute_webhook (JSON, or `payload_json` in multipart). */
export interface IncomingWebhookRequestPartial {
  /** Up to 2,000 characters. */
  content?: string | null;
  attachments?: MessageAttachmentRequest[] | null;
  allowed_mentions?: MessageAllowedMentionsRequest | null;
}

/** components.schemas.MessageResponse (the fields Seedcast reads). */
export interface MessageResponse {
  id: Snowflake;
  channel_id: Snowflake;
  content: string;
  attachments: { id: Snowflake; filename: string; description?: string | null; url: string }[];
}

/** components.schemas.GuildIncomingWebhookResponse (get_webhook_by_token's answer for a channel webhook). */
export interface GuildIncomingWebhookResponse {
  id: Snowflake;
  name: string;
  type: number;
  channel_id: Snowflake | null;
  guild_id?: Snowflake | null;
}

/** components.schemas.ErrorResponse (4XX) and RatelimitedResponse (429). */
export interface ErrorResponse {
  code: number;
  message: string;
  errors?: unknown;
  /** RatelimitedResponse only: seconds to wait. */
  retry_after?: number;
}
