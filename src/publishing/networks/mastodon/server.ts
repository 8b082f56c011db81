/**
 * Recognising a server that speaks Mastodon's API, and what it really does (decisions.md §12, "fediverse detection").
 * Two documents, both public:
 * - the instance document, `GET /api/v2/instance` (Mastodon ≥ 4.0), else `GET /api/v1/instance`
 *   (https://docs.joinmastodon.org/methods/instance/): `configuration.statuses.max_characters`,
 *   `max_media_attachments`, `characters_reserved_per_url`, `configuration.media_attachments.image_size_limit`;
 * - NodeInfo (https://nodeinfo.diaspora.software/protocol.html): `GET /.well-known/nodeinfo` lists links whose `rel`
 *   is `http://nodeinfo.diaspora.software/ns/schema/2.x`; the linked document names `software.name` and `version`.
 * The software and its version decide whether the server honours `scheduled_at`: GoToSocial before 0.20 accepts the
 * field and posts at once, so Seedcast's own dispatcher holds posts for it (`nativeScheduling: false` in the
 * connection's meta, read where holdsNatively is decided).
 */
import type { Deps } from "../../../deps";
import type { ConnectionMeta } from "../../../store/connections";
import { providerFetch } from "../../outbound";

/** What a Mastodon-API server told about itself. */
export interface ServerFacts {
  /** NodeInfo `software.name`, lower case (`mastodon`, `gotosocial`, `pleroma`, `akkoma`…), or null when unknown. */
  software: string | null;
  /** The software's version (`4.3.2`, `0.19.1+git-…`), or null. */
  version: string | null;
  /** Null when the server keeps its instance document for signed-in callers (401/403). */
  limits: ServerLimits | null;
}

/** Limits read from the instance document's `configuration`; a field the server did not send is absent. */
export interface ServerLimits {
  maxCharacters?: number;
  maxMediaAttachments?: number;
  charactersReservedPerUrl?: number;
  imageSizeLimit?: number;
}

/** The server does not answer an instance document at all: it is not a Mastodon-API server. */
export const NOT_MASTODON = "not_mastodon" as const;

const NODEINFO_REL = /^https?:\/\/nodeinfo\.diaspora\.software\/ns\/schema\/2\.\d+$/;

/**
 * Servers known to accept `scheduled_at` and ignore it, by NodeInfo software name: posted at once, whatever the time.
 * The value is the first version that holds scheduled statuses (GoToSocial 0.20.0 added them).
 */
const IGNORES_SCHEDULED_AT_BEFORE: Readonly<Record<string, readonly number[]>> = {
  gotosocial: [0, 20, 0],
};

function base(endpoint: string): string {
  return endpoint.replace(/\/+$/, "");
}

function positiveInt(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** `4.3.2`, `0.19.1+git-abc`, `v0.19.1` → [4, 3, 2]; null when it does not start with a version. */
export function versionNumbers(version: string): number[] | null {
  const match = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version.trim());
  if (!match) return null;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function before(version: number[], bound: readonly number[]): boolean {
  for (let i = 0; i < 3; i++) {
    const a = version[i] ?? 0;
    const b = bound[i] ?? 0;
    if (a !== b) return a < b;
  }
  return false;
}

/**
 * True when the server holds a status sent with `scheduled_at` until its time; false for software known to ignore
 * the field (an unknown version of such software counts as ignoring it: posting early is the worse mistake).
 */
export function honoursScheduledAt(facts: Pick<ServerFacts, "software" | "version">): boolean {
  if (facts.software === null) return true;
  const bound = IGNORES_SCHEDULED_AT_BEFORE[facts.software];
  if (!bound) return true;
  const numbers = facts.version === null ? null : versionNumbers(facts.version);
  return numbers !== null && !before(numbers, bound);
}

/**
 * The software a Mastodon-compatible instance document names in its version, `3.5.3 (compatible; Pleroma 2.5.0)`,
 * for servers without NodeInfo.
 */
function compatibleSoftware(version: unknown): { software: string; version: string } | null {
  if (typeof version !== "string") return null;
  const match = /\(compatible;\s*([A-Za-z][\w-]*)\s+([^\s)]+)\)/.exec(version);
  return match ? { software: match[1]!.toLowerCase(), version: match[2]! } : null;
}

interface InstanceAnswer {
  body: Record<string, unknown>;
  version: 1 | 2;
}

/**
 * The instance document: v2, else v1. "private" on 401/403 (DISALLOW_UNAUTHENTICATED_API_ACCESS), NOT_MASTODON when
 * neither answers one (v2 names its `domain`, v1 its `uri`). Throws on 5xx and when the server cannot be reached.
 */
async function instanceDocument(deps: Pick<Deps, "config">, endpoint: string): Promise<InstanceAnswer | "private" | typeof NOT_MASTODON> {
  for (const [path, key, version] of [["/api/v2/instance", "domain", 2], ["/api/v1/instance", "uri", 1]] as const) {
    const res = await providerFetch(deps, `${base(endpoint)}${path}`);
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      return "private";
    }
    if (res.status >= 500) throw new Error(`${path} answered HTTP ${res.status}`);
    if (!res.ok) {
      await res.body?.cancel();
      continue;
    }
    const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
    if (body !== null && typeof body === "object" && typeof body[key] === "string" && body[key] !== "") return { body, version };
  }
  return NOT_MASTODON;
}

