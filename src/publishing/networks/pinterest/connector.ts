/**
 * Pinterest, one board per connection (decisions.md §12, §13). The service holds every pin (the API has no
 * scheduling) and publishes at its time: one image → an image pin, 2 to 5 → a carousel pin (`multiple_image_base64`);
 * every pin needs an image. The caption is the pin's description (at most 500); its first line, when the caption has
 * more than one and that line fits in 100 characters, is also the title. Alt text: the image's (a carousel takes one
 * alt text for the pin: the images' joined, at most 500). No threads, no first comment. Images go as JPEG or PNG
 * (others re-encoded as JPEG).
 *
 * Recovery after an unknown outcome: the board's recent pins are looked up for one with this description made since
 * the post's time, before anything is sent again.
 */
import { loadSharp } from "../../../lib/sharp";
import type { OpenConnection } from "../../../store/connections";
import { type CheckResult, type Connector, type DeliveryContext, type DeliveryImage, type DeliveryResult, DeliveryError, LIBRARY_IMAGE_TYPES } from "../../connector";
import { deadGrantReason } from "../../sign-in/network";
import { boardPins, createPin, getBoard } from "./client";
import type { PinCreate, PinImageType } from "./types";

/** Description limit (decisions.md §13). */
export const PINTEREST_MAX_DESCRIPTION = 500;
/** Title limit. */
export const PINTEREST_MAX_TITLE = 100;
/** Alt text limit. */
const PINTEREST_MAX_ALT = 500;
/** A carousel takes 2 to 5 images. */
export const PINTEREST_MAX_IMAGES = 5;
/** A pin found by the look-up must have been made at most this long before the post's time. */
const LOOKUP_WINDOW_BEFORE_MS = 2 * 60 * 1000;

function accessToken(connection: OpenConnection): string {
  return connection.credentials.token ?? "";
}

/** The board's id (the chooser's choice, kept as the connection's provider account id). */
function boardOf(connection: OpenConnection): string {
  const id = connection.meta.providerAccountId;
  if (!id) throw new DeliveryError("auth", "The Pinterest board is not known: reconnect Pinterest.");
  return id;
}

/** The pin's title, description and alt text from a caption and its images. */
export function pinText(caption: string, images: readonly Pick<DeliveryImage, "altText">[]): Pick<PinCreate, "title" | "description" | "alt_text"> {
  const lines = caption.split("\n");
  const first = lines[0]!.trim();
  const title = lines.length > 1 && first !== "" && [...first].length <= PINTEREST_MAX_TITLE ? first : undefined;
  const alts = images.map((i) => i.altText?.trim() ?? "").filter((a) => a !== "");
  const alt = alts.join("; ");
  return {
    ...(title ? { title } : {}),
    description: caption,
    ...(alt !== "" ? { alt_text: [...alt].length > PINTEREST_MAX_ALT ? `${[...alt].slice(0, PINTEREST_MAX_ALT - 1).join("")}…` : alt } : {}),
  };
}

async function base64Of(image: DeliveryImage): Promise<{ content_type: PinImageType; data: string }> {
  if (image.mimeType === "image/jpeg" || image.mimeType === "image/png") return { content_type: image.mimeType, data: Buffer.from(image.bytes).toString("base64") };
  try {
    const jpeg = await loadSharp()(image.bytes).rotate().jpeg({ quality: 88 }).toBuffer();
    return { content_type: "image/jpeg", data: jpeg.toString("base64") };
  } catch (error) {
    throw new DeliveryError("permanent", `An image could not be prepared for Pinterest: ${(error as Error).message}`);
  }
}

/** The public address of a pin. */
export function pinUrl(id: string): string {
  return `https://www.pinterest.com/pin/${id}/`;
}

const same = (a: string | null | undefined, b: string) => (a ?? "").replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim();

/** The Pinterest connector. */
export const pinterestConnector: Connector = {
  platform: "pinterest",
  captionLimit: () => ({ maxGraphemes: PINTEREST_MAX_DESCRIPTION, platformName: "Pinterest" }),
  capabilities: () => ({
    name: "Pinterest",
    maxImages: PINTEREST_MAX_IMAGES,
    maxThreadParts: 0,
    firstComment: false,
    requiresImage: true,
    imageTypes: LIBRARY_IMAGE_TYPES,
  }),
  holdsNatively: () => false,
  reconcileProvesAbsence: false,

  async check(deps, connection): Promise<CheckResult> {
    try {
      const found = await getBoard(deps, accessToken(connection), boardOf(connection));
      if (found.ok && found.board) return { ready: true, blockedReason: null };
      if (found.ok) return { ready: false, blockedReason: `The board ${connection.label} is no longer on Pinterest (deleted, or no longer yours): remove this connection, or connect another board.` };
      if (found.status === 401) return { ready: false, fix: "credentials", blockedReason: `${deadGrantReason({ name: "Pinterest" })} (${found.words}).` };
      return { ready: false, blockedReason: `Pinterest could not confirm the board: ${found.words}` };
    } catch (error) {
      return { ready: false, blockedReason: `Pinterest could not be reached: ${(error as Error).message}` };
    }
  },

  async deliver(ctx: DeliveryContext): Promise<DeliveryResult> {
    const { deps, connection, content } = ctx;
    if (ctx.partsOut.length === 0) {
      if (content.thread.length > 0 || content.firstComment !== null) throw new DeliveryError("permanent", "Pinterest has no threads and no first comment: remove them for Pinterest.");
      if (content.images.length === 0) throw new DeliveryError("permanent", "A pin needs an image: add one for Pinterest.");
      if (content.images.length > PINTEREST_MAX_IMAGES) throw new DeliveryError("permanent", `A Pinterest carousel takes at most ${PINTEREST_MAX_IMAGES} images; this post has ${content.images.length}.`);
      const sources = await Promise.all(content.images.map(base64Of));
      const pin: PinCreate = {
        board_id: boardOf(connection),
        media_source: sources.length === 1 ? { source_type: "image_base64", ...sources[0]! } : { source_type: "multiple_image_base64", items: sources },
        ...pinText(content.caption, content.images),
      };
      const made = await createPin(deps, accessToken(connection), pin);
      await ctx.savePartOut(0, made.id);
    }
    const id = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: id, publishedUrl: pinUrl(id) };
  },

  async reconcile(ctx: DeliveryContext): Promise<DeliveryResult | null> {
    const { deps, connection, content } = ctx;
    if (ctx.partsOut.length === 0) {
      const pins = await boardPins(deps, accessToken(connection), boardOf(connection));
      const since = content.scheduledTime - LOOKUP_WINDOW_BEFORE_MS;
      const found = pins.find((p) => same(p.description, content.caption) && (p.created_at === undefined || Date.parse(p.created_at) >= since));
      if (!found) return null;
      await ctx.savePartOut(0, found.id);
    }
    const id = ctx.partsOut[0] ?? "";
    return { kind: "published", providerPostId: id, publishedUrl: pinUrl(id) };
  },

  async withdraw(): Promise<boolean> {
    // Nothing is ever held at Pinterest.
    return false;
  },
};
