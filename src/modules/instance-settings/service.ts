/**
 * Instance settings (decisions.md §15): the OpenAI-compatible language model server an administrator sets and tests
 * on the dashboard's Instance page, without a restart. Stored in `instance_settings` (one row), the API key sealed
 * like connection credentials and never shown again. Environment variables win over every value here
 * (config.openai.setInEnvironment). Every generate and regenerate reads the row again (`generatorFor`), so a change
 * reaches every replica at its next generate.
 *
 * API for other modules and the dashboard:
 *  - `modelSettingsView(deps)` → what the page shows (never the key: `apiKeySet`)
 *  - `saveModelSettings(deps, input)` / `clearModelSettings(deps)`
 *  - `effectiveModel(deps)` → the server a generate will use, or null for the configured generator
 *  - `generatorFor(deps)` → the Generator the next generate uses
 *  - `testModelServer(deps, input)` → ModelCheck
 */
import { eq } from "drizzle-orm";
import { INSTANCE_SETTINGS_ID } from "../../db/schema/instance-settings";
import { instanceSettings } from "../../db/tables";
import type { Deps } from "../../deps";
import type { ModelEnvVar } from "../../config";
import type { Generator } from "../../generation/generator";
import { createOpenAiGenerator } from "../../generation/openai";
import { type ModelCheck, checkChatModel } from "../../generation/openai/check";
import { invalidField } from "../../lib/errors";
import { openJson, sealJson } from "../../store/sealing";

/** The derived key's purpose label and the sealing's additional data: a sealed key opens only here. */
const SEAL_LABEL = "instance-settings:model-api-key:v1";
const SEAL_SUBJECT = "instance-settings";
const MAX_FIELD = 500;

/** What the Instance page shows of the model server: the key only as set or not. */
export interface ModelSettingsView {
  baseUrl: string;
  textModel: string;
  imageModel: string;
  apiKeySet: boolean;
  /** The environment variables that are set (each wins over its field here). */
  environment: readonly ModelEnvVar[];
  /** What the next generate uses: `environment` (GENERATOR set), `instance` (this page's server) or `builtin`. */
  inUse: "environment" | "instance" | "builtin";
}

export interface ModelSettingsInput {
  baseUrl: string;
  textModel: string;
  imageModel: string;
  /** A new key; empty or undefined keeps the stored one. */
  apiKey?: string;
  /** True removes the stored key (Ollama and llama.cpp need none). */
  clearApiKey?: boolean;
}

/** The server a generate uses after the environment's values are applied over the page's. */
export interface EffectiveModel {
  baseUrl: string;
  apiKey: string;
  textModel: string;
  imageModel: string;
}

type SettingsRow = typeof instanceSettings.$inferSelect;

async function settingsRow(deps: Pick<Deps, "store">): Promise<SettingsRow | null> {
  return (await deps.store.db.select().from(instanceSettings).where(eq(instanceSettings.id, INSTANCE_SETTINGS_ID)).get()) ?? null;
}

function storedKey(deps: Pick<Deps, "instanceSecret">, row: SettingsRow | null): string {
  if (!row?.modelApiKeySealed) return "";
  return openJson<string>(deps.instanceSecret, SEAL_SUBJECT, row.modelApiKeySealed, SEAL_LABEL);
}

function envSet(deps: Pick<Deps, "config">, name: ModelEnvVar): boolean {
  return deps.config.openai.setInEnvironment.includes(name);
}

/** The page's values with the environment's applied over them (GENERATOR set: null, the environment decides). */
function merge(deps: Pick<Deps, "config">, page: { baseUrl: string; apiKey: string; textModel: string; imageModel: string }): EffectiveModel {
  const env = deps.config.openai;
  return {
    baseUrl: envSet(deps, "OPENAI_BASE_URL") ? env.baseUrl : page.baseUrl,
    apiKey: envSet(deps, "OPENAI_API_KEY") ? env.apiKey : page.apiKey,
    textModel: envSet(deps, "OPENAI_TEXT_MODEL") ? env.textModel : page.textModel || env.textModel,
    imageModel: envSet(deps, "OPENAI_IMAGE_MODEL") ? env.imageModel : page.imageModel || env.imageModel,
  };
}

/** The server the next generate uses from this page's settings; null when GENERATOR is set or no server is set here. */
export async function effectiveModel(deps: Pick<Deps, "config" | "store" | "instanceSecret">): Promise<EffectiveModel | null> {
  if (envSet(deps, "GENERATOR")) return null;
  const row = await settingsRow(deps);
  if (!row?.modelBaseUrl) return null;
  return merge(deps, { baseUrl: row.modelBaseUrl, apiKey: storedKey(deps, row), textModel: row.modelTextModel ?? "", imageModel: row.modelImageModel ?? "" });
}

