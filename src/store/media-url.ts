/** Where the library's images are served publicly: what the assets module shows and what connectors send. */
import type { Deps } from "../deps";

/** Path prefix of the public media route. */
export const MEDIA_PATH = "/media";

/** The library URL of an asset: `{base_url}/media/<id>.<ext>`. */
export function assetUrl(deps: Pick<Deps, "config">, record: { id: string; ext: string }): string {
  return `${deps.config.baseUrl}${MEDIA_PATH}/${record.id}.${record.ext}`;
}
