/**
 * What the account posted lately, to settle an unknown outcome without sending again (decisions.md §12): some servers
 * answer a repeated `Idempotency-Key` with 500 instead of the status it created, so a resend there is no safe probe.
 * `GET /api/v1/accounts/:id/statuses` (https://docs.joinmastodon.org/methods/accounts/#statuses) lists the account's
 * statuses newest first; the one sent is the one with the post's text, created no earlier than a little before the
 * post's time.
 */
import type { Deps } from "../../../deps";
import type { OpenConnection } from "../../../store/connections";
import { DeliveryError } from "../../connector";
import { failureKindOf, providerFetch, providerMessage } from "../../outbound";

/** The documented maximum page. */
const LOOKUP_LIMIT = 40;
/** A status this long before the post's time is not its (clocks differ a little). */
const WINDOW_BEFORE_MS = 2 * 60 * 1000;

/** A status's HTML content as the plain text it was written from (paragraphs, line breaks, the five entities). */
export function statusText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/p>\s*<p>/gi, "\n\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

/**
 * The account's recent status with `caption` created from `since` − 2 minutes on, or null when there is none.
 * Throws DeliveryError when the server cannot tell now (the caller tries again later, sending nothing).
 */
export async function findRecentStatus(
  deps: Pick<Deps, "config">,
  connection: OpenConnection,
  caption: string,
  since: number,
): Promise<{ id: string; url: string | null } | null> {
  const accountId = connection.meta.providerAccountId;
  if (!accountId) return null;
  const base = connection.endpoint.replace(/\/+$/, "");
  const res = await providerFetch(deps, `${base}/api/v1/accounts/${encodeURIComponent(accountId)}/statuses?limit=${LOOKUP_LIMIT}`, {
    headers: { authorization: `Bearer ${connection.credentials.token ?? ""}` },
  });
  if (!res.ok) {
    const words = await providerMessage(res);
    const kind = failureKindOf(res.status);
    throw new DeliveryError(kind === "permanent" ? "transient" : kind, `The Mastodon server could not list the account's recent posts: ${words}`);
  }
  const statuses = (await res.json().catch(() => [])) as Array<{ id?: unknown; url?: unknown; created_at?: unknown; content?: unknown }>;
  const expected = caption.trim();
  for (const s of Array.isArray(statuses) ? statuses : []) {
    if (typeof s.id !== "string" || typeof s.content !== "string" || typeof s.created_at !== "string") continue;
    if (Date.parse(s.created_at) < since - WINDOW_BEFORE_MS) continue;
    if (statusText(s.content) === expected) return { id: s.id, url: typeof s.url === "string" ? s.url : null };
  }
  return null;
}
