/** /dashboard/settings: the pages that are not about publishing, each with a line saying what it is for. */
import { html } from "../../../lib/html";
import { htmlResponse } from "../../../web/http";
import { SETTINGS_NAV, SETTINGS_PATH, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";

/** GET /dashboard/settings */
export function getSettings(s: SessionContext): Response {
  const items = SETTINGS_NAV.filter((item) => item.show(s));
  return htmlResponse(
    page(
      s,
      { title: "Settings", current: SETTINGS_PATH },
      html`<ul class="settings-list">${items.map((item) => html`<li><a href="${item.href}">${item.label}</a><p>${item.about ?? ""}</p></li>`)}</ul>`,
    ),
  );
}
