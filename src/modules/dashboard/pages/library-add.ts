/**
 * More ways into the library: an image from a web address (the assets service's `ingestFromUrl`, with the same
 * address checks the API applies) and an upload link to hand to someone (the uploads service's `createUploadLink`),
 * shown once after a redirect like a key's secret.
 */
import { AppError } from "../../../lib/errors";
import { ingestFromUrl } from "../../assets/service";
import { UPLOAD_LINK_TTL_SECONDS, createUploadLink } from "../../uploads/service";
import { type FieldErrors, FormState } from "../fields";
import type { DashboardCtx } from "../../../web/guard";
import { type Html, html } from "../../../lib/html";
import { type Form, field, redirect } from "../../../web/http";
import { csrfField } from "../../../web/layout";
import { zoneOf } from "../../../web/preferences";
import { stashSecret, takeSecret } from "../reveal";
import type { Membership, SessionContext } from "../../../web/session";
import { plainMessage } from "./common";
import { zonedParts } from "../../../lib/zoned";

const CURRENT = "/dashboard/library";

/** How long an upload link made here may stay usable: the choices the form offers, in seconds (the API's 300 to 604,800). */
const LINK_LIFETIMES: readonly (readonly [string, string])[] = [
  [String(UPLOAD_LINK_TTL_SECONDS), "15 minutes"],
  ["3600", "1 hour"],
  ["86400", "1 day"],
  ["604800", "7 days"],
];

/** Ingest refusals in words a person uses. */
const URL_WORDS: Partial<Record<string, string>> = {
  invalid_url: "That is not a web address. It starts with https://.",
  https_required: "The address must start with https://.",
  port_not_allowed: "Addresses with that port cannot be used; use the standard https port.",
  host_not_public: "That address points inside a private network, which Seedcast does not fetch from.",
  host_unresolvable: "No server has that name. Check the address for typos.",
  too_many_redirects: "The address redirects too many times.",
  upstream_status: "The server did not hand over an image at that address.",
  unsupported_type: "That address does not lead to a PNG, JPEG, GIF or WebP image.",
  image_too_large: "That image is larger than the library accepts.",
  image_dimensions_too_large: "That image has too many pixels for the library.",
  empty_body: "The address answered with nothing.",
};

/** The two forms, for the library page. `values`/`errors` refill the address form after a refusal. */
export function addForms(s: SessionContext, errors: FieldErrors = {}, values: { url?: string } = {}): Html {
  const f = new FormState(errors);
  return html`<div class="grid2">
<form method="post" action="${CURRENT}/from-url" class="card" aria-labelledby="from-url-title" novalidate>
  <h2 id="from-url-title">Add from a web address</h2>
  ${csrfField(s.csrfToken)}
  ${f.input({ name: "url", label: "Image address", type: "url", value: values.url ?? "", required: true, hint: "An https:// address of a PNG, JPEG, GIF or WebP image." })}
  <button type="submit" class="secondary">Add image</button>
</form>
<form method="post" action="${CURRENT}/upload-link" class="card" aria-labelledby="link-title">
  <h2 id="link-title">Ask someone for an image</h2>
  ${csrfField(s.csrfToken)}
  <p>Make a link to hand to someone: they open it on their phone or computer and upload one image, without an account. It works once, until it expires.</p>
  ${f.select({ name: "lifetime", label: "Works for", options: LINK_LIFETIMES, value: String(UPLOAD_LINK_TTL_SECONDS) })}
  <button type="submit" class="secondary">Make an upload link</button>
</form>
</div>`;
}

/** The freshly made upload link, once (`?link=` names it). */
export async function linkBlock(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Html | null> {
  const token = new URL(request.url).searchParams.get("link");
  if (!token) return null;
  const made = await takeSecret(ctx.deps, s.sessionId, token);
  if (!made) return html`<p class="notice notice-warn" role="status">That upload link was shown once and is not shown again. Make a new one if it was not copied.</p>`;
  return html`<section class="secret" aria-labelledby="new-link-title">
  <h2 id="new-link-title">${made.title}</h2>
  <p>${made.note ?? ""}</p>
  <div class="value">
    <label class="sr-only" for="new-link">The upload link</label>
    <input id="new-link" type="text" readonly value="${made.secret}" autocomplete="off" spellcheck="false">
    <button type="button" data-copy="new-link" hidden>Copy</button>
  </div>
  <p id="new-link-status" role="status" class="hint"></p>
</section>`;
}

/** POST /dashboard/library/from-url: answers a redirect, or the field error to show. */
export async function ingestUrl(ctx: DashboardCtx, account: Membership, form: Form | undefined): Promise<Response | { errors: FieldErrors; values: { url: string } }> {
  const url = field(form, "url").trim();
  if (!url) return { errors: { url: "Enter the address of an image." }, values: { url } };
  try {
    await ingestFromUrl(ctx.deps, account.accountId, { url });
    return redirect(`${CURRENT}?notice=uploaded`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { errors: { url: URL_WORDS[error.code] ?? plainMessage(error) }, values: { url } };
  }
}

/**
 * POST /dashboard/library/upload-link: a link for the chosen `lifetime` (one of LINK_LIFETIMES; anything else, or
 * none, is the default 15 minutes).
 */
export async function makeUploadLink(ctx: DashboardCtx, s: SessionContext, account: Membership, form: Form | undefined): Promise<Response> {
  const chosen = LINK_LIFETIMES.find(([value]) => value === field(form, "lifetime"))?.[0];
  const link = await createUploadLink(ctx.deps, account.accountId, null, Number(chosen ?? UPLOAD_LINK_TTL_SECONDS));
  const ends = zonedParts(Date.parse(link.expiresAt), zoneOf(s));
  const token = await stashSecret(ctx.deps, s.sessionId, {
    title: "Upload link made",
    secret: link.uploadUrl,
    note: `Send this link to the person with the image. It takes one image and stops working at ${ends.time} (${zoneOf(s)}), ${ends.date}. The image then appears below.`,
  });
  return redirect(`${CURRENT}?link=${token}`);
}
