/**
 * Connections: add (CLI and dashboard only; the API never creates them; an account is connected once, an address
 * without a scheme means https, a server that does not answer like its network is refused), check, list, remove. Credentials are
 * sealed at rest; every check (at connect, every 30 minutes, after an authentication failure while publishing)
 * stores `readyToPost` and a `blockedReason` that tells a person what to fix. Removal withdraws and fails what the
 * connection still had to send (removeConnection).
 */
import { and, asc, eq, inArray, isNull, lte, or } from "drizzle-orm";
import { type ConnectionPlatform, CONNECTION_PLATFORMS } from "../../db/schema/connections";
import { forUpdate } from "../../db/portable-sql";
import { accounts, connections, scheduledPostTargets } from "../../db/tables";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { BLUESKY_DEFAULT_SERVICE } from "../../publishing/bluesky";
import { parseWebhookUrl } from "../../publishing/networks/discord/client";
import { webhookEndpoint } from "../../publishing/networks/discord/connector";
import { TELEGRAM_API, botTokenProblem, normalizeChat } from "../../publishing/networks/telegram/client";
import type { CheckResult } from "../../publishing/connector";
import { refreshPostStatus } from "../../publishing/post-status";
import { withdrawPendingTargets } from "../../publishing/withdraw";
import { outboundProblem } from "../../publishing/outbound";
import { RelayListError, endpointOf, normalizeBlossom, normalizeRelays } from "../../publishing/networks/nostr/connection";
import { npubLabel } from "../../publishing/networks/nostr/connector";
import { NostrKeyError, parseSecretKey } from "../../publishing/networks/nostr/keys";
import { connectorFor } from "../../publishing/registry";
import { type ConnectionRow, openConnection } from "../../store/connections";
import { noticeConnectionBlocked } from "../../store/notices";
import { sealJson } from "../../store/sealing";


/** What the CLI prints and the targets list shows for one connection. */
export interface ConnectionView {
  accountId: string;
  platform: ConnectionPlatform;
  label: string;
  readyToPost: boolean;
  blockedReason: string | null;
}

export type AddConnectionInput =
  | { accountId: string; platform: "bluesky"; handle: string; appPassword: string; service?: string }
  | { accountId: string; platform: "mastodon"; instance: string; token: string }
  | { accountId: string; platform: "webhook"; url: string; secret: string }
  /** Nostr: a secret key (`nsec1…` or hex; the CLI and the dashboard make one when asked), 1–10 relays, an optional Blossom server. */
  | { accountId: string; platform: "nostr"; secretKey: string; relays: string | readonly string[]; blossom?: string }
  | { accountId: string; platform: "discord"; webhookUrl: string }
  | { accountId: string; platform: "telegram"; botToken: string; chat: string };

/** The platforms connected by pasting credentials (the others sign in: publishing/sign-in). */
export type PastedPlatform = AddConnectionInput["platform"];

const MIN_WEBHOOK_SECRET = 16;

/** True when `value` names a platform. */
export function isPlatform(value: string): value is ConnectionPlatform {
  return (CONNECTION_PLATFORMS as readonly string[]).includes(value);
}

/** The public view of a connection row. */
export function connectionView(row: ConnectionRow): ConnectionView {
  return { accountId: row.id, platform: row.platform, label: row.label, readyToPost: row.readyToPost, blockedReason: row.blockedReason };
}


/** An address typed without a scheme ("mastodon.social", "localhost:3000") means https. */
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

function normalizeEndpoint(deps: Pick<Deps, "config">, field: string, raw: string): string {
  const typed = raw.trim();
  if (typed === "") throw invalidField(field, "is required");
  let url: URL;
  try {
    url = new URL(HAS_SCHEME.test(typed) ? typed : `https://${typed}`);
  } catch {
    throw invalidField(field, "must be a URL");
  }
  const problem = outboundProblem(deps, url.toString());
  if (problem !== null) throw invalidField(field, problem);
  return url.toString().replace(/\/+$/, "");
}

/** The form field that holds a platform's address, and the one that holds its secret. */
const FIELDS: Record<PastedPlatform, { address: string; credentials: string }> = {
  bluesky: { address: "service", credentials: "appPassword" },
  mastodon: { address: "instance", credentials: "token" },
  webhook: { address: "url", credentials: "secret" },
  nostr: { address: "relays", credentials: "secretKey" },
  discord: { address: "webhookUrl", credentials: "webhookUrl" },
  telegram: { address: "chat", credentials: "botToken" },
};

