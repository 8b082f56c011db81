/**
 * The post every network walk of issue 26 writes in the dashboard's composer (test/helpers/dashboard-post.ts does the
 * writing and scheduling): a caption, two images uploaded from this device (a 320×200 and a 200×320 PNG, so a network
 * that pads or crops has both shapes) each with its alt text, and a first comment where the network takes one.
 */
import { solidPng } from "../publishing-fixtures";
import type { ComposedPost } from "./dashboard-post";

/** `caption` with two uploaded images (`alts[0]` on the wide one, `alts[1]` on the tall one) and `firstComment` if given. */
export async function twoImagePost(caption: string, alts: readonly [string, string], firstComment?: string): Promise<ComposedPost> {
  return {
    caption,
    images: [
      { alt: alts[0], upload: { name: "wide.png", bytes: await solidPng(320, 200) } },
      { alt: alts[1], upload: { name: "tall.png", bytes: await solidPng(200, 320) } },
    ],
    ...(firstComment === undefined ? {} : { firstComment }),
  };
}
