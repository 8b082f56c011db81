/**
 * API keys: list, mint (groups limited by the person's role), rotate and revoke. A secret appears exactly once, on the
 * page the mint or rotate POST redirects to (no-store; ../reveal.ts keeps it sealed in the database until that GET, on
 * any replica, for at most ten minutes), and is never rendered again.
 */
import { EXPIRY_CHOICES, DEFAULT_EXPIRY_DAYS, type KeyView, listKeys, mintKey, parseExpiryDays, revokeKey, rotateKey, KEY_NAME_MAX } from "../../auth/keys-service";
import { eq } from "drizzle-orm";
import { members, users } from "../../../db/tables";
import { ROLE_SCOPES, SCOPE_LABELS, SCOPES } from "../../../auth/scopes";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { zoneOf } from "../../../web/preferences";
import { zoneLabel, zonedParts } from "../../../lib/zoned";
import { type Form, field, fields, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";
import { stashSecret, takeSecret } from "../reveal";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { AppError } from "../../../lib/errors";

const CURRENT = "/dashboard/keys";

/** userId → email of the account's members, to say who minted each key. */
async function memberEmails(ctx: DashboardCtx, accountId: string): Promise<[string, string][]> {
  const rows = await ctx.deps.store.db
    .select({ userId: members.userId, email: users.email })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.accountId, accountId))
    .all();
  return rows.map((r) => [r.userId, r.email]);
}

function canManage(s: SessionContext, key: KeyView): boolean {
  return s.account?.role === "owner" || key.userId === s.userId;
}

function secretBlock(title: string, secret: string, extra: Html | string = ""): Html {
  return html`<section class="secret" aria-labelledby="secret-title">
  <h2 id="secret-title">${title}</h2>
  <p><strong>Copy this key now. It will not be shown again</strong>: Seedcast stores only a hash of it. If it is lost, rotate or mint a new one.</p>
  <div class="value">
    <label class="sr-only" for="new-secret">The new API key</label>
    <input id="new-secret" type="text" readonly value="${secret}" autocomplete="off" spellcheck="false" autofocus>
    <button type="button" data-copy="new-secret" hidden>Copy</button>
  </div>
  <p id="new-secret-status" role="status" class="hint"></p>
  ${extra}
</section>`;
}

function keysTable(s: SessionContext, keys: KeyView[], people: Map<string, string>): Html {
  if (keys.length === 0) return html`<p class="muted">No keys yet.</p>`;
  return html`<div class="table-wrap"><table class="stack">
<caption class="sr-only">API keys of this account</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Groups</th><th scope="col">Prefix</th><th scope="col">Member</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
<tbody>
${keys.map(
  (k) => html`<tr>
  <td data-label="Name">${k.name}</td>
  <td data-label="Groups">${k.scopes.map((sc) => SCOPE_LABELS[sc]).join(", ")}</td>
  <td data-label="Prefix"><code>${k.prefix}…</code></td>
  <td data-label="Member">${k.userId === s.userId ? "you" : (people.get(k.userId) ?? "a former member")}</td>
  <td data-label="Created">${timeTag(k.createdAt, "—", zoneOf(s))}</td>
  <td data-label="Last used">${timeTag(k.lastUsedAt, "never", zoneOf(s))}</td>
  <td data-label="Expires">${k.state === "grace" ? html`<span>grace until ${timeTag(k.graceUntil, "—", zoneOf(s))}</span>` : timeTag(k.expiresAt, "never", zoneOf(s))}</td>
  <td data-label="State"><span class="badge state-${k.state}">${k.state}</span></td>
  <td data-label="Actions">${
    canManage(s, k)
      ? html`<div class="actions">
    ${k.state === "active" ? html`<a class="button small secondary" href="/dashboard/keys/${k.id}/rotate">Rotate<span class="sr-only"> ${k.name}</span></a>` : ""}
    ${k.state === "active" || k.state === "grace" ? html`<a class="button small danger" href="/dashboard/keys/${k.id}/revoke">Revoke<span class="sr-only"> ${k.name}</span></a>` : ""}
  </div>`
      : ""
  }</td>
</tr>`,
)}
</tbody></table></div>`;
}

