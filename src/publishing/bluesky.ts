/**
 * Bluesky (AT Protocol) connections. The service holds the post and publishes at its time:
 * - the session is cached (sealed on the connection) and refreshed with refreshSession, because createSession is
 *   rate-limited (30 per 5 minutes, 300 per day);
 * - up to 4 images per post (app.bsky.embed.images), each re-encoded to fit under 1,000,000 bytes and sent with
 *   `aspectRatio` and its alt text;
 * - links in each part's text become link facets (UTF-8 byte offsets);
 * - a thread's parts go out as replies, each to the part before it, and the first comment as a reply to the post,
 *   with `reply: {root, parent}` strong refs (uri + cid); each part is recorded as out (DeliveryContext.savePartOut)
 *   before the next one leaves;
 * - `createdAt` is the send time;
 * - every part's record key is derived from the target id and the part's index (bluesky-rkey.ts), so a retry can never
 *   make a second record, and an unknown outcome is reconciled with getRecord on the first part not recorded as out.
 */
import { fitImageUnderBytes } from "../lib/image-fit";
import { isoAt } from "../lib/clock";
import { recordKeyForPart } from "./bluesky-rkey";
import type { CheckResult, Connector, DeliveryContext, DeliveryImage, DeliveryResult, NetworkCapabilities } from "./connector";
import type { OpenConnection } from "../store/connections";
import { DeliveryError, LIBRARY_IMAGE_TYPES, partsOf } from "./connector";
import { MAX_THREAD_PARTS } from "../db/schema/post-content";
import { failureKindOf, outboundProblem, providerFetch } from "./outbound";
import type { Deps } from "../deps";

export const BLUESKY_DEFAULT_SERVICE = "https://bsky.social";
/** Older servers and apps still expect blobs of at most 1 MB (guides/testing.md). */
export const BLUESKY_MAX_IMAGE_BYTES = 1_000_000;
export const BLUESKY_MAX_GRAPHEMES = 300;
export const POST_COLLECTION = "app.bsky.feed.post";
/** Bluesky: 4 images per post (app.bsky.embed.images), replies for the thread and the first comment. */
const BLUESKY_CAPABILITIES: NetworkCapabilities = {
  name: "Bluesky",
  maxImages: 4,
  maxThreadParts: MAX_THREAD_PARTS,
  firstComment: true,
  requiresImage: false,
  imageTypes: LIBRARY_IMAGE_TYPES,
};
const APP_URL = "https://bsky.app";
const XRPC = {
  createSession: "com.atproto.server.createSession",
  refreshSession: "com.atproto.server.refreshSession",
  getSession: "com.atproto.server.getSession",
  uploadBlob: "com.atproto.repo.uploadBlob",
  createRecord: "com.atproto.repo.createRecord",
  getRecord: "com.atproto.repo.getRecord",
  describeServer: "com.atproto.server.describeServer",
} as const;
/** XRPC errors meaning "this token no longer works; refresh or sign in again". */
const TOKEN_ERRORS = new Set(["ExpiredToken", "InvalidToken", "AuthenticationRequired", "AuthMissing"]);
const URL_RE = /https?:\/\/[^\s<>"]+/g;
const TRAILING_PUNCTUATION_RE = /[.,;:!?)\]}'"]+$/;

interface Session {
  accessJwt: string;
  refreshJwt: string;
  did: string;
  handle: string;
}

interface XrpcAnswer {
  status: number;
  body: Record<string, unknown>;
}

function isSession(value: Record<string, string> | null): value is Record<string, string> & Session {
  return value !== null && typeof value.accessJwt === "string" && typeof value.refreshJwt === "string" && typeof value.did === "string";
}

function xrpcUrl(connection: OpenConnection, method: string, query?: Record<string, string>): string {
  const qs = query ? `?${new URLSearchParams(query)}` : "";
  return `${connection.endpoint.replace(/\/+$/, "")}/xrpc/${method}${qs}`;
}

async function xrpc(
  deps: Pick<Deps, "config">,
  connection: OpenConnection,
  method: string,
  opts: { query?: Record<string, string>; json?: unknown; bytes?: Uint8Array; contentType?: string; token?: string } = {},
): Promise<XrpcAnswer> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | Uint8Array | undefined;
  if (opts.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.json);
  } else if (opts.bytes) {
    headers["content-type"] = opts.contentType ?? "application/octet-stream";
    body = opts.bytes;
  }
  const isProcedure = opts.json !== undefined || opts.bytes !== undefined || method === XRPC.refreshSession;
  const res = await providerFetch(deps, xrpcUrl(connection, method, opts.query), { method: isProcedure ? "POST" : "GET", headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text === "" ? {} : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    parsed = { message: text.slice(0, 300) };
  }
  return { status: res.status, body: parsed };
}

