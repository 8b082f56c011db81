/**
 * Brand voice: the settings generators use for this account. Owners and editors edit (the roles that may hold the
 * Brand voice group); viewers see them. Validated with the same schema as PUT /api/v1/voice, saved by the voice service.
 */
import { Value } from "@sinclair/typebox/value";
import { EMOJI_LEVELS } from "../../../generation/generator";
import { ROLE_SCOPES } from "../../../auth/scopes";
import { getVoice, putVoice } from "../../voice/service";
import { MAX_TAGS, voicePatchSchema } from "../../voice/model";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";
import { type FieldErrors, FormState } from "../fields";
import { AppError } from "../../../lib/errors";

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

async function voicePage(
  ctx: DashboardCtx,
  s: SessionContext,
  accountId: string,
  notices: Notice[],
  override?: Record<string, string>,
  errors: FieldErrors = {},
): Promise<Html> {
  const v = await getVoice(ctx.deps, accountId);
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
  const ro = editable ? html`` : html` readonly`;
  const f = new FormState(errors);
  return page(
    s,
    { title: "Brand voice", current: CURRENT, notices },
    html`<p class="muted">How generated captions sound for this account. Tools using an API key read and change the same settings.</p>
<form method="post" action="${CURRENT}" class="card form-card" novalidate>
  ${csrfField(s.csrfToken)}
  ${f.input({ name: "tone", label: "Tone", value: values.tone, hint: "For example: friendly, formal, playful, warm.", attrs: html` maxlength="200"${ro}` })}
  ${f.input({ name: "audience", label: "Audience", value: values.audience, attrs: html` maxlength="300"${ro}` })}
  ${f.input({ name: "language", label: "Language", value: values.language, required: true, hint: "A language tag such as en, de or pt-BR.", attrs: html` maxlength="35"${ro}` })}
  ${f.group("emoji", "Emoji", html`${EMOJI_LEVELS.map((e) => html`<label><input type="radio" name="emoji" value="${e}"${values.emoji === e ? html` checked` : ""}${editable ? "" : html` disabled`}> ${EMOJI_LABELS[e]}</label>`)}`)}
  ${f.textarea({ name: "hashtags", label: "Hashtags", value: values.hashtags, rows: 2, hint: `Separated by commas, up to ${MAX_TAGS}; one word each. A post gets only those that fit its seed.`, attrs: ro })}
  ${f.textarea({ name: "bannedWords", label: "Banned words", value: values.bannedWords, rows: 2, hint: "Never used in a caption. Separated by commas.", attrs: ro })}
  ${f.input({ name: "signature", label: "Signature", value: values.signature, hint: "A line added to every caption, e.g. a sign-off.", attrs: html` maxlength="200"${ro}` })}
  ${editable ? html`<button type="submit">Save voice</button>` : html`<p class="hint">Only owners and editors change the voice.</p>`}
</form>`,
  );
}

/** The field a schema path or a service detail names ("hashtags.2", "/hashtags/2" → hashtags). */
function fieldOf(path: string): string {
  return path.replace(/^\//, "").split(/[./]/)[0] ?? "";
}

/** A refusal in the words of the voice form, naming the value at fault where there is one. */
function voiceWords(name: string, index: number | null, raw: Record<string, string>): string {
  const item = index === null ? undefined : list(raw[name] ?? "")[index];
  if (name === "hashtags") {
    if (item && /\s/.test(item.trim())) return `Hashtags are single words: “${item.trim()}” has spaces.`;
    if (item) return `Hashtags are single words of letters, digits or _: “${item.trim()}” is not one.`;
    return `Up to ${MAX_TAGS} hashtags, each a single word.`;
  }
  if (name === "bannedWords") return `Up to ${MAX_TAGS} banned words, each at most 100 characters.`;
  if (name === "language") return "Enter a language tag such as en, de or pt-BR.";
  if (name === "tone") return "Describe the tone in at most 200 characters.";
  if (name === "audience") return "Describe the audience in at most 300 characters.";
  if (name === "signature") return "Keep the signature to at most 200 characters.";
  if (name === "emoji") return "Choose how many emoji.";
  return "This is not valid.";
}

/** GET /dashboard/voice */
export async function getVoicePage(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return htmlResponse(await voicePage(ctx, s, account.accountId, noticeFrom(request)));
}

/** POST /dashboard/voice */
export async function postVoice(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
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
    const errors: FieldErrors = {};
    for (const e of Value.Errors(voicePatchSchema, changes)) {
      const name = fieldOf(e.path);
      const index = /^\/\w+\/(\d+)/.exec(e.path)?.[1];
      if (name && !errors[name]) errors[name] = voiceWords(name, index === undefined ? null : Number(index), raw);
    }
    return htmlResponse(await voicePage(ctx, s, account.accountId, [], raw, errors), 400);
  }
  try {
    await putVoice(ctx.deps, account.accountId, changes as Parameters<typeof putVoice>[2]);
    return redirect(`${CURRENT}?notice=voice-saved`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const details = Array.isArray(error.extra.details) ? (error.extra.details as { field?: string }[]) : [];
      const path = details[0]?.field ?? "";
      const name = fieldOf(path) || "tone";
      const index = /\.(\d+)$/.exec(path)?.[1];
      return htmlResponse(await voicePage(ctx, s, account.accountId, [], raw, { [name]: voiceWords(name, index === undefined ? null : Number(index), raw) }), 400);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await voicePage(ctx, s, account.accountId, [notice], raw), status);
  }
}
