/**
 * Connections (the API's manageUrl): connect Bluesky, Mastodon, Nostr, a Discord channel (its webhook URL), a Telegram
 * channel (a bot token and the channel) or a webhook; each shows ready or what to fix;
 * re-check, reconnect (new credentials replace the old ones in place: the connection keeps its id, so posts already
 * scheduled to it go out with them), remove. Owners and editors
 * manage them; viewers see them. Credentials are never rendered back.
 */
import { isoAt } from "../../../lib/clock";
import { type ConnectionMeta, type ConnectionRow, openConnection } from "../../../store/connections";
import { npubEncode } from "nostr-tools/nip19";
import { relaysOf } from "../../../publishing/networks/nostr/connection";
import { generateKeys } from "../../../publishing/networks/nostr/keys";
import { BLUESKY_DEFAULT_SERVICE } from "../../../publishing/bluesky";
import { ROLE_SCOPES } from "../../../auth/scopes";
import {
  type AddConnectionInput,
  addConnection,
  checkConnection,
  getConnection,
  listConnections,
  removeConnection,
  replaceConnectionCredentials,
} from "../../connections/service";
import { type DashboardCtx, forbiddenPage, requireAccount } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { Membership, SessionContext } from "../../../web/session";
import { noticeFrom, plainMessage, refusal } from "./common";
import { zoneOf } from "../../../web/preferences";
import { type FieldErrors, FormState, errorsOf } from "../fields";
import { AppError } from "../../../lib/errors";
import { appNetworkCard, connectPath, mastodonSignInForm, signInPageResponse } from "./sign-in-form";
import { APP_NETWORKS } from "../../../config";
import type { ConnectionPlatform } from "../../../db/schema/connections";
import { appCredentials, isAppNetwork } from "../../../publishing/sign-in/app-credentials";
import { NETWORK_APP_GUIDES } from "../../../publishing/sign-in/network-apps";
import { signInNetworkFor } from "../../../publishing/sign-in/registry";
import { appSetupHref } from "./instance-apps";

const CURRENT = "/dashboard/connections";
const PLATFORM_LABELS = { bluesky: "Bluesky", mastodon: "Mastodon", nostr: "Nostr", discord: "Discord", telegram: "Telegram", webhook: "Webhook" } as const;
type Platform = keyof typeof PLATFORM_LABELS;
/** Every platform's name, for the cards of what is connected (the sign-in networks included). */
const PLATFORM_NAMES: Record<ConnectionPlatform, string> = { ...PLATFORM_LABELS, x: "X", instagram: "Instagram", facebook: "Facebook", threads: "Threads" };

function canManage(s: SessionContext): boolean {
  return s.account !== null && ROLE_SCOPES[s.account.role].includes("schedule");
}

/** Where a connection points, in the words of its platform ("Server mastodon.social"); Bluesky's default service is not worth a line. */
function whereTo(c: ConnectionRow): string {
  if (c.platform === "bluesky") return c.endpoint === BLUESKY_DEFAULT_SERVICE ? "" : `Server ${new URL(c.endpoint).host} · `;
  if (c.platform === "mastodon") return `Server ${new URL(c.endpoint).host} · `;
  if (c.platform === "nostr") {
    const pubkey = (JSON.parse(c.meta) as ConnectionMeta).providerAccountId;
    return `${pubkey ? `${npubEncode(pubkey)} · ` : ""}Relays ${relaysOf(c.endpoint).join(", ")} · `;
  }
  // The Discord webhook's address holds its secret token; the Telegram API's address says nothing.
  if (c.platform === "discord" || c.platform === "telegram") return "";
  return `Sends to ${c.endpoint} · `;
}

