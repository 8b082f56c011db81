/** Schemas of GET/PATCH /api/v1/account (decisions.md §14): the single source of truth for validation and OpenAPI. */
import { t } from "elysia";
import { uuid } from "../../lib/schema";

export const accountSettingsSchema = t.Object(
  {
    id: uuid(),
    name: t.String(),
    timeZone: t.String({ examples: ["Europe/Berlin"], description: "IANA time zone name the posting slots and repeats follow (default UTC); members still see times in their own." }),
    approvalRequired: t.Boolean({ description: "When true, posts scheduled by editors wait for an owner's approval." }),
  },
  { title: "AccountSettings" },
);

export const accountSettingsResponse = t.Object({ account: accountSettingsSchema }, { title: "AccountSettingsEnvelope" });

export const accountSettingsBody = t.Object(
  {
    time_zone: t.Optional(
      t.String({ minLength: 1, maxLength: 64, error: "must be an IANA time zone name such as Europe/Berlin", examples: ["Europe/Berlin"], description: "IANA time zone name, e.g. Europe/Berlin." }),
    ),
    approval_required: t.Optional(t.Boolean({ error: "must be true or false", description: "Editors' posts wait for an owner's approval." })),
  },
  { title: "AccountSettingsChange", additionalProperties: false, error: "must be an object with time_zone and/or approval_required" },
);
