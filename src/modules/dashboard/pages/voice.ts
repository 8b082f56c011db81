/**
 * Brand voice: the settings generators use for this account. Owners and editors edit (the roles that may hold the
 * Brand voice group); viewers see them. Validated with the same schema as PUT /api/v1/voice, saved by the voice service.
 */
import { Value } from "@sinclair/typebox/value";
import { EMOJI_LEVELS } from "../../../generation/generator";
import { ROLE_SCOPES } from "../../auth/scopes";
import { getVoice, putVoice } from "../../voice/service";
import { MAX_TAGS, voicePatchSchema } from "../../voice/model";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../guard";
import { html } from "../html";
import { type Form, field, htmlResponse, redirect } from "../http";
import { type Notice, csrfField, page } from "../layout";
import type { SessionContext } from "../session";
import { noticeFrom, refusal } from "./common";

const CURRENT = "/dashboard/voice";
const EMOJI_LABELS: Record<(typeof EMOJI_LEVELS)[number], string> = { none: "None", some: "Some", lots: "Lots" };

/** Splits a comma or newline separated list. */
function list(value: string): string[] {
  return value
    .split(/[,\n]/)
    .map((v) => v.trim())
    .filter(Boolean);
}

function canEdit(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("voice");
}

function voicePage(ctx: DashboardCtx, s: SessionContext, accountId: string, notices: Notice[], override?: Record<string, string>) {
  const v = getVoice(ctx.deps, accountId);
  const values = override ?? {
    tone: v.tone,
    audience: v.audience,
    language: v.language,
    emoji: v.emoji,
    hashtags: v.hashtags.join(", "),
    bannedWords: v.bannedWords.join(", "),
    signature: v.signature,
  };
  const editable = canEdit(s);
  const ro = editable ? "" : html` readonly`;
  return page(
    s,
    { title: "Brand voice", current: CURRENT, notices },
    html`<p class="muted">How generated captions sound for this account. The API reads and writes the same settings (<code>/api/v1/voice</code>).</p>
<form method="post" action="${CURRENT}" class="card form-card">
  ${csrfField(s.csrfToken)}
  <div class="row"><label for="tone">Tone</label><input id="tone" name="tone" type="text" maxlength="200" value="${values.tone}"${ro}>
    <p class="hint">For example: friendly, formal, playful.</p></div>
  <div class="row"><label for="audience">Audience</label><input id="audience" name="audience" type="text" maxlength="300" value="${values.audience}"${ro}></div>
  <div class="row"><label for="language">Language</label><input id="language" name="language" type="text" maxlength="35" required value="${values.language}"${ro} aria-describedby="language-hint">
    <p class="hint" id="language-hint">A language tag such as en, de or pt-BR.</p></div>
  <fieldset${editable ? "" : html` disabled`}><legend>Emoji</legend>
    ${EMOJI_LEVELS.map((e) => html`<label><input type="radio" name="emoji" value="${e}"${values.emoji === e ? html` checked` : ""}> ${EMOJI_LABELS[e]}</label>`)}
  </fieldset>
  <div class="row"><label for="hashtags">Hashtags</label><textarea id="hashtags" name="hashtags" rows="2"${ro} aria-describedby="hashtags-hint">${values.hashtags}</textarea>
    <p class="hint" id="hashtags-hint">Separated by commas, up to ${MAX_TAGS}; one word each.</p></div>
  <div class="row"><label for="bannedWords">Banned words</label><textarea id="bannedWords" name="bannedWords" rows="2"${ro}>${values.bannedWords}</textarea>
    <p class="hint">Never used in a caption. Separated by commas.</p></div>
  <div class="row"><label for="signature">Signature</label><input id="signature" name="signature" type="text" maxlength="200" value="${values.signature}"${ro}>
    <p class="hint">A line added to every caption, e.g. a sign-off.</p></div>
  ${editable ? html`<button type="submit">Save voice</button>` : html`<p class="hint">Only owners and editors change the voice.</p>`}
</form>`,
  );
}

/** GET /dashboard/voice */
export function getVoicePage(ctx: DashboardCtx, s: SessionContext, request: Request): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(voicePage(ctx, s, account.accountId, noticeFrom(request)));
}

/** POST /dashboard/voice */
export function postVoice(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canEdit(s)) return forbiddenPage(s, "Only owners and editors change the brand voice.");
  const raw = {
    tone: field(form, "tone"),
    audience: field(form, "audience"),
    language: field(form, "language"),
    emoji: field(form, "emoji"),
    hashtags: field(form, "hashtags"),
    bannedWords: field(form, "bannedWords"),
    signature: field(form, "signature"),
  };
  const changes = { ...raw, hashtags: list(raw.hashtags), bannedWords: list(raw.bannedWords) };
  if (!Value.Check(voicePatchSchema, changes)) {
    const first = [...Value.Errors(voicePatchSchema, changes)][0];
    const where = first?.path.replace(/^\//, "").split("/")[0] ?? "voice";
    return htmlResponse(voicePage(ctx, s, account.accountId, [{ kind: "error", text: `${where}: ${first?.message ?? "is not valid"}` }], raw), 400);
  }
  try {
    putVoice(ctx.deps, account.accountId, changes as Parameters<typeof putVoice>[2]);
    return redirect(`${CURRENT}?notice=voice-saved`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(voicePage(ctx, s, account.accountId, [notice], raw), status);
  }
}
