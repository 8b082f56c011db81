/**
 * The page shell: skip link, header with the account switcher and sign-out, the navigation (only the pages the
 * person's role opens), notices, and the main landmark. One stylesheet and one small script, both served from the
 * binary.
 */
import { type Html, html } from "../lib/html";
import type { SessionContext } from "./session";
import { zoneUnset } from "./preferences";

export const STYLE_PATH = "/dashboard/static/dashboard.css";
export const SCRIPT_PATH = "/dashboard/static/dashboard.js";

/** The site icon (an SVG served with the stylesheet): every page links it, so no browser asks for /favicon.ico. */
export const FAVICON_PATH = "/dashboard/static/favicon.svg";
/** The settings index: every page that is not about publishing. */
export const SETTINGS_PATH = "/dashboard/settings";

interface NavItem {
  href: string;
  label: string;
  show: (s: SessionContext) => boolean;
  /** One line on the settings page. */
  about?: string;
}

const hasAccount = (s: SessionContext) => s.account !== null;
const canCreate = (s: SessionContext) => s.account !== null && s.account.role !== "viewer";

/** The publishing pages, in the order people use them. "New post" opens the composer, blank. */
export const NAV: readonly NavItem[] = [
  { href: "/dashboard", label: "Overview", show: () => true },
  { href: "/dashboard/compose", label: "New post", show: canCreate },
  { href: "/dashboard/calendar", label: "Calendar", show: hasAccount },
  { href: "/dashboard/queue", label: "Queue", show: hasAccount },
  { href: "/dashboard/approvals", label: "Approvals", show: (s) => s.account?.role === "owner" },
  { href: "/dashboard/creations", label: "Posts", show: hasAccount },
  { href: "/dashboard/library", label: "Library", show: hasAccount },
  { href: "/dashboard/seeds", label: "Ideas", show: hasAccount },
  { href: "/dashboard/connections", label: "Connections", show: hasAccount },
];

/** Everything else, under Settings. */
export const SETTINGS_NAV: readonly NavItem[] = [
  { href: "/dashboard/feeds", label: "Feeds", show: hasAccount, about: "Blogs you follow: each new article becomes an idea, a draft post or a queued post." },
  { href: "/dashboard/voice", label: "Brand voice", show: hasAccount, about: "How generated captions sound: tone, words to use and to avoid." },
  { href: "/dashboard/members", label: "Members", show: (s) => s.account?.role === "owner", about: "Who works in this account, and what each person may do." },
  { href: "/dashboard/keys", label: "API keys", show: hasAccount, about: "Keys for tools and scripts that use Seedcast on this account's behalf." },
  { href: "/dashboard/apps", label: "Connected apps", show: hasAccount, about: "AI assistants you allowed to use this account, and disconnecting them." },
  { href: "/dashboard/credits", label: "Credits", show: hasAccount, about: "What generating posts has cost, and what is left." },
  { href: "/dashboard/instance", label: "Instance", show: (s) => s.isAdmin, about: "This Seedcast server: its accounts, credits for each, and the language model that writes posts." },
  { href: "/dashboard/account", label: "Your settings", show: () => true, about: "Your password, the time zone every time is shown in, and which notices are emailed to you." },
  { href: "/dashboard/notices", label: "Notices", show: hasAccount, about: "What needed your attention lately: failed posts, connections to fix, invitations." },
];

/** True when `current` is one of the settings pages (or the settings index). */
function inSettings(current: string): boolean {
  return current === SETTINGS_PATH || SETTINGS_NAV.some((item) => item.href === current);
}