function xrpcError(answer: XrpcAnswer): string {
  const { error, message } = answer.body;
  const parts = [error, message].filter((p): p is string => typeof p === "string" && p !== "");
  return parts.length > 0 ? parts.join(": ") : `HTTP ${answer.status}`;
}

function isTokenProblem(answer: XrpcAnswer): boolean {
  return (answer.status === 400 || answer.status === 401) && TOKEN_ERRORS.has(String(answer.body.error ?? ""));
}

/**
 * True when the service answers describeServer with a server DID, as every Bluesky PDS and entryway does. A 5xx
 * throws (the server is there but failing: not ready, try later), anything else that is not that shape is false.
 */
async function answersLikeBluesky(deps: Pick<Deps, "config">, connection: OpenConnection): Promise<boolean> {
  const answer = await xrpc(deps, connection, XRPC.describeServer);
  if (answer.status >= 500) throw new Error(`describeServer answered ${xrpcError(answer)}`);
  return answer.status === 200 && typeof answer.body.did === "string" && answer.body.did.startsWith("did:");
}

/** A person-readable reason for a refused sign-in. */
function signInRefusedReason(connection: OpenConnection, answer: XrpcAnswer): string {
  const handle = connection.credentials.handle ?? connection.label;
  return (
    `Bluesky refused to sign in as ${handle} (${xrpcError(answer)}). ` +
    "The app password may be wrong or revoked: create a new one in Bluesky under Settings → Privacy and security → App passwords, then update this connection."
  );
}

async function createSession(deps: Pick<Deps, "config">, connection: OpenConnection): Promise<Session> {
  const answer = await xrpc(deps, connection, XRPC.createSession, {
    json: { identifier: connection.credentials.handle, password: connection.credentials.appPassword },
  });
  if (answer.status === 200) return answer.body as unknown as Session;
  if (answer.status === 401 || answer.status === 400) throw new DeliveryError("auth", signInRefusedReason(connection, answer));
  throw new DeliveryError(failureKindOf(answer.status), `Bluesky sign-in failed: ${xrpcError(answer)}`);
}

async function refreshSession(deps: Pick<Deps, "config">, connection: OpenConnection, session: Session): Promise<Session | null> {
  const answer = await xrpc(deps, connection, XRPC.refreshSession, { token: session.refreshJwt });
  if (answer.status === 200) return answer.body as unknown as Session;
  if (isTokenProblem(answer) || answer.status === 400 || answer.status === 401) return null;
  throw new DeliveryError(failureKindOf(answer.status), `Bluesky session refresh failed: ${xrpcError(answer)}`);
}

/**
 * Runs `call` with a working access token: the cached one, else a refreshed one, else a new sign-in. Saves every new
 * session through `save`.
 */
async function withSession(
  deps: Pick<Deps, "config">,
  connection: OpenConnection,
  save: (s: Record<string, string>) => void | Promise<void>,
  call: (session: Session) => Promise<XrpcAnswer>,
): Promise<{ answer: XrpcAnswer; session: Session }> {
  let session: Session | null = isSession(connection.session) ? connection.session : null;
  const adopt = async (s: Session): Promise<Session> => {
    const plain = { accessJwt: s.accessJwt, refreshJwt: s.refreshJwt, did: s.did, handle: s.handle };
    connection.session = plain;
    await save(plain);
    return plain;
  };
  if (session === null) session = await adopt(await createSession(deps, connection));
  let answer = await call(session);
  if (!isTokenProblem(answer)) return { answer, session };
  const refreshed = await refreshSession(deps, connection, session);
  session = await adopt(refreshed ?? (await createSession(deps, connection)));
  answer = await call(session);
  if (isTokenProblem(answer)) throw new DeliveryError("auth", signInRefusedReason(connection, answer));
  return { answer, session };
}

/** Link facets for every http(s) URL in `text`, with UTF-8 byte offsets as the lexicon requires. */
export function linkFacets(text: string): Array<Record<string, unknown>> {
  const encoder = new TextEncoder();
  const facets: Array<Record<string, unknown>> = [];
  for (const match of text.matchAll(URL_RE)) {
    const uri = match[0].replace(TRAILING_PUNCTUATION_RE, "");
    const byteStart = encoder.encode(text.slice(0, match.index)).length;
    const byteEnd = byteStart + encoder.encode(uri).length;
    facets.push({
      index: { byteStart, byteEnd },
      features: [{ $type: "app.bsky.richtext.facet#link", uri }],
    });
  }
  return facets;
}

function publishedUrlOf(session: { handle?: string; did: string }, rkey: string): string {
  return `${APP_URL}/profile/${session.handle || session.did}/post/${rkey}`;
}

