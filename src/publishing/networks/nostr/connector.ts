/**
 * Nostr connections (decisions.md §12): a secret key, 1–10 relays and optionally a Blossom server for images.
 *
 * - A post is a signed kind-1 note; its thread parts are NIP-10 replies (notes.ts). Every event is the same event on
 *   a resend (created_at from the scheduled time and the part's index, images at their sha256 address), so a retry
 *   after a crash can never make a second note: a relay stores an id once.
 * - A relay's `OK true` is the confirmation; `OK false` is shown in the relay's own words; "duplicate:" counts as
 *   accepted. Each part goes to every relay; a part is out when at least one relay accepted it, and is then recorded
 *   (savePartOut) before the next leaves; a retry resumes after the parts recorded.
 * - An unknown outcome is reconciled by asking every relay for this key's notes in the post's time window: each part
 *   found (time, text, NIP-10 tags) is recorded in order; all found → published; none found and none recorded → proof
 *   of absence (every relay having answered); a relay that cannot be asked → the answer waits.
 * - Images go to the Blossom server (blossom.ts) and appear in the note with a NIP-92 `imeta` tag; without a Blossom
 *   server the connection declares no images, so a post with images is refused at scheduling.
 */
import type { Event } from "nostr-tools/core";
import { neventEncode } from "nostr-tools/nip19";
import { getPublicKey } from "nostr-tools/pure";
import { MAX_IMAGES, MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import type { Deps } from "../../../deps";
import type { OpenConnection } from "../../../store/connections";
import {
  type CheckResult,
  type Connector,
  type DeliveryContent,
  type DeliveryContext,
  DeliveryError,
  type DeliveryResult,
  LIBRARY_IMAGE_TYPES,
  partsOf,
  type NetworkCapabilities,
} from "../../connector";
import { failureKindOf, outboundProblem, providerFetch, plainNetworkProblem } from "../../outbound";
import { type UploadedImage, uploadToBlossom } from "./blossom";
import { relaysOf } from "./connection";
import { NOTE_KIND, type NotePart, partCreatedAt, signNotes } from "./notes";
import { type PublishOutcome, RelayConnection, RelayError, withRelay } from "./relay";
import { secretBytes } from "./keys";

/** Where a published note is shown on the web: njump, the common Nostr gateway, takes any nevent. */
const WEB_GATEWAY = "https://njump.me";
/** NIP-01 refusal prefixes that say "try again later" rather than "never". */
const TRANSIENT_PREFIXES = ["rate-limited:", "error:"];
/** The sha256 of no bytes: a blob no Blossom server is expected to hold, asked for by the check (BUD-01 HEAD). */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/** What a person reads when a post has images and the connection has no Blossom server. */
export const NOSTR_IMAGES_HINT = "Nostr notes carry images through a Blossom server: add one to this connection (for example https://blossom.primal.net), or post without images.";

function capabilitiesOf(connection: OpenConnection): NetworkCapabilities {
  const blossom = Boolean(connection.credentials.blossom);
  return {
    name: "Nostr",
    maxImages: blossom ? MAX_IMAGES : 0,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: false,
    requiresImage: false,
    imageTypes: LIBRARY_IMAGE_TYPES,
    ...(blossom ? {} : { imagesHint: NOSTR_IMAGES_HINT }),
  };
}

/** The web address of a note. */
export function noteUrl(event: Pick<Event, "id" | "pubkey">, relays: readonly string[]): string {
  return `${WEB_GATEWAY}/${neventEncode({ id: event.id, author: event.pubkey, relays: relays.slice(0, 2) })}`;
}

/**
 * The failure of a part no relay accepted, classified: every relay refused → the relays' own words (permanent, or
 * transient for `rate-limited:`/`error:`); a relay that got it without answering → unknown (reconcile); otherwise
 * nothing reached a relay → transient.
 */
function noRelayAccepted(what: string, outcomes: ReadonlyMap<string, PublishOutcome>): DeliveryError {
  const list = [...outcomes.entries()];
  const words = list.map(([relay, o]) => `${relay}: ${o.message || o.kind}`).join("; ");
  if (list.length > 0 && list.every(([, o]) => o.kind === "refused")) {
    const later = list.some(([, o]) => TRANSIENT_PREFIXES.some((p) => o.message.startsWith(p)));
    return new DeliveryError(later ? "transient" : "permanent", `Every relay refused the ${what}: ${words}`);
  }
  if (list.some(([, o]) => o.kind === "no_answer")) return new DeliveryError("unknown", `No relay confirmed the ${what}: ${words}`);
  return new DeliveryError("transient", `No relay could be reached for the ${what}: ${words}`);
}

/**
 * The parts to sign, in sending order (partsOf: post, thread parts, first comment), with the images of every part not
 * out yet uploaded to the connection's Blossom server (parts out already are not signed again, so theirs are not).
 */
async function prepareParts(deps: Deps, ctx: DeliveryContext, secret: Uint8Array): Promise<Array<NotePart & { replyToRoot: boolean }>> {
  const blossom = ctx.connection.credentials.blossom;
  const out: Array<NotePart & { replyToRoot: boolean }> = [];
  for (const part of partsOf(ctx.content)) {
    const images: UploadedImage[] = [];
    if (part.index >= ctx.partsOut.length) {
      if (part.images.length > 0 && !blossom) throw new DeliveryError("permanent", NOSTR_IMAGES_HINT);
      for (const image of part.images) images.push(await uploadToBlossom(deps, blossom as string, secret, image));
    }
    out.push({ caption: part.caption, images, replyToRoot: part.kind === "first_comment" });
  }
  return out;
}

/** The connection's public key: stored beside the secret at connect (a curve multiplication saved per post), else derived. */
function pubkeyOf(connection: OpenConnection, secret: Uint8Array): string {
  return connection.credentials.pubkey ?? getPublicKey(secret);
}

/** What each relay made of one event: its outcome, or why it could not be opened. */
async function publishEverywhere(deps: Pick<Deps, "config">, relays: readonly string[], event: Event): Promise<Map<string, PublishOutcome>> {
  const outcomes = await Promise.all(
    relays.map((relay) =>
      withRelay(deps, relay, (connection) => connection.publish(event)).catch(
        (error: unknown): PublishOutcome => ({ kind: "unreached", message: error instanceof Error ? error.message : String(error) }),
      ),
    ),
  );
  return new Map(relays.map((relay, i) => [relay, outcomes[i] as PublishOutcome]));
}

/**
 * Signs and publishes the parts not out yet, in order, each to every relay; each part is recorded as out
 * (savePartOut) before the next leaves, so a retry resumes after it.
 */
async function publishAll(ctx: DeliveryContext): Promise<DeliveryResult> {
  const { deps, connection, content } = ctx;
  const secret = secretBytes(connection.credentials.secretKey as string);
  const pubkey = pubkeyOf(connection, secret);
  const relays = relaysOf(connection.endpoint);
  const parts = await prepareParts(deps, ctx, secret);
  for (const { index, event } of signNotes(secret, pubkey, content.scheduledTime, parts, relays[0] ?? "", ctx.partsOut)) {
    const outcomes = await publishEverywhere(deps, relays, event);
    if (![...outcomes.values()].some((o) => o.kind === "accepted")) {
      throw noRelayAccepted(index === 0 ? "note" : `reply ${index}`, outcomes);
    }
    const refusals = [...outcomes.entries()].filter(([, o]) => o.kind !== "accepted");
    if (refusals.length > 0) {
      deps.log.info("nostr: some relays did not take a note", { targetId: ctx.targetId, part: index, relays: refusals.map(([r, o]) => `${r}: ${o.kind} ${o.message}`) });
    }
    await ctx.savePartOut(index, event.id);
  }
  const rootId = ctx.partsOut[0] as string;
  return { kind: "published", providerPostId: rootId, publishedUrl: noteUrl({ id: rootId, pubkey }, relays) };
}

/**
 * After an unknown outcome: asks every relay for this key's notes in the post's `created_at` window and records, in
 * order from the first part not recorded, each part found (its time, its text, and for a reply the `e` tags naming
 * the post and the part before). Answers the result when every part is out; null when some are not (the delivery
 * resumes after those found; none found and none recorded before is proof of absence, every relay having answered).
 * Throws a transient DeliveryError when a relay cannot be asked and not every part was found.
 */
async function reconcileParts(ctx: DeliveryContext): Promise<DeliveryResult | null> {
  const { deps, connection, content } = ctx;
  const pubkey = pubkeyOf(connection, secretBytes(connection.credentials.secretKey as string));
  const parts = partsOf(content);
  const since = partCreatedAt(content.scheduledTime, 0);
  const relays = relaysOf(connection.endpoint);
  const filter = { authors: [pubkey], kinds: [NOTE_KIND], since, until: partCreatedAt(content.scheduledTime, parts.length - 1) };
  const answers = await Promise.allSettled(relays.map((relay) => withRelay(deps, relay, (c) => c.query(filter))));
  const seen = new Map<string, Event>();
  const unasked: string[] = [];
  for (const [i, answer] of answers.entries()) {
    if (answer.status === "rejected") {
      unasked.push(`${relays[i]}: ${answer.reason instanceof Error ? answer.reason.message : String(answer.reason)}`);
      continue;
    }
    for (const e of answer.value) if (e.pubkey === pubkey) seen.set(e.id, e);
  }
  const eTag = (e: Event, marker: string) => e.tags.find((t) => t[0] === "e" && t[3] === marker)?.[1];
  for (let index = ctx.partsOut.length; index < parts.length; index++) {
    const part = parts[index] as (typeof parts)[number];
    const root = ctx.partsOut[0];
    const parent = part.kind === "first_comment" ? root : ctx.partsOut[index - 1];
    const found = [...seen.values()].find(
      (e) =>
        e.created_at === partCreatedAt(content.scheduledTime, index) &&
        e.content.startsWith(part.caption) &&
        (index === 0 ? !e.tags.some((t) => t[0] === "e") : eTag(e, "root") === root && (parent === root || eTag(e, "reply") === parent)),
    );
    if (!found) break;
    await ctx.savePartOut(index, found.id);
  }
  if (ctx.partsOut.length === parts.length) {
    const rootId = ctx.partsOut[0] as string;
    return { kind: "published", providerPostId: rootId, publishedUrl: noteUrl({ id: rootId, pubkey }, relays) };
  }
  if (unasked.length > 0) throw new DeliveryError("transient", `Could not ask every relay whether the earlier attempt landed: ${unasked.join("; ")}`);
  return null;
}

/** Checks one relay: it opens and answers a query up to EOSE. Answers null, or why not. */
async function relayProblem(deps: Pick<Deps, "config">, relay: string, pubkey: string): Promise<string | null> {
  let connection: RelayConnection | null = null;
  try {
    connection = await RelayConnection.open(deps, relay);
    await connection.query({ authors: [pubkey], kinds: [NOTE_KIND], limit: 1 });
    return null;
  } catch (error) {
    return error instanceof RelayError ? error.message : (plainNetworkProblem(error) ?? String(error));
  } finally {
    connection?.close();
  }
}

/** Checks the Blossom server: `HEAD /<sha256>` answers 200 or 404 on every Blossom server (BUD-01). */
async function blossomProblem(deps: Pick<Deps, "config">, server: string): Promise<string | null> {
  const problem = outboundProblem(deps, server);
  if (problem !== null) return problem;
  try {
    const response = await providerFetch(deps, `${server}/${EMPTY_SHA256}`, { method: "HEAD" });
    if (response.status === 200 || response.status === 404) return null;
    if (failureKindOf(response.status) === "transient") return `it answered HTTP ${response.status}; try again later.`;
    return `it answered HTTP ${response.status}, not the way a Blossom server does. Check the address.`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The label a connection is shown with: its npub, shortened. */
export function npubLabel(npub: string): string {
  return `${npub.slice(0, 12)}…${npub.slice(-6)}`;
}

/** The Nostr connector. */
export const nostrConnector: Connector = {
  platform: "nostr",
  // Nostr sets no length; relays may (NIP-11 max_content_length), and would answer with their words.
  captionLimit: () => null,
  capabilities: capabilitiesOf,
  reconcileProvesAbsence: true,
  holdsNatively: () => false,

  async check(deps, connection): Promise<CheckResult> {
    let pubkey: string;
    try {
      pubkey = getPublicKey(secretBytes(connection.credentials.secretKey as string));
    } catch {
      return { ready: false, fix: "credentials", blockedReason: "The stored secret key cannot be read: paste it again." };
    }
    const relays = relaysOf(connection.endpoint);
    const problems = await Promise.all(relays.map((r) => relayProblem(deps, r, pubkey)));
    const failing = relays.map((r, i) => [r, problems[i]] as const).filter(([, p]) => p !== null);
    if (failing.length > 0) {
      const words = failing.map(([r, p]) => `${r}: ${p}`).join("; ");
      const which = failing.length === 1 ? "This relay did not answer" : "These relays did not answer";
      return { ready: false, fix: "address", blockedReason: `${which} (${words}). Check the address, or remove it from the list.` };
    }
    const blossom = connection.credentials.blossom;
    if (blossom) {
      const problem = await blossomProblem(deps, blossom);
      if (problem !== null) return { ready: false, fix: "address", field: "blossom", blockedReason: `The Blossom server ${blossom} cannot be used: ${problem}` };
    }
    return { ready: true, blockedReason: null, meta: { providerAccountId: pubkey } };
  },

  deliver: publishAll,

  reconcile: reconcileParts,

  // Notes are sent at their time by Seedcast: nothing is held at a relay to withdraw.
  withdraw: async () => false,
};