/** A refusal of one field whose problem is a whole sentence (it says what to do). */
function sentence(field: string, problem: string): AppError {
  return new AppError("invalid_request", `${field}: ${problem}`, { details: [{ field, problem }] });
}

/** Validates the input into endpoint, label and credentials. */
function prepare(deps: Pick<Deps, "config">, input: AddConnectionInput): { endpoint: string; label: string; credentials: Record<string, string> } {
  switch (input.platform) {
    case "bluesky": {
      const handle = input.handle.trim().replace(/^@/, "");
      if (!/^[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/.test(handle) && !handle.startsWith("did:")) throw invalidField("handle", "must be a handle such as alice.bsky.social");
      if (input.appPassword.trim() === "") throw invalidField("appPassword", "is required");
      return {
        endpoint: normalizeEndpoint(deps, "service", input.service || BLUESKY_DEFAULT_SERVICE),
        label: `@${handle}`,
        credentials: { handle, appPassword: input.appPassword.trim() },
      };
    }
    case "mastodon": {
      const endpoint = normalizeEndpoint(deps, "instance", input.instance);
      if (input.token.trim() === "") throw invalidField("token", "is required");
      return { endpoint, label: new URL(endpoint).host, credentials: { token: input.token.trim() } };
    }
    case "webhook": {
      if (input.secret.length < MIN_WEBHOOK_SECRET) throw invalidField("secret", `must be at least ${MIN_WEBHOOK_SECRET} characters`);
      const endpoint = normalizeEndpoint(deps, "url", input.url);
      return { endpoint, label: new URL(endpoint).host, credentials: { secret: input.secret } };
    }
    case "nostr":
      return prepareNostr(deps, input);
    case "discord": {
      const webhook = parseWebhookUrl(input.webhookUrl);
      if ("problem" in webhook) throw sentence("webhookUrl", webhook.problem);
      return { endpoint: webhookEndpoint(webhook), label: "Discord webhook", credentials: { token: webhook.token } };
    }
    case "telegram": {
      const tokenProblem = botTokenProblem(input.botToken);
      if (tokenProblem !== null) throw sentence("botToken", tokenProblem);
      const chat = normalizeChat(input.chat);
      if (typeof chat !== "string") throw sentence("chat", chat.problem);
      return { endpoint: TELEGRAM_API, label: chat, credentials: { botToken: input.botToken.trim(), chat } };
    }
  }
}

/** A Nostr connection's fields: each mistake is a sentence on its field (the key is never echoed). */
function prepareNostr(
  deps: Pick<Deps, "config">,
  input: Extract<AddConnectionInput, { platform: "nostr" }>,
): { endpoint: string; label: string; credentials: Record<string, string> } {
  let keys: ReturnType<typeof parseSecretKey>;
  try {
    keys = parseSecretKey(input.secretKey);
  } catch (error) {
    if (error instanceof NostrKeyError) throw invalidField("secretKey", error.message);
    throw error;
  }
  let relays: string[];
  let blossom: string | null;
  try {
    relays = normalizeRelays(deps, input.relays);
  } catch (error) {
    if (error instanceof RelayListError) throw invalidField("relays", error.message);
    throw error;
  }
  try {
    blossom = normalizeBlossom(deps, input.blossom);
  } catch (error) {
    if (error instanceof RelayListError) throw invalidField("blossom", error.message);
    throw error;
  }
  const credentials: Record<string, string> = { secretKey: keys.secretHex, pubkey: keys.pubkey };
  if (blossom !== null) credentials.blossom = blossom;
  return { endpoint: endpointOf(relays), label: npubLabel(keys.npub), credentials };
}

/**
 * The connection of the account that is the same account on the same network as the one being added, if any: a
 * Bluesky handle on the same service; a Mastodon account (`@name@server`) once the check named it, or, when the check
 * failed and named no one, any connection to the same Mastodon server; a Discord webhook (its id); a Telegram channel
 * (whichever bot). Webhooks are never duplicates.
 */
function sameAccount(
  deps: Pick<Deps, "instanceSecret">,
  rows: readonly ConnectionRow[],
  candidate: { platform: ConnectionPlatform; endpoint: string; label: string; handle?: string; chat?: string; chatId?: string; checked: boolean },
): ConnectionRow | null {
  const lower = (v: string | undefined) => (v ?? "").toLowerCase();
  for (const row of rows) {
    if (row.platform !== candidate.platform || candidate.platform === "webhook") continue;
    if (candidate.platform === "nostr") {
      // The same key is the same Nostr account, whatever relays it lists.
      if (openConnection(deps, row).credentials.pubkey === candidate.handle) return row;
      continue;
    }
    if (candidate.platform === "telegram") {
      // One channel is connected once, whichever bot posts there: by the @name or id typed, or the id the check found.
      const open = openConnection(deps, row);
      const same = [open.credentials.chat, open.meta.telegramChatId, row.label].map(lower);
      if ([candidate.chat, candidate.chatId, candidate.label].some((v) => v !== undefined && v !== "" && same.includes(lower(v)))) return row;
      continue;
    }
    if (candidate.platform === "discord") {
      if (row.endpoint === candidate.endpoint) return row;
      continue;
    }
    if (candidate.platform === "bluesky") {
      const handle = lower(openConnection(deps, row).credentials.handle);
      if (row.endpoint === candidate.endpoint && (handle === lower(candidate.handle) || lower(row.label) === lower(candidate.label))) return row;
    } else if (row.endpoint === candidate.endpoint && (!candidate.checked || lower(row.label) === lower(candidate.label))) {
      return row;
    }
  }
  return null;
}

/** The refusal of a second connection to an account already connected: it points at the existing one. */
export function alreadyConnected(platform: PastedPlatform, row: ConnectionRow): AppError {
  const field = platform === "bluesky" ? "handle" : platform === "nostr" ? "secretKey" : FIELDS[platform].address;
  return new AppError("invalid_request", `${field}: ${row.label} is already connected; use Reconnect on it to enter new credentials.`, {
    details: [{ field, problem: `${row.label} is already connected; use Reconnect on it to enter new credentials.` }],
    connectionId: row.id,
  });
}

/** The refusal of a connection whose check failed, naming the field to change and what the check found. */
function checkRefused(platform: PastedPlatform, result: CheckResult): AppError {
  const field = result.field ?? FIELDS[platform][result.fix ?? "credentials"];
  const problem = result.blockedReason ?? "The connection could not be checked.";
  return new AppError("invalid_request", `${field}: ${problem}`, { details: [{ field, problem }], checkFailed: true });
}

export interface AddConnectionOptions {
  /**
   * Store a connection whose first check fails, not ready with the reason (the CLI's way; the default). The dashboard
   * passes false: nothing is stored, and the form is shown again with what was typed and what to fix.
   */
  keepWhenNotReady?: boolean;
}

/**
 * Adds a connection after checking it. Refused, with nothing stored: a second connection to an account already
 * connected (`connectionId` names it), and an address that does not answer like the network it claims to be. A failed
 * check stores it not ready with the reason, unless `keepWhenNotReady` is false (then it is refused as well).
 */
export async function addConnection(deps: Deps, input: AddConnectionInput, opts: AddConnectionOptions = {}): Promise<ConnectionView> {
  if (!isPlatform(input.platform)) throw invalidField("platform", `must be one of ${CONNECTION_PLATFORMS.join(", ")}`);
  const account = await deps.store.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, input.accountId)).get();
  if (!account) throw notFound("account");
  const { endpoint, label, credentials } = prepare(deps, input);
  const candidate = { platform: input.platform, endpoint, label, handle: credentials.handle ?? credentials.pubkey, chat: credentials.chat };
  const before = sameAccount(deps, await listConnections(deps, input.accountId), { ...candidate, checked: true });
  if (before) throw alreadyConnected(input.platform, before);
  const id = newId();
  const result = await connectorFor(input.platform).check(deps, { id, accountId: input.accountId, platform: input.platform, label, endpoint, credentials, session: null, meta: {} });
  if (!result.ready && (result.notThisNetwork || opts.keepWhenNotReady === false)) throw checkRefused(input.platform, result);
  const now = deps.clock.now();
  const finalLabel = result.label ?? label;
  await deps.store.write(async (tx) => {
    // Again inside the write, with the account row locked (PostgreSQL; SQLite has one writer), so two submits of the
    // same form cannot both add it.
    await forUpdate(deps.store.dialect, tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, input.accountId))).all();
    const rows = await tx.select().from(connections).where(eq(connections.accountId, input.accountId)).all();
    const twin = sameAccount(deps, rows, { ...candidate, label: finalLabel, chatId: result.meta?.telegramChatId, checked: result.ready });
    if (twin) throw alreadyConnected(input.platform, twin);
    await tx
      .insert(connections)
      .values({
        id,
        accountId: input.accountId,
        platform: input.platform,
        label: finalLabel,
        endpoint,
        credentialsSealed: sealJson(deps.instanceSecret, id, credentials),
        sessionSealed: result.session ? sealJson(deps.instanceSecret, id, result.session) : null,
        meta: JSON.stringify(result.meta ?? {}),
        readyToPost: result.ready,
        blockedReason: result.ready ? null : (result.blockedReason ?? "The connection needs attention."),
        checkedAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .run();
  });
  const row = await getConnection(deps, input.accountId, id);
  if (!row) throw notFound("connection");
  return connectionView(row);
}

