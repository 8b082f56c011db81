/**
 * Instance (admin only): every account, creating one with its owner, disabling/enabling, granting credits; and the
 * language model server (an OpenAI-compatible one: Ollama, llama.cpp, vLLM, OpenAI), set and tested without a restart.
 */
import { asc, count, eq } from "drizzle-orm";
import { accounts, members } from "../../../db/tables";
import { isoAt } from "../../../lib/clock";
import { createAccount, setAccountDisabled } from "../../accounts/service";
import { grantCredits } from "../../credits/grant";
import { type DashboardCtx, forbiddenPage } from "../../../web/guard";
import { type Html, html, timeTag } from "../../../lib/html";
import { zoneOf } from "../../../web/preferences";
import { type Form, field, htmlResponse, redirect } from "../../../web/http";
import { type Notice, confirmPage, csrfField, page } from "../../../web/layout";
import type { SessionContext } from "../../../web/session";
import { noticeFrom, refusal } from "./common";
import type { ModelCheck } from "../../../generation/openai/check";
import { type ModelSettingsInput, clearModelSettings, modelSettingsView, saveModelSettings, testModelServer } from "../../instance-settings/service";
import { parseAmount } from "./credits";
import { clearAppCredentials, isAppNetwork, saveAppCredentials } from "../../../publishing/sign-in/app-credentials";
import { networkAppsPart } from "./instance-apps";

const CURRENT = "/dashboard/instance";

async function allAccounts(ctx: DashboardCtx) {
  const counts = new Map(
    (await ctx.deps.store.db.select({ accountId: members.accountId, n: count() }).from(members).groupBy(members.accountId).all()).map((r) => [
      r.accountId,
      r.n,
    ]),
  );
  return (await ctx.deps.store.db.select().from(accounts).orderBy(asc(accounts.createdAt)).all()).map((a) => ({
    ...a,
    members: counts.get(a.id) ?? 0,
  }));
}

interface ModelFormState {
  values?: { baseUrl: string; textModel: string; imageModel: string };
  check?: ModelCheck;
}

/** The language model form: values, "set"/"not set" for the key, which environment variables win. */
async function modelPart(ctx: DashboardCtx, s: SessionContext, state: ModelFormState): Promise<Html> {
  const view = await modelSettingsView(ctx.deps);
  const v = state.values ?? { baseUrl: view.baseUrl, textModel: view.textModel, imageModel: view.imageModel };
  const inUse =
    view.inUse === "environment"
      ? html`GENERATOR is set in the environment (${ctx.deps.config.generator}): it decides, and the server below is not used until it is unset.`
      : view.inUse === "instance"
        ? html`Posts are written by the server below.`
        : html`No language model is connected: posts are written offline from your own words, and images are designed cards.`;
  const check = state.check
    ? state.check.ok
      ? html`<p class="notice notice-success" role="status">The server answered: model ${state.check.model} replied “${state.check.reply}”.</p>`
      : html`<p class="notice notice-error" role="alert">${state.check.message}</p>`
    : "";
  return html`<form method="post" action="${CURRENT}/model" class="card form-card" aria-labelledby="model-title">
  <h2 id="model-title">Language model</h2>
  ${csrfField(s.csrfToken)}
  <p>${inUse}</p>
  ${view.environment.length > 0 ? html`<p class="hint">Set in the environment, and winning over the fields here: ${view.environment.join(", ")}.</p>` : ""}
  ${check}
  <p class="hint">Any OpenAI-compatible server: Ollama (http://localhost:11434/v1), llama.cpp, vLLM or OpenAI (https://api.openai.com/v1). The next post generated uses it, on every server of this instance.</p>
  <div class="row"><label for="m-base">Server address</label><input id="m-base" name="baseUrl" type="url" required maxlength="500" value="${v.baseUrl}" placeholder="http://localhost:11434/v1"></div>
  <div class="row"><label for="m-key">API key <span class="muted">(${view.apiKeySet ? "set" : "not set"})</span></label><input id="m-key" name="apiKey" type="password" autocomplete="off" maxlength="2000" aria-describedby="m-key-hint"><p class="hint" id="m-key-hint">${view.apiKeySet ? "Leave empty to keep the key that is set." : "Ollama and llama.cpp need none."}</p></div>
  ${view.apiKeySet ? html`<div class="row"><label><input type="checkbox" name="clearApiKey" value="yes"> Remove the key that is set</label></div>` : ""}
  <div class="row"><label for="m-text">Text model</label><input id="m-text" name="textModel" type="text" required maxlength="500" value="${v.textModel}" placeholder="llama3.2"></div>
  <div class="row"><label for="m-image">Image model <span class="muted">(optional)</span></label><input id="m-image" name="imageModel" type="text" maxlength="500" value="${v.imageModel}" placeholder="gpt-image-1"></div>
  <div class="actions">
    <button type="submit">Save</button>
    <button type="submit" class="secondary" formaction="${CURRENT}/model/test">Test</button>
    ${view.inUse === "instance" ? html`<button type="submit" class="secondary danger" formaction="${CURRENT}/model/clear" formnovalidate>Remove the server</button>` : ""}
  </div>
</form>`;
}

