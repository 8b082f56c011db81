/**
 * Small HTTP helpers for the dashboard: cookies, HTML and redirect responses, form fields. Every dashboard answer is
 * `no-store` (pages can show secrets) and carries a strict Content-Security-Policy: no third-party resources, no inline
 * script.
 */
import type { Config } from "../config";
import type { Html } from "../lib/html";

/** Same-origin only: no inline script or style, nothing from another host. */
export const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
};

/** True when cookies must be Secure: the public base URL is https. */
export function secureCookies(config: Pick<Config, "baseUrl">): boolean {
  return config.baseUrl.startsWith("https:");
}

/** Cookie names: the `__Host-` prefix (Secure, Path=/, no Domain enforced by browsers) whenever https is in use. */
export function cookieNames(config: Pick<Config, "baseUrl">): { session: string; preLogin: string } {
  const prefix = secureCookies(config) ? "__Host-" : "";
  return { session: `${prefix}seedcast_session`, preLogin: `${prefix}seedcast_form` };
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, Secure over https. `maxAgeSeconds` 0 deletes it. */
export function setCookie(config: Pick<Config, "baseUrl">, name: string, value: string, maxAgeSeconds?: number): string {
  const parts = [`${name}=${value}`, "Path=/", "HttpOnly", "SameSite=Lax"];
  if (secureCookies(config)) parts.push("Secure");
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  return parts.join("; ");
}

/** Parses the Cookie header. */
export function readCookies(request: Request): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/** An HTML page answer. */
export function htmlResponse(page: Html, status = 200, extra: Record<string, string | string[]> = {}): Response {
  const headers = new Headers({ "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS });
  for (const [name, value] of Object.entries(extra)) {
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Response(`<!doctype html>\n${page.value}`, { status, headers });
}

/** A 303 redirect (after a POST the browser follows with GET). */
export function redirect(location: string, setCookies: string[] = []): Response {
  const headers = new Headers({ location, ...SECURITY_HEADERS });
  for (const c of setCookies) headers.append("set-cookie", c);
  return new Response(null, { status: 303, headers });
}

/** A form body as flat string fields (Elysia parses urlencoded and multipart bodies into an object). */
export type Form = Record<string, unknown>;

/** One text field of a form, "" when absent. Repeated fields: the first. */
export function field(form: Form | undefined, name: string): string {
  const value = form?.[name];
  if (typeof value === "string") return value;
  if (Array.isArray(value) && typeof value[0] === "string") return value[0];
  return "";
}

/** Every value of a repeated field (checkbox groups). */
export function fields(form: Form | undefined, name: string): string[] {
  const value = form?.[name];
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}
