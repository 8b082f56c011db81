/**
 * Shared fixtures of the scheduling and publishing tests: creations inserted as the creations module stores them,
 * images made with sharp, and connections added through the real connections service.
 */
import { eq } from "drizzle-orm";
import { creations, scheduledPosts, scheduledPostTargets } from "../src/db/tables";
import type { Deps } from "../src/deps";
import type { World } from "./helpers/world";
import type { WebhookReceiver } from "./peers/webhook-receiver";
import { runDueOnce } from "../src/publishing/dispatcher";
import { newId } from "../src/lib/ids";
import { loadSharp } from "../src/lib/sharp";
import { ingestImageBytes } from "../src/modules/assets/service";

/** Inserts a creation row (caption, alt text, optional image stored in the library). Answers its id. */
export async function makeCreation(
  deps: Deps,
  accountId: string,
  opts: { caption: string; altText?: string | null; image?: Uint8Array },
): Promise<{ id: string; imageAssetId: string | null }> {
  const asset = opts.image ? await ingestImageBytes(deps, accountId, { bytes: opts.image, fileName: "picture" }) : null;
  const id = newId();
  const now = deps.clock.now();
  await deps.store.write((tx) =>
    tx
      .insert(creations)
      .values({
        id,
        accountId,
        type: "social_post",
        seedId: newId(),
        caption: opts.caption,
        altText: asset ? (opts.altText ?? "") : null,
        imageAssetId: asset?.id ?? null,
        // images[0] mirrors image_asset_id/alt_text, as every writer keeps them (db/schema/post-content.ts).
        images: asset ? [{ assetId: asset.id, altText: opts.altText ?? null }] : [],
        aspectRatio: "square",
        mediaStyle: "minimal",
        createdAt: now,
        updatedAt: now,
      })
      .run(),
  );
  return { id, imageAssetId: asset?.id ?? null };
}

/** A small PNG of one colour. */
export async function solidPng(width = 64, height = 48): Promise<Uint8Array> {
  const buf = await loadSharp()({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .png()
    .toBuffer();
  return new Uint8Array(buf);
}

/** A PNG of random noise: incompressible, so `side`×`side` is far over 1 MB. */
export async function noisePng(side = 1100): Promise<Uint8Array> {
  const raw = new Uint8Array(side * side * 3);
  // getRandomValues fills at most 65,536 bytes per call.
  for (let i = 0; i < raw.length; i += 65536) crypto.getRandomValues(raw.subarray(i, Math.min(raw.length, i + 65536)));
  const buf = await loadSharp()(raw, { raw: { width: side, height: side, channels: 3 } }).png().toBuffer();
  return new Uint8Array(buf);
}

/** The stored rows of a post (for assertions about what the database holds). */
export async function postRows(deps: Deps, postId: string) {
  return {
    post: await deps.store.db.select().from(scheduledPosts).where(eq(scheduledPosts.id, postId)).get(),
    targets: await deps.store.db.select().from(scheduledPostTargets).where(eq(scheduledPostTargets.postId, postId)).all(),
  };
}

/** How many posts the database holds in all. */
export async function countPosts(deps: Deps): Promise<number> {
  return (await deps.store.db.select().from(scheduledPosts).all()).length;
}

/**
 * Leaves `targetId` as a worker that died after sending would: publishing, its lease (a foreign token) expiring at
 * `leaseExpiresAt` (default: already expired), the send started 5 s ago, the outcome never recorded.
 */
export async function leaveDeadWorker(world: World, targetId: string, leaseExpiresAt = world.clock.now() - 1): Promise<void> {
  await world.sql(
    "UPDATE scheduled_post_targets SET status = 'publishing', lease_token = 'dead', lease_expires_at = ?, send_started_at = ? WHERE id = ?",
    leaseExpiresAt,
    world.clock.now() - 5000,
    targetId,
  );
}

export const FIVE_MIN = 5 * 60 * 1000;
export const WEBHOOK_SECRET = "whsec-test-0123456789abcdef";

/**
 * Moves the clock `ms` on and runs the dispatcher once while `receiver` refuses every delivery (400): the due posts
 * fail. The receiver answers "ok" again afterwards, even when the run throws.
 */
export async function runDueRefused(world: World, receiver: Pick<WebhookReceiver, "setMode">, ms: number): Promise<void> {
  receiver.setMode("reject400");
  try {
    world.clock.advance(ms);
    await runDueOnce(world.deps);
  } finally {
    receiver.setMode("ok");
  }
}
