/**
 * Client authentication at the token and revocation endpoints (RFC 6749 §2.3, decisions.md §9): `none` (client_id in
 * the body), `client_secret_basic` (HTTP Basic, both parts form-urlencoded) and `client_secret_post`. A client that was
 * given a secret must present it by one of the two secret methods; a public client only names itself.
 */
import type { Deps } from "../../deps";
import { type ClientRow, clientSecretMatches, findClientRow } from "./clients";
import { OAuthError } from "./errors";

/** Who a request says it is: client_id and the secret, if any, from the header or the body. */
function presented(request: Request, form: Map<string, string>): { clientId: string | null; secret: string | null } {
  const header = request.headers.get("authorization");
  if (header && /^basic /i.test(header)) {
    let decoded: string;
    try {
      decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
    } catch {
      throw new OAuthError("invalid_client", "The Basic credentials are malformed.");
    }
    const colon = decoded.indexOf(":");
    if (colon < 0) throw new OAuthError("invalid_client", "The Basic credentials are malformed.");
    let id: string;
    let secret: string;
    try {
      id = decodeURIComponent(decoded.slice(0, colon).replaceAll("+", " "));
      secret = decodeURIComponent(decoded.slice(colon + 1).replaceAll("+", " "));
    } catch {
      throw new OAuthError("invalid_client", "The Basic credentials are malformed.");
    }
    const bodyId = form.get("client_id");
    if (bodyId !== undefined && bodyId !== id) throw new OAuthError("invalid_client", "client_id differs between the header and the body.");
    if (form.has("client_secret")) throw new OAuthError("invalid_request", "Use one client authentication method, not two.");
    return { clientId: id, secret };
  }
  return { clientId: form.get("client_id") ?? null, secret: form.get("client_secret") ?? null };
}

/** The authenticated client of a token request. Throws OAuthError invalid_client (401). */
export async function authenticateClient(
  deps: Pick<Deps, "store" | "instanceSecret">,
  request: Request,
  form: Map<string, string>,
): Promise<ClientRow> {
  const { clientId, secret } = presented(request, form);
  if (!clientId) throw new OAuthError("invalid_client", "The request does not say which client it is (client_id).");
  const row = await findClientRow(deps, clientId);
  if (!row) throw new OAuthError("invalid_client", "Unknown client.");
  if (row.secretHash !== null && (secret === null || !clientSecretMatches(deps, row, secret))) {
    throw new OAuthError("invalid_client", "The client could not be authenticated.");
  }
  return row;
}

/** Like authenticateClient, but a request naming no client at all is allowed (revocation by a token holder). */
export async function optionalClient(
  deps: Pick<Deps, "store" | "instanceSecret">,
  request: Request,
  form: Map<string, string>,
): Promise<ClientRow | null> {
  const { clientId } = presented(request, form);
  return clientId ? authenticateClient(deps, request, form) : null;
}