function limitsOf(answer: InstanceAnswer): ServerLimits {
  const configuration = (answer.body.configuration ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const statuses = configuration.statuses ?? {};
  const media = configuration.media_attachments ?? {};
  const limits: ServerLimits = {};
  // v1 of Pleroma/Akkoma and old Mastodon forks name the length at the top level.
  const maxCharacters = positiveInt(statuses.max_characters) ?? positiveInt(answer.body.max_toot_chars);
  if (maxCharacters !== undefined) limits.maxCharacters = maxCharacters;
  const maxMedia = positiveInt(statuses.max_media_attachments);
  if (maxMedia !== undefined) limits.maxMediaAttachments = maxMedia;
  const perUrl = positiveInt(statuses.characters_reserved_per_url);
  if (perUrl !== undefined) limits.charactersReservedPerUrl = perUrl;
  const imageSize = positiveInt(media.image_size_limit);
  if (imageSize !== undefined) limits.imageSizeLimit = imageSize;
  return limits;
}

/** NodeInfo 2.x's software name and version, or null when the server publishes none (or it cannot be read). */
async function nodeInfo(deps: Pick<Deps, "config">, endpoint: string): Promise<{ software: string; version: string | null } | null> {
  try {
    const index = await providerFetch(deps, `${base(endpoint)}/.well-known/nodeinfo`);
    if (!index.ok) {
      await index.body?.cancel();
      return null;
    }
    const links = ((await index.json().catch(() => null)) as { links?: unknown } | null)?.links;
    if (!Array.isArray(links)) return null;
    const hrefs = links
      .filter((l): l is { rel: string; href: string } => typeof l?.rel === "string" && typeof l?.href === "string" && NODEINFO_REL.test(l.rel))
      .sort((a, b) => b.rel.localeCompare(a.rel))
      .map((l) => l.href);
    const href = hrefs[0];
    // Only a document on the same server: the link is the server's word about itself, never a redirect elsewhere.
    if (!href || new URL(href, endpoint).origin !== new URL(endpoint).origin) return null;
    const doc = await providerFetch(deps, new URL(href, endpoint).toString());
    if (!doc.ok) {
      await doc.body?.cancel();
      return null;
    }
    const software = ((await doc.json().catch(() => null)) as { software?: { name?: unknown; version?: unknown } } | null)?.software;
    if (typeof software?.name !== "string" || software.name === "") return null;
    return { software: software.name.toLowerCase(), version: typeof software.version === "string" ? software.version : null };
  } catch {
    return null;
  }
}

/**
 * Reads what the server at `endpoint` is and what it allows. Answers NOT_MASTODON when it does not speak Mastodon's
 * API. Throws when it cannot be reached or answers 5xx (the caller says so in plain words).
 */
export async function detectServer(deps: Pick<Deps, "config">, endpoint: string): Promise<ServerFacts | typeof NOT_MASTODON> {
  const instance = await instanceDocument(deps, endpoint);
  if (instance === NOT_MASTODON) return NOT_MASTODON;
  const info = await nodeInfo(deps, endpoint);
  // A server that keeps even its instance document private still names its software in NodeInfo; an address that
  // answers 401 to everything (an API behind its own keys) and has no NodeInfo is not a Mastodon server.
  if (instance === "private" && info === null) return NOT_MASTODON;
  const compatible = instance === "private" ? null : compatibleSoftware(instance.body.version);
  const software = info?.software ?? compatible?.software ?? (instance === "private" ? null : "mastodon");
  const version =
    info?.version ?? compatible?.version ?? (instance !== "private" && typeof instance.body.version === "string" ? instance.body.version : null);
  return { software, version, limits: instance === "private" ? null : limitsOf(instance) };
}

/**
 * The connection meta the facts give: limits the server stated (defaults where it stated none), its software, and
 * `nativeScheduling: false` for a server that ignores `scheduled_at`.
 */
export function serverMeta(facts: ServerFacts, defaults: Required<ServerLimits>): ConnectionMeta {
  const meta: ConnectionMeta = { nativeScheduling: honoursScheduledAt(facts) };
  if (facts.software !== null) meta.software = facts.software;
  if (facts.version !== null) meta.softwareVersion = facts.version;
  if (facts.limits !== null) {
    meta.maxCharacters = facts.limits.maxCharacters ?? defaults.maxCharacters;
    meta.maxMediaAttachments = facts.limits.maxMediaAttachments ?? defaults.maxMediaAttachments;
    meta.urlLength = facts.limits.charactersReservedPerUrl ?? defaults.charactersReservedPerUrl;
    meta.imageSizeLimit = facts.limits.imageSizeLimit ?? defaults.imageSizeLimit;
  }
  return meta;
}
