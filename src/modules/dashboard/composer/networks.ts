/**
 * What each of the account's connections can take, read from its connector (`capabilities` and `captionLimit`, never a
 * list kept here), and what a draft would send there: the texts counted by the network's own rule, and the parts it
 * cannot take as sentences. The page script repeats the same rules from the data attributes written here.
 */
import type { CaptionLimit, NetworkCapabilities } from "../../../publishing/connector";
import { connectorFor } from "../../../publishing/registry";
import { openConnection } from "../../../store/connections";
import type { Deps } from "../../../deps";
import { listConnections } from "../../connections/service";
import { captionLength } from "../../../publishing/caption-count";
import type { Draft, DraftImage, DraftPart } from "./draft";

/** One connection the post could go to. */
export interface Network {
  connectionId: string;
  platform: string;
  /** The connection's label: the handle people know it by (`@bob@mastodon.social`). */
  label: string;
  caps: NetworkCapabilities;
  limit: CaptionLimit | null;
  ready: boolean;
}

/** The account's connections with what each can take. */
export async function accountNetworks(deps: Deps, accountId: string): Promise<Network[]> {
  return (await listConnections(deps, accountId)).map((row) => {
    const connector = connectorFor(row.platform);
    const open = openConnection(deps, row);
    return { connectionId: row.id, platform: row.platform, label: row.label, caps: connector.capabilities(open), limit: connector.captionLimit(open), ready: row.readyToPost };
  });
}

/** The platforms among `networks`, once each, in the order first seen. */
export function platformsOf(networks: readonly Network[]): string[] {
  return [...new Set(networks.map((n) => n.platform))];
}

/** What one platform's targets send from `draft` (its version applied, as contentForPlatform does at scheduling). */
export interface Effective {
  caption: string;
  images: DraftImage[];
  thread: DraftPart[];
  firstComment: string;
}

/** The draft with the platform's version applied. */
export function effectiveFor(draft: Draft, platform: string): Effective {
  const v = draft.versions[platform];
  return {
    caption: v && v.caption.trim() !== "" ? v.caption : draft.caption,
    images: draft.images,
    thread: v?.noThread ? [] : draft.thread,
    firstComment: v?.noFirstComment ? "" : draft.firstComment,
  };
}

/** The length `limit` gives `typed` as it will be stored (trimmed): the schedule service's own count (caption-count.ts). */
export function countFor(limit: CaptionLimit, typed: string): number {
  return captionLength(typed.trim(), limit);
}

/** One counted text of what a network sends. */
export interface Count {
  label: string;
  n: number;
  max: number;
}

/** Every text `e` sends on `network`, counted (none when the network has no limit). */
export function countsFor(network: Network, e: Effective): Count[] {
  const limit = network.limit;
  if (!limit) return [];
  const out: Count[] = [{ label: "Post", n: countFor(limit, e.caption), max: limit.maxGraphemes }];
  e.thread.forEach((part, i) => out.push({ label: `Part ${i + 2}`, n: countFor(limit, part.caption), max: limit.maxGraphemes }));
  if (e.firstComment.trim() !== "") out.push({ label: "First comment", n: countFor(limit, e.firstComment), max: limit.maxGraphemes });
  return out;
}

/** A short name for a MIME type ("GIF"). */
function typeName(mime: string): string {
  return (mime.split("/")[1] ?? mime).toUpperCase();
}

/**
 * What `network` cannot take of `e`, as sentences telling the person what to do (the schedule service refuses the
 * same with 409 not_schedulable). `mimeOf` gives each asset's type.
 */
export function hintsFor(network: Network, e: Effective, mimeOf: (assetId: string) => string | undefined): string[] {
  const { caps } = network;
  const name = caps.name;
  const out: string[] = [];
  const tooMany = (count: number, where: string) => {
    if (count <= caps.maxImages) return;
    out.push(caps.maxImages === 0 ? `${name} posts text only: remove the images of ${where}.` : `${name} takes at most ${caps.maxImages} images per post; ${where} has ${count}. Remove ${count - caps.maxImages}.`);
  };
  tooMany(e.images.length, "the post");
  if (caps.requiresImage && e.images.length === 0) out.push(`${name} needs at least one image in the post.`);
  if (e.thread.length > 0 && caps.maxThreadParts === 0) out.push(`${name} has no threads: tick “No thread on ${name}” below, or it cannot be scheduled there.`);
  else if (e.thread.length > caps.maxThreadParts) out.push(`${name} takes at most ${caps.maxThreadParts} thread parts; this thread has ${e.thread.length}.`);
  else e.thread.forEach((part, i) => tooMany(part.images.length, `part ${i + 2}`));
  if (e.firstComment.trim() !== "" && !caps.firstComment) out.push(`${name} takes no first comment: tick “No first comment on ${name}” below, or it cannot be scheduled there.`);
  const types = new Set<string>();
  for (const image of [...e.images, ...e.thread.flatMap((p) => p.images)]) {
    const mime = mimeOf(image.assetId);
    if (mime && !caps.imageTypes.includes(mime)) types.add(typeName(mime));
  }
  if (types.size > 0) out.push(`${name} cannot send ${[...types].join(" or ")} images; choose other images.`);
  return out;
}