function connectionCard(s: SessionContext, c: ConnectionRow, highlight: boolean): Html {
  return html`<li class="post connection${highlight ? " highlight" : ""}" id="connection-${c.id}">
  <h3>${PLATFORM_NAMES[c.platform]} · ${c.label}</h3>
  <p>${
    c.readyToPost
      ? html`<span class="badge state-ready">ready</span> Ready to post.`
      : html`<span class="badge state-blocked">needs attention</span> ${c.blockedReason ?? "Not ready."}`
  }</p>
  <p class="hint">${whereTo(c)}last checked ${timeTag(c.checkedAt === null ? null : isoAt(c.checkedAt), "never", zoneOf(s))}</p>
  ${
    canManage(s)
      ? html`<div class="actions">
    <form method="post" action="${CURRENT}/${c.id}/check">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Check again<span class="sr-only"> ${c.label}</span></button></form>
    <a class="button small secondary" href="${CURRENT}/${c.id}/reconnect">Reconnect<span class="sr-only"> ${c.label}</span></a>
    <a class="button small danger" href="${CURRENT}/${c.id}/remove">Remove<span class="sr-only"> ${c.label}</span></a>
  </div>`
      : ""
  }
</li>`;
}

function platformFields(platform: Platform, values: Record<string, string>, prefix: string, errors: FieldErrors = {}): Html {
  const f = new FormState(errors);
  const id = (name: string) => `${prefix}-${name}`;
  const off = html` autocomplete="off"`;
  switch (platform) {
    case "bluesky":
      return html`${f.input({ name: "handle", id: id("handle"), label: "Handle", value: values.handle ?? "", required: true, attrs: html` placeholder="alice.bsky.social"${off}` })}
  ${f.input({ name: "appPassword", id: id("appPassword"), label: "App password", type: "password", required: true, hint: "Create one in Bluesky under Settings → Privacy and security → App passwords. Never your main password.", attrs: off })}
  ${f.input({ name: "service", id: id("service"), label: "Server", value: values.service ?? BLUESKY_DEFAULT_SERVICE, hint: "Leave it as it is unless your account lives on a server of your own.", attrs: html` inputmode="url"${off}` })}`;
    case "mastodon":
      return html`${f.input({ name: "instance", id: id("instance"), label: "Server", value: values.instance ?? "", required: true, hint: "The server you sign in at, such as mastodon.social.", attrs: html` placeholder="mastodon.social" inputmode="url"${off}` })}
  ${f.input({ name: "token", id: id("token"), label: "Access token", type: "password", required: true, hint: "On your server: Preferences → Development → New application, with the scopes read, write:statuses and write:media; then copy “Your access token”.", attrs: off })}`;
    case "discord":
      return html`${f.input({ name: "webhookUrl", id: id("webhookUrl"), label: "Channel webhook URL", type: "password", required: true, hint: "In Discord: the channel's settings → Integrations → Webhooks → New Webhook (or choose one) → Copy Webhook URL. It holds a secret: keep it to yourself.", attrs: html` placeholder="https://discord.com/api/webhooks/…"${off}` })}`;
    case "telegram":
      return html`${f.input({ name: "botToken", id: id("botToken"), label: "Bot token", type: "password", required: true, hint: "From @BotFather: /newbot (or /mybots → your bot → API Token).", attrs: off })}
  ${f.input({ name: "chat", id: id("chat"), label: "Channel", value: values.chat ?? "", required: true, hint: "The channel's @name, or its numeric id for a private channel. Add the bot to the channel as an administrator with “Post messages” first.", attrs: html` placeholder="@yourchannel"${off}` })}`;
    case "webhook":
      return html`${f.input({ name: "url", id: id("url"), label: "Webhook URL", type: "url", value: values.url ?? "", required: true, attrs: html` placeholder="https://hooks.example.com/seedcast"` })}
  ${f.input({ name: "secret", id: id("secret"), label: "Signing secret", type: "password", required: true, hint: "At least 16 characters, the same as the receiving service uses. A signed test message is sent now to check it.", attrs: html` minlength="16"${off}` })}`;
    case "nostr":
      return html`${f.input({ name: "secretKey", id: id("secretKey"), label: "Secret key", type: "password", hint: "Your nsec1… key (or its 64 hexadecimal characters), from your Nostr app. It is stored sealed and never shown again. No key yet? Use the “Make a new key” button below.", attrs: off })}
  ${f.textarea({ name: "relays", id: id("relays"), label: "Relays", value: values.relays ?? "", required: true, rows: 3, hint: "1 to 10 relays, one per line, each starting with wss://, such as wss://relay.damus.io. Every note goes to each of them.", attrs: html` spellcheck="false"${off}` })}
  ${f.input({ name: "blossom", id: id("blossom"), label: "Blossom server (for images, optional)", value: values.blossom ?? "", hint: "Where images are uploaded, such as https://blossom.primal.net. Without one, Nostr posts are text only.", attrs: html` inputmode="url"${off}` })}`;
  }
}

