/**
 * Generate's `platforms` (decisions.md §13): a version per network whose caption the generator wrote for THAT
 * network's limit, at the same flat price. The limit is the strictest of the account's connections to the network
 * (Mastodon's is its server's), or the network's own default when none is connected; webhooks have no limit and get
 * no version. The generator writes up to that many characters (the builtin one: the same extractive caption, longer
 * or shorter), then the caption is counted under the network's own rule (Mastodon counts a URL as 23); one that
 * still does not fit is written again for the overshoot, then cut at a word. A version equal to the post's caption
 * is not kept: the network sends the post's.
 */
import type { StoredVariants } from "../../db/schema/post-content";
import type { ConnectionPlatform } from "../../db/schema/connections";
import type { Deps } from "../../deps";
import { firstGraphemes } from "../../lib/graphemes";
import { captionLength } from "../../publishing/caption-count";
import type { CaptionLimit } from "../../publishing/connector";
import { connectorFor } from "../../publishing/registry";
import { type OpenConnection, openConnection } from "../../store/connections";
import { listConnections } from "../connections/service";

/** Writes a caption of at most `maxGraphemes` (the generate's own writer: voice, banned words, 502s). */
export type CaptionWriter = (maxGraphemes: number) => Promise<string>;

/** The smallest caption limit any of the given ones allows (same rule within one network). */
function strictest(limits: readonly CaptionLimit[]): CaptionLimit | null {
  return limits.reduce<CaptionLimit | null>((min, l) => (min === null || l.maxGraphemes < min.maxGraphemes ? l : min), null);
}

/** What a connection of `platform` knows before its first check: nothing of its server (the network's defaults). */
function unconnected(accountId: string, platform: ConnectionPlatform): OpenConnection {
  return { id: "", accountId, platform, label: platform, endpoint: "", credentials: {}, session: null, meta: {} };
}

/** The caption limit a version for `platform` must fit, or null when the network has none (webhooks). */
export async function versionLimit(deps: Deps, accountId: string, platform: ConnectionPlatform): Promise<CaptionLimit | null> {
  const connector = connectorFor(platform);
  const mine = (await listConnections(deps, accountId)).filter((c) => c.platform === platform);
  if (mine.length === 0) return connector.captionLimit(unconnected(accountId, platform));
  return strictest(mine.map((c) => connector.captionLimit(openConnection(deps, c))).filter((l): l is CaptionLimit => l !== null));
}

/** `text` cut to fit `limit` at the last word boundary, with an ellipsis. */
function cutToFit(text: string, limit: CaptionLimit): string {
  let max = limit.maxGraphemes - 1;
  let cut = text;
  while (max > 0 && captionLength(cut, limit) > limit.maxGraphemes) {
    const head = firstGraphemes(text, max);
    const space = head.lastIndexOf(" ");
    cut = `${(space > 0 ? head.slice(0, space) : head).trimEnd()}…`;
    max -= Math.max(1, captionLength(cut, limit) - limit.maxGraphemes);
  }
  return cut;
}

/** A caption written for `limit`, counted under its rule. */
async function captionFor(write: CaptionWriter, limit: CaptionLimit): Promise<string> {
  const first = await write(limit.maxGraphemes);
  const over = captionLength(first, limit) - limit.maxGraphemes;
  if (over <= 0) return first;
  const again = await write(Math.max(1, limit.maxGraphemes - over));
  return captionLength(again, limit) <= limit.maxGraphemes ? again : cutToFit(again, limit);
}

/** The versions generate writes for `platforms`, given the post's caption. */
export async function platformVersions(
  deps: Deps,
  accountId: string,
  platforms: readonly ConnectionPlatform[],
  caption: string,
  write: CaptionWriter,
): Promise<StoredVariants> {
  const variants: StoredVariants = {};
  for (const platform of platforms) {
    const limit = await versionLimit(deps, accountId, platform);
    if (limit === null) continue;
    const version = await captionFor(write, limit);
    if (version !== caption) variants[platform] = { caption: version };
  }
  return variants;
}
