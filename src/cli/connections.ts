/**
 * `seedcast connections add|check|list|remove`: the admin's way to connect social accounts (the API never does).
 * `add` checks the credentials at once and prints `{accountId, platform, label, readyToPost, blockedReason}`;
 * a refused check still stores the connection, not ready, with the reason (Bluesky, Mastodon, webhooks: the person may
 * fix things on the network's side and check again). Discord and Telegram are pasted in one go, so a refused check
 * stores nothing: the sentence says what to fix. An account already connected, and an address that does not answer
 * like the network named, are refused with nothing stored (the service's rules, as in the dashboard). `list` without
 * `--account` lists every account's connections with their state.
 */
import { CONNECTION_PLATFORMS, type ConnectionPlatform } from "../db/schema/connections";
import type { Deps } from "../deps";
import {
  type AddConnectionInput,
  addConnection,
  checkConnection,
  connectionView,
  getConnection,
  isPastedPlatform,
  isPlatform,
  type PastedPlatform,
  listAllConnections,
  listConnections,
  removeConnection,
} from "../modules/connections/service";
import { generateKeys } from "../publishing/networks/nostr/keys";
import { UsageError, optional, output, parse, required } from "./args";

const USAGE =
  "usage: seedcast connections add --account ID --platform bluesky --handle H --app-password P [--service URL]\n" +
  "       seedcast connections add --account ID --platform mastodon --instance URL --token T\n" +
  "       seedcast connections add --account ID --platform webhook --url URL --secret S\n" +
  "       seedcast connections add --account ID --platform nostr (--secret-key K | --generate-key [--show-secret-key]) --relays R1,R2 [--blossom URL]\n" +
  "       seedcast connections add --account ID --platform discord --webhook-url URL\n" +
  "       seedcast connections add --account ID --platform telegram --bot-token T --chat @channel|ID\n" +
  "       seedcast connections check ID --account ID | list [--account ID] | remove ID --account ID";

const FLAGS = ["account", "platform", "handle", "app-password", "service", "instance", "token", "url", "secret", "secret-key", "relays", "blossom", "webhook-url", "bot-token", "chat"];
const BOOLEANS = ["generate-key", "show-secret-key"];
/** Pasted in one go: a failed check stores nothing (the sentence says what to fix). */
const REFUSE_WHEN_NOT_READY: ReadonlySet<string> = new Set(["discord", "telegram"]);

/** A key made by `--generate-key`: its npub is printed; its nsec only with `--show-secret-key`, this once. */
interface MintedKey {
  npub: string;
  nsec: string | null;
}

function addInput(flags: Record<string, string | boolean | undefined>): { input: AddConnectionInput; minted: MintedKey | null } {
  const accountId = required(flags, "account");
  const platform = required(flags, "platform");
  if (!isPlatform(platform)) throw new UsageError(`--platform must be one of ${CONNECTION_PLATFORMS.join(", ")}\n${USAGE}`);
  if (platform === "nostr") return nostrInput(accountId, flags);
  if (!isPastedPlatform(platform)) {
    throw new UsageError(`${platform} is connected by signing in: use "Connect" on the dashboard's Connections page.\n${USAGE}`);
  }
  return { input: pastedInput(accountId, platform, flags), minted: null };
}

function nostrInput(accountId: string, flags: Record<string, string | boolean | undefined>): { input: AddConnectionInput; minted: MintedKey | null } {
  const generate = flags["generate-key"] === true;
  if (generate === (optional(flags, "secret-key") !== undefined)) throw new UsageError(`give either --secret-key or --generate-key\n${USAGE}`);
  if (!generate && flags["show-secret-key"] === true) throw new UsageError("--show-secret-key goes with --generate-key: a key you pasted is never printed");
  const blossom = optional(flags, "blossom");
  const keys = generate ? generateKeys() : null;
  const input: AddConnectionInput = {
    accountId,
    platform: "nostr",
    secretKey: keys ? keys.secretHex : required(flags, "secret-key"),
    relays: required(flags, "relays"),
    ...(blossom ? { blossom } : {}),
  };
  return { input, minted: keys ? { npub: keys.npub, nsec: flags["show-secret-key"] === true ? keys.nsec : null } : null };
}

function pastedInput(accountId: string, platform: Exclude<PastedPlatform, "nostr">, flags: Record<string, string | boolean | undefined>): AddConnectionInput {
  switch (platform) {
    case "bluesky": {
      const service = optional(flags, "service");
      return { accountId, platform, handle: required(flags, "handle"), appPassword: required(flags, "app-password"), ...(service ? { service } : {}) };
    }
    case "mastodon":
      return { accountId, platform, instance: required(flags, "instance"), token: required(flags, "token") };
    case "webhook":
      return { accountId, platform, url: required(flags, "url"), secret: required(flags, "secret") };
    case "discord":
      return { accountId, platform, webhookUrl: required(flags, "webhook-url") };
    case "telegram":
      return { accountId, platform, botToken: required(flags, "bot-token"), chat: required(flags, "chat") };
    default:
      throw new UsageError(`${platform} is connected by signing in: use "Connect" on the dashboard's Connections page.\n${USAGE}`);
  }
}

function viewText(v: ReturnType<typeof connectionView>, owner?: string): string {
  const account = owner === undefined ? "" : `${owner}  `;
  return `${account}${v.accountId}  ${v.platform.padEnd(8)}  ${v.readyToPost ? "ready  " : "blocked"}  ${v.label}${v.blockedReason ? `\n    ${v.blockedReason}` : ""}`;
}

/** Dispatches the connections subcommands. */
export async function connectionsCommand(deps: Deps, argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { flags, positionals, json } = parse(rest, FLAGS, BOOLEANS);
  switch (sub) {
    case "add": {
      const { input, minted } = addInput(flags);
      const view = await addConnection(deps, input, { keepWhenNotReady: !REFUSE_WHEN_NOT_READY.has(input.platform) });
      if (minted === null) {
        output(json, view, viewText(view));
        return;
      }
      const keyLines = `\n    npub: ${minted.npub}${minted.nsec ? `\n    nsec: ${minted.nsec}  (shown this once: keep it somewhere safe)` : ""}`;
      output(json, { ...view, npub: minted.npub, ...(minted.nsec ? { nsec: minted.nsec } : {}) }, `${viewText(view)}${keyLines}`);
      return;
    }
    case "check": {
      const id = positionals[0];
      if (!id) throw new UsageError(USAGE);
      const accountId = required(flags, "account");
      if (!(await getConnection(deps, accountId, id))) throw new UsageError(`no connection ${id} in account ${accountId}`);
      const view = await checkConnection(deps, id);
      output(json, view, viewText(view));
      return;
    }
    case "list": {
      const account = optional(flags, "account");
      if (account) {
        const views = (await listConnections(deps, account)).map(connectionView);
        output(json, { connections: views }, views.map((v) => viewText(v)).join("\n") || "(no connections)");
        return;
      }
      const rows = await listAllConnections(deps);
      const views = rows.map((row) => ({ account: row.accountId, ...connectionView(row) }));
      output(json, { connections: views }, views.map((v) => viewText(v, v.account)).join("\n") || "(no connections)");
      return;
    }
    case "remove": {
      const id = positionals[0];
      if (!id) throw new UsageError(USAGE);
      await removeConnection(deps, required(flags, "account"), id);
      output(json, { accountId: id, removed: true });
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}