/**
 * Mastodon's card: the server and "Sign in with Mastodon" (pages/sign-in.ts), with the access-token form folded away
 * beneath it (open when that form was just refused).
 */
function mastodonCard(s: SessionContext, values: Record<string, string>, errors: FieldErrors): Html {
  const signInFailed = values.platform === "mastodon-signin";
  const pasteFailed = values.platform === "mastodon";
  return html`<section class="card" aria-labelledby="connect-mastodon-title">
  <h3 id="connect-mastodon-title">Connect Mastodon</h3>
  ${mastodonSignInForm(s.csrfToken, signInFailed ? values : {}, signInFailed ? errors : {})}
  <details class="paste-token"${pasteFailed ? html` open` : ""}>
    <summary>Paste an access token instead</summary>
    <form method="post" action="${CURRENT}" id="mastodon-token-form" aria-label="Connect Mastodon with an access token" novalidate>
      ${csrfField(s.csrfToken)}
      <input type="hidden" name="platform" value="mastodon">
      ${platformFields("mastodon", pasteFailed ? values : {}, "mastodon", pasteFailed ? errors : {})}
      <button type="submit" class="secondary">Connect with this token</button>
    </form>
  </details>
</section>`;
}

/** Refusals of the connect form in words a person uses, by field. */
function connectWords(fieldName: string, problem: string, message: string): string {
  if (fieldName === "instance" && problem === "is required") return "Enter the address of your Mastodon server, such as mastodon.social.";
  if (fieldName === "url" && problem === "is required") return "Enter the address the posts should be sent to.";
  if (fieldName === "handle") return "Enter your Bluesky handle, such as alice.bsky.social.";
  if (fieldName === "appPassword") return "Paste the app password you created in Bluesky.";
  if (fieldName === "token") return "Paste the access token from your Mastodon instance.";
  if (fieldName === "secret") return "The signing secret needs at least 16 characters.";
  if (fieldName === "relays" && problem === "is required") return "List at least one relay, such as wss://relay.damus.io.";
  if (fieldName === "webhookUrl" && problem === "is required") return "Paste the channel's webhook URL from Discord.";
  if (fieldName === "botToken" && problem === "is required") return "Paste the bot token from @BotFather.";
  if (fieldName === "chat" && problem === "is required") return "Enter the channel's @name or numeric id.";
  const text = problem || message;
  return text.charAt(0).toUpperCase() + text.slice(1);
}
const CONNECT_FIELDS = {
  handle: "handle",
  appPassword: "appPassword",
  service: "service",
  instance: "instance",
  token: "token",
  url: "url",
  secret: "secret",
  secretKey: "secretKey",
  relays: "relays",
  blossom: "blossom",
  webhookUrl: "webhookUrl",
  botToken: "botToken",
  chat: "chat",
};

function connectForm(s: SessionContext, platform: Platform, values: Record<string, string>, action = CURRENT, title?: string, errors: FieldErrors = {}): Html {
  return html`<form method="post" action="${action}" class="card" aria-labelledby="connect-${platform}-title" novalidate>
  <h3 id="connect-${platform}-title">${title ?? `Connect ${PLATFORM_LABELS[platform]}`}</h3>
  ${csrfField(s.csrfToken)}
  <input type="hidden" name="platform" value="${platform}">
  ${platformFields(platform, values, platform, errors)}
  <div class="actions"><button type="submit">${title ? "Reconnect" : "Connect"}</button>${
    platform === "nostr" ? html`<button type="submit" name="newKey" value="1" class="secondary">Make a new key${title ? " and reconnect" : " and connect"}</button>` : ""
  }</div>
</form>`;
}

