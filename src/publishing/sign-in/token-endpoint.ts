/**
 * Calls to a network's token endpoint (RFC 6749 §4.1.3 code exchange with RFC 7636's `code_verifier`, §6 refresh),
 * and the reading of its answer: §5.1 success (`access_token`, `expires_in`, `refresh_token`), §5.2 refusal
 * (`error`, `error_description`). A refusal is classified once, here: the grant is gone (the network's dead-grant
 * codes), a transient trouble (network error, 5xx, 429: try again, nothing changes), or another refusal.
 */
import type { Deps } from "../../deps";
import { DeliveryError } from "../connector";
import { providerFetch } from "../outbound";
import type { SignInApp, TokenSet } from "./network";

/** The token endpoint's answer, classified. */
export type TokenAnswer =
  | { ok: true; tokens: TokenSet }
  /** `dead`: the grant is gone; `transient`: try again later; `refused`: any other refusal. `words` are the network's. */
  | { ok: false; kind: "dead" | "transient" | "refused"; error: string; words: string };

const DEFAULT_DEAD_GRANT = ["invalid_grant"] as const;

/** RFC 6749 Appendix B: form-urlencoding of the client id and secret before HTTP Basic. */
function basicAuth(clientId: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, "+");
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString("base64")}`;
}

/**
 * POSTs `params` (plus the client's authentication) to the app's token endpoint and classifies the answer.
 * `deadGrantErrors`: the `error` codes that mean the grant is gone.
 */
export async function requestToken(
  deps: Pick<Deps, "config" | "clock">,
  app: SignInApp,
  params: Record<string, string>,
  deadGrantErrors: readonly string[] = DEFAULT_DEAD_GRANT,
): Promise<TokenAnswer> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
  if (app.clientAuth === "basic" && app.clientSecret !== null) headers.authorization = basicAuth(app.clientId, app.clientSecret);
  else {
    form.set("client_id", app.clientId);
    if (app.clientSecret !== null) form.set("client_secret", app.clientSecret);
  }
  let res: Response;
  try {
    res = await providerFetch(deps, app.tokenEndpoint, { method: "POST", headers, body: form.toString() });
  } catch (error) {
    const words = error instanceof DeliveryError ? error.message : String(error);
    return { ok: false, kind: "transient", error: "unreachable", words };
  }
  const text = await res.text().catch(() => "");
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === "object") body = parsed as Record<string, unknown>;
  } catch {
    // not JSON: classified by the status below
  }
  if (res.status === 429 || res.status >= 500 || res.status === 408) {
    return { ok: false, kind: "transient", error: `http_${res.status}`, words: `HTTP ${res.status}` };
  }
  if (res.ok && typeof body.access_token === "string" && body.access_token !== "") {
    const expiresIn = typeof body.expires_in === "number" ? body.expires_in : typeof body.expires_in === "string" ? Number(body.expires_in) : NaN;
    return {
      ok: true,
      tokens: {
        accessToken: body.access_token,
        refreshToken: typeof body.refresh_token === "string" && body.refresh_token !== "" ? body.refresh_token : null,
        expiresAt: Number.isFinite(expiresIn) && expiresIn > 0 ? deps.clock.now() + expiresIn * 1000 : null,
      },
    };
  }
  const error = typeof body.error === "string" && body.error !== "" ? body.error : res.ok ? "invalid_response" : `http_${res.status}`;
  const description = typeof body.error_description === "string" ? body.error_description : "";
  const words = description !== "" ? `${error}: ${description}` : error;
  return { ok: false, kind: deadGrantErrors.includes(error) ? "dead" : "refused", error, words };
}