async function getRecord(deps: Pick<Deps, "config">, connection: OpenConnection, did: string, rkey: string): Promise<XrpcAnswer> {
  return xrpc(deps, connection, XRPC.getRecord, { query: { repo: did, collection: POST_COLLECTION, rkey } });
}

function classify(answer: XrpcAnswer, what: string): DeliveryError {
  return new DeliveryError(failureKindOf(answer.status), `Bluesky refused the ${what}: ${xrpcError(answer)}`);
}

/** A strong reference to a record (com.atproto.repo.strongRef): what a reply's root and parent are. */
interface StrongRef {
  uri: string;
  cid: string;
}

function isRecordNotFound(answer: XrpcAnswer): boolean {
  if (answer.status !== 400) return false;
  return answer.body.error === "RecordNotFound" || /could not locate record/i.test(String(answer.body.message ?? ""));
}

/** The DID the connection posts as: its session's, else the one its last check learnt. */
function sessionDid(connection: OpenConnection): string | undefined {
  return (isSession(connection.session) ? connection.session.did : undefined) ?? connection.meta.providerAccountId;
}

/** The handle for the post's public URL: the session's, else the connection's label (`@handle`). */
function handleOf(connection: OpenConnection): string {
  return isSession(connection.session) ? connection.session.handle : connection.label.replace(/^@/, "");
}

/** The strong ref of a part already out (its uri as recorded): the PDS answers its cid. */
async function readRef(deps: Pick<Deps, "config">, connection: OpenConnection, uri: string): Promise<StrongRef> {
  const match = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(uri);
  if (!match) throw new DeliveryError("permanent", `The part recorded as out (${uri}) is not a Bluesky record address.`);
  const [, did = "", , rkey = ""] = match;
  const answer = await getRecord(deps, connection, did, rkey);
  if (answer.status === 200) return { uri: String(answer.body.uri), cid: String(answer.body.cid) };
  if (isRecordNotFound(answer)) {
    throw new DeliveryError("permanent", "A part of this thread that went out earlier was deleted on Bluesky, so the rest cannot reply to it.");
  }
  throw new DeliveryError(failureKindOf(answer.status), `Bluesky could not read back an earlier part of the thread: ${xrpcError(answer)}`);
}

/**
 * Uploads `images` (each re-encoded under 1,000,000 bytes) and answers the app.bsky.embed.images embed with each
 * image's alt text and aspect ratio; undefined for none. More than 4 is a permanent refusal, never a silent drop.
 */
async function imagesEmbed(ctx: DeliveryContext, images: readonly DeliveryImage[]): Promise<Record<string, unknown> | undefined> {
  if (images.length === 0) return undefined;
  if (images.length > BLUESKY_CAPABILITIES.maxImages) {
    throw new DeliveryError("permanent", `Bluesky takes at most ${BLUESKY_CAPABILITIES.maxImages} images per post; this one has ${images.length}.`);
  }
  const { deps, connection } = ctx;
  const embedded: Array<Record<string, unknown>> = [];
  for (const image of images) {
    const fitted = await fitImageUnderBytes(image.bytes, image.mimeType, BLUESKY_MAX_IMAGE_BYTES).catch((error: Error) => {
      throw new DeliveryError("permanent", `An image could not be prepared for Bluesky: ${error.message}`);
    });
    const { answer } = await withSession(deps, connection, ctx.saveSession, (s) =>
      xrpc(deps, connection, XRPC.uploadBlob, { bytes: fitted.bytes, contentType: fitted.mimeType, token: s.accessJwt }),
    );
    if (answer.status !== 200) throw classify(answer, "image upload");
    embedded.push({ image: answer.body.blob, alt: image.altText ?? "", aspectRatio: { width: fitted.width, height: fitted.height } });
  }
  return { $type: "app.bsky.embed.images", images: embedded };
}

