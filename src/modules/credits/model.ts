/** Request/response schemas of the credits routes. */
import { t } from "elysia";
import { integer, orNull, timestamp, uuid } from "../../lib/schema";

export const MAX_LIMIT = 200;
export const DEFAULT_LIMIT = 50;

export const creditSummarySchema = t.Object({
  balance: integer({ minimum: 0, description: "Spendable credits." }),
  reserved: integer({ minimum: 0, description: "Credits held by work in progress." }),
}, { title: "CreditSummary" });

export const ledgerQuerySchema = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT })),
  cursor: t.Optional(t.String({ maxLength: 200 })),
});

export const ledgerEntrySchema = t.Object({
  id: uuid(),
  kind: t.Union([t.Literal("grant"), t.Literal("reserve"), t.Literal("capture"), t.Literal("release")]),
  amount: integer({ minimum: 0 }),
  holdId: orNull(uuid()),
  note: t.String(),
  balanceAfter: integer(),
  createdAt: timestamp(),
}, { title: "LedgerEntry" });

export const ledgerPageSchema = t.Object({
  entries: t.Array(ledgerEntrySchema),
  nextCursor: orNull(t.String()),
}, { title: "LedgerPage" });
