/**
 * CSRF tokens of the dashboard's forms (and of any other server-rendered form, e.g. an OAuth consent page): an
 * HMAC-SHA256, under a key derived from the instance secret, of what the form is bound to. Signed in, that is the
 * session's id; before a session exists (/login, /setup), a nonce the server issued in a cookie, stamped with its
 * time of issue. A value the server never made (a cookie and field an attacker planted together) is refused, and a
 * session's token cannot be used with another session.
 *
 *   csrfToken(deps, binding)            → the token a form carries
 *   verifyCsrf(deps, binding, sent)     → true when `sent` is that token (constant time)
 *   formNonce(deps, request, now)       → the pre-session nonce of a request (and the cookie to set when new)
 */
import { timingSafeEqual } from "node:crypto";
import type { Config } from "../config";
import type { Deps } from "../deps";
import { deriveKey } from "../lib/instance-secret";
import { cookieNames, readCookies, setCookie } from "./http";

type CsrfDeps = Pick<Deps, "instanceSecret">;

/** Purpose label of the derived key (changing it invalidates every open form). */
const KEY_LABEL = "dashboard:csrf:v1";
/** How long a pre-session form nonce is honoured. */
export const FORM_NONCE_SECONDS = 60 * 60;
/** A nonce: 32 random bytes (base64url) and the issue time in ms, `<random>.<ms>`. */
const NONCE_RE = /^([A-Za-z0-9_-]{43})\.(\d{13})$/;

const keys = new WeakMap<Uint8Array, Uint8Array>();
function csrfKey(secret: Uint8Array): Uint8Array {
  let key = keys.get(secret);
  if (!key) {
    key = deriveKey(secret, KEY_LABEL);
    keys.set(secret, key);
  }
  return key;
}

/** The CSRF token of a form bound to `binding` (a session id, or a nonce from formNonce). */
export function csrfToken(deps: CsrfDeps, binding: string): string {
  return new Bun.CryptoHasher("sha256", csrfKey(deps.instanceSecret)).update(`csrf\u0000${binding}`).digest("base64url");
}

/** True when `sent` is the token of `binding`. Empty bindings and empty tokens never verify. */
export function verifyCsrf(deps: CsrfDeps, binding: string, sent: string): boolean {
  if (!binding || !sent) return false;
  const expected = Buffer.from(csrfToken(deps, binding));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A fresh pre-session nonce issued at `now`. */
function newNonce(now: number): string {
  const random = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  return `${random}.${String(now).padStart(13, "0")}`;
}

/** The nonce of the request's form cookie when it is well-formed and not older than FORM_NONCE_SECONDS, else null. */
export function currentNonce(config: Pick<Config, "baseUrl">, request: Request, now: number): string | null {
  const value = readCookies(request).get(cookieNames(config).preLogin);
  const match = value ? NONCE_RE.exec(value) : null;
  if (!match) return null;
  const age = now - Number(match[2]);
  return age >= 0 && age < FORM_NONCE_SECONDS * 1000 ? (value ?? null) : null;
}

/**
 * The pre-session nonce to bind a form to: the request's own when still valid, else a new one with the Set-Cookie
 * that stores it (HttpOnly, SameSite=Lax, `__Host-` and Secure over https).
 */
export function formNonce(deps: CsrfDeps & Pick<Deps, "config">, request: Request, now: number): { nonce: string; cookie: string[] } {
  const existing = currentNonce(deps.config, request, now);
  if (existing) return { nonce: existing, cookie: [] };
  const nonce = newNonce(now);
  return { nonce, cookie: [setCookie(deps.config, cookieNames(deps.config).preLogin, nonce, FORM_NONCE_SECONDS)] };
}