/** The connections page with `notices`; a refused form comes back with what was typed and what to fix. */
export async function connectionsPage(
  ctx: DashboardCtx,
  s: SessionContext,
  account: Membership,
  notices: Notice[],
  values: Record<string, string> = {},
  errors: FieldErrors = {},
  highlight: string | null = null,
): Promise<Html> {
  const rows = await listConnections(ctx.deps, account.accountId);
  const failedPlatform = values.platform as Platform | undefined;
  const signInCards = await Promise.all(
    APP_NETWORKS.filter((network) => signInNetworkFor(network) !== null).map(async (network) =>
      appNetworkCard(s.csrfToken, {
        platform: network,
        name: NETWORK_APP_GUIDES[network].name,
        appSet: (await appCredentials(ctx.deps, network)) !== null,
        isAdmin: s.isAdmin,
        setupHref: appSetupHref(network),
      }),
    ),
  );
  return page(
    s,
    { title: "Connections", current: CURRENT, notices },
    html`<p class="muted">Posts go to the accounts connected here.</p>
<section class="card" aria-labelledby="list-title">
  <h2 id="list-title">Connected</h2>
  ${rows.length === 0 ? html`<p class="muted">Nothing connected yet.</p>` : html`<ul class="plain">${rows.map((c) => connectionCard(s, c, c.id === highlight))}</ul>`}
</section>
${
  canManage(s)
    ? html`<section aria-labelledby="add-title">
  <h2 id="add-title">Add a connection</h2>
  <div class="grid2">
    ${signInCards}
    ${(Object.keys(PLATFORM_LABELS) as Platform[]).map((p) =>
      p === "mastodon"
        ? mastodonCard(s, values, errors)
        : connectForm(s, p, failedPlatform === p ? values : {}, CURRENT, undefined, failedPlatform === p ? errors : {}),
    )}
  </div>
</section>`
    : html`<p class="hint">Only owners and editors add or change connections.</p>`
}`,
  );
}

function inputFrom(accountId: string, form: Form | undefined): AddConnectionInput | null {
  const platform = field(form, "platform");
  switch (platform) {
    case "bluesky":
      return { accountId, platform, handle: field(form, "handle"), appPassword: field(form, "appPassword"), service: field(form, "service") || undefined };
    case "mastodon":
      return { accountId, platform, instance: field(form, "instance"), token: field(form, "token") };
    case "webhook":
      return { accountId, platform, url: field(form, "url"), secret: field(form, "secret") };
    case "nostr": {
      // "Make a new key": a fresh key is made here; its npub shows on the connection's card.
      const secretKey = field(form, "newKey") === "1" ? generateKeys().secretHex : field(form, "secretKey");
      return { accountId, platform, secretKey, relays: field(form, "relays"), blossom: field(form, "blossom") || undefined };
    }
    case "discord":
      return { accountId, platform, webhookUrl: field(form, "webhookUrl") };
    case "telegram":
      return { accountId, platform, botToken: field(form, "botToken"), chat: field(form, "chat") };
    default:
      return null;
  }
}

/** Non-secret fields to refill the form with after a refusal. */
function safeValues(form: Form | undefined): Record<string, string> {
  return {
    platform: field(form, "platform"),
    handle: field(form, "handle"),
    service: field(form, "service"),
    instance: field(form, "instance"),
    url: field(form, "url"),
    relays: field(form, "relays"),
    blossom: field(form, "blossom"),
    chat: field(form, "chat"),
  };
}

/** The session's account when its role may change connections, else the page that says it may not. */
export function managed(s: SessionContext): Membership | Response {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  if (!canManage(s)) return forbiddenPage(s, "Only owners and editors add or change connections.");
  return account;
}

