/** Request schemas of the approval routes (decisions.md §14). */
import { t } from "elysia";
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from "./model";
import { NOTE_MAX } from "./approval";

export const rejectBody = t.Object(
  {
    note: t.Optional(
      t.String({
        maxLength: NOTE_MAX,
        description: `Why the post is rejected (at most ${NOTE_MAX} characters); the post's errorMessage becomes "Rejected: <note>".`,
        error: `must be a text of at most ${NOTE_MAX} characters`,
      }),
    ),
  },
  { additionalProperties: false },
);

export const approvalsQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT })),
  cursor: t.Optional(t.String({ minLength: 1, maxLength: 512 })),
});
