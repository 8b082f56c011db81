/**
 * Meta's token endpoints (Instagram Login, Threads) as they answer: the code exchange documents
 * `{data: [{access_token, user_id, permissions}]}` while the live API answers flat `{access_token, user_id,
 * permissions}` (both read); the short-lived token is exchanged for a long-lived one (`ig_exchange_token`,
 * `th_exchange_token`) and long-lived tokens renew themselves (`ig_refresh_token`, `th_refresh_token`), each
 * answering `{access_token, token_type, expires_in}`. Refusals come as a Graph error (`{error: {message, type, code}}`)
 * or Instagram's OAuth shape (`{error_type, code, error_message}`). Code 190 (and OAuthException on a refresh) means
 * the grant is gone.
 */
import type { Deps } from "../../../deps";
import { DeliveryError } from "../../connector";
import { providerFetch } from "../../outbound";
import type { TokenAnswer } from "../../sign-in/token-endpoint";

/** Reads a token answer: `{data: [...]}` or flat, or one of Meta's refusal shapes. */
export function readMetaTokenAnswer(deps: Pick<Deps, "clock">, status: number, text: string): TokenAnswer {
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === "object") body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: classified by the status below
  }
  if (status === 429 || status === 408 || status >= 500) return { ok: false, kind: "transient", error: `http_${status}`, words: `HTTP ${status}` };
  const data = Array.isArray(body.data) && body.data.length > 0 && typeof body.data[0] === "object" && body.data[0] !== null ? (body.data[0] as Record<string, unknown>) : body;
  if (status >= 200 && status < 300 && typeof data.access_token === "string" && data.access_token !== "") {
    const expiresIn = typeof data.expires_in === "number" ? data.expires_in : typeof data.expires_in === "string" ? Number(data.expires_in) : NaN;
    return {
      ok: true,
      tokens: {
        accessToken: data.access_token,
        refreshToken: null,
        expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? deps.clock.now() + expiresIn * 1000 : null,
      },
    };
  }
  const graph = body.error !== null && typeof body.error === "object" ? (body.error as Record<string, unknown>) : null;
  const code = typeof graph?.code === "number" ? graph.code : typeof body.code === "number" ? body.code : null;
  const type = typeof graph?.type === "string" ? graph.type : typeof body.error_type === "string" ? body.error_type : "invalid_response";
  const message = typeof graph?.message === "string" ? graph.message : typeof body.error_message === "string" ? body.error_message : `HTTP ${status}`;
  if (code === 4 || code === 17 || code === 32 || code === 613 || code === 1 || code === 2) return { ok: false, kind: "transient", error: `code_${code}`, words: message };
  const dead = code === 190 || code === 463 || code === 467;
  return { ok: false, kind: dead ? "dead" : "refused", error: type, words: message };
}

/** Calls a Meta token endpoint (`GET` with the query, or `POST` with a form) and reads its answer. */
export async function metaTokenCall(deps: Pick<Deps, "config" | "clock">, method: "GET" | "POST", url: string, params: Record<string, string>): Promise<TokenAnswer> {
  const form = new URLSearchParams(params);
  let res: Response;
  try {
    res =
      method === "GET"
        ? await providerFetch(deps, `${url}?${form}`, { headers: { accept: "application/json" } })
        : await providerFetch(deps, url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body: form.toString() });
  } catch (error) {
    return { ok: false, kind: "transient", error: "unreachable", words: error instanceof DeliveryError ? error.message : String(error) };
  }
  const text = await res.text().catch(() => "");
  return readMetaTokenAnswer(deps, res.status, text);
}
