/**
 * The one interface every publishing platform implements (Bluesky, Mastodon, webhooks, …), and the error type that
 * tells the dispatcher what to do with a failure: retry later, give up with the platform's message, mark the
 * connection as needing attention, or reconcile first because the outcome is unknown.
 */
import type { ConnectionPlatform } from "../db/schema/connections";
import type { Deps } from "../deps";
import type { ConnectionMeta, OpenConnection } from "../store/connections";

/** One image of what a target sends: the library asset's bytes, type, public URL and its own alt text. */
export interface DeliveryImage {
  assetId: string;
  bytes: Uint8Array;
  mimeType: string;
  url: string;
  altText: string | null;
}

/** One follow-up part of a thread. */
export interface DeliveryPart {
  caption: string;
  images: DeliveryImage[];
}

/**
 * What one target sends (decisions.md §13): the post's snapshot with that target's network version applied. Parts go
 * out in this order: the post itself, each thread part, then the first comment.
 */
export interface DeliveryContent {
  postId: string;
  scheduledTime: number;
  caption: string;
  /** The post's images in order (0–10). */
  images: DeliveryImage[];
  /** Follow-up parts (0–24), published as replies or following messages. */
  thread: DeliveryPart[];
  /** Posted as the first comment or reply right after the post; null when none. */
  firstComment: string | null;
}

/** One part of what a target sends, in sending order (the post, each thread part, the first comment). */
export interface OutgoingPart {
  /** Its index in the sending order: 0 is the post. */
  index: number;
  kind: "post" | "thread" | "first_comment";
  caption: string;
  images: DeliveryImage[];
}

/** The parts `content` goes out as, in order: the post, each thread part, then the first comment. */
export function partsOf(content: Pick<DeliveryContent, "caption" | "images" | "thread" | "firstComment">): OutgoingPart[] {
  const parts: OutgoingPart[] = [{ index: 0, kind: "post", caption: content.caption, images: content.images }];
  for (const part of content.thread) parts.push({ index: parts.length, kind: "thread", caption: part.caption, images: part.images });
  if (content.firstComment !== null) parts.push({ index: parts.length, kind: "first_comment", caption: content.firstComment, images: [] });
  return parts;
}

/** How far a post in several parts went ("2 of 5 parts went out"), for the errorMessage of a target that failed midway. */
export function partsOutNote(out: number, total: number): string {
  return `${out} of ${total} part${total === 1 ? "" : "s"} went out`;
}

/** One delivery of one target. */
export interface DeliveryContext {
  deps: Deps;
  connection: OpenConnection;
  targetId: string;
  content: DeliveryContent;
  /** Persists the provider's post id the moment it is known (fenced by the caller's lease); await it before sending. */
  saveProviderPostId(id: string): Promise<void>;
  /**
   * The provider id recorded for the target when this delivery began (saveProviderPostId or part 0), null when none:
   * what a recovery reads (Instagram and Threads record their container here before publishing it).
   */
  readonly recordedProviderId?: string | null;
  /**
   * The provider ids of the parts already out, in sending order (partsOf): a delivery resumes at index
   * `partsOut.length` and never sends an earlier part again. Grows as savePartOut records parts.
   */
  readonly partsOut: readonly string[];
  /**
   * Records that part `index` (which must be `partsOut.length`) is out under `providerId` (fenced by the caller's
   * lease; part 0 also becomes the target's provider post id). Await it before sending the next part.
   */
  savePartOut(index: number, providerId: string): Promise<void>;
  /** Persists a refreshed provider session (Bluesky tokens). */
  saveSession(session: Record<string, string>): Promise<void>;
}

export type DeliveryResult =
  /** The post is live. */
  | { kind: "published"; providerPostId: string; publishedUrl: string | null }
  /** The provider holds it and will publish at the scheduled time (Mastodon scheduled status). */
  | { kind: "handed_over"; providerPostId: string };

export type FailureKind =
  /** Network trouble, 5xx, 429, timeouts before sending: try again later. */
  | "transient"
  /** The provider refused the content: no retry, show its message. */
  | "permanent"
  /** Credentials refused: the connection needs attention; retried after backoff (the person may fix it). */
  | "auth"
  /** The request may have reached the provider but no answer came back: reconcile before any retry. */
  | "unknown";

/** A failed delivery, withdrawal or check, classified. `message` is the platform's own words where it gave any. */
export class DeliveryError extends Error {
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string) {
    super(message);
    this.name = "DeliveryError";
    this.kind = kind;
  }
}

/** The outcome of a credential check. */
export interface CheckResult {
  ready: boolean;
  /** Tells a person what to fix; null when ready. */
  blockedReason: string | null;
  /** A better display label learnt from the provider (e.g. `@bob@mastodon.social`). */
  label?: string;
  meta?: ConnectionMeta;
  /** A new session to cache (Bluesky). */
  session?: Record<string, string> | null;
  /** When not ready: what the person should change, the credentials (password, token, secret) or the address. */
  fix?: CheckFix;
  /** The form field to change when the network has more than one address (Nostr: `relays` or `blossom`). */
  field?: string;
  /**
   * True when the address answers, but not the way the platform's servers do (a Mastodon "server" without Mastodon's
   * API): a new connection there is refused rather than stored.
   */
  notThisNetwork?: boolean;
}

