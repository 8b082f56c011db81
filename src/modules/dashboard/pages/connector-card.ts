/** The overview's card with the agent connector's address ({base_url}/mcp) and a copy button. */
import type { DashboardCtx } from "../guard";
import { type Html, html } from "../html";
import { CONNECTED_APPS_PATH } from "./connected-apps";

export function connectorCard(ctx: DashboardCtx): Html {
  const url = `${ctx.deps.config.baseUrl}/mcp`;
  return html`<section class="card" aria-labelledby="connector-title">
  <h2 id="connector-title">Connect an AI assistant</h2>
  <p>Add Seedcast as a custom connector (MCP server) in Claude, ChatGPT, Cursor or VS Code with this address. The assistant sends you here to sign in and choose what it may do; no API key is needed.</p>
  <div class="copy-row">
    <label class="sr-only" for="connector-url">Connector address</label>
    <input id="connector-url" type="text" readonly value="${url}" spellcheck="false">
    <button type="button" data-copy="connector-url" hidden>Copy</button>
  </div>
  <p id="connector-url-status" role="status" class="hint"></p>
  <p class="hint">See and disconnect connected assistants under <a href="${CONNECTED_APPS_PATH}">Connected apps</a>.</p>
</section>`;
}
