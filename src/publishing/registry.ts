/** Platform → connector, in one place. */
import type { ConnectionPlatform } from "../db/schema/connections";
import { blueskyConnector } from "./bluesky";
import type { Connector } from "./connector";
import { mastodonConnector } from "./mastodon";
import { nostrConnector } from "./networks/nostr/connector";
import { discordConnector } from "./networks/discord/connector";
import { telegramConnector } from "./networks/telegram/connector";
import { webhookConnector } from "./webhook";
import { xConnector } from "./networks/x/connector";
import { linkedinConnector } from "./networks/linkedin/connector";
import { pinterestConnector } from "./networks/pinterest/connector";
import { instagramConnector } from "./networks/instagram/connector";
import { facebookConnector } from "./networks/facebook/connector";
import { threadsConnector } from "./networks/threads/connector";

const CONNECTORS: Record<ConnectionPlatform, Connector> = {
  bluesky: blueskyConnector,
  mastodon: mastodonConnector,
  nostr: nostrConnector,
  webhook: webhookConnector,
  discord: discordConnector,
  telegram: telegramConnector,
  x: xConnector,
  linkedin: linkedinConnector,
  pinterest: pinterestConnector,
  instagram: instagramConnector,
  facebook: facebookConnector,
  threads: threadsConnector,
};

/** The connector of `platform`. */
export function connectorFor(platform: ConnectionPlatform): Connector {
  return CONNECTORS[platform];
}
