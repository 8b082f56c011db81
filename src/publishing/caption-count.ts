/**
 * How a network counts a text against its limit (decisions.md §7, §13), declared by its connector's CaptionLimit:
 * its own `count` (X's weighted count), else user-perceived characters (graphemes) with every URL counted as
 * `urlLength` characters where the network does that (Mastodon: 23). The schedule service and the composer count
 * with this one function, so both agree.
 */
import { graphemeCount } from "../lib/graphemes";
import type { CaptionLimit } from "./connector";

/** A URL as the counting rules see one (Mastodon's own rule: http(s) up to the next space). */
const URL_RE = /https?:\/\/[^\s<>"]+/g;

/** The length of `text` under `limit`'s counting rule. */
export function captionLength(text: string, limit: Pick<CaptionLimit, "count" | "urlLength">): number {
  if (limit.count) return limit.count(text);
  const counted = limit.urlLength === undefined ? text : text.replace(URL_RE, "x".repeat(limit.urlLength));
  return graphemeCount(counted);
}
