/** The words of each kind of notice where people choose them ("Your settings" → Emails) and in the emails. */
import type { NoticeKind } from "../../db/schema/notices";

/** The switch label of each kind on "Your settings" (the page and the emails use the same words). */
export const KIND_SWITCH_LABELS: Record<NoticeKind, string> = {
  post_failed: "A post failed",
  post_unconfirmed: "A post could not be confirmed",
  connection_needs_attention: "A connection needs attention",
  post_awaiting_approval: "A post waits for approval (owners)",
  invitation: "You are invited to another account",
  password_reset: "Password reset links",
};