function mintForm(s: SessionContext, values: { name?: string; groups?: string[]; expires?: string } = {}, errors: FieldErrors = {}): Html {
  const role = s.account?.role ?? "viewer";
  const allowed = ROLE_SCOPES[role];
  const checked = values.groups ?? ["read"];
  const expires = values.expires ?? String(DEFAULT_EXPIRY_DAYS);
  const f = new FormState(errors);
  return html`<form method="post" action="/dashboard/keys" class="card form-card" aria-labelledby="mint-title" novalidate>
  <h2 id="mint-title">Mint a key</h2>
  ${csrfField(s.csrfToken)}
  ${f.input({ name: "name", label: "Name", value: values.name ?? "", required: true, hint: `Up to ${KEY_NAME_MAX} characters, e.g. the tool that will use it.`, attrs: html` maxlength="${KEY_NAME_MAX}"` })}
  ${f.group(
    "groups",
    "Groups",
    html`${SCOPES.filter((sc) => allowed.includes(sc)).map(
      (sc) => html`<label><input type="checkbox" name="groups" value="${sc}"${checked.includes(sc) ? html` checked` : ""}> ${SCOPE_LABELS[sc]} <code class="muted">${sc}</code></label>`,
    )}
    ${allowed.length < SCOPES.length ? html`<p class="hint">Your role (${role}) can grant only ${allowed.map((sc) => SCOPE_LABELS[sc]).join(", ")}.</p>` : ""}`,
  )}
  ${f.select({
    name: "expires",
    label: "Expires after",
    value: expires,
    options: [...EXPIRY_CHOICES.map((d) => [String(d), `${d} days`] as const), ["never", "Never"] as const],
  })}
  <button type="submit">Mint key</button>
</form>`;
}

/** Mint refusals in words, by field. */
function mintWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "name") return `Give the key a name of 1 to ${KEY_NAME_MAX} characters.`;
  if (fieldName === "groups") return /at least one/.test(problem) ? "Choose at least one group." : "Choose groups from the list.";
  if (fieldName === "expires") return "Choose when the key expires.";
  return message;
}

async function keysPage(
  ctx: DashboardCtx,
  s: SessionContext,
  accountId: string,
  opts: { notices?: Notice[]; top?: Html; form?: Parameters<typeof mintForm>[1]; errors?: FieldErrors } = {},
): Promise<Html> {
  const keys = await listKeys(ctx.deps, accountId);
  const people = new Map(await memberEmails(ctx, accountId));
  return page(
    s,
    { title: "API keys", current: CURRENT, notices: opts.notices },
    html`${opts.top ?? ""}
<p class="muted">Keys let tools call the Seedcast API for this account. Each key holds only the groups chosen here, and never more than its owner's role allows.</p>
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Keys</h2>
  ${keysTable(s, keys, people)}
</section>
${mintForm(s, opts.form, opts.errors)}`,
  );
}

/** GET /dashboard/keys */
export async function getKeys(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const shown = new URL(request.url).searchParams.get("shown");
  if (shown) {
    const revealed = await takeSecret(ctx.deps, s.sessionId, shown);
    if (revealed) {
      return htmlResponse(await keysPage(ctx, s, account.accountId, { top: secretBlock(revealed.title, revealed.secret, revealed.note ? html`<p>${revealed.note}</p>` : "") }));
    }
    const gone: Notice = { kind: "warn", text: "That key was shown once and is not shown again; reloading never makes another. If it was not copied, rotate it or mint a new one." };
    return htmlResponse(await keysPage(ctx, s, account.accountId, { notices: [gone] }));
  }
  return htmlResponse(await keysPage(ctx, s, account.accountId, { notices: noticeFrom(request) }));
}

