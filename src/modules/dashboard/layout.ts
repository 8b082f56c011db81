/**
 * The page shell: skip link, header with the account switcher and sign-out, the navigation (only the pages the
 * person's role opens), notices, and the main landmark. One stylesheet and one small script, both served from the
 * binary.
 */
import { type Html, html } from "./html";
import type { SessionContext } from "./session";

export const STYLE_PATH = "/dashboard/static/dashboard.css";
export const SCRIPT_PATH = "/dashboard/static/dashboard.js";

interface NavItem {
  href: string;
  label: string;
  show: (s: SessionContext) => boolean;
}

const hasAccount = (s: SessionContext) => s.account !== null;

/** The navigation, in the order people use it. */
export const NAV: readonly NavItem[] = [
  { href: "/dashboard", label: "Overview", show: () => true },
  { href: "/dashboard/keys", label: "API keys", show: hasAccount },
  { href: "/dashboard/apps", label: "Connected apps", show: hasAccount },
  { href: "/dashboard/connections", label: "Connections", show: hasAccount },
  { href: "/dashboard/calendar", label: "Calendar", show: hasAccount },
  { href: "/dashboard/library", label: "Library", show: hasAccount },
  { href: "/dashboard/creations", label: "Seeds & creations", show: hasAccount },
  { href: "/dashboard/credits", label: "Credits", show: hasAccount },
  { href: "/dashboard/voice", label: "Brand voice", show: hasAccount },
  { href: "/dashboard/members", label: "Members", show: (s) => s.account?.role === "owner" },
  { href: "/dashboard/instance", label: "Instance", show: (s) => s.isAdmin },
];

/** A notice shown at the top of the page. */
export interface Notice {
  kind: "ok" | "error" | "warn";
  text: string | Html;
}

/** The hidden CSRF field every dashboard form carries. */
export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

function documentShell(title: string, body: Html): Html {
  return html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Seedcast</title>
<link rel="stylesheet" href="${STYLE_PATH}">
<script src="${SCRIPT_PATH}" defer></script>
</head>
<body>
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
  const nav = NAV.filter((item) => item.show(session));
  const switcher =
    session.memberships.length > 1
      ? html`<form method="post" action="/dashboard/switch-account" class="switcher">
  ${csrfField(session.csrfToken)}
  <label for="account-switch">Account</label>
  <select id="account-switch" name="accountId">
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
  return documentShell(
    opts.title,
    html`<header class="top">
  <a class="brand" href="/dashboard">Seedcast</a>
  <div class="who">
    ${switcher}
    <form method="post" action="/logout" class="inline">
      ${csrfField(session.csrfToken)}
      <button type="submit" class="link">Sign out <span class="sr-only">${session.email}</span></button>
    </form>
  </div>
</header>
<nav class="main-nav" aria-label="Dashboard">
  <ul>
    ${nav.map(
      (item) =>
        html`<li><a href="${item.href}"${item.href === opts.current ? html` aria-current="page"` : html``}>${item.label}</a></li>`,
    )}
  </ul>
</nav>
<main id="main" tabindex="-1">
  <h1>${opts.title}</h1>
  ${noticeBlock(opts.notices ?? [])}
  ${content}
</main>`,
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
  opts: { title: string; current: string; question: Html | string; action: string; confirmLabel: string; cancelHref: string },
): Html {
  return page(
    session,
    { title: opts.title, current: opts.current },
    html`<section class="card">
  <p>${opts.question}</p>
  <form method="post" action="${opts.action}" class="actions">
    ${csrfField(session.csrfToken)}
    <button type="submit" class="danger">${opts.confirmLabel}</button>
    <a class="button secondary" href="${opts.cancelHref}">Cancel</a>
  </form>
</section>`,
  );
}