/**
 * Checks new credentials (and endpoint) for a connection, then stores them in place with the check's outcome. The connection keeps its
 * id, so posts already scheduled to it go out with the new credentials. The platform cannot change.
 */
export async function replaceConnectionCredentials(deps: Deps, accountId: string, connectionId: string, input: AddConnectionInput): Promise<ConnectionView> {
  const row = await getConnection(deps, accountId, connectionId);
  if (!row) throw notFound("connection");
  if (input.platform !== row.platform) throw invalidField("platform", `must stay ${row.platform}; add a new connection for another platform`);
  const { endpoint, label, credentials } = prepare(deps, input);
  const result = await connectorFor(row.platform).check(deps, { id: row.id, accountId, platform: row.platform, label, endpoint, credentials, session: null, meta: {} });
  // An address that is not the network at all is refused and the old credentials stay; a failed check is stored.
  if (!result.ready && result.notThisNetwork) throw checkRefused(row.platform, result);
  const updated = await deps.store.write((tx) =>
    tx
      .update(connections)
      .set({ endpoint, label, credentialsSealed: sealJson(deps.instanceSecret, row.id, credentials), sessionSealed: null, updatedAt: deps.clock.now() })
      .where(eq(connections.id, row.id))
      .returning()
      .get(),
  );
  if (!updated) throw notFound("connection");
  return connectionView(await recordCheck(deps, updated, result));
}