/** The page's own link in a navigation: aria-current="page" on it, "true" on Settings while on a settings page. */
function navLink(item: { href: string; label: string }, current: string): Html {
  const path = item.href.split(/[?#]/)[0] ?? item.href;
  const mark =
    item.href === current || (path === current && item.href === path)
      ? html` aria-current="page"`
      : item.href === SETTINGS_PATH && inSettings(current)
        ? html` aria-current="true"`
        : html``;
  return html`<li><a href="${item.href}"${mark}>${item.label}</a></li>`;
}

function navItems(session: SessionContext, current: string): Html {
  const items = [...NAV.filter((item) => item.show(session)), { href: SETTINGS_PATH, label: "Settings" }];
  return html`${items.map((item) => navLink(item, current))}`;
}

/** A notice shown at the top of the page. */
export interface Notice {
  kind: "ok" | "error" | "warn";
  text: string | Html;
}

/** The hidden CSRF field every dashboard form carries. */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function documentShell(title: string, body: Html, bodyAttrs: Html = html``): Html {
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Seedcast</title>
<link rel="icon" href="${FAVICON_PATH}" type="image/svg+xml">
<link rel="stylesheet" href="${STYLE_PATH}">
<script src="${SCRIPT_PATH}" defer></script>
</head>
<body${bodyAttrs}>
<a class="skip" href="#main">Skip to content</a>
${body}
</body>
</html>`;
}

function noticeBlock(notices: readonly Notice[]): Html {
  return html`${notices.map(
    (n) =>
      html`<div class="notice notice-${n.kind}" role="${n.kind === "error" ? "alert" : "status"}">${n.text}</div>`,
  )}`;
}

/** A signed-in page. `current` is the nav href to mark. */
export function page(
  session: SessionContext,
  opts: { title: string; current: string; notices?: readonly Notice[] },
  content: Html,
): Html {
  const switcher = (idSuffix: string) =>
    session.memberships.length > 1
      ? html`<form method="post" action="/dashboard/switch-account" class="switcher">
  ${csrfField(session.csrfToken)}
  <label for="account-switch${idSuffix}">Account</label>
  <select id="account-switch${idSuffix}" name="accountId">
    ${session.memberships.map(
      (m) =>
        html`<option value="${m.accountId}"${m.accountId === session.account?.accountId ? html` selected` : html``}>${m.accountName} (${m.role})</option>`,
    )}
  </select>
  <button type="submit" class="secondary">Switch</button>
</form>`
      : session.account
        ? html`<span class="account-name">${session.account.accountName} <span class="badge">${session.account.role}</span></span>`
        : html``;
  const signOut = html`<form method="post" action="/logout" class="inline">
      ${csrfField(session.csrfToken)}
      <button type="submit" class="link">Sign out <span class="sr-only">${session.email}</span></button>
    </form>`;
  const settingsCrumb = inSettings(opts.current) && opts.current !== SETTINGS_PATH ? html`<p class="crumb"><a href="${SETTINGS_PATH}">Settings</a> ›</p>` : html``;
  return documentShell(
    opts.title,
    html`<header class="top">
  <a class="brand" href="/dashboard">Seedcast</a>
  <div class="who">
    ${switcher("")}
    <a class="settings-link" href="/dashboard/account"${opts.current === "/dashboard/account" ? html` aria-current="page"` : html``}>Your settings</a>
    ${signOut}
  </div>
  <details class="nav-menu">
    <summary>Menu</summary>
    <div class="nav-menu-panel">
      <nav aria-label="Dashboard"><ul>${navItems(session, opts.current)}</ul></nav>
      <div class="menu-who">${switcher("-menu")} ${signOut}</div>
    </div>
  </details>
</header>
<nav class="main-nav" aria-label="Dashboard">
  <ul>
    ${navItems(session, opts.current)}
  </ul>
</nav>
<main id="main" tabindex="-1">
  ${settingsCrumb}
  <h1>${opts.title}</h1>
  ${noticeBlock(opts.notices ?? [])}
  ${content}
</main>`,
    zoneUnset(session) ? html` data-set-zone="/dashboard/account/time-zone" data-csrf="${session.csrfToken}"` : html``,
  );
}

/** A page for people who are not signed in (setup, login, expired session). */
export function publicPage(title: string, content: Html, notices: readonly Notice[] = []): Html {
  return documentShell(
    title,
    html`<main id="main" class="narrow" tabindex="-1">
  <p class="brand-solo">Seedcast</p>
  <h1>${title}</h1>
  ${noticeBlock(notices)}
  ${content}
</main>`,
  );
}

/** A confirmation step for a destructive action: a plain form, so it works without script and keyboard-first. */
export function confirmPage(
  session: SessionContext,
  opts: { title: string; current: string; question: Html | string; action: string; confirmLabel: string; cancelHref: string; keepLabel?: string },
): Html {
  return page(
    session,
    { title: opts.title, current: opts.current },
    html`<section class="card">
  <p>${opts.question}</p>
  <form method="post" action="${opts.action}" class="actions">
    ${csrfField(session.csrfToken)}
    <button type="submit" class="danger">${opts.confirmLabel}</button>
    <a class="button secondary" href="${opts.cancelHref}">${opts.keepLabel ?? "Cancel"}</a>
  </form>
</section>`,
  );
}
