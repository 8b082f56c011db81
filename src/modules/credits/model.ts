/** Request/response schemas of the credits routes. */
import { t } from "elysia";

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

export const creditSummarySchema = t.Object({
  balance: t.Integer({ minimum: 0, description: "Spendable credits." }),
  reserved: t.Integer({ minimum: 0, description: "Credits held by work in progress." }),
});

export const ledgerQuerySchema = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
});

export const ledgerEntrySchema = t.Object({
  id: t.String(),
  kind: t.Union([t.Literal("grant"), t.Literal("reserve"), t.Literal("capture"), t.Literal("release")]),
  amount: t.Integer({ minimum: 0 }),
  holdId: t.Union([t.String(), t.Null()]),
  note: t.String(),
  balanceAfter: t.Integer(),
  createdAt: t.String({ format: "date-time" }),
});

export const ledgerPageSchema = t.Object({
  entries: t.Array(ledgerEntrySchema),
  nextCursor: t.Union([t.String(), t.Null()]),
});
