/** Helpers shared by the pages: turning service refusals into notices, fixed notices from `?notice=`. */
import { AppError } from "../../../lib/errors";
import type { Notice } from "../../../web/layout";

/** A refusal's message without the API's "field: " prefix (the page names the field itself). */
export function plainMessage(error: AppError): string {
  const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: unknown }[]) : [];
  const fieldName = typeof details[0]?.field === "string" ? details[0].field : null;
  const text = fieldName && error.message.startsWith(`${fieldName}: `) ? error.message.slice(fieldName.length + 2) : error.message;
  // A sentence starting with an address or a handle keeps it as written.
  return /^(https?:\/\/|@)/.test(text) ? text : text.charAt(0).toUpperCase() + text.slice(1);
}

/** A service refusal as a notice plus the status to answer; anything else is a bug and is rethrown. */
export function refusal(error: unknown): { notice: Notice; status: number } {
  if (error instanceof AppError) return { notice: { kind: "error", text: plainMessage(error) }, status: error.status };
  throw error;
}

/** Fixed success messages, chosen by key after a redirect (never text from the URL). */
const NOTICES: Record<string, string> = {
  revoked: "The key was revoked. It answers 401 from now on.",
  "member-added": "The person was added.",
  "member-updated": "The role was changed. Their keys follow the new role at once.",
  "member-removed": "The person was removed; their keys no longer work.",
  granted: "Credits granted.",
  "account-created": "The account was created.",
  "account-disabled": "The account was disabled; its keys answer 401.",
  "account-enabled": "The account was enabled again.",
  "voice-saved": "The brand voice was saved.",
  connected: "The connection was added.",
  "signed-in": "Signed in: the connection was added and checked.",
  "signed-in-again": "Signed in again and checked: posts already scheduled to this account go out with the new sign-in.",
  checked: "The connection was checked.",
  "connection-removed": "The connection was removed.",
  cancelled: "The post was cancelled.",
  uploaded: "The image was added to the library.",
  deleted: "The image was deleted.",
  "creation-saved": "Saved. Posts already scheduled keep the text they had.",
  "creation-deleted": "The post was deleted. Its image stays in the library.",
  regenerated: "Regenerated. What it replaced is kept under Earlier versions.",
  "version-restored": "Restored. The version it replaced is kept under Earlier versions.",
  "post-content-saved": "Saved. The post goes out with this text; the post it was made from is unchanged.",
  "model-saved": "Saved. The next post generated uses this server.",
  "model-cleared": "The language model server was removed. Posts are written offline again.",
  "app-saved": "Saved. People can connect this network from their Connections page now.",
  "app-cleared": "The network's app was removed from this page. Nobody can connect it until an app is set again.",
  scheduled: "Scheduled. Here it is on the calendar.",
  rescheduled: "The post was moved.",
  "marked-posted": "Noted: it was posted.",
  "sending-again": "It is being sent again now.",
  "retry-scheduled": "Scheduled again. It goes out at the time shown.",
  "password-changed": "Your password was changed. Other browsers signed in as you were signed out.",
  "zone-saved": "Your time zone was saved.",
  "seed-saved": "The seed was saved.",
  "seed-deleted": "The seed was deleted.",
  generated: "The post was generated. Check the caption, then schedule it.",
  joined: "Welcome! You joined the account.",
  "password-reset": "Your password was changed, and you are signed in. Anywhere else you were signed in, you were signed out.",
  "invitation-sent": "The invitation is on its way by email. The link in it works once, for 7 days.",
  "invitation-revoked": "The invitation was withdrawn; its link no longer works.",
  "notices-saved": "Your email choices were saved.",
};

/** Success messages about several things at once, for `?notice=<key>&count=<n>` with n ≥ 2 (only the number comes from the URL). */
const COUNTED: Record<string, (n: number) => string> = {
  uploaded: (n) => `${n} images were added to the library.`,
};
const MAX_COUNT = 10_000;

/** The notice named by `?notice=` on this request, if it is one of ours. */
export function noticeFrom(request: Request): Notice[] {
  const params = new URL(request.url).searchParams;
  const key = params.get("notice");
  const count = Number(params.get("count") ?? "");
  const counted = key ? COUNTED[key] : undefined;
  if (counted && Number.isInteger(count) && count >= 2 && count <= MAX_COUNT) return [{ kind: "ok", text: counted(count) }];
  const text = key ? NOTICES[key] : undefined;
  return text ? [{ kind: "ok", text }] : [];
}