/** POST /dashboard/keys: mints, then shows the secret once. The service refuses groups beyond the role. */
export async function postMint(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const values = { name: field(form, "name"), groups: fields(form, "groups"), expires: field(form, "expires") };
  try {
    const minted = await mintKey(ctx.deps, {
      accountId: account.accountId,
      userId: s.userId,
      name: values.name,
      groups: values.groups,
      expiresDays: parseExpiryDays(values.expires),
    });
    const token = await stashSecret(ctx.deps, s.sessionId, { title: `Key “${values.name.trim()}” minted`, secret: minted.key });
    return redirect(`${CURRENT}?shown=${token}`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const { fields: errors, general } = errorsOf(error, { name: "name", groups: "groups", expires: "expires" }, mintWords, "name");
      return htmlResponse(await keysPage(ctx, s, account.accountId, { errors, form: values, notices: general ? [{ kind: "error", text: general }] : [] }), error.status);
    }
    const { notice, status } = refusal(error);
    return htmlResponse(await keysPage(ctx, s, account.accountId, { notices: [notice], form: values }), status);
  }
}

async function findKey(ctx: DashboardCtx, s: SessionContext, accountId: string, keyId: string): Promise<KeyView | Response> {
  const key = (await listKeys(ctx.deps, accountId)).find((k) => k.id === keyId);
  if (!key) return htmlResponse(page(s, { title: "Key not found", current: CURRENT }, html`<p class="card">No such key in this account.</p>`), 404);
  if (!canManage(s, key)) return forbiddenPage(s, "Only the account's owners and the person who minted a key can rotate or revoke it.");
  return key;
}

/** POST /dashboard/keys/:id/rotate: shows the replacement's secret once and the old key's grace end. */
export async function postRotate(ctx: DashboardCtx, s: SessionContext, keyId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const key = await findKey(ctx, s, account.accountId, keyId);
  if (key instanceof Response) return key;
  try {
    const rotated = await rotateKey(ctx.deps, key.id, account.accountId);
    const graceAt = rotated.previousKeyGraceUntil ? zonedParts(Date.parse(rotated.previousKeyGraceUntil), zoneOf(s)) : null;
    const graceEnd = graceAt ? `${graceAt.date} ${graceAt.time} (${zoneLabel(zoneOf(s))} time)` : "the end of its grace period";
    const token = await stashSecret(ctx.deps, s.sessionId, {
      title: `Key “${key.name}” rotated`,
      secret: rotated.key,
      note: `The old key (${key.prefix}…) keeps working until ${graceEnd}, then answers 401. Switch your tools over before then.`,
    });
    return redirect(`${CURRENT}?shown=${token}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await keysPage(ctx, s, account.accountId, { notices: [notice] }), status);
  }
}

/** GET /dashboard/keys/:id/rotate: the confirmation step. */
export async function getRotate(ctx: DashboardCtx, s: SessionContext, keyId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const key = await findKey(ctx, s, account.accountId, keyId);
  if (key instanceof Response) return key;
  return htmlResponse(
    confirmPage(s, {
      title: "Rotate key",
      current: CURRENT,
      question: html`Rotate the key <strong>${key.name}</strong> (<code>${key.prefix}…</code>)? You get a new secret, shown once; the old one keeps working for a grace period so your tools can switch over, then answers 401.`,
      action: `/dashboard/keys/${key.id}/rotate`,
      confirmLabel: "Rotate key",
      cancelHref: CURRENT,
    }),
  );
}

/** GET /dashboard/keys/:id/revoke: the confirmation step. */
export async function getRevoke(ctx: DashboardCtx, s: SessionContext, keyId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const key = await findKey(ctx, s, account.accountId, keyId);
  if (key instanceof Response) return key;
  return htmlResponse(
    confirmPage(s, {
      title: "Revoke key",
      current: CURRENT,
      question: html`Revoke the key <strong>${key.name}</strong> (<code>${key.prefix}…</code>)? Every tool using it gets 401 from the next request. This cannot be undone.`,
      action: `/dashboard/keys/${key.id}/revoke`,
      confirmLabel: "Revoke key",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/keys/:id/revoke */
export async function postRevoke(ctx: DashboardCtx, s: SessionContext, keyId: string): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  const key = await findKey(ctx, s, account.accountId, keyId);
  if (key instanceof Response) return key;
  await revokeKey(ctx.deps, key.id, account.accountId);
  return redirect(`${CURRENT}?notice=revoked`);
}