/** Stores the outcome of a check. */
export async function recordCheck(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, row: ConnectionRow, result: CheckResult): Promise<ConnectionRow> {
  const now = deps.clock.now();
  const values: Partial<typeof connections.$inferInsert> = {
    readyToPost: result.ready,
    blockedReason: result.ready ? null : (result.blockedReason ?? "The connection needs attention."),
    checkedAt: now,
    updatedAt: now,
  };
  if (result.label) values.label = result.label;
  if (result.meta) values.meta = JSON.stringify(result.meta);
  if (result.session !== undefined) values.sessionSealed = result.session === null ? null : sealJson(deps.instanceSecret, row.id, result.session);
  const updated = await deps.store.write(async (tx) => {
    // A check that turns a ready connection blocked is a needs-attention notice, once: the update is conditional on
    // the state it leaves, so of two checks racing (two replicas) only one sees the turn.
    if (!result.ready) {
      const turned = await tx
        .update(connections)
        .set(values)
        .where(and(eq(connections.id, row.id), eq(connections.readyToPost, true)))
        .returning()
        .get();
      if (turned) {
        await noticeConnectionBlocked(tx, now, turned, turned.blockedReason);
        return turned;
      }
    }
    return tx.update(connections).set(values).where(eq(connections.id, row.id)).returning().get();
  });
  return updated ?? row;
}

/** Checks a connection's credentials against its provider now and stores readyToPost/blockedReason. */
export async function checkConnection(deps: Deps, connectionId: string): Promise<ConnectionView> {
  const row = await deps.store.db.select().from(connections).where(eq(connections.id, connectionId)).get();
  if (!row) throw notFound("connection");
  const open = openConnection(deps, row);
  const result = await connectorFor(row.platform).check(deps, open);
  return connectionView(await recordCheck(deps, row, result));
}



/** Every connection of an account, oldest first (the order people added them). */
export function listConnections(deps: Pick<Deps, "store">, accountId: string): Promise<ConnectionRow[]> {
  return deps.store.db.select().from(connections).where(eq(connections.accountId, accountId)).orderBy(asc(connections.createdAt), asc(connections.id)).all();
}

/** Every connection of every account, by account then oldest first (the CLI's `connections list`). */
export function listAllConnections(deps: Pick<Deps, "store">): Promise<ConnectionRow[]> {
  return deps.store.db.select().from(connections).orderBy(asc(connections.accountId), asc(connections.createdAt), asc(connections.id)).all();
}

