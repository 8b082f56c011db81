/**
 * Hand edits of a creation (decisions.md §10): PATCH changes the caption and/or the alt text, free; DELETE removes the
 * creation unless a pending post still uses it (409 creation_in_use). A scheduled post keeps its own snapshot either
 * way: nothing here touches scheduled_posts.
 *
 * API for other modules and the dashboard:
 *  - `editCreation(deps, accountId, id, input: {caption?, altText?})` → Promise<Creation>
 *  - `deleteCreation(deps, accountId, id)` → Promise<{id, deleted: true}>
 */
import { and, eq, inArray } from "drizzle-orm";
import { creations, scheduledPosts, scheduledPostTargets } from "../../db/tables";
import type { StoreDb } from "../../db/store";
import type { Deps } from "../../deps";
import { AppError, invalidField, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { findAsset } from "../assets/service";
import { MAX_ALT_TEXT_GRAPHEMES, type Creation } from "./model";
import { creationToApi, findCreationRow, graphemeCount, serialized } from "./service";

export interface CreationEdit {
  caption?: string;
  altText?: string;
}

/** The caption as it will be stored: trimmed, non-empty, within the generated captions' limit. */
function cleanCaption(deps: Pick<Deps, "config">, caption: string): string {
  const trimmed = caption.trim();
  if (trimmed === "") throw invalidField("caption", "must not be empty");
  const max = deps.config.captionMaxGraphemes;
  const length = graphemeCount(trimmed);
  if (length > max) throw invalidField("caption", `must be at most ${max} characters (this one has ${length})`);
  return trimmed;
}

function cleanAltText(altText: string): string {
  const trimmed = altText.trim();
  const length = graphemeCount(trimmed);
  if (length > MAX_ALT_TEXT_GRAPHEMES) {
    throw invalidField("altText", `must be at most ${MAX_ALT_TEXT_GRAPHEMES} characters (this one has ${length})`);
  }
  return trimmed;
}

/**
 * PATCH /creations/{id}: sets the caption and/or the alt text by hand. Free, nothing else changes (the image, the
 * variant regenerate counts from, and every scheduled post's snapshot stay as they are). Runs in the creation's
 * regenerate queue, so an edit never interleaves with a regenerate of the same creation.
 */
export async function editCreation(deps: Deps, accountId: string, id: string, input: CreationEdit): Promise<Creation> {
  if (input.caption === undefined && input.altText === undefined) {
    throw new AppError("invalid_request", "Send caption, altText or both.", {
      details: [{ field: "body", problem: "must contain caption or altText" }],
    });
  }
  const caption = input.caption === undefined ? undefined : cleanCaption(deps, input.caption);
  const altText = input.altText === undefined ? undefined : cleanAltText(input.altText);
  if (!(await findCreationRow(deps, accountId, id))) throw notFound("creation");
  return serialized(id, async () => {
    const current = await findCreationRow(deps, accountId, id);
    if (!current) throw notFound("creation");
    const asset = current.imageAssetId ? await findAsset(deps, accountId, current.imageAssetId) : null;
    if (altText !== undefined && !asset) throw invalidField("altText", "cannot be set: the creation has no image");
    const changes = {
      ...(caption !== undefined ? { caption } : {}),
      ...(altText !== undefined ? { altText } : {}),
      updatedAt: deps.clock.now(),
    };
    const row = await deps.store.write((tx) =>
      tx
        .update(creations)
        .set(changes)
        .where(and(eq(creations.id, id), eq(creations.accountId, accountId)))
        .returning()
        .get(),
    );
    if (!row) throw notFound("creation"); // deleted meanwhile
    return creationToApi(deps, { row, asset });
  });
}

/** True while a post with a pending (scheduled or publishing) target was scheduled from `creationId`. */
async function usedByPendingPost(tx: StoreDb, creationId: string): Promise<boolean> {
  const row = await tx
    .select({ id: scheduledPosts.id })
    .from(scheduledPosts)
    .innerJoin(scheduledPostTargets, eq(scheduledPostTargets.postId, scheduledPosts.id))
    .where(and(eq(scheduledPosts.creationId, creationId), inArray(scheduledPostTargets.status, ["scheduled", "publishing"])))
    .limit(1)
    .get();
  return row !== undefined;
}

/**
 * DELETE /creations/{id}: removes the creation (its image stays in the library). 404 for a missing or another
 * account's id; 409 creation_in_use while a pending post was scheduled from it. Checked and deleted in one write
 * transaction, so a post scheduled at the same moment either sees the creation or the 404.
 */
export async function deleteCreation(deps: Deps, accountId: string, id: string): Promise<{ id: string; deleted: true }> {
  if (!isUuid(id)) throw notFound("creation");
  await deps.store.write(async (tx) => {
    const exists = await tx
      .select({ id: creations.id })
      .from(creations)
      .where(and(eq(creations.id, id), eq(creations.accountId, accountId)))
      .get();
    if (!exists) throw notFound("creation");
    if (await usedByPendingPost(tx, id)) {
      throw new AppError(
        "creation_in_use",
        "A scheduled post that has not gone out yet was made from this creation; cancel it (DELETE /api/v1/schedule/{id}) or wait until it is published.",
      );
    }
    await tx.delete(creations).where(and(eq(creations.id, id), eq(creations.accountId, accountId))).run();
  });
  return { id, deleted: true };
}
