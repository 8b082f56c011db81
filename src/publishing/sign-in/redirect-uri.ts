/** Where networks send the browser back after a sign-in (decisions.md §12). */
import type { Deps } from "../../deps";

/** The path of the callback; the redirect URI is `{base_url}` + this + the platform. */
export const CALLBACK_PATH = "/dashboard/connections/callback/";

/** `{base_url}/dashboard/connections/callback/<platform>`: what each network's app registers. */
export function redirectUriFor(deps: Pick<Deps, "config">, platform: string): string {
  return `${deps.config.baseUrl.replace(/\/+$/, "")}${CALLBACK_PATH}${platform}`;
}
