/** Schemas of the posting schedule and series routes (decisions.md §14): GET/PUT /schedule/slots, DELETE /schedule/series/{id}. */
import { t } from "elysia";
import { pathId, uuid } from "../../lib/schema";
import { MAX_SLOTS, WEEKDAYS } from "./slots";

export const slotSchema = t.Object(
  {
    days: t.Array(t.UnionEnum(WEEKDAYS, { error: "must be mon, tue, wed, thu, fri, sat or sun" }), {
      minItems: 1,
      maxItems: 7,
      error: "must be 1 to 7 of mon, tue, wed, thu, fri, sat, sun",
      description: "The weekdays the slot repeats on.",
    }),
    time: t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", error: "must be a 24-hour time HH:MM such as 09:30", examples: ["09:30"], description: "Wall-clock time in the schedule's timeZone, HH:MM." }),
    targets: t.Array(t.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 20,
      error: "must be 1 to 20 accountIds",
      description: "The connections (accountIds from GET /schedule/targets) posts in this slot go to.",
    }),
  },
  { title: "PostingSlot", additionalProperties: false },
);

export const slotsSchema = t.Object(
  {
    timeZone: t.String({
      minLength: 1,
      examples: ["Europe/Berlin"],
      maxLength: 64,
      description: "The account's IANA time zone; slot times are wall-clock times in it. Sending another zone changes the account's (owners only).",
    }),
    slots: t.Array(slotSchema, { maxItems: MAX_SLOTS, error: `must be at most ${MAX_SLOTS} slots` }),
  },
  { title: "PostingSchedule", additionalProperties: false },
);

export const seriesIdParams = t.Object({ id: pathId() });

export const seriesEndedResponse = t.Object(
  {
    seriesId: uuid(),
    ended: t.Literal(true),
    cancelledPostIds: t.Array(uuid(), { description: "The pending occurrences cancelled with the series." }),
  },
  { title: "SeriesEnded" },
);