/** The Bluesky connector. */
export const blueskyConnector: Connector = {
  platform: "bluesky",
  captionLimit: () => ({ maxGraphemes: BLUESKY_MAX_GRAPHEMES, platformName: "Bluesky" }),
  capabilities: () => BLUESKY_CAPABILITIES,
  reconcileProvesAbsence: true,
  holdsNatively: () => false,

  async check(deps, connection): Promise<CheckResult> {
    const problem = outboundProblem(deps, connection.endpoint);
    if (problem !== null) return { ready: false, fix: "address", blockedReason: `The Bluesky service URL cannot be used: ${problem}` };
    let saved: Record<string, string> | null | undefined;
    try {
      if (connection.session === null && !(await answersLikeBluesky(deps, connection))) {
        return {
          ready: false,
          fix: "address",
          notThisNetwork: true,
          blockedReason: `${connection.endpoint} does not answer like a Bluesky server. Leave the service as ${BLUESKY_DEFAULT_SERVICE} unless you run your own (PDS).`,
        };
      }
      const { answer, session } = await withSession(
        deps,
        connection,
        (s) => {
          saved = s;
        },
        (s) => xrpc(deps, connection, XRPC.getSession, { token: s.accessJwt }),
      );
      if (answer.status !== 200) {
        return { ready: false, fix: "credentials", blockedReason: `Bluesky could not confirm the session: ${xrpcError(answer)}`, session: saved };
      }
      return {
        ready: true,
        blockedReason: null,
        label: `@${String(answer.body.handle ?? session.handle)}`,
        meta: { providerAccountId: session.did },
        session: saved,
      };
    } catch (error) {
      const message = (error as Error).message;
      const auth = error instanceof DeliveryError && error.kind === "auth";
      const reason = auth ? message : `Bluesky could not be reached to check the connection: ${message}`;
      return { ready: false, fix: auth ? "credentials" : "address", blockedReason: reason, session: auth ? null : saved };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection } = ctx;
    const parts = partsOf(ctx.content);
    // The strong refs (uri + cid) of the parts, by index: the replies need their root's and their parent's.
    const refs = new Map<number, StrongRef>();
    const refOf = async (index: number): Promise<StrongRef> => {
      const known = refs.get(index);
      if (known) return known;
      const ref = await readRef(deps, connection, ctx.partsOut[index] ?? "");
      refs.set(index, ref);
      return ref;
    };
    let did = sessionDid(connection);
    for (const part of parts) {
      if (part.index < ctx.partsOut.length) continue; // out already: never sent twice
      const rkey = recordKeyForPart(ctx.targetId, part.index);
      const embed = await imagesEmbed(ctx, part.images);
      const facets = linkFacets(part.caption);
      const reply = part.index === 0 ? null : { root: await refOf(0), parent: await refOf(part.kind === "first_comment" ? 0 : part.index - 1) };
      const record: Record<string, unknown> = {
        $type: POST_COLLECTION,
        text: part.caption,
        createdAt: isoAt(deps.clock.now()),
        ...(facets.length > 0 ? { facets } : {}),
        ...(embed ? { embed } : {}),
        ...(reply ? { reply } : {}),
      };
      const { answer, session } = await withSession(deps, connection, ctx.saveSession, (s) =>
        xrpc(deps, connection, XRPC.createRecord, { json: { repo: s.did, collection: POST_COLLECTION, rkey, record }, token: s.accessJwt }),
      );
      did = session.did;
      let created: StrongRef;
      if (answer.status === 200) {
        created = { uri: String(answer.body.uri), cid: String(answer.body.cid) };
      } else {
        // A record under this part's key already exists: an earlier attempt landed. Read it back instead of failing.
        const existing = await getRecord(deps, connection, session.did, rkey);
        if (existing.status !== 200) throw classify(answer, part.index === 0 ? "post" : `part ${part.index + 1} of ${parts.length}`);
        created = { uri: String(existing.body.uri), cid: String(existing.body.cid) };
      }
      // Recorded before the next part leaves: a retry resumes after it.
      await ctx.savePartOut(part.index, created.uri);
      refs.set(part.index, created);
    }
    const rkey = recordKeyForPart(ctx.targetId, 0);
    return { kind: "published", providerPostId: ctx.partsOut[0] ?? `at://${did}/${POST_COLLECTION}/${rkey}`, publishedUrl: publishedUrlOf({ did: did ?? "", handle: handleOf(connection) }, rkey) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection } = ctx;
    const did = sessionDid(connection);
    if (!did) return null; // never signed in, so nothing can have been written
    const parts = partsOf(ctx.content);
    // Parts go out one after another: the first part not recorded as out may have landed (its key tells), no later one.
    for (let index = ctx.partsOut.length; index < parts.length; index++) {
      const rkey = recordKeyForPart(ctx.targetId, index);
      const answer = await getRecord(deps, connection, did, rkey);
      if (answer.status === 200) {
        await ctx.savePartOut(index, String(answer.body.uri));
        continue;
      }
      if (isRecordNotFound(answer)) return null;
      throw new DeliveryError("transient", `Bluesky could not tell whether the earlier attempt landed: ${xrpcError(answer)}`);
    }
    const rkey = recordKeyForPart(ctx.targetId, 0);
    return { kind: "published", providerPostId: ctx.partsOut[0] ?? `at://${did}/${POST_COLLECTION}/${rkey}`, publishedUrl: publishedUrlOf({ did, handle: handleOf(connection) }, rkey) };
  },

  // The service holds Bluesky posts until their time: nothing to withdraw at the provider.
  withdraw: async () => false,
};
