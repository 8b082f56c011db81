/** Schemas of the bulk routes (bulk-routes.ts). */
import { t } from "elysia";
import { listQuery } from "./model";

/** GET /schedule/posts.csv: the filters of GET /schedule/posts, without paging (the file has every post). */
export const exportQuery = t.Omit(listQuery, ["limit", "cursor"]);

const importedPost = t.Object(
  {
    row: t.Integer({ minimum: 1, description: "The data row it came from (1 = the first after the header)" }),
    id: t.String({ format: "uuid", description: "The scheduled post" }),
    creationId: t.String({ format: "uuid" }),
    scheduledTime: t.String({ format: "date-time" }),
    queued: t.Boolean(),
  },
  { title: "ImportedPost" },
);

/** POST /schedule/import's answer: every post made, in row order. */
export const importResponse = t.Object({ imported: t.Integer({ minimum: 1 }), posts: t.Array(importedPost) }, { title: "ImportResult" });