/** What a failed check asks the person to change. */
export type CheckFix = "credentials" | "address";

/** What a caption limit may depend on: Telegram allows 1,024 characters with media and 4,096 without. */
export interface CaptionContext {
  /** Images the part carries. */
  images: number;
}

/** The limits the schedule service checks captions against. */
export interface CaptionLimit {
  maxGraphemes: number;
  /** Counting rule: Mastodon counts every URL as 23 characters. */
  urlLength?: number;
  /** A network's own counting rule (X's weighted count); graphemes (with urlLength) when absent. */
  count?: (text: string) => number;
  /** Human name of the platform for problem messages. */
  platformName: string;
  /** A further rule of the network's (Instagram's 30 hashtags): the problem with `text`, or null when it keeps it. */
  rule?: (text: string) => string | null;
}

/**
 * What a network can take, declared once per connector (decisions.md §13): the schedule service checks every target
 * against it, and the composer reads it. The caption's limit is `captionLimit`.
 */
export interface NetworkCapabilities {
  /** Human name of the network for problems and pages. */
  name: string;
  /** Images per post and per thread part; 0 = text only. */
  maxImages: number;
  /** Follow-up parts a thread may have here; 0 = the network has no threads. */
  maxThreadParts: number;
  /** True when a first comment goes out here. */
  firstComment: boolean;
  /** True when a post here needs at least one image (Instagram, Pinterest). */
  requiresImage: boolean;
  /** Image types the connector can send (after its own re-encoding); the others are refused at scheduling. */
  imageTypes: readonly string[];
  /** Said with a refusal of images when `maxImages` is 0 for this connection: what the person can change (Nostr: add a Blossom server). */
  imagesHint?: string;
}

/** Every image type the library holds (PNG, JPEG, GIF, WebP). */
export const LIBRARY_IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** How a network recovers from an unknown outcome (Connector.recovery). */
export type DeliveryRecovery = "reconcile" | "unconfirmed";

/** What holdsNatively looks at in a post's content (a target's version applied). */
export interface HeldContent {
  thread: readonly unknown[];
  firstComment: string | null;
}

/** True when `content` goes out in more than one part (a thread or a first comment). */
export function hasSeveralParts(content: HeldContent): boolean {
  return content.thread.length > 0 || (content.firstComment !== null && content.firstComment !== "");
}

/** One platform. */
export interface Connector {
  platform: ConnectionPlatform;
  /**
   * The caption limit for this connection, or null when there is none (webhooks). `content` says what the caption goes
   * with; without it, the limit of a caption with images (the stricter, where they differ).
   */
  captionLimit(connection: OpenConnection, content?: CaptionContext): CaptionLimit | null;
  /** What this connection's network can take (some depend on the server: Mastodon's media count). */
  capabilities(connection: OpenConnection): NetworkCapabilities;
  /**
   * True when the provider itself holds a post scheduled at `scheduledTime` with `content` (decided at scheduling, and
   * again at delivery). A post in several parts (a thread, a first comment) needs each part's id for the next one's
   * reply, so only a connector whose provider can hold such posts may answer true for it.
   */
  holdsNatively(scheduledTime: number, now: number, content: HeldContent): boolean;
  /** Checks the stored credentials against the provider. Never throws for a refusal: answers not ready. */
  check(deps: Deps, connection: OpenConnection): Promise<CheckResult>;
  /** Publishes now, or hands the post over to the provider. Throws DeliveryError. */
  deliver(ctx: DeliveryContext): Promise<DeliveryResult>;
  /**
   * True when `reconcile` answering null PROVES nothing reached the provider (Bluesky: getRecord on the derived key).
   * False when null only means "resending under the same Idempotency-Key is safe" (webhooks, Mastodon direct posts).
   */
  reconcileProvesAbsence: boolean;
  /**
   * What becomes of an unknown outcome (decisions.md §12, "never twice, never silently lost"). `reconcile` (the
   * default): the dispatcher asks `reconcile` before any resend. `unconfirmed`: the network cannot be asked (Telegram,
   * a Discord webhook), so the target becomes `unconfirmed`, is never resent on its own, and a person answers "It was
   * posted" or "Send again".
   */
  recovery?: DeliveryRecovery;
  /**
   * After an unknown outcome: asks the provider whether the earlier attempt took effect. Answers the result when every
   * part is out; null when the rest may be sent (after recording, through `ctx.savePartOut`, each further part it found
   * out: deliver then resumes after them). With `reconcileProvesAbsence`, null with no part out proves nothing reached
   * the provider. Throws DeliveryError when the provider cannot tell now.
   */
  reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null>;
  /** Withdraws a post the provider holds (`providerPostId`). Answers false when the provider no longer had it. */
  withdraw(deps: Deps, connection: OpenConnection, providerPostId: string): Promise<boolean>;
  /**
   * For provider-held posts after their time: answers the public URL once published ("published"), "pending" while
   * the provider still holds it, or "gone" when it was removed at the provider. Absent for service-held platforms.
   */
  confirm?(deps: Deps, connection: OpenConnection, providerPostId: string, content: DeliveryContent): Promise<ConfirmResult>;
}

export type ConfirmResult = { state: "published"; publishedUrl: string | null; providerPostId: string } | { state: "pending" } | { state: "gone" };