async function instancePage(ctx: DashboardCtx, s: SessionContext, notices: Notice[], values: Record<string, string> = {}, model: ModelFormState = {}): Promise<Html> {
  const rows = await allAccounts(ctx);
  const modelForm = await modelPart(ctx, s, model);
  const apps = await networkAppsPart(ctx, s);
  return page(
    s,
    { title: "Instance", current: CURRENT, notices },
    html`${modelForm}
${apps}
<section class="card" aria-labelledby="accounts-title">
  <h2 id="accounts-title">Accounts</h2>
  <div class="table-wrap"><table class="stack">
  <thead><tr><th scope="col">Account</th><th scope="col">Created</th><th scope="col">People</th><th scope="col">Credits</th><th scope="col">State</th><th scope="col">Grant credits</th><th scope="col"><span class="sr-only">Disable or enable</span></th></tr></thead>
  <tbody>${rows.map(
    (a) => html`<tr>
    <td data-label="Account">${a.name}</td>
    <td data-label="Created">${timeTag(isoAt(a.createdAt), "—", zoneOf(s))}</td>
    <td data-label="People">${a.members}</td>
    <td data-label="Credits">${a.creditsBalance}${a.creditsReserved > 0 ? html` <span class="muted">(+${a.creditsReserved} reserved)</span>` : ""}</td>
    <td data-label="State"><span class="badge state-${a.disabledAt === null ? "active" : "disabled"}">${a.disabledAt === null ? "active" : "disabled"}</span></td>
    <td data-label="Grant credits"><form method="post" action="/dashboard/instance/accounts/${a.id}/grant" class="actions">
      ${csrfField(s.csrfToken)}
      <label class="sr-only" for="grant-${a.id}">Credits to grant to ${a.name}</label>
      <input id="grant-${a.id}" name="amount" type="number" min="1" step="1" required class="narrow-input">
      <button type="submit" class="small secondary">Grant</button>
    </form></td>
    <td data-label="Access">${
      a.disabledAt === null
        ? html`<a class="button small danger" href="/dashboard/instance/accounts/${a.id}/disable">Disable<span class="sr-only"> ${a.name}</span></a>`
        : html`<form method="post" action="/dashboard/instance/accounts/${a.id}/enable">${csrfField(s.csrfToken)}<button type="submit" class="small secondary">Enable<span class="sr-only"> ${a.name}</span></button></form>`
    }</td>
  </tr>`,
  )}</tbody></table></div>
</section>
<form method="post" action="/dashboard/instance/accounts" class="card form-card" aria-labelledby="create-title">
  <h2 id="create-title">Create an account</h2>
  ${csrfField(s.csrfToken)}
  <div class="row"><label for="a-name">Account name</label><input id="a-name" name="name" type="text" required maxlength="120" value="${values.name ?? ""}"></div>
  <div class="row"><label for="a-email">Owner's email</label><input id="a-email" name="email" type="email" required value="${values.email ?? ""}"></div>
  <div class="row"><label for="a-password">Owner's initial password</label><input id="a-password" name="password" type="password" required minlength="8" autocomplete="new-password"></div>
  <div class="row"><label for="a-credits">Initial credits</label><input id="a-credits" name="credits" type="number" min="0" step="1" value="${values.credits ?? String(ctx.deps.config.creditsInitial)}"></div>
  <button type="submit">Create account</button>
</form>`,
  );
}

function adminOnly(s: SessionContext): Response | null {
  return s.isAdmin ? null : forbiddenPage(s, "Only the instance administrator opens this page.");
}

/** GET /dashboard/instance */
export async function getInstance(ctx: DashboardCtx, s: SessionContext, request: Request): Promise<Response> {
  return adminOnly(s) ?? htmlResponse(await instancePage(ctx, s, noticeFrom(request)));
}

