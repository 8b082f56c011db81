/**
 * The connection store the connectors and the connections module both need: a row's sealed credentials and session
 * opened for use, a refreshed session saved, a connection marked as needing attention. Below publishing/ (which
 * delivers with them) and modules/connections (which adds, checks and removes them).
 */
import { and, eq } from "drizzle-orm";
import type { ConnectionPlatform } from "../db/schema/connections";
import { connections } from "../db/tables";
import type { Deps } from "../deps";
import { noticeConnectionBlocked } from "./notices";
import { openJson, sealJson } from "./sealing";

export type ConnectionRow = typeof connections.$inferSelect;

/** What the dispatcher and the schedule service know about a connection, with its secrets opened. */
export interface OpenConnection {
  id: string;
  accountId: string;
  platform: ConnectionPlatform;
  label: string;
  endpoint: string;
  credentials: Record<string, string>;
  /** Cached provider session (Bluesky JWTs), or null. */
  session: Record<string, string> | null;
  meta: ConnectionMeta;
}

/** What a credential check learnt about the provider; stored in clear on the connection. */
export interface ConnectionMeta {
  /** Mastodon: the instance's status length limit. */
  maxCharacters?: number;
  /** Mastodon: image size limit in bytes. */
  imageSizeLimit?: number;
  /** Mastodon: media attachments per status (the server's configuration). */
  maxMediaAttachments?: number;
  /** Threads: false when its check found BASE_URL not fetchable by Meta (images cannot go; text still does). */
  imagesFetchable?: boolean;
  /** Mastodon account id (to look up published statuses); Bluesky DID. */
  providerAccountId?: string;
  /** Mastodon-API servers: characters every URL counts for (`characters_reserved_per_url`). */
  urlLength?: number;
  /** Mastodon-API servers: the software NodeInfo names (`mastodon`, `gotosocial`…) and its version. */
  software?: string;
  softwareVersion?: string;
  /**
   * False when the server ignores `scheduled_at` (GoToSocial before 0.20): Seedcast's own dispatcher holds the post
   * until its time instead of handing it over (read where holdsNatively is decided). Absent means it may hold them.
   */
  nativeScheduling?: boolean;
  /** Discord: the channel the webhook posts to, and its server (for message links). */
  discordChannelId?: string;
  discordGuildId?: string;
  /** Telegram: the chat's numeric id, type (channel, supergroup, group), public username, and the bot's username. */
  telegramChatId?: string;
  telegramChatType?: string;
  telegramChatUsername?: string;
  telegramBotUsername?: string;
}

/** Opens a row's sealed credentials and session. */
export function openConnection(deps: Pick<Deps, "instanceSecret">, row: ConnectionRow): OpenConnection {
  return {
    id: row.id,
    accountId: row.accountId,
    platform: row.platform,
    label: row.label,
    endpoint: row.endpoint,
    credentials: openJson<Record<string, string>>(deps.instanceSecret, row.id, row.credentialsSealed),
    session: row.sessionSealed ? openJson<Record<string, string>>(deps.instanceSecret, row.id, row.sessionSealed) : null,
    meta: JSON.parse(row.meta) as ConnectionMeta,
  };
}

/**
 * Marks a connection as needing attention after the provider refused its credentials while publishing. The update
 * that turns it from ready to blocked (conditional on `ready_to_post`, so it happens once however many deliveries and
 * replicas see the refusal) also records the needs-attention notice.
 */
export async function markConnectionBlocked(deps: Pick<Deps, "store" | "clock">, connectionId: string, reason: string): Promise<void> {
  const now = deps.clock.now();
  await deps.store.write(async (tx) => {
    const set = { readyToPost: false, blockedReason: reason, checkedAt: now, updatedAt: now };
    const turned = await tx
      .update(connections)
      .set(set)
      .where(and(eq(connections.id, connectionId), eq(connections.readyToPost, true)))
      .returning({ id: connections.id, accountId: connections.accountId, label: connections.label, platform: connections.platform })
      .get();
    if (turned) await noticeConnectionBlocked(tx, now, turned, reason);
    else await tx.update(connections).set(set).where(eq(connections.id, connectionId)).run();
  });
}

/** Saves a refreshed provider session (sealed). */
export async function saveConnectionSession(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, connectionId: string, session: Record<string, string>): Promise<void> {
  await deps.store.write((tx) =>
    tx
      .update(connections)
      .set({ sessionSealed: sealJson(deps.instanceSecret, connectionId, session), updatedAt: deps.clock.now() })
      .where(eq(connections.id, connectionId))
      .run(),
  );
}