/** GET of the Instance page's model form. */
export async function modelSettingsView(deps: Pick<Deps, "config" | "store" | "instanceSecret" | "generator">): Promise<ModelSettingsView> {
  const row = await settingsRow(deps);
  const inUse = envSet(deps, "GENERATOR") ? "environment" : row?.modelBaseUrl ? "instance" : "builtin";
  return {
    baseUrl: row?.modelBaseUrl ?? "",
    textModel: row?.modelTextModel ?? "",
    imageModel: row?.modelImageModel ?? "",
    apiKeySet: Boolean(row?.modelApiKeySealed),
    environment: deps.config.openai.setInEnvironment,
    inUse,
  };
}

/** An http(s) URL without credentials, trailing slashes trimmed; 400 naming `field` otherwise. */
function cleanBaseUrl(raw: string): string {
  const value = raw.trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidField("baseUrl", "must be a web address such as http://localhost:11434/v1");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalidField("baseUrl", "must start with http:// or https://");
  if (url.username || url.password) throw invalidField("baseUrl", "must not contain a user name or password; put the key in the API key field");
  if (value.length > MAX_FIELD) throw invalidField("baseUrl", `must be at most ${MAX_FIELD} characters`);
  return value.replace(/\/+$/, "");
}

function cleanModel(raw: string, field: string, required: boolean): string {
  const value = raw.trim();
  if (required && value === "") throw invalidField(field, "must name a model, such as llama3.2 or gpt-4o-mini");
  if (value.length > MAX_FIELD || /\s/.test(value)) throw invalidField(field, `must be a model name without spaces, at most ${MAX_FIELD} characters`);
  return value;
}

/** The input checked and completed with the stored key where none was typed. */
async function resolveInput(deps: Pick<Deps, "store" | "instanceSecret">, input: ModelSettingsInput): Promise<EffectiveModel> {
  const baseUrl = cleanBaseUrl(input.baseUrl);
  const textModel = cleanModel(input.textModel, "textModel", true);
  const imageModel = cleanModel(input.imageModel, "imageModel", false);
  if ((input.apiKey ?? "").length > MAX_FIELD * 4) throw invalidField("apiKey", "is too long");
  const typed = (input.apiKey ?? "").trim();
  const apiKey = input.clearApiKey ? "" : typed || storedKey(deps, await settingsRow(deps));
  return { baseUrl, apiKey, textModel, imageModel };
}

/** Saves the model server (the key sealed; an empty key field keeps the stored one). Used from the next generate on. */
export async function saveModelSettings(deps: Pick<Deps, "store" | "clock" | "instanceSecret">, input: ModelSettingsInput): Promise<void> {
  const values = await resolveInput(deps, input);
  const row = {
    modelBaseUrl: values.baseUrl,
    modelApiKeySealed: values.apiKey ? sealJson(deps.instanceSecret, SEAL_SUBJECT, values.apiKey, SEAL_LABEL) : null,
    modelTextModel: values.textModel,
    modelImageModel: values.imageModel || null,
    updatedAt: deps.clock.now(),
  };
  await deps.store.write((tx) =>
    tx
      .insert(instanceSettings)
      .values({ id: INSTANCE_SETTINGS_ID, ...row })
      .onConflictDoUpdate({ target: instanceSettings.id, set: row })
      .run(),
  );
}

/** Forgets the model server (and its key): generates use the configured generator again (builtin by default). */
export async function clearModelSettings(deps: Pick<Deps, "store" | "clock">): Promise<void> {
  const cleared = { modelBaseUrl: null, modelApiKeySealed: null, modelTextModel: null, modelImageModel: null, updatedAt: deps.clock.now() };
  await deps.store.write((tx) =>
    tx
      .insert(instanceSettings)
      .values({ id: INSTANCE_SETTINGS_ID, ...cleared })
      .onConflictDoUpdate({ target: instanceSettings.id, set: cleared })
      .run(),
  );
}

/**
 * "Test": one chat completion with the values as typed (the stored key when none was typed), the environment's
 * applied over them as a generate would. Answers success with the model's reply, or a readable failure.
 */
export async function testModelServer(deps: Pick<Deps, "config" | "store" | "instanceSecret">, input: ModelSettingsInput): Promise<ModelCheck> {
  const values = merge(deps, await resolveInput(deps, input));
  return checkChatModel({ baseUrl: values.baseUrl, apiKey: values.apiKey, fetch }, values.textModel);
}

/** The generator of this page's server, rebuilt only when its values change (one per process). */
let cached: { key: string; generator: Generator } | null = null;

/**
 * The Generator the next generate uses: the page's server when one is set there and GENERATOR is not set in the
 * environment, else the one the process started with (`deps.generator`: builtin by default). Reads the row at every
 * call, so a change on any replica applies everywhere at the next generate.
 */
export async function generatorFor(deps: Deps): Promise<Generator> {
  const model = await effectiveModel(deps);
  if (!model) return deps.generator;
  const key = JSON.stringify(model);
  if (cached?.key !== key) {
    cached = { key, generator: createOpenAiGenerator({ ...model, timeoutMs: deps.config.openai.timeoutMs }) };
  }
  return cached.generator;
}
