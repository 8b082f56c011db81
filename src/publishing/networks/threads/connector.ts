/**
 * Threads (decisions.md §12, §13). Seedcast holds every post and at its time runs the container flow for each part
 * (https://developers.facebook.com/docs/threads/posts): the post (TEXT, IMAGE, or a CAROUSEL over 2–10 image items),
 * each thread part as a reply to the part before it, then the first comment as a reply to the post
 * (`reply_to_id`); each container's `status` is polled until FINISHED (ERROR, EXPIRED and a stuck IN_PROGRESS end
 * clearly: meta/polling.ts), then published. 500 characters per part; alt text as `alt_text`.
 *
 * Threads fetches images from this server (the asset's `/media/…` URL, JPEG or PNG as the library holds it): while
 * BASE_URL is not a public https address (nor in ALLOW_PRIVATE_HOSTS) the connection stays ready for text, and posts
 * with images are refused at scheduling with the reason (its check records `imagesFetchable`).
 *
 * Recovery after an unknown outcome: before each publish, the part's container is recorded on the target
 * (`container:<part>:<id>`; the post's id replaces it when done). A container that is not PUBLISHED proves that part
 * is not out (a container publishes once); a PUBLISHED one is found among the account's threads (the post) or the
 * parent's replies (a reply) by its text, and recorded.
 */
import type { Deps } from "../../../deps";
import { MAX_THREAD_PARTS } from "../../../db/schema/post-content";
import type { OpenConnection } from "../../../store/connections";
import { type CheckResult, type Connector, type DeliveryContext, type DeliveryImage, type DeliveryResult, DeliveryError, type OutgoingPart, partsOf } from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { baseUrlFetchable } from "../meta/graph";
import { type PollingBudget, awaitContainer, pollingBudget } from "../meta/polling";
import { containerStatus, createContainer, permalinkOf, publishContainer, recentThreads, repliesOf, threadsMe } from "./client";

/** Threads' limit per post. */
export const THREADS_MAX_CHARACTERS = 500;
/** Images per post (a carousel takes 2–10 here; Threads allows 20). */
export const THREADS_MAX_IMAGES = 10;
/** Why images cannot go while BASE_URL is not public. */
export const THREADS_IMAGES_REASON = "Threads fetches images from this server: set BASE_URL to a public https address";
const CONTAINER_MARK = /^container:(\d+):(.+)$/;