/** POST /dashboard/instance/accounts: creates an account with its first owner. */
export async function postCreateAccount(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const values = { name: field(form, "name"), email: field(form, "email"), credits: field(form, "credits") };
  try {
    const credits = values.credits.trim() === "" ? undefined : /^\d{1,9}$/.test(values.credits.trim()) ? Number(values.credits) : Number.NaN;
    if (credits !== undefined && Number.isNaN(credits)) {
      return htmlResponse(await instancePage(ctx, s, [{ kind: "error", text: "Initial credits must be a whole number." }], values), 400);
    }
    await createAccount(ctx.deps, { name: values.name, email: values.email, password: field(form, "password"), credits });
    return redirect(`${CURRENT}?notice=account-created`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice], values), status);
  }
}

/** POST /dashboard/instance/accounts/:id/grant */
export async function postGrantTo(ctx: DashboardCtx, s: SessionContext, accountId: string, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  try {
    await grantCredits(ctx.deps, accountId, parseAmount(field(form, "amount")), "granted by the instance administrator");
    return redirect(`${CURRENT}?notice=granted`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice]), status);
  }
}

/** GET /dashboard/instance/accounts/:id/disable: the confirmation step. */
export async function getDisable(ctx: DashboardCtx, s: SessionContext, accountId: string): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const account = await ctx.deps.store.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such account.</p>`), 404);
  return htmlResponse(
    confirmPage(s, {
      title: "Disable account",
      current: CURRENT,
      question: html`Disable <strong>${account.name}</strong>? Its API keys answer 401 and its people cannot open it until it is enabled again. Nothing is deleted.`,
      action: `/dashboard/instance/accounts/${account.id}/disable`,
      confirmLabel: "Disable account",
      cancelHref: CURRENT,
    }),
  );
}

/** POST /dashboard/instance/accounts/:id/disable and /enable */
export async function postSetDisabled(ctx: DashboardCtx, s: SessionContext, accountId: string, disabled: boolean): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  try {
    await setAccountDisabled(ctx.deps, accountId, disabled);
    return redirect(`${CURRENT}?notice=${disabled ? "account-disabled" : "account-enabled"}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice]), status);
  }
}

function modelInput(form: Form | undefined): ModelSettingsInput {
  return {
    baseUrl: field(form, "baseUrl"),
    textModel: field(form, "textModel"),
    imageModel: field(form, "imageModel"),
    apiKey: field(form, "apiKey"),
    clearApiKey: field(form, "clearApiKey") === "yes",
  };
}

/** POST /dashboard/instance/model: saves the language model server (the key sealed, never shown again). */
export async function postModel(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const input = modelInput(form);
  try {
    await saveModelSettings(ctx.deps, input);
    return redirect(`${CURRENT}?notice=model-saved#model-title`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice], {}, { values: input }), status);
  }
}

/** POST /dashboard/instance/model/test: one chat completion with the values as typed; the answer or why not. */
export async function postModelTest(ctx: DashboardCtx, s: SessionContext, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  const input = modelInput(form);
  try {
    const check = await testModelServer(ctx.deps, input);
    return htmlResponse(await instancePage(ctx, s, [], {}, { values: input, check }), check.ok ? 200 : 502);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice], {}, { values: input }), status);
  }
}

/** POST /dashboard/instance/model/clear: forgets the server and its key; posts are written offline again. */
export async function postModelClear(ctx: DashboardCtx, s: SessionContext): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  await clearModelSettings(ctx.deps);
  return redirect(`${CURRENT}?notice=model-cleared`);
}

function noSuchNetwork(s: SessionContext): Response {
  return htmlResponse(page(s, { title: "Not found", current: CURRENT }, html`<p class="card">No such network.</p>`), 404);
}

/** POST /dashboard/instance/apps/:network: saves a network's app id and secret (sealed; empty fields keep what is set). */
export async function postAppCredentials(ctx: DashboardCtx, s: SessionContext, network: string, form: Form | undefined): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  if (!isAppNetwork(network)) return noSuchNetwork(s);
  try {
    await saveAppCredentials(ctx.deps, network, { clientId: field(form, "clientId"), clientSecret: field(form, "clientSecret") });
    return redirect(`${CURRENT}?notice=app-saved#app-${network}`);
  } catch (error) {
    const { notice, status } = refusal(error);
    return htmlResponse(await instancePage(ctx, s, [notice]), status);
  }
}

/** POST /dashboard/instance/apps/:network/clear: forgets the app entered here for that network. */
export async function postAppCredentialsClear(ctx: DashboardCtx, s: SessionContext, network: string): Promise<Response> {
  const refused = adminOnly(s);
  if (refused) return refused;
  if (!isAppNetwork(network)) return noSuchNetwork(s);
  await clearAppCredentials(ctx.deps, network);
  return redirect(`${CURRENT}?notice=app-cleared#app-${network}`);
}