/** The 404 page of a connection that is not in this account. */
export function missing(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such connection in this account.</p>`), 404);
}

/** GET /dashboard/connections */
export async function getConnections(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  const account = requireAccount(s);
  if (account instanceof Response) return account;
  return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, noticeFrom(request)));
}

/**
 * POST /dashboard/connections: checks and adds a connection. A failed check adds nothing: the form comes back with what
 * was typed (never the secret) and what to fix beside the field; an account already connected points at its card.
 */
export async function postConnect(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const input = inputFrom(account.accountId, form);
  if (!input) return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [{ kind: "error", text: "Choose Bluesky, Mastodon, Nostr, Discord, Telegram or Webhook." }]), 400);
  try {
    await addConnection(ctx.deps, input, { keepWhenNotReady: false });
    return redirect(`${CURRENT}?notice=connected`);
  } catch (error) {
    if (error instanceof AppError && typeof error.extra.connectionId === "string") {
      const existing = error.extra.connectionId;
      const notice: Notice = {
        kind: "error",
        text: html`${plainMessage(error)} <a href="#connection-${existing}">See it</a> or <a href="${CURRENT}/${existing}/reconnect">reconnect it</a>.`,
      };
      return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [notice], safeValues(form), {}, existing), 409);
    }
    if (error instanceof AppError && error.extra.checkFailed === true) {
      // The check's own words: they say what the platform answered and what to change.
      const { fields: errors, general } = errorsOf(error, CONNECT_FIELDS, (_field, problem, message) => problem || message);
      const notice: Notice = { kind: "error", text: "Not connected: the check failed. See what to fix in the form below." };
      return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, general ? [notice, { kind: "error", text: general }] : [notice], safeValues(form), errors), 400);
    }
    if (error instanceof AppError && error.code === "invalid_request") {
      const { fields: errors, general } = errorsOf(error, CONNECT_FIELDS, connectWords);
      return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, general ? [{ kind: "error", text: general }] : [], safeValues(form), errors), 400);
    }
    const { notice, status } = refusal(error);
    return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [notice], safeValues(form)), status);
  }
}

/** POST /dashboard/connections/:id/check */
export async function postCheck(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  if (!(await getConnection(ctx.deps, account.accountId, id))) return missing(s);
  await checkConnection(ctx.deps, id);
  return redirect(`${CURRENT}?notice=checked#connection-${id}`);
}

function reconnectPage(s: SessionContext, row: ConnectionRow, values: Record<string, string>, errors: FieldErrors = {}, notices: Notice[] = []): Html {
  return page(
    s,
    { title: `Reconnect ${row.label}`, current: CURRENT, notices },
    row.platform === "mastodon"
      ? html`<p class="muted">Sign in again on your server. The new sign-in replaces the old one and is checked at once; posts already scheduled to this connection go out with it.</p>
<section class="card" aria-labelledby="reconnect-signin-title"><h2 id="reconnect-signin-title">Sign in again</h2>
${mastodonSignInForm(s.csrfToken, { server: values.instance ?? "" }, {}, row.id)}</section>
${connectForm(s, row.platform, values, `${CURRENT}/${row.id}/reconnect`, "Or paste a new access token", errors)}`
      : isAppNetwork(row.platform)
        ? html`<p class="muted">Sign in to ${PLATFORM_NAMES[row.platform]} again as ${row.label}. The new sign-in replaces the old one and is checked at once; posts already scheduled to this connection go out with it.</p>
<form method="post" action="${connectPath(row.platform)}" class="card" aria-labelledby="reconnect-signin-title"><h2 id="reconnect-signin-title">Sign in again</h2>
${csrfField(s.csrfToken)}<input type="hidden" name="connection" value="${row.id}">
<button type="submit">Sign in to ${PLATFORM_NAMES[row.platform]}</button></form>
<p><a href="${CURRENT}">Back to connections</a></p>`
      : html`<p class="muted">Enter the credentials again. They replace the old ones and are checked at once; posts already scheduled to this connection go out with the new ones.</p>
${connectForm(s, row.platform, values, `${CURRENT}/${row.id}/reconnect`, `Reconnect ${PLATFORM_LABELS[row.platform]}`, errors)}
<p><a href="${CURRENT}">Back to connections</a></p>`,
  );
}