/** One connection of an account, or null. */
export async function getConnection(deps: Pick<Deps, "store">, accountId: string, connectionId: string): Promise<ConnectionRow | null> {
  return (await deps.store.db.select().from(connections).where(and(eq(connections.id, connectionId), eq(connections.accountId, accountId))).get()) ?? null;
}

/** What a removed connection's pending targets say (they will never be sent). */
export const REMOVED_CONNECTION_MESSAGE = "The connection was removed before this was sent.";
const PENDING_TARGET = ["scheduled", "publishing"] as const;

function removalRefused(message: string): AppError {
  return new AppError("distribution_failed", message, { retryable: true });
}

/**
 * Removes a connection and stops what it would send. Every pending target is first claimed with a lease (so the
 * dispatcher keeps off it); provider-held ones (Mastodon scheduled statuses) are withdrawn at the provider, each
 * remembered as `withdrawn` the moment it is, so a retry never asks twice; a target whose last attempt has an
 * unknown outcome is reconciled with its provider first. Provider unreachable (or a delivery in
 * flight right now): 502 distribution_failed, retryable, and nothing is removed. Then one write transaction
 * fails every remaining pending or withdrawn target of the connection with REMOVED_CONNECTION_MESSAGE, recomputes
 * their posts' status and deletes the connection. A provider-held post found already published stays published.
 */
export async function removeConnection(deps: Deps, accountId: string, connectionId: string): Promise<void> {
  const row = await getConnection(deps, accountId, connectionId);
  if (!row) throw notFound("connection");
  const pending = await deps.store.db
    .select()
    .from(scheduledPostTargets)
    .where(and(eq(scheduledPostTargets.connectionId, row.id), inArray(scheduledPostTargets.status, PENDING_TARGET)))
    .all();
  const busy = () => removalRefused(`A delivery to ${row.label} is in progress right now; try removing the connection again in a moment.`);
  await withdrawPendingTargets(deps, pending, {
    busy,
    failed: (_target, why) => removalRefused(`Could not withdraw a scheduled post from ${row.label}: ${why} The connection is kept; try again.`),
    // A post that is out already stays published; removal goes on with the rest.
    onPublished: () => {},
    // A thread partly out can never be finished without its connection.
    partlyOut: "withdraw",
  });
  await deps.store.write(async (tx) => {
    const now = deps.clock.now();
    const failed = await tx
      .update(scheduledPostTargets)
      .set({
        status: "failed",
        errorMessage: REMOVED_CONNECTION_MESSAGE,
        nextAttemptAt: null,
        leaseToken: null,
        leaseExpiresAt: null,
        sendStartedAt: null,
        updatedAt: now,
      })
      .where(
        and(
          eq(scheduledPostTargets.connectionId, row.id),
          or(
            eq(scheduledPostTargets.status, "withdrawn"),
            and(inArray(scheduledPostTargets.status, PENDING_TARGET), or(isNull(scheduledPostTargets.leaseExpiresAt), lte(scheduledPostTargets.leaseExpiresAt, now))),
          ),
        ),
      )
      .returning({ postId: scheduledPostTargets.postId })
      .all();
    const claimedSince = await tx
      .select({ id: scheduledPostTargets.id })
      .from(scheduledPostTargets)
      .where(and(eq(scheduledPostTargets.connectionId, row.id), inArray(scheduledPostTargets.status, PENDING_TARGET)))
      .limit(1)
      .all();
    // A target claimed by a delivery after our claim pass: give up as a whole (the transaction rolls back).
    if (claimedSince.length > 0) throw busy();
    // In id order: on PostgreSQL each refresh locks its post row, and writers taking several take them in one order.
    for (const postId of [...new Set(failed.map((f) => f.postId))].sort()) await refreshPostStatus(tx, postId, now);
    const removed = await tx.delete(connections).where(and(eq(connections.id, row.id), eq(connections.accountId, accountId))).returning().all();
    if (removed.length === 0) throw notFound("connection");
  });
}

/** Re-checks every connection (the 30-minute job). Failures are recorded per connection, never thrown. */
export async function checkAllConnections(deps: Deps): Promise<{ checked: number; ready: number }> {
  const rows = await deps.store.db.select({ id: connections.id }).from(connections).all();
  let ready = 0;
  for (const { id } of rows) {
    try {
      if ((await checkConnection(deps, id)).readyToPost) ready++;
    } catch (error) {
      if (!(error instanceof AppError)) deps.log.warn("connection check failed", { connectionId: id, error: (error as Error).message });
    }
  }
  return { checked: rows.length, ready };
}