function token(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

function userIdOf(connection: OpenConnection): string {
  const id = connection.meta.providerAccountId;
  if (!id) throw new DeliveryError("transient", "The Threads account's id is not known yet: its check runs again before the post goes out.");
  return id;
}

function parentOf(partsOut: readonly string[], part: OutgoingPart): string | null {
  if (part.index === 0) return null;
  return (part.kind === "first_comment" ? partsOut[0] : partsOut[part.index - 1]) ?? null;
}

function imageParams(image: DeliveryImage): Record<string, string> {
  const params: Record<string, string> = { image_url: image.url };
  if (image.altText) params.alt_text = image.altText;
  return params;
}

/** Creates the part's container (and its carousel items), waits until it is FINISHED; answers its id. */
async function prepare(deps: Pick<Deps, "config">, accessToken: string, userId: string, part: OutgoingPart, replyTo: string | null, budget: PollingBudget): Promise<string> {
  const reply: Record<string, string> = replyTo !== null ? { reply_to_id: replyTo } : {};
  const look = (id: string) => () => containerStatus(deps, accessToken, id);
  let id: string;
  if (part.images.length === 0) {
    id = await createContainer(deps, accessToken, userId, { media_type: "TEXT", text: part.caption, ...reply });
  } else if (part.images.length === 1) {
    id = await createContainer(deps, accessToken, userId, { media_type: "IMAGE", text: part.caption, ...imageParams(part.images[0] as DeliveryImage), ...reply });
  } else {
    const children: string[] = [];
    for (const image of part.images) children.push(await createContainer(deps, accessToken, userId, { media_type: "IMAGE", is_carousel_item: "true", ...imageParams(image) }));
    for (const child of children) await awaitContainer("Threads", look(child), budget);
    id = await createContainer(deps, accessToken, userId, { media_type: "CAROUSEL", children: children.join(","), text: part.caption, ...reply });
  }
  await awaitContainer("Threads", look(id), budget);
  return id;
}

async function result(deps: Pick<Deps, "config">, connection: OpenConnection, postId: string): Promise<DeliveryResult> {
  return { kind: "published", providerPostId: postId, publishedUrl: await permalinkOf(deps, token(connection), postId) };
}

/** The Threads connector. */
export const threadsConnector: Connector = {
  platform: "threads",
  captionLimit: () => ({ maxGraphemes: THREADS_MAX_CHARACTERS, platformName: "Threads" }),
  capabilities: (connection) => ({
    name: "Threads",
    maxImages: connection.meta.imagesFetchable === false ? 0 : THREADS_MAX_IMAGES,
    maxThreadParts: MAX_THREAD_PARTS,
    firstComment: true,
    requiresImage: false,
    imageTypes: ["image/jpeg", "image/png"],
    imagesHint: `${THREADS_IMAGES_REASON}.`,
  }),
  holdsNatively: () => false,
  reconcileProvesAbsence: true,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const who = await threadsMe(deps, token(connection));
      if (!who.ok) {
        if (who.tokenGone) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "Threads" })} (${who.words}).` };
        return { ready: false, blockedReason: `Threads could not confirm the account: ${who.words}` };
      }
      // Text still goes when Meta cannot fetch from this server; images wait for a public BASE_URL.
      return { ready: true, blockedReason: null, label: `@${who.username}`, meta: { ...connection.meta, providerAccountId: who.userId, imagesFetchable: baseUrlFetchable(deps) } };
    } catch (error) {
      return { ready: false, blockedReason: `Threads could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    const accessToken = token(connection);
    const userId = userIdOf(connection);
    const budget = pollingBudget(deps);
    for (const part of partsOf(content)) {
      if (part.index < ctx.partsOut.length) continue;
      if (part.images.length > 0 && !baseUrlFetchable(deps)) throw new DeliveryError("permanent", `${THREADS_IMAGES_REASON}.`);
      const containerId = await prepare(deps, accessToken, userId, part, parentOf(ctx.partsOut, part), budget);
      // Recorded before publishing: a recovery asks this container whether it went out.
      await ctx.saveProviderPostId(`container:${part.index}:${containerId}`);
      await ctx.savePartOut(part.index, await publishContainer(deps, accessToken, userId, containerId));
    }
    return result(deps, connection, ctx.partsOut[0] ?? "");
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    const accessToken = token(connection);
    const parts = partsOf(content);
    if (ctx.partsOut.length < parts.length) {
      const mark = CONTAINER_MARK.exec(ctx.recordedProviderId ?? "");
      // No container recorded for the next part: its publish never left.
      if (!mark || Number(mark[1]) !== ctx.partsOut.length) return null;
      const status = await containerStatus(deps, accessToken, mark[2] ?? "");
      // A container publishes once: one not PUBLISHED proves the part is not out.
      if (status.code !== "PUBLISHED") return null;
      const part = parts[ctx.partsOut.length] as OutgoingPart;
      const parent = parentOf(ctx.partsOut, part);
      const candidates = parent === null ? await recentThreads(deps, accessToken, userIdOf(connection)) : await repliesOf(deps, accessToken, parent);
      const found = candidates.find((c) => c.text.trim() === part.caption.trim() && !ctx.partsOut.includes(c.id));
      if (!found) throw new DeliveryError("transient", "Threads says the post was published, but it is not listed yet; looked up again later.");
      await ctx.savePartOut(part.index, found.id);
      if (ctx.partsOut.length < parts.length) return null;
    }
    return result(deps, connection, ctx.partsOut[0] ?? "");
  },

  async withdraw(): Promise<boolean> {
    // Nothing is ever held at Threads.
    return false;
  },
};