/** The chat of a Telegram connection as the form takes it: its @name, else its numeric id (the label is a title then). */
function telegramChatOf(row: ConnectionRow): string {
  const meta = JSON.parse(row.meta) as { telegramChatUsername?: string; telegramChatId?: string };
  return meta.telegramChatUsername ? `@${meta.telegramChatUsername}` : (meta.telegramChatId ?? row.label);
}

/** GET /dashboard/connections/:id/reconnect: the platform's form for new credentials. */
export async function getReconnect(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = await getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  const values: Record<string, string> =
    row.platform === "bluesky"
      ? { handle: row.label.replace(/^@/, ""), service: row.endpoint }
      : row.platform === "mastodon"
        ? { instance: row.endpoint }
        : row.platform === "nostr"
          ? { relays: relaysOf(row.endpoint).join("\n"), blossom: openConnection(ctx.deps, row).credentials.blossom ?? "" }
          : row.platform === "telegram"
            ? { chat: telegramChatOf(row) }
            : row.platform === "discord"
              ? {}
              : { url: row.endpoint };
  return signInPageResponse(ctx.deps.config, reconnectPage(s, row, values));
}

/**
 * POST /dashboard/connections/:id/reconnect: replaces the credentials in place (never remove + add, which would
 * change the id and orphan the posts scheduled to it). A failed check keeps the new credentials, not ready, and says
 * why; a refused form (a field missing, an address that is not the network) comes back with what was typed.
 */
export async function postReconnect(ctx: DashboardCtx, s: SessionContext, id: string, form: Form | undefined): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = await getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  const input = inputFrom(account.accountId, { ...form, platform: row.platform });
  if (!input) return missing(s);
  try {
    const replaced = await replaceConnectionCredentials(ctx.deps, account.accountId, row.id, input);
    if (!replaced.readyToPost) {
      const reason = replaced.blockedReason ?? "the check failed";
      return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [{ kind: "error", text: `The new credentials were saved but do not work yet: ${reason}` }]), 400);
    }
    return redirect(`${CURRENT}?notice=connected`);
  } catch (error) {
    if (error instanceof AppError && error.code === "invalid_request") {
      const words = error.extra.checkFailed === true ? (_f: string, problem: string, message: string) => problem || message : connectWords;
      const { fields: errors, general } = errorsOf(error, CONNECT_FIELDS, words);
      return signInPageResponse(ctx.deps.config, reconnectPage(s, row, safeValues(form), errors, general ? [{ kind: "error", text: general }] : []), 400);
    }
    const { notice, status } = refusal(error);
    return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [notice]), status);
  }
}

/** GET /dashboard/connections/:id/remove: the confirmation step. */
export async function getRemoveConnection(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  const row = await getConnection(ctx.deps, account.accountId, id);
  if (!row) return missing(s);
  return htmlResponse(
    confirmPage(s, {
      title: "Remove connection",
      current: CURRENT,
      question: html`Remove <strong>${PLATFORM_NAMES[row.platform]} ${row.label}</strong>? Posts still scheduled to it will not be sent; posts Mastodon holds are withdrawn from it first.`,
      action: `${CURRENT}/${row.id}/remove`,
      confirmLabel: "Remove connection",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/connections/:id/remove */
export async function postRemoveConnection(ctx: DashboardCtx, s: SessionContext, id: string): Promise<Response> {
  const account = managed(s);
  if (account instanceof Response) return account;
  if (!(await getConnection(ctx.deps, account.accountId, id))) return missing(s);
  try {
    await removeConnection(ctx.deps, account.accountId, id);
  } catch (error) {
    // e.g. Mastodon unreachable while withdrawing a post it holds: nothing was removed; say so and why.
    const { notice, status } = refusal(error);
    return signInPageResponse(ctx.deps.config, await connectionsPage(ctx, s, account, [notice]), status);
  }
  return redirect(`${CURRENT}?notice=connection-removed`);
}
